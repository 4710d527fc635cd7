"""Votes in the board and in private messages, buttons, the count, and edited or deleted vote
posts."""

from __future__ import annotations

import pytest

from gameplay import services
from gameplay.buttons import Payload
from gameplay.models import FlagKind, ModerationFlag, Outbox, OutboxChannel, Source, Vote
from tests.vkbot.bot_support import (
    assert_no_leaks,
    board_delete,
    board_edit,
    board_post,
    board_rows,
    kill,
    make_game,
    phase,
    pm,
    press,
    roles_26,
    run,
    texts_to,
    to_night,
)
from vkbot.keyboards import payloads_of

pytestmark = pytest.mark.django_db


def votes(game) -> dict[int, tuple[int, bool, str]]:  # noqa: ANN001
    return {
        v.voter.number: (v.target.number, v.early, v.source)
        for v in Vote.objects.filter(phase__game=game, current=True).select_related(
            "voter", "target"
        )
    }


def test_board_votes_in_every_form() -> None:
    game = make_game()
    t = game.topic_id
    run(board_post(t, 1001, "Голос 5"))
    run(board_post(t, 1002, "голос: Вера"))
    run(board_post(t, 1003, "[id1004|Глеб]"))
    run(board_post(t, 1004, "Долго думал.\nголосую за Бориса, он странный"))
    run(board_post(t, 1005, "голос @id1001 досрочно"))
    assert votes(game) == {
        1: (5, False, Source.BOARD),
        2: (3, False, Source.BOARD),
        3: (4, False, Source.BOARD),
        4: (2, False, Source.BOARD),
        5: (1, False, Source.BOARD),
    }
    # the board already shows these votes: the bot does not repeat them there
    assert not Outbox.objects.filter(game=game, kind="vote").exists()
    assert Vote.objects.filter(phase__game=game, vk_post_id__isnull=False).count() == 5


def test_discussion_is_left_alone() -> None:
    game = make_game()
    out = run(board_post(game.topic_id, 1001, "[id1002|Борис], а ты что думаешь?"))
    assert out == [] and votes(game) == {}


@pytest.mark.parametrize(
    ("author", "text", "reason"),
    [
        (1001, "голос 1", "за себя"),
        (1001, "голос Аня", "несколько игроков"),
        (1001, "голос Зинаида", "Такого игрока нет"),
        (1001, "голос", "Укажите"),
        (9999, "голос 2", "не участвуете"),
    ],
)
def test_unclear_or_refused_votes_get_a_short_answer_in_the_topic(
    author: int, text: str, reason: str
) -> None:
    game = make_game()
    out = run(board_post(game.topic_id, author, text))
    answers = board_rows(out)
    assert len(answers) == 1 and answers[0].topic_id == game.topic_id
    assert reason.lower() in answers[0].text.lower() and f"[id{author}|" in answers[0].text
    assert votes(game) == {}


def test_dead_voter_in_the_board_is_refused_and_flagged() -> None:
    game = make_game()
    kill(game, 7)
    out = run(board_post(game.topic_id, 1007, "голос 2"))
    assert "выбыли" in board_rows(out)[0].text
    assert ModerationFlag.objects.filter(game=game, kind=FlagKind.DEAD_POST).count() == 1
    assert votes(game) == {}


def test_private_votes_are_posted_in_the_topic() -> None:
    game = make_game()
    out = run(pm(1003, "голос Дарья"))
    assert votes(game) == {3: (5, False, Source.PM)}
    posted = board_rows(out)
    assert [p.text for p in posted] == ["№3 Вера голосует за №5 Дарью."]
    assert "Ваш голос за №5 Дарью принят" in texts_to(out, 1003)


