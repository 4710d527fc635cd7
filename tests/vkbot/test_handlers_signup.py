"""Sign-up, the reserve and withdrawal, in the recruitment topic and by private message."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from gameplay import services
from gameplay.models import Actor, Outbox, Seat, SeatStatus
from gameplay.rules.errors import SetupError
from tests.gameplay.factories import recruit_topic_of, topic_of
from tests.vkbot.bot_support import board_post, board_rows, make_game, pm, press, run, texts_to
from vkbot.handlers import FactsRequest, VkFacts, facts_needed
from vkbot.keyboards import payloads_of

pytestmark = pytest.mark.django_db


def seats(game) -> dict[int, tuple[str, str, bool | None]]:  # noqa: ANN001
    return {
        s.vk_user_id: (s.status, s.name, s.pm_allowed)
        for s in Seat.objects.filter(game=game).exclude(status=SeatStatus.WITHDRAWN)
    }


def test_signup_in_the_recruitment_topic_with_facts_from_vk() -> None:
    game = make_game(start=False)
    update = board_post(recruit_topic_of(game), 42, "+")
    assert facts_needed(update) == FactsRequest(names=frozenset({42}), pm_allowed=frozenset({42}))
    out = run(
        update, VkFacts(names={42: "Зоя Космодемьянская"}, pm_allowed={42: False}, sexes={42: 1})
    )
    assert seats(game)[42] == ("player", "Зоя Космодемьянская", False)
    assert Seat.objects.get(game=game, vk_user_id=42).sex == 1  # the texts' grammar follows it
    answer = board_rows(out)[0]
    assert answer.topic_id == game.recruit_topic_id and answer.kind == "signup_list"
    assert "Записаны в игру «Машина времени»: [id42|Зоя Космодемьянская]." in answer.text
    assert "Разрешить сообщения" in answer.text  # how to allow messages


@override_settings(SIGNUP_LIST_SECONDS=60)
def test_signups_in_the_topic_are_acknowledged_in_one_running_list() -> None:
    """Not a comment per player: the sign-ups join the list waiting to go out; once it is on
    its way, the next list waits a minute after it, gathering the sign-ups meanwhile."""
    game = make_game(start=False)
    topic = recruit_topic_of(game)
    facts = VkFacts(names={41: "Аня", 43: "Вера", 44: "Глеб"}, pm_allowed={41: True})  # 43: unknown
    run(board_post(topic, 41, "+"), facts)
    run(board_post(topic, 43, "запас"), facts)
    [waiting] = Outbox.objects.filter(game=game, kind="signup_list")
    assert waiting.next_attempt_at is None  # the first list goes at once
    assert waiting.text.splitlines() == [
        "Записаны в игру «Машина времени»: [id41|Аня].",
        "В запас игры «Машина времени»: [id43|Вера].",
        "[id43|Вера]: роль придёт в личные сообщения сообщества. Если вы ещё не писали боту, "
        "напишите ему «статус», чтобы разрешить сообщения.",
        "Всего в игре 8 игроков, в запасе 1.",
    ]
    # the delivery takes it (a lease): the next sign-up starts the next list, a minute after
    Outbox.objects.filter(pk=waiting.pk).update(locked_until=timezone.now() + timedelta(seconds=30))
    run(board_post(topic, 44, "+"), facts)
    first, second = Outbox.objects.filter(game=game, kind="signup_list").order_by("id")
    assert first.text == waiting.text and "[id44|Глеб]" in second.text
    assert second.next_attempt_at == first.created_at + timedelta(seconds=60)
    run(board_post(topic, 45, "+"))
    second.refresh_from_db()
    assert "[id44|Глеб] и [id45|id45]" in second.text
    assert "Всего в игре 10 игроков, в запасе 1." in second.text
    assert Outbox.objects.filter(game=game, kind="signup_list").count() == 2


def test_signup_without_facts_still_works() -> None:
    game = make_game(start=False)
    out = run(board_post(recruit_topic_of(game), 43, "Участвую!"))
    assert seats(game)[43] == ("player", "id43", None)
    assert Seat.objects.get(game=game, vk_user_id=43).sex == 0  # unknown: neutral wordings
    assert "напишите ему «статус»" in board_rows(out)[0].text


def test_signup_by_private_message() -> None:
    game = make_game(start=False)
    update = pm(44, "+")
    assert facts_needed(update) == FactsRequest(names=frozenset({44}))
    out = run(update, VkFacts(names={44: "Лев"}, sexes={44: 2}))
    assert seats(game)[44] == ("player", "Лев", True)
    assert Seat.objects.get(game=game, vk_user_id=44).sex == 2
    assert "Вы записаны в игру" in texts_to(out, 44)
    out = run(pm(44, "+"))
    assert "уже записаны" in texts_to(out, 44)


def test_several_recruiting_games_offer_buttons() -> None:
    first = make_game(start=False)
    second = make_game(start=False, vk_base=3000)
    out = run(pm(45, "участвую"))
    choices = payloads_of(out[0].keyboard)
    assert sorted(p.game for p in choices) == sorted([first.pk, second.pk])
    run(press(45, [p for p in choices if p.game == second.pk][0].encode()))
    assert 45 in seats(second) and 45 not in seats(first)


def test_reserve_and_withdrawal() -> None:
    game = make_game()  # running: the recruitment is over
    out = run(board_post(recruit_topic_of(game), 46, "+"))
    assert "записаться в запас на замену — «запас»" in board_rows(out)[0].text.lower()
    run(board_post(recruit_topic_of(game), 46, "в запас"))
    assert seats(game)[46][0] == "reserve"
    run(pm(46, "снимаюсь"))
    assert 46 not in seats(game)
    out = run(pm(1001, "снимаюсь"))
    assert "Игра уже началась" in texts_to(out, 1001)


def test_plus_in_a_running_game_topic_is_discussion() -> None:
    game = make_game()
    out = run(board_post(topic_of(game), 1002, "+"))
    assert out == []
    assert len(seats(game)) == 7


def test_no_recruitment() -> None:
    out = run(pm(47, "+"))
    assert "ни в одну игру не идёт набор" in texts_to(out, 47)


def test_one_recruitment_topic_for_successive_games() -> None:
    """A sign-up topic serves one unfinished game at a time: the next game may
    recruit in it once the running one has finished, not before (the newer game would take the
    «+» and «запас» meant for the other)."""
    running = make_game()
    topic = recruit_topic_of(running)
    with pytest.raises(SetupError, match="уже идёт другая игра"):
        make_game(start=False, vk_base=3000, recruit_topic_id=topic)
    run(board_post(topic, 49, "запас"))
    assert seats(running)[49][0] == "reserve"
    services.game_end(game_id=running.pk, by=Actor.gm("test"), winner=None)
    recruiting = make_game(start=False, vk_base=3000, recruit_topic_id=topic)
    run(board_post(topic, 48, "+"))
    assert 48 in seats(recruiting) and 48 not in seats(running)
    out = run(board_post(topic, 48, "-"))
    assert 48 not in seats(recruiting) and "сняты" in board_rows(out)[0].text
