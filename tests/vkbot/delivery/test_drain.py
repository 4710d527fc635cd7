"""Delivery of the Outbox against the local VK server (real vkbottle over HTTP), in-process."""

from __future__ import annotations

import time
from collections import Counter
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone
from rq import Queue

from gameplay import services
from gameplay.models import (
    Actor,
    FlagKind,
    ModerationFlag,
    Outbox,
    OutboxChannel,
    OutboxStatus,
    Seat,
)
from gameplay.services.common import post_board, post_chat, send_message
from gameplay.services.retries import outbox_retry
from localvk import RunningServer
from outbox.ids import outbox_random_id
from outbox.leases import outbox_claim, outbox_record
from outbox.queue import DRAIN_QUEUED_KEY, DRAIN_SCHEDULED_KEY
from tests.gameplay.factories import queued
from tests.vkbot.delivery_support import (
    deliver,
    make_game,
    message_row,
    received,
    requests,
    vk_fixture,  # noqa: F401 (the ``vk`` fixture)
)
from vkbot.delivery.batch import pack
from vkbot.delivery.drain import Drainer
from vkbot.delivery.jobs import drain_outbox
from vkbot.delivery.plan import plan_round
from vkbot.delivery.transport import Transport

pytestmark = pytest.mark.django_db


def test_role_cards_of_a_26_player_game_cost_two_requests(vk: RunningServer) -> None:
    topic = vk.state.create_topic("Машина времени")
    game = make_game(topic_id=topic.id, players=26)
    services.game_deal(game_id=game.pk, by=Actor.gm("test"))
    before = {kind: requests(vk, kind) for kind in ("group", "user")}
    sent_before = received(vk)
    services.game_start(game_id=game.pk, by=Actor.gm("test"))
    cards = list(Outbox.objects.filter(game=game, kind="role_card"))
    assert len(cards) == 26

    report = deliver()

    assert report.failed == 0
    assert requests(vk, "group") - before["group"] <= 2
    assert requests(vk, "user") - before["user"] <= 1  # roster and Day 1 in one comment
    got = received(vk) - sent_before
    for seat in Seat.objects.filter(game=game, number__isnull=False):
        card = next(c for c in cards if seat.vk_user_id in c.peer_ids)
        assert got[(seat.vk_user_id, card.text)] == 1
    comments = [c.text for c in vk.state.topic(topic.id).comments]
    assert len(comments) == 1
    roster, day = Outbox.objects.filter(game=game, channel=OutboxChannel.BOARD).order_by("id")
    assert comments[0] == f"{roster.text}\n\n{day.text}"
    assert not Outbox.objects.exclude(status=OutboxStatus.SENT).exists()


def test_one_text_to_many_players_goes_as_peer_ids(vk: RunningServer) -> None:
    peers = list(range(2001, 2151))
    rows = send_message(game=None, peer_ids=peers, text="Ночь 1 наступила.", kind="night")
    extra = message_row([3001, 3002], "Ночь 1 наступила.")  # same text, other players: merged
    assert len(rows) == 2  # 100 + 50 (the service splits by VK's limit)

    deliver()

    sends = vk.state.calls("messages.send")
    assert sum(len(c.params["peer_ids"].split(",")) for c in sends) == 152
    assert len(sends) == 2  # 100 + 52 recipients in two peer_ids calls
    assert requests(vk, "group") == 1  # both in one execute
    got = received(vk)
    assert all(got[(peer, "Ночь 1 наступила.")] == 1 for peer in [*peers, 3001, 3002])
    rows = [*rows, extra]
    random_ids = []
    for row in rows:
        row.refresh_from_db()
        assert row.status == OutboxStatus.SENT
        assert row.result is not None
        assert set(row.result["sent"]) == {str(p) for p in row.peer_ids}
        random_ids.append(row.result["random_id"])
    # The 50-recipient row and the extra row are one group under the lower row's random_id;
    # the full row (100 recipients) has room for no one and keeps its own.
    assert random_ids == [
        outbox_random_id(rows[0].pk),
        *[outbox_random_id(rows[1].pk)] * 2,
    ]


def test_individual_texts_are_batched_in_execute(vk: RunningServer) -> None:
    for n in range(60):
        message_row([4000 + n], f"Ваша проверка №{n}: не мафия.")

    report = deliver()

    assert report.sent == 60
    assert requests(vk, "group") == 3  # 25 + 25 + 10 calls
    assert [len(c.params["code"]) > 0 for c in vk.state.calls("execute")] == [True] * 3
    assert all(count == 1 for count in received(vk).values())
    assert len(received(vk)) == 60


