"""The mafia's relay, the spectator chat, moderation flags, «статус», «помощь»."""

from __future__ import annotations

from typing import Any

import pytest

from gameplay import services
from gameplay.messages import when
from gameplay.models import (
    Actor,
    FlagKind,
    Game,
    ModerationFlag,
    Outbox,
    OutboxChannel,
    SpectatorMember,
)
from tests.gameplay.factories import topic_of
from tests.vkbot.bot_support import (
    CHAT_PEER,
    GROUP_ID,
    assert_no_leaks,
    board_post,
    chat_action,
    chat_text,
    kill,
    make_game,
    phase,
    pm,
    run,
    texts_to,
    to_night,
    to_user,
)

pytestmark = pytest.mark.django_db


# --- the mafia's relay -----------------------------------------------------------------------


def test_relay_reaches_the_other_living_mafia_only() -> None:
    game = make_game()
    out = run(pm(1001, "!Стреляем в Веру"))
    relayed = [o for o in out if o.kind == "mafia_relay"]
    assert len(relayed) == 1 and relayed[0].peer_ids == [1002]
    assert relayed[0].text == "Мафия, №1 Аня Петрова:\nСтреляем в Веру"
    assert "Сообщение передано живой мафии (1 игрок)." in texts_to(out, 1001)
    for vk in range(1003, 1008):
        assert to_user(out, vk) == []
    kill(game, 2)
    out = run(pm(1001, "!есть кто?"))
    assert [o.kind for o in out] == ["mafia_relay_sent"]
    assert "только вы" in out[0].text
    out = run(pm(1002, "!я мёртв"))
    assert "выбыли" in out[0].text and len(out) == 1
    assert_no_leaks(game)


def test_relay_refused_to_others_without_revealing_anyone() -> None:
    game = make_game()
    out = run(pm(1003, "!кто тут мафия?"))
    assert [o.kind for o in out] == ["refusal"]
    assert "только внутри мафии" in out[0].text and "№" not in out[0].text
    assert_no_leaks(game)


# --- the spectator chat ----------------------------------------------------------------------


def open_chat(game: Game) -> None:
    Game.objects.filter(pk=game.pk).update(spectator_chat_id=CHAT_PEER, spectator_chat_open=True)


def test_spectator_invites_and_intruders() -> None:
    game = make_game()
    out = run(pm(1006, "в ЗЗ"))
    assert "не открыта" in texts_to(out, 1006)
    open_chat(game)
    kill(game, 6)  # a civilian: eligible
    kill(game, 2)  # a mafia member: never
    out = run(pm(1006, "в ЗЗ"))
    invite = out[0]
    assert invite.channel == OutboxChannel.INVITE and invite.peer_ids == [1006]
    assert "{link}" in invite.text and invite.payload == {"chat_peer_id": CHAT_PEER}
    out = run(pm(1002, "в ЗЗ"))
    assert [o.kind for o in out] == ["refusal"] and "мафия" in out[0].text
    out = run(pm(1003, "в зз"))
    assert "ещё в игре" in out[0].text
    # joins: the invited one stays, the others are removed and the GM is told
    assert run(chat_action(CHAT_PEER, 1006, "chat_invite_user_by_link")) == []
    for intruder in (1002, 1003, 4242):
        out = run(chat_action(CHAT_PEER, intruder, "chat_invite_user_by_link"))
        assert [o.channel for o in out] == [OutboxChannel.KICK]
        assert out[0].payload == {"chat_id": CHAT_PEER - 2_000_000_000, "member_id": intruder}
    flags = ModerationFlag.objects.filter(game=game, kind=FlagKind.INTRUDER)
    assert list(flags.order_by("vk_user_id").values_list("vk_user_id", flat=True)) == [
        1002,
        1003,
        4242,
    ]
    statuses = dict(SpectatorMember.objects.filter(game=game).values_list("vk_user_id", "status"))
    assert statuses == {1006: "joined", 1002: "removed", 1003: "removed", 4242: "removed"}
    # the bot's own removal comes back as a kick: the status stays «removed»
    run(chat_action(CHAT_PEER, 1003, "chat_kick_user", from_id=-77))
    run(chat_action(CHAT_PEER, 1006, "chat_kick_user"))
    statuses = dict(SpectatorMember.objects.filter(game=game).values_list("vk_user_id", "status"))
    assert statuses[1003] == "removed" and statuses[1006] == "left"
    # ordinary chat messages and other chats are ignored
    assert run(chat_action(CHAT_PEER + 1, 4343, "chat_invite_user")) == []


