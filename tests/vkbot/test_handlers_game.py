"""A whole 7-player game through ``dispatch`` (the GM's steps through the services): sign-up in
the board and by message, a reserve, votes in the board, by message and by buttons, a skipped
vote and its penalty, every night action and item, the spectator chat with an intruder, a
replacement and a modkill, to a winner — and no private message says more than it may."""

from __future__ import annotations

import pytest

from gameplay import services
from gameplay.models import (
    Actor,
    FlagKind,
    Game,
    ModerationFlag,
    NightAction,
    Outbox,
    OutboxChannel,
    Seat,
    Strike,
)
from gameplay.rules import RoleCounts
from tests.gameplay.factories import community_id, topic_of
from tests.vkbot.bot_support import (
    CHAT_PEER,
    NAMES_7,
    ROLES_7,
    assert_no_leaks,
    board_post,
    chat_action,
    phase,
    pm,
    press,
    run,
    texts_to,
)
from vkbot.handlers import VkFacts
from vkbot.keyboards import payloads_of

pytestmark = pytest.mark.django_db


def vk(n: int) -> int:
    return 1000 + n


def latest(game: Game, kind: str, vk_id: int) -> Outbox:
    return [
        o for o in Outbox.objects.filter(game=game, kind=kind).order_by("id") if vk_id in o.peer_ids
    ][-1]


def button(row: Outbox, **match: object):  # noqa: ANN201
    return next(
        p for p in payloads_of(row.keyboard) if all(getattr(p, k) == v for k, v in match.items())
    )


def test_a_whole_game_through_dispatch() -> None:
    game = services.game_create(
        name="Машина времени",
        by=Actor.gm("test"),
        topic_id=700_001,
        recruit_topic_id=700_002,
        counts=RoleCounts(mafia=2, commissar=1, doctor=1, maniac=1, civilian=2),
        vk_group_id=community_id(),
    )
    names = {vk(n): NAMES_7[n - 1] for n in range(1, 8)} | {vk(8): "Зоя"}
    facts = VkFacts(names=names, pm_allowed={v: True for v in names})
    # sign-up: five in the recruitment topic, two by message, one to the reserve
    for n in range(1, 6):
        run(board_post(700_002, vk(n), "+"), facts)
    for n in (6, 7):
        run(pm(vk(n), "участвую"), facts)
    run(board_post(700_002, vk(8), "запас"), facts)
    assert Seat.objects.filter(game=game, status="player").count() == 7
    services.game_deal_fixed(game_id=game.pk, assignment=ROLES_7, by=Actor.gm("test"))
    services.game_start(game_id=game.pk, by=Actor.gm("test"))
    game.refresh_from_db()
    t = topic_of(game)

    # Day 1: the board, a button, a message; №5 skips and is struck
    for n in (2, 3, 4, 7):
        run(board_post(t, vk(n), "голос 6"))
    run(press(vk(1), button(latest(game, "day_prompt", vk(1)), target=6).encode()))
    run(pm(vk(6), "голос Аня Петрова"))
    services.day_close(game_id=game.pk, by=Actor.gm("test"))
    result = phase(game)  # Night 1
    assert result.kind == "night"
    assert not Seat.objects.get(game=game, number=6).alive
    assert Strike.objects.get(seat__number=5, seat__game=game).penalty_votes == 2

    # the spectator chat: the dead civilian gets in, a living mafia member is removed
    Game.objects.filter(pk=game.pk).update(spectator_chat_id=CHAT_PEER, spectator_chat_open=True)
    invite = run(pm(vk(6), "в ЗЗ"))[0]
    assert invite.channel == OutboxChannel.INVITE
    run(chat_action(CHAT_PEER, vk(6), "chat_invite_user_by_link"))
    kick = run(chat_action(CHAT_PEER, vk(2), "chat_invite_user_by_link"))
    assert [o.channel for o in kick] == [OutboxChannel.KICK]

    # Night 1: every kind of input
    shot = [
        o
        for o in Outbox.objects.filter(game=game, kind="night_prompt")
        if vk(1) in o.peer_ids and "Выстрел мафии" in o.text
    ][0]
    run(press(vk(1), button(shot, target=7).encode()))
    run(pm(vk(2), "выстрел Вера"))  # the last shot stands
    choice = latest(game, "night_prompt", vk(3))
    page = run(press(vk(3), button(choice, action="check").encode()))[-1]
    run(press(vk(3), button(page, target=1).encode()))
    run(pm(vk(4), "лечу 3"))
    run(pm(vk(5), "выстрел Глеб"))
    run(pm(vk(1), "часы Дарья"))  # blocks the maniac
    run(pm(vk(7), "книга 4"))
    services.night_close(game_id=game.pk, by=Actor.gm("test"))
    revealed = run(board_post(t, vk(3), "я проверил Аню, она мафия"))
    assert revealed == [] and ModerationFlag.objects.filter(kind=FlagKind.REVEAL).exists()
    services.night_publish(game_id=game.pk, by=Actor.gm("test"))
    assert Seat.objects.filter(game=game, status="player", alive=True).count() == 6
    check = latest(game, "check_result", vk(3))
    assert "№1 Аня Петрова — мафия" in check.text

    # Day 2: a replacement, an insult and a modkill, the mafia's №1 executed
    services.seat_replace(
        game_id=game.pk, seat=7, vk_user_id=vk(8), name="Зоя", by=Actor.gm("test")
    )
    assert "Ваш номер: 7" in latest(game, "role_card", vk(8)).text
    run(board_post(t, vk(5), "ты дебил, Вера"))
    assert ModerationFlag.objects.filter(kind=FlagKind.PROFANITY, vk_user_id=vk(5)).exists()
    services.seat_modkill(game_id=game.pk, seat=5, by=Actor.gm("test"), reason="оскорбления")
    for n in (3, 4):
        run(board_post(t, vk(n), "голос 1"))
    run(pm(vk(8), "голос [id1001|Аня]"))
    run(pm(vk(1), "голос 3"))
    run(pm(vk(2), "голос 3"))
    services.day_close(game_id=game.pk, by=Actor.gm("test"))
    assert Seat.objects.get(game=game, number=1).death_cause == "executed"

    # Night 2: the role strike kills the doctor; the mafia shoots the new №7
    out = run(pm(vk(2), "удар Глеб доктор"))
    assert "принято" in texts_to(out, vk(2)).lower()
    run(pm(vk(2), "выстрел 7"))
    run(pm(vk(3), "проверка 2"))
    run(pm(vk(4), "лечу 7"))
    refused = run(pm(vk(6), "выстрел 2"))
    assert "выбыли" in refused[0].text
    services.night_close(game_id=game.pk, by=Actor.gm("test"))
    services.night_publish(game_id=game.pk, by=Actor.gm("test"))
    game.refresh_from_db()
    assert game.status == "finished" and game.winner == "mafia"
    assert NightAction.objects.filter(phase__game=game, act="role_strike").count() == 1
    assert_no_leaks(game)