def test_a_refused_recipient_fails_alone_and_the_gm_is_told(vk: RunningServer) -> None:
    game = make_game(players=3)
    vk.state.set_messages_allowed(1002, False)
    both = send_message(
        game=game, peer_ids=[1001, 1002, 1003], text="Голосование открыто.", kind="day"
    )[0]
    only = send_message(game=game, peer_ids=[1002], text="Вам штраф.", kind="penalty")[0]

    deliver()

    both.refresh_from_db()
    only.refresh_from_db()
    assert both.status == OutboxStatus.SENT
    assert both.result is not None
    assert set(both.result["sent"]) == {"1001", "1003"}
    assert both.result["failed"]["1002"].startswith("VK error 901")
    assert "1002" in both.last_error
    assert only.status == OutboxStatus.FAILED
    assert only.last_error.startswith("VK error 901: Can't send messages")
    flags = list(ModerationFlag.objects.filter(game=game, kind=FlagKind.DELIVERY))
    assert len(flags) == 1  # one open flag per player collects the failures
    flag = flags[0]
    assert flag.vk_user_id == 1002
    assert flag.seat == Seat.objects.get(game=game, vk_user_id=1002)
    assert f"№{both.pk}" in flag.text and f"№{only.pk}" in flag.text
    assert "не разрешил сообщения" in flag.text


def test_errors_6_9_10_are_retried_until_delivered_once(vk: RunningServer) -> None:
    vk.state.faults.configure(error_rates={6: 0.2, 9: 0.2, 10: 0.2}, seed=3)
    rows = [message_row([5000 + n], f"Текст {n}") for n in range(30)]
    rows += send_message(game=None, peer_ids=range(6000, 6040), text="Общий текст", kind="all")

    deliver(max_seconds=30)

    assert vk.state.faults.injected  # some requests did fail
    for row in rows:
        row.refresh_from_db()
        assert row.status == OutboxStatus.SENT
    assert any(row.attempts > 1 for row in rows)
    got = received(vk)
    assert sum(got.values()) == 70 and set(got.values()) == {1}


def test_answers_lost_after_vk_acted_do_not_duplicate(vk: RunningServer) -> None:
    vk.state.faults.configure(drop_after_rate=0.5, seed=0)  # the first two are lost
    topic = vk.state.create_topic("Игра")
    game = make_game(topic_id=topic.id)
    for n in range(20):
        message_row([7000 + n], f"Личное {n}")
    for n in range(4):
        post_board(game=game, text=f"Пост {n}", kind="post")

    deliver(max_seconds=30)

    assert vk.state.faults.injected.get("drop_after")
    assert set(received(vk).values()) == {1} and len(received(vk)) == 20
    text = "\n\n".join(c.text for c in vk.state.topic(topic.id).comments)
    assert all(text.count(f"Пост {n}") == 1 for n in range(4))
    assert not Outbox.objects.exclude(status=OutboxStatus.SENT).exists()


def test_a_crashed_worker_is_replaced_and_its_resend_is_a_no_op(vk: RunningServer) -> None:
    topic = vk.state.create_topic("Игра")
    game = make_game(topic_id=topic.id)
    send_message(game=game, peer_ids=[8001, 8002, 8003], text="Общий", kind="all")
    message_row([8004], "Отдельно", game=game)
    message_row([8005], "Общий", game=game)  # merged with the first row
    post_board(game=game, text="Первый пост", kind="post")
    post_board(game=game, text="Второй пост", kind="post")

    # A worker claims, records its plan and sends — and dies before writing the outcome.
    lease, rows = outbox_claim(limit=100, lease_seconds=60)
    plan = plan_round(rows, group_id=vk.state.group_id)
    outbox_record(lease=lease, results=plan.results)
    with Transport() as transport:
        transport.send(pack(plan.calls), timeout=10)
    first = received(vk)
    assert sum(first.values()) == 5
    # Its lease runs out; another worker takes the rows and sends them again.
    Outbox.objects.update(locked_until=timezone.now() - timedelta(seconds=1))

    deliver()

    assert received(vk) == first  # nothing delivered twice
    assert len(vk.state.topic(topic.id).comments) == 1
    assert len(vk.state.calls("board.createComment")) == 2  # the repeat, answered by its guid
    sends = [c for c in vk.state.calls("messages.send")]
    assert len(sends) == 4  # «Общий» to 4 players in one call, «Отдельно»: each made twice
    assert not Outbox.objects.exclude(status=OutboxStatus.SENT).exists()
    for row in Outbox.objects.filter(channel=OutboxChannel.MESSAGE):
        assert row.attempts == 2


