"""The ingestion pipeline (vkbot.pipeline): every VK event applied at most once."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import pytest
from django.db import OperationalError, connections

from config.env import EnvError
from gameplay.messages import render
from gameplay.models import EventKind, GameEvent, Outbox, PollState, VkEvent
from gameplay.services.common import lock_game, log_event
from tests.localvk.support import GROUP_ID
from tests.vkbot.ingest_support import (
    VK_BASE,
    configure,
    make_game,
    message_update,
    record_dispatch,
    recorded_texts,
    snapshot,
    use_dispatch,
    vote_dispatch,
    vote_events,
    votes_cast,
)
from vkbot.pipeline import (
    CHUNK,
    apply_update,
    apply_updates,
    event_id_of,
    group_id_of,
    sender_of,
    stored_ts,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def vk_settings(settings: Any) -> None:
    configure(settings)


@pytest.fixture
def game_id() -> int:
    return make_game()


def test_the_same_event_twice_changes_the_game_once(
    game_id: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_dispatch(monkeypatch, vote_dispatch(game_id))
    update = message_update(VK_BASE + 1, "голос 2", event_id="ev-vote-1")

    assert apply_update(update, source="longpoll") is True
    after_first = snapshot(game_id)
    assert apply_update(update, source="callback") is False

    assert snapshot(game_id) == after_first
    assert votes_cast(game_id) == 1 and vote_events(game_id) == 1
    event = VkEvent.objects.get()
    assert (event.event_id, event.type, event.group_id, event.source) == (
        "ev-vote-1", "message_new", GROUP_ID, "longpoll",
    )  # fmt: skip


def test_distinct_events_are_each_applied(game_id: int, monkeypatch: pytest.MonkeyPatch) -> None:
    use_dispatch(monkeypatch, vote_dispatch(game_id))
    apply_update(message_update(VK_BASE + 1, "голос 2", event_id="a"), source="longpoll")
    apply_update(message_update(VK_BASE + 1, "голос 3", event_id="b"), source="longpoll")
    assert votes_cast(game_id) == 2 and VkEvent.objects.count() == 2


def test_an_update_without_event_id_gets_a_stable_id(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []
    use_dispatch(monkeypatch, calls.append)
    old = message_update(42, "привет", event_id=None)
    same_with_secret = {**old, "secret": "whatever"}
    other = message_update(42, "пока", event_id=None)

    reordered = dict(reversed(old.items()))
    assert event_id_of(old) == event_id_of(same_with_secret) == event_id_of(reordered)
    assert event_id_of(old) != event_id_of(other)
    assert event_id_of(old).startswith("sha256:") and len(event_id_of(old)) <= 80

    assert apply_update(old, source="longpoll") is True
    assert apply_update(same_with_secret, source="callback") is False
    assert apply_update(other, source="longpoll") is True
    assert [c["object"]["message"]["text"] for c in calls] == ["привет", "пока"]


def test_an_overlong_event_id_is_hashed_to_fit(monkeypatch: pytest.MonkeyPatch) -> None:
    use_dispatch(monkeypatch, lambda update: None)
    update = message_update(42, "x", event_id="z" * 500)
    assert apply_update(update, source="longpoll") is True
    assert apply_update(update, source="longpoll") is False
    assert len(VkEvent.objects.get().event_id) <= 80


def test_an_update_for_another_community_is_ignored(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    calls: list[dict[str, Any]] = []
    use_dispatch(monkeypatch, calls.append)
    with caplog.at_level(logging.WARNING, logger="vkbot.pipeline"):
        foreign = message_update(42, "x", group_id=GROUP_ID + 1)
        assert apply_update(foreign, source="longpoll") is False
        assert apply_update({**foreign, "group_id": None}, source="callback") is False
    assert calls == [] and not VkEvent.objects.exists()
    assert "is not VK_GROUP_ID" in caplog.text


@pytest.mark.parametrize(
    "bad", [None, [], "message_new", {"event_id": "x", "group_id": GROUP_ID}, {"type": 5}]
)
def test_something_that_is_not_an_update_changes_nothing(
    bad: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[Any] = []
    use_dispatch(monkeypatch, calls.append)
    assert apply_update(bad, source="longpoll") is False
    assert calls == [] and not VkEvent.objects.exists()


def test_the_handler_receives_the_update_as_vk_sent_it(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[dict[str, Any]] = []
    use_dispatch(monkeypatch, calls.append)
    update = message_update(42, "привет", event_id="raw")
    apply_update(update, source="longpoll")
    assert calls == [update]


def crashing_after_a_write(game_id: int) -> Any:
    def dispatch(update: dict[str, Any]) -> None:
        log_event(lock_game(game_id=game_id), EventKind.STORY_SET, event_id=update.get("event_id"))
        raise ZeroDivisionError("a bug in a handler")

    return dispatch


def test_a_crashing_handler_is_rolled_back_recorded_and_apologised_for(
    game_id: int, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    use_dispatch(monkeypatch, crashing_after_a_write(game_id))
    outbox_before = Outbox.objects.count()
    update = message_update(VK_BASE + 2, "голос 1", event_id="boom")

    with caplog.at_level(logging.ERROR, logger="vkbot.pipeline"):
        assert apply_update(update, source="longpoll") is True

    assert not GameEvent.objects.filter(kind="story_set").exists()  # the savepoint rolled back
    event = VkEvent.objects.get(event_id="boom")  # recorded: not retried
    assert event.error.startswith("ZeroDivisionError")  # what went wrong, for the operator
    [apology] = Outbox.objects.all()[outbox_before:]
    assert apology.peer_ids == [VK_BASE + 2] and apology.text == render("player/internal_error")
    assert apology.game_id is None and apology.kind == "internal_error"
    assert "Traceback" not in apology.text and "ZeroDivisionError" not in apology.text
    [record] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert record.exc_info is not None and "boom" in record.getMessage()

    # Redelivered: nothing more happens, not even a second apology.
    assert apply_update(update, source="callback") is False
    assert Outbox.objects.count() == outbox_before + 1


def test_a_crash_inside_a_batch_loses_only_the_crashing_update(
    game_id: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    healthy = record_dispatch(game_id)

    def crash_on_m1(update: dict[str, Any]) -> None:
        healthy(update)
        if update["event_id"] == "k1":
            raise ZeroDivisionError("bug")

    use_dispatch(monkeypatch, crash_on_m1)
    outbox_before = Outbox.objects.count()
    batch = [message_update(VK_BASE + 2, f"m{i}", event_id=f"k{i}") for i in range(3)]

    assert apply_updates(batch, "20", source="longpoll") == 3
    # The chunk ran again update by update: the others stand, the crash left nothing.
    assert recorded_texts(game_id) == ["m0", "m2"] and stored_ts() == "20"
    assert VkEvent.objects.get(event_id="k1").error.startswith("ZeroDivisionError")
    assert VkEvent.objects.get(event_id="k0").error == ""
    [apology] = Outbox.objects.all()[outbox_before:]
    assert apology.text == render("player/internal_error")


def test_a_crash_without_a_known_user_sends_nothing(
    game_id: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_dispatch(monkeypatch, crashing_after_a_write(game_id))
    before = Outbox.objects.count()
    update = {
        "group_id": GROUP_ID, "type": "board_post_delete", "event_id": "del-1", "v": "5.199",
        "object": {"topic_owner_id": -GROUP_ID, "topic_id": 5, "id": 9},
    }  # fmt: skip
    assert apply_update(update, source="longpoll") is True
    assert Outbox.objects.count() == before


@pytest.mark.parametrize(
    ("update", "user"),
    [
        (message_update(17, "x"), 17),
        ({"type": "message_event", "object": {"user_id": 18, "peer_id": 18}}, 18),
        ({"type": "board_post_new", "object": {"from_id": 19, "topic_id": 1}}, 19),
        ({"type": "board_post_new", "object": {"from_id": -GROUP_ID, "topic_id": 1}}, None),
        ({"type": "message_new", "object": {"message": {"from_id": "17"}}}, None),
        ({"type": "message_reply", "object": {"from_id": 20}}, None),
        ({"type": "message_new", "object": None}, None),
    ],
)
def test_sender_of(update: dict[str, Any], user: int | None) -> None:
    assert sender_of(update) == user


def test_a_database_outage_in_a_handler_records_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(update: dict[str, Any]) -> None:
        raise OperationalError("server closed the connection unexpectedly")

    use_dispatch(monkeypatch, broken)
    update = message_update(42, "x", event_id="outage")
    with pytest.raises(OperationalError):
        apply_update(update, source="longpoll")
    assert not VkEvent.objects.exists() and not Outbox.objects.exists()

    calls: list[dict[str, Any]] = []
    use_dispatch(monkeypatch, calls.append)
    assert apply_update(update, source="longpoll") is True  # delivered again: applied now
    assert calls == [update]


def test_a_batch_stores_its_ts_with_the_last_update(
    game_id: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_dispatch(monkeypatch, record_dispatch(game_id))
    batch = [message_update(42, f"m{i}", event_id=f"b{i}") for i in range(3)]

    assert stored_ts() is None
    assert apply_updates(batch, "104", source="longpoll") == 3
    assert stored_ts() == "104" and PollState.objects.get().group_id == GROUP_ID
    assert apply_updates(batch, "107", source="longpoll") == 0  # a replay
    assert recorded_texts(game_id) == ["m0", "m1", "m2"] and stored_ts() == "107"
    assert apply_updates([], "108") == 0 and stored_ts() == "108"


def test_a_batch_cut_short_by_an_outage_resumes_without_repeats(
    game_id: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_dispatch(monkeypatch, record_dispatch(game_id))
    apply_updates([], "10")
    size = CHUNK + 5  # two transactions: a full chunk, then the rest
    batch = [message_update(42, f"m{i}", event_id=f"c{i}") for i in range(size)]
    texts = [f"m{i}" for i in range(size)]
    healthy = record_dispatch(game_id)

    def flaky(update: dict[str, Any]) -> None:
        if update["event_id"] == f"c{CHUNK + 2}":
            raise OperationalError("connection lost")
        healthy(update)

    use_dispatch(monkeypatch, flaky)
    with pytest.raises(OperationalError):
        apply_updates(batch, "15")
    # The first chunk committed; the one the outage hit rolled back whole; no ts stored.
    assert recorded_texts(game_id) == texts[:CHUNK] and stored_ts() == "10"

    use_dispatch(monkeypatch, healthy)  # the poller polls from ts 10 again: the same batch
    assert apply_updates(batch, "15") == 5
    assert recorded_texts(game_id) == texts and stored_ts() == "15"


def test_the_ts_of_a_batch_is_kept_when_its_last_update_is_a_duplicate(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_dispatch(monkeypatch, lambda update: None)
    update = message_update(42, "x", event_id="dup")
    apply_update(update, source="callback")
    assert apply_updates([update], "55") == 0
    assert stored_ts() == "55"


@pytest.mark.django_db(transaction=True)
def test_two_processes_racing_on_one_event_apply_it_once(monkeypatch: pytest.MonkeyPatch) -> None:
    game_id = make_game()
    vote = vote_dispatch(game_id)

    def slow_vote(update: dict[str, Any]) -> None:
        vote(update)
        time.sleep(0.2)  # hold the transaction open while the other one arrives

    use_dispatch(monkeypatch, slow_vote)
    update = message_update(VK_BASE + 3, "голос 1", event_id="race")
    barrier = threading.Barrier(3)
    results: list[Any] = []

    def deliver(source: str) -> None:
        try:
            barrier.wait()
            results.append(apply_update(update, source=source))
        except Exception as exc:  # noqa: BLE001 - the test inspects it
            results.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=deliver, args=(s,)) for s in ("longpoll", "callback", "x")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert sorted(results, key=str) == [False, False, True]
    assert votes_cast(game_id) == 1 and vote_events(game_id) == 1


def test_the_poll_position_needs_a_community(settings: Any) -> None:
    settings.VK_GROUP_ID = None
    with pytest.raises(EnvError, match="VK_GROUP_ID"):
        apply_updates([], "5")
    assert not PollState.objects.exists()


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(7, 7), ("7", 7), (2**63 - 1, 2**63 - 1), (-(2**63), -(2**63)), (2**63, None),
     (-(2**63) - 1, None), (10**30, None), (True, None), ("x", None), (None, None),
     (float("inf"), None)],
)  # fmt: skip
def test_group_id_of_is_none_beyond_what_a_community_id_can_be(raw: object, expected: object):
    """An id no ``vk_id`` column holds is no community's: it never reaches a query."""
    assert group_id_of({"type": "message_new", "group_id": raw}) == expected