def test_vote_buttons_and_the_early_switch() -> None:
    game = make_game()
    # Day 1: the day prompt has the buttons (no early switch before Day 3)
    prompt = [
        o for o in Outbox.objects.filter(game=game, kind="day_prompt") if o.peer_ids == [1002]
    ][0]
    buttons = payloads_of(prompt.keyboard)
    assert [p.target for p in buttons] == [1, 3, 4, 5, 6, 7]
    run(press(1002, buttons[1].encode()))
    assert votes(game) == {2: (3, False, Source.PM)}
    # «досрочно» on Day 1 counts as an ordinary vote, and the voter is told so
    out = run(pm(1001, "голос 3 досрочно"))
    assert "принят как обычный" in texts_to(out, 1001)


def test_early_vote_buttons_from_day_three() -> None:
    game = make_game(roles_26())
    for _ in range(2):
        to_night(game)
        services.night_close(game_id=game.pk, by="gm:test")
        services.night_publish(game_id=game.pk, by="gm:test")
    day = phase(game)
    assert day.number == 3
    prompt = [
        o
        for o in Outbox.objects.filter(game=game, kind="day_prompt").order_by("id")
        if 1012 in o.peer_ids
    ][-1]
    early = [p for p in payloads_of(prompt.keyboard) if p.early and p.target is None]
    assert len(early) == 1
    out = run(press(1012, early[0].encode()))
    page = [o for o in out if o.kind == "vote_page"][0]
    target = [p for p in payloads_of(page.keyboard) if p.target == 2][0]
    assert target.early
    run(press(1012, target.encode()))
    assert votes(game)[12][:2] == (2, True)
    out = run(pm(1012, "голос 14"))
    assert "окончательный" in [o for o in out if o.kind == "refusal"][0].text


def test_a_count_after_every_ten_votes_and_on_request() -> None:
    game = make_game(roles_26())
    for n in range(1, 10):
        run(pm(1000 + n, "голос 20"))
    assert not Outbox.objects.filter(game=game, kind="vote_count").exists()
    run(board_post(game.topic_id, 1010, "голос 21"))
    counts = list(Outbox.objects.filter(game=game, kind="vote_count"))
    assert len(counts) == 1 and counts[0].channel == OutboxChannel.BOARD
    assert "проголосовали 10 из 26" in counts[0].text
    assert "№20 Игрок 20 — 9" in counts[0].text and "№21 Игрок 21 — 1" in counts[0].text
    out = run(board_post(game.topic_id, 1011, "Подсчёт"))
    assert [o.kind for o in out] == ["vote_count"]
    out = run(pm(1011, "подсчёт"))
    assert out[0].channel == OutboxChannel.MESSAGE and "Подсчёт голосов" in out[0].text
    assert_no_leaks(game)


def test_edited_or_deleted_vote_posts_keep_the_vote_and_are_flagged() -> None:
    game = make_game()
    t = game.topic_id
    run(board_post(t, 1001, "голос 5", post_id=777))
    out = run(board_edit(t, 1001, 777, "голос 6"))
    assert out == [] and votes(game)[1][0] == 5
    out = run(board_delete(t, 777))
    assert votes(game)[1][0] == 5
    flags = list(ModerationFlag.objects.filter(game=game, kind=FlagKind.EDITED_VOTE))
    assert len(flags) == 1 and flags[0].vk_post_id == 777
    assert "изменён" in flags[0].note and "удалён" in flags[0].note
    # an ordinary post being edited is nobody's business
    run(board_post(t, 1002, "привет", post_id=778))
    run(board_edit(t, 1002, 778, "пока"))
    assert ModerationFlag.objects.filter(game=game).count() == 1


def test_forged_vote_buttons_change_nothing() -> None:
    game = make_game()
    other = make_game(vk_base=5000)
    day = phase(game)
    kill(game, 6)
    for payload in (
        Payload("vote", game=other.pk, phase=phase(other).pk, target=2),
        Payload("vote", game=game.pk, phase=day.pk, target=6),  # dead
        Payload("vote", game=game.pk, phase=day.pk + 100, target=2),  # another phase
        Payload("vote", game=game.pk, phase=day.pk, target=1),  # self
    ):
        out = run(press(1001, payload.encode()))
        assert [o.kind for o in out] == ["event_answer", "refusal"], payload
    assert votes(game) == {}