def test_board_posts_of_a_topic_merge_and_a_long_one_is_split(vk: RunningServer) -> None:
    first = vk.state.create_topic("Игра 1")
    second = vk.state.create_topic("Игра 2")
    one = make_game(topic_id=first.id)
    two = make_game(topic_id=second.id)
    for n in range(5):
        post_board(game=one, text=f"Голос {n}", kind="vote")
    long_text = "\n".join(f"Строка итогов {n:05d}." for n in range(700))  # ~14 000 characters
    post_board(game=two, text=long_text, kind="game_over")

    deliver()

    assert [c.text for c in vk.state.topic(first.id).comments] == [
        "\n\n".join(f"Голос {n}" for n in range(5))
    ]
    parts = [c.text for c in vk.state.topic(second.id).comments]
    assert len(parts) == 2 and all(len(p) <= 9000 for p in parts)
    assert "\n".join(parts) == long_text
    assert all(c.params["from_group"] == "1" for c in vk.state.calls("board.createComment"))
    assert requests(vk, "user") <= 3


def test_private_messages_do_not_wait_while_board_posts_wait_for_the_admin_token(
    vk: RunningServer,
) -> None:
    topic = vk.state.create_topic("Игра 1")
    game = make_game(topic_id=topic.id)
    post_board(game=game, text="Голос", kind="vote")
    row = message_row([2001], "Статус")
    with Drainer() as drainer:
        limiter = drainer.transport._limiters["user"]
        while limiter.try_acquire() == 0:  # the admin token's requests are spent
            pass
        started = time.monotonic()
        assert drainer.round() == 1  # the message alone: the board post is not even claimed
        assert time.monotonic() - started < 1.0
        assert received(vk) == Counter({(2001, "Статус"): 1})
        board = Outbox.objects.get(channel=OutboxChannel.BOARD)
        assert board.status == OutboxStatus.PENDING and board.attempts == 0
        assert 0 < drainer.slot_in <= 1.5
        report = drainer.run(max_seconds=10, wait_up_to=5)  # its slot comes: it goes out
    assert report.sent == 2  # the report counts the round before the run too
    assert [c.text for c in vk.state.topic(topic.id).comments] == ["Голос"]
    row.refresh_from_db()
    assert row.status == OutboxStatus.SENT


def test_a_closed_topic_fails_the_posts_and_flags_the_gm(vk: RunningServer) -> None:
    topic = vk.state.create_topic("Закрытая")
    topic.is_closed = True
    game = make_game(topic_id=topic.id)
    post = queued(post_board(game=game, text="Итоги ночи", kind="night_result"))

    deliver()

    post.refresh_from_db()
    assert post.status == OutboxStatus.FAILED
    assert post.last_error.startswith("VK error 15")
    flag = ModerationFlag.objects.get(game=game, kind=FlagKind.DELIVERY)
    assert flag.topic_id == topic.id and flag.vk_user_id is None
    assert "тема закрыта" in flag.text


def test_board_posts_keep_their_order_behind_a_retry(vk: RunningServer) -> None:
    topic = vk.state.create_topic("Игра")
    game = make_game(topic_id=topic.id)
    early = queued(post_board(game=game, text="Раньше", kind="post"))
    Outbox.objects.filter(pk=early.pk).update(next_attempt_at=timezone.now() + timedelta(seconds=1))
    post_board(game=game, text="Позже", kind="post")

    deliver(wait_up_to=0.1)
    assert vk.state.topic(topic.id).comments == []  # the later post waits for the earlier

    deliver(wait_up_to=3)
    assert [c.text for c in vk.state.topic(topic.id).comments] == ["Раньше\n\nПозже"]


