"""Votes in the board and in private messages, buttons, the count, and edited or deleted vote
posts."""

from __future__ import annotations

import pytest
from django.test import override_settings

from gameplay import services
from gameplay.buttons import Payload
from gameplay.models import Actor, FlagKind, ModerationFlag, Outbox, OutboxChannel, Source, Vote
from gameplay.selectors.vote_count import struck
from tests.gameplay.factories import number_of, topic_of
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
        number_of(v.voter): (number_of(v.target), v.early, v.source)
        for v in Vote.objects.filter(phase__game=game, current=True).select_related(
            "voter", "target"
        )
    }


def test_board_votes_in_every_form() -> None:
    game = make_game()
    t = topic_of(game)
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
    out = run(board_post(topic_of(game), 1001, "[id1002|Борис], а ты что думаешь?"))
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
    out = run(board_post(topic_of(game), author, text))
    answers = board_rows(out)
    assert len(answers) == 1 and answers[0].topic_id == game.topic_id
    assert reason.lower() in answers[0].text.lower() and f"[id{author}|" in answers[0].text
    assert votes(game) == {}


def test_dead_voter_in_the_board_is_refused_and_flagged() -> None:
    game = make_game()
    kill(game, 7)
    out = run(board_post(topic_of(game), 1007, "голос 2"))
    assert "выбыли" in board_rows(out)[0].text
    assert ModerationFlag.objects.filter(game=game, kind=FlagKind.DEAD_POST).count() == 1
    assert votes(game) == {}


def test_private_votes_show_in_the_counts_not_in_posts_of_their_own() -> None:
    game = make_game()
    out = run(pm(1003, "голос Дарья"))
    assert votes(game) == {3: (5, False, Source.PM)}
    assert board_rows(out) == []
    assert "Ваш голос за №5 Дарью принят" in texts_to(out, 1003)
    [count] = board_rows(run(board_post(topic_of(game), 1001, "голоса")))
    assert "№5 Дарья — 1 голос\n• №3 Вера: в ЛС" in count.text


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
        services.night_close(game_id=game.pk, by=Actor.gm("test"))
        services.night_publish(game_id=game.pk, by=Actor.gm("test"))
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
    run(board_post(topic_of(game), 1010, "голос 21"))
    counts = list(Outbox.objects.filter(game=game, kind="vote_count"))
    assert len(counts) == 1 and counts[0].channel == OutboxChannel.BOARD
    assert "Проголосовали 10 из 26." in counts[0].text
    assert "№20 Игрок 20 — 9 голосов" in counts[0].text
    assert "№21 Игрок 21 — 1 голос" in counts[0].text
    # a player's request follows a count by minutes, not at once: refused, saying when
    out = run(board_post(topic_of(game), 1011, "Подсчёт"))
    [refusal] = board_rows(out)
    assert refusal.kind == "board_reply" and "[id1011|" in refusal.text
    assert "Следующий можно попросить с" in refusal.text
    out = run(pm(1011, "голоса"))
    assert [o.kind for o in out] == ["refusal"] and "Следующий можно" in out[0].text
    with override_settings(VOTE_COUNT_EVERY_MINUTES=0):
        out = run(pm(1011, "голоса"))
    assert [(o.kind, o.channel) for o in out] == [
        ("vote_count", OutboxChannel.BOARD),
        ("count_posted", OutboxChannel.MESSAGE),
    ]
    assert "опубликован в обсуждении" in out[1].text
    assert_no_leaks(game)


def test_a_played_day_shows_vote_counts_with_links_and_no_per_vote_posts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A day of votes in the topic and by private message, changed votes, a count asked for
    in the topic and the one that goes out as the day closes: the topic holds the counts,
    each vote linked to its comment (a private vote named without a link), changed votes
    struck through, «Не проголосовали», the leader and what closing now would do — and not
    one sentence per vote."""
    game = make_game(roles_26())
    t = topic_of(game)
    mark = Outbox.objects.order_by("-id").values_list("id", flat=True).first()
    run(board_post(t, 1001, "голос 7", post_id=801))
    run(board_post(t, 1002, "голос 7", post_id=802))
    run(pm(1003, "голос 7"))
    run(board_post(t, 1004, "голос 9", post_id=804))
    run(board_post(t, 1004, "голос 7, передумал", post_id=805))
    run(pm(1005, "голос 9"))
    run(board_post(t, 1007, "голос 9", post_id=807))
    run(pm(1006, "голос 4"))
    run(pm(1006, "голос 9"))
    with override_settings(VOTE_COUNT_EVERY_MINUTES=10):
        [asked] = board_rows(run(board_post(t, 1010, "голоса", post_id=810)))
    services.day_close(game_id=game.pk, by=Actor.gm("test"))

    posts = list(
        Outbox.objects.filter(game=game, channel=OutboxChannel.BOARD, pk__gt=mark).order_by("id")
    )
    assert [p.kind for p in posts] == ["vote_count", "vote_count", "day_result", "night_opened"]
    assert not [p for p in posts if "голосует за" in p.text]
    final = posts[1]
    link = f"https://vk.com/topic-{game.vk_group_id}_{t}?post="
    for text in (asked.text, final.text):
        assert f"• №1 Игрок 1: {link}801" in text and f"• №4 Игрок 4: {link}805" in text
        assert "• №3 Игрок 3: в ЛС" in text and "• №6 Игрок 6: в ЛС" in text
        assert f"{link}804" not in text  # the changed vote: struck through, not linked
        assert f"• {struck('№4 Игрок 4')} — голос сменён" in text
        assert f"• {struck('№6 Игрок 6')} — голос сменён" in text
        assert "Не проголосовали: №8 Игрок 8, №9 Игрок 9, №10 Игрок 10," in text
    assert asked.text.startswith("Часы в лаборатории отсчитывают время. Подсчёт голосов, день 1")
    assert "Лидер: №7 Игрок 7 — 4 голоса." in asked.text
    assert (
        "Если закрыть день сейчас: штраф и +2 голоса против себя получат все не проголосовавшие;"
        " казнь грозит №9 " in asked.text  # its 3 votes and a missed vote's +2 pass №7's 4
    )
    assert final.text.startswith("Стрелки часов в лаборатории замерли: итоговый подсчёт")
    assert "Если закрыть день сейчас" not in final.text
    with capsys.disabled():
        print("\n--- a vote count of the played day, as the topic shows it ---")
        print(asked.text)
    assert_no_leaks(game)


def test_edited_or_deleted_vote_posts_keep_the_vote_and_are_flagged() -> None:
    game = make_game()
    t = topic_of(game)
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