# --- moderation flags ------------------------------------------------------------------------


def flags(game: Game) -> list[tuple[str, int | None]]:
    return sorted(ModerationFlag.objects.filter(game=game).values_list("kind", "vk_user_id"))


def test_profanity_dead_posts_and_reveals_are_flagged_never_punished() -> None:
    game = make_game()
    t = topic_of(game)
    run(board_post(t, 1001, "ну ты и д е б и л"))
    run(board_post(t, 1002, "оскорблять никого не хочу"))
    kill(game, 7)
    run(board_post(t, 1007, "а я знаю, кто мафия"))
    assert flags(game) == [(FlagKind.DEAD_POST, 1007), (FlagKind.PROFANITY, 1001)]
    to_night(game)
    run(board_post(t, 1003, "я проверил пятого"))  # night open: no G2 window yet
    services.night_close(game_id=game.pk, by=Actor.gm("test"))
    run(board_post(t, 1003, "Я проверил пятого, он чист"))
    run(board_post(t, 1004, "доброе утро всем"))
    assert (FlagKind.REVEAL, 1003) in flags(game)
    assert len([f for f in flags(game) if f[0] == FlagKind.REVEAL]) == 1
    # flags only: everyone is still alive, no strike, no message to the players
    assert game.seats.filter(strike_log__isnull=False).count() == 0
    assert not Outbox.objects.filter(game=game, kind__in=["refusal", "board_reply"]).exists()


# --- «статус» and «помощь» -------------------------------------------------------------------


def test_status_shows_own_actions_and_the_deadline() -> None:
    game = make_game()
    out = run(pm(1003, "статус"))
    assert "День 1, голосование до" in out[0].text and "ещё не голосовали" in out[0].text
    run(pm(1003, "голос 5"))
    assert "Ваш голос: за №5 Дарью." in run(pm(1003, "статус"))[0].text
    to_night(game)
    run(pm(1003, "проверка 5"))
    run(pm(1002, "выстрел 4"))
    text = run(pm(1003, "статус"))[0].text
    assert "Вы отправили: проверка — №5 Дарья." in text and "Выстрел мафии" not in text
    text = run(pm(1001, "статус"))[0].text
    assert "Выстрел мафии: №4 Глеб (отправитель — №2 Борис)." in text
    assert "Живая мафия: №2 Борис." in text
    text = run(pm(1006, "статус"))[0].text
    assert "Вы пока ничего не отправили." in text  # the red button is unused
    assert "Вы — №6 Аня Смирнова, мирный житель." in text
    assert_no_leaks(game)


@pytest.mark.parametrize(
    ("vk", "has", "has_not"),
    [
        (1001, ["выстрел N", "удар N", "!текст", "часы N"], ["лечу", "проверка", "книга"]),
        (1003, ["проверка N", "выстрел N"], ["лечу", "!текст", "удар N", "часы"]),
        (1004, ["лечу N"], ["проверка", "!текст", "выстрел", "удар N"]),
        (1005, ["выстрел N"], ["лечу", "проверка", "!текст", "удар N"]),
        (1006, ["кнопка N", "спят"], ["лечу", "проверка", "!текст", "выстрел", "удар N"]),
        (4444, ["«+»", "запас"], ["лечу", "проверка", "!текст", "выстрел"]),
    ],
)
def test_help_explains_only_the_players_own_role(
    vk: int, has: list[str], has_not: list[str]
) -> None:
    make_game()
    out = run(pm(vk, "помощь"))
    text = out[0].text
    for word in has:
        assert word in text, word
    for word in has_not:
        assert word not in text, word
    assert out[0].keyboard and out[0].keyboard["inline"] is False  # the menu


def test_unknown_text_and_stickers_are_answered() -> None:
    make_game()
    assert "Не понял команду" in run(pm(1001, "как дела?"))[0].text
    assert "только текст" in run(pm(1001, ""))[0].text