def test_invites_kicks_and_button_answers(vk: RunningServer) -> None:
    chat = vk.state.create_chat("Зрители", [9001, 9003])
    game = make_game()
    post_chat(game=game, peer_id=chat.peer_id, text="Добро пожаловать, зрители.", kind="spectators")
    invite = Outbox.objects.create(
        game=game,
        channel=OutboxChannel.INVITE,
        peer_ids=[9002],
        text="Вход в беседу зрителей: {link}",
        payload={"chat_peer_id": chat.peer_id},
        kind="spectator_invite",
    )
    kick = Outbox.objects.create(
        game=game,
        channel=OutboxChannel.KICK,
        text="Посторонний в беседе",
        payload={"chat_id": chat.chat_id, "member_id": 9003},
        kind="intruder",
    )
    gone = Outbox.objects.create(
        game=game,
        channel=OutboxChannel.KICK,
        text="Уже ушёл",
        payload={"chat_id": chat.chat_id, "member_id": 9999},
        kind="intruder",
    )
    update = vk.state.inject_message_event(9001, {"cmd": "status"})
    event_id = update["object"]["event_id"]
    answer = Outbox.objects.create(
        game=game,
        channel=OutboxChannel.EVENT_ANSWER,
        text="",
        payload={
            "event_id": event_id,
            "user_id": 9001,
            "peer_id": 9001,
            "event_data": {"type": "show_snackbar", "text": "Принято"},
        },
        kind="event_answer",
    )

    deliver()

    for row in (invite, kick, gone, answer):
        row.refresh_from_db()
        assert row.status == OutboxStatus.SENT, (row.kind, row.last_error)
    link = chat.invite_link
    assert invite.result is not None
    assert link and invite.result["link"] == link
    assert received(vk)[(9002, f"Вход в беседу зрителей: {link}")] == 1
    assert received(vk)[(chat.peer_id, "Добро пожаловать, зрители.")] == 1
    assert 9003 not in vk.state.chat(chat.chat_id).members
    assert gone.result is not None
    assert gone.result["answer"] == "not in the chat"
    assert vk.state.callback_events[event_id].answer == {"type": "show_snackbar", "text": "Принято"}


def test_an_expired_button_answer_fails_quietly(vk: RunningServer) -> None:
    game = make_game()
    row = Outbox.objects.create(
        game=game,
        channel=OutboxChannel.EVENT_ANSWER,
        text="",
        payload={"event_id": "nope", "user_id": 1, "peer_id": 1},
        kind="event_answer",
    )
    deliver()
    row.refresh_from_db()
    assert row.status == OutboxStatus.FAILED
    assert not ModerationFlag.objects.exists()


def test_invalid_rows_fail_without_calling_vk(vk: RunningServer) -> None:
    game = make_game()
    row = Outbox.objects.create(
        game=game, channel=OutboxChannel.KICK, text="x", payload={"chat_id": 1}, kind="intruder"
    )
    deliver()
    row.refresh_from_db()
    assert row.status == OutboxStatus.FAILED
    assert "member_id" in row.last_error
    assert vk.state.calls() == []


def test_manage_py_deliver_once(vk: RunningServer, capsys: pytest.CaptureFixture[str]) -> None:
    for n in range(3):
        message_row([9100 + n], f"Сообщение {n}")
    call_command("deliver", "--once", "--wait", "1")
    out = capsys.readouterr().out
    assert "Delivered 3 rows, 0 to retry, 0 failed" in out and "nothing pending" in out
    assert Counter(received(vk).values()) == Counter({1: 3})


def test_the_job_drains_and_schedules_itself_for_a_later_retry(
    vk: RunningServer, rq_queues: dict[str, Queue]
) -> None:
    queue = rq_queues["vk"]
    queue.connection.delete(DRAIN_QUEUED_KEY, DRAIN_SCHEDULED_KEY)
    message_row([9200], "Сейчас")
    later = message_row([9201], "Позже")
    Outbox.objects.filter(pk=later.pk).update(
        next_attempt_at=timezone.now() + timedelta(seconds=30)
    )
    try:
        report = drain_outbox()
        assert report["sent"] == 1 and 20 < report["next_due_in"] <= 30
        assert received(vk) == Counter({(9200, "Сейчас"): 1})
        (job_id,) = queue.scheduled_job_registry.get_job_ids()
        job = queue.fetch_job(job_id)
        assert job is not None and job.func_name == "vkbot.delivery.jobs.drain_outbox"
    finally:
        for job_id in queue.scheduled_job_registry.get_job_ids():
            queue.scheduled_job_registry.remove(job_id, delete_job=True)
        queue.connection.delete(DRAIN_QUEUED_KEY, DRAIN_SCHEDULED_KEY)


def test_deliver_forever_picks_up_new_rows_until_stopped(vk: RunningServer) -> None:
    from vkbot.management.commands.deliver import Command

    message_row([9300], "Первое")
    looks = {"count": 0}

    def stop() -> bool:
        looks["count"] += 1
        if looks["count"] == 5:
            message_row([9301], "Второе")  # written while the loop runs
        return received(vk)[(9301, "Второе")] == 1 or looks["count"] > 500

    with Drainer() as drainer:
        report = Command()._forever(drainer, 0.05, stop)
    assert received(vk) == Counter({(9300, "Первое"): 1, (9301, "Второе"): 1})
    assert report.sent == 2 and report.stopped == "asked to stop"


def test_deliver_refuses_bad_options_and_missing_tokens(vk: RunningServer, settings: Any) -> None:
    with pytest.raises(CommandError, match="--wait must not be negative"):
        call_command("deliver", "--once", "--wait", "-1")
    with pytest.raises(CommandError):
        call_command("deliver")  # --once or --forever
    settings.VK_GROUP_TOKEN = ""
    settings.VK_USER_TOKEN = ""
    with pytest.raises(CommandError, match="No VK token is configured"):
        call_command("deliver", "--once")


def test_a_post_retried_alone_is_sent_in_its_recorded_comment(vk: RunningServer) -> None:
    """A retry that re-queues one post of a failed merged comment (the panel's button resets
    one row): the comment goes out whole under its guid, once; nothing waits forever."""
    topic = vk.state.create_topic("Игра")
    topic.is_closed = True
    game = make_game(topic_id=topic.id)
    first = queued(post_board(game=game, text="Первый", kind="post"))
    second = queued(post_board(game=game, text="Второй", kind="post"))
    deliver()
    assert set(Outbox.objects.values_list("status", flat=True)) == {OutboxStatus.FAILED}
    topic.is_closed = False
    Outbox.objects.filter(pk=second.pk).update(status=OutboxStatus.PENDING, attempts=0)

    report = deliver(wait_up_to=1)

    assert report.sent == 1
    assert [c.text for c in vk.state.topic(topic.id).comments] == ["Первый\n\nВторой"]
    assert Outbox.objects.get(pk=second.pk).status == OutboxStatus.SENT
    assert Outbox.objects.get(pk=first.pk).status == OutboxStatus.FAILED
    outbox_retry(outbox_id=first.pk, by=Actor.gm("test"))
    deliver(wait_up_to=1)
    assert len(vk.state.topic(topic.id).comments) == 1  # its guid: VK has it already
    assert Outbox.objects.get(pk=first.pk).status == OutboxStatus.SENT


def test_a_message_requeued_from_scratch_reaches_the_refused_player(vk: RunningServer) -> None:
    """Any retry that puts a failed row back with ``attempts=0`` (as the panel's button does)
    tries the recipients VK refused again, under the same random_id."""
    game = make_game(players=2)
    vk.state.set_messages_allowed(1002, False)
    row = send_message(game=game, peer_ids=[1001, 1002], text="Итоги дня", kind="day_result")[0]
    deliver()
    row.refresh_from_db()
    assert row.result is not None
    assert row.status == OutboxStatus.SENT and "1002" in row.result["failed"]
    vk.state.set_messages_allowed(1002, True)
    Outbox.objects.filter(pk=row.pk).update(status=OutboxStatus.PENDING, attempts=0)

    deliver()

    row.refresh_from_db()
    assert row.status == OutboxStatus.SENT and "failed" not in row.result
    assert received(vk) == Counter({(1001, "Итоги дня"): 1, (1002, "Итоги дня"): 1})


def test_a_row_that_falls_due_while_a_round_runs_is_looked_at_again_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The idle reply latency: a row committed while a round ran (so the round claimed nothing)
    is looked at again after RELOOK_SLEEP, not a whole IDLE_SLEEP; a row that stays unclaimable
    (another worker's) backs off to IDLE_SLEEP."""
    from vkbot.delivery import drain

    rounds = iter([False, True, False, False, False])
    due = iter([0.0, 0.0, 0.0, None])
    sleeps: list[float] = []
    monkeypatch.setattr(drain.Drainer, "round", lambda self: next(rounds))
    monkeypatch.setattr(drain, "next_due_in", lambda channels: next(due, None))
    monkeypatch.setattr(drain.time, "sleep", sleeps.append)
    with Drainer() as drainer:
        report = drainer.run(max_seconds=60, wait_up_to=10)
    # missed -> relook at once -> claimed -> missed -> relook at once -> missed again -> back off
    assert sleeps == [drain.RELOOK_SLEEP, drain.RELOOK_SLEEP, drain.IDLE_SLEEP]
    assert drain.RELOOK_SLEEP < drain.IDLE_SLEEP / 10
    assert report.stopped == "nothing pending"