def test_the_community_added_to_a_chat_tells_its_number(settings: Any) -> None:
    settings.VK_GROUP_ID = GROUP_ID
    out = run(chat_action(CHAT_PEER + 3, -GROUP_ID, "chat_invite_user", from_id=4242))
    assert [(o.channel, o.peer_ids, o.kind, o.game_id) for o in out] == [
        (OutboxChannel.CHAT, [CHAT_PEER + 3], "chat_number", None)
    ]
    text = out[0].text
    assert "Номер этой беседы для панели ведущего: 8." in text
    assert "впишите 8 в поле «Беседа» и нажмите «Привязать»" in text
    assert "Сообщество должно быть администратором беседы" in text
    # Another community, or this one in a chat it is removed from: nothing to say.
    assert run(chat_action(CHAT_PEER + 3, -GROUP_ID - 1, "chat_invite_user", from_id=4242)) == []
    assert run(chat_action(CHAT_PEER + 3, -GROUP_ID, "chat_kick_user", from_id=4242)) == []
    # «номер беседы» in a chat already linked to a game.
    game = make_game()
    open_chat(game)
    out = run(chat_text(CHAT_PEER, 1005, "[club77|Мафия] Номер беседы?"))
    assert [(o.channel, o.peer_ids, o.game_id) for o in out] == [
        (OutboxChannel.CHAT, [CHAT_PEER], game.pk)
    ]
    assert "Номер этой беседы для панели ведущего: 5" in out[0].text
    assert "привязана к игре «Машина времени»" in out[0].text
    assert run(chat_text(CHAT_PEER, 1005, "какой номер у беседы, интересно")) == []


def test_the_gms_own_account_may_sit_in_the_spectator_chat() -> None:
    game = make_game()
    open_chat(game)
    Game.objects.filter(pk=game.pk).update(gm_vk_ids=[7777])
    assert run(chat_action(CHAT_PEER, 7777, "chat_invite_user_by_link")) == []
    member = SpectatorMember.objects.get(game=game, vk_user_id=7777)
    assert member.status == "joined"
    assert not ModerationFlag.objects.filter(game=game, kind=FlagKind.INTRUDER).exists()
    # anyone else joining is still removed
    out = run(chat_action(CHAT_PEER, 7778, "chat_invite_user_by_link"))
    assert [o.channel for o in out] == [OutboxChannel.KICK]


def test_status_of_a_player_who_is_out_says_what_the_spectator_chat_offers_them() -> None:
    """G6 in «статус»: a dead civilian is told how to join (now, or once the chat opens); a dead
    mafia member is promised nothing (the bot would refuse them)."""
    game = make_game()
    Game.objects.filter(pk=game.pk).update(spectator_chat_open=False)
    kill(game, 6)  # a civilian
    kill(game, 2)  # a mafia member
    civilian = run(pm(1006, "статус"))[0].text
    deadline = when(phase(game).deadline, game.time_zone)
    # what every player who is out can do: read the topic (not write there), follow the day
    for text in (civilian, run(pm(1002, "статус"))[0].text):
        assert "Вы выбыли из игры: голосовать, действовать ночью и пользоваться предметами" in text
        assert "писать в обсуждении игры выбывшим нельзя" in text
        assert "Читать обсуждение можно: там итоги дней и ночей." in text
        assert f"Сейчас день 1, голосование до {deadline}." in text
    assert "Беседа зрителей пока не открыта. Когда ведущий её откроет, бот напишет вам" in civilian
    assert "тогда пришлите «в ЗЗ»" in civilian
    mafia = run(pm(1002, "статус"))[0].text
    assert "ЗЗ" not in mafia and "зрител" not in mafia
    open_chat(game)
    civilian = run(pm(1006, "статус"))[0].text
    assert "Беседа зрителей открыта: напишите «в ЗЗ», и бот пришлёт приглашение." in civilian
    assert "Беседа зрителей открыта" in run(pm(1006, "помощь"))[0].text
    assert "ЗЗ" not in run(pm(1002, "помощь"))[0].text
    assert_no_leaks(game)
