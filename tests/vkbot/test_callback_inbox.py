"""The Callback inbox: the endpoint records and answers, the applier (``vkbot.inbox``) applies
the inbox in slices across communities, exactly once and each community's events in order —
however many appliers run, a handler crashing, the database failing under it."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from django.db import OperationalError, connections
from django.test import Client

from gameplay.context import current_group
from gameplay.messages import render
from gameplay.models import InboundEvent, Outbox, VkEvent
from gameplay.selectors.inbox import Inbound
from gameplay.services.communities import community_record
from tests.localvk.support import GROUP_ID
from tests.vkbot.ingest_support import (
    SECRET,
    configure,
    message_update,
    use_dispatch,
)
from vkbot import inbox
from vkbot.inbox import apply_inbox, fair_part

URL = "/vk/callback/"
OTHERS = {88: "secret-of-88", 89: "secret-of-89"}
SECRETS = {GROUP_ID: SECRET, **OTHERS}

Seen = list[tuple[int | None, str]]


@pytest.fixture
def seen(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Seen:
    """Three communities; the handler records (community, event id) of what it applies."""
    configure(settings)
    for group, secret in OTHERS.items():
        community_record(vk_id=group, name=f"Сообщество {group}", group_token=f"token-{group}",
                         callback_secret=secret, connected=True)  # fmt: skip
    applied: Seen = []
    use_dispatch(monkeypatch, lambda u: applied.append((current_group(), u["event_id"])))
    return applied


def event(group: int, event_id: str, user: int = 42) -> dict[str, Any]:
    update = message_update(user, "привет", event_id=event_id, group_id=group)
    return {**update, "secret": SECRETS[group]}


def post(client: Client, body: dict[str, Any], **headers: str) -> Any:
    return client.post(URL, data=json.dumps(body), content_type="application/json",
                       headers=headers)  # fmt: skip


def burst(client: Client, per_group: int) -> dict[int, list[str]]:
    """``per_group`` events of each community, posted interleaved; each one's ids in order."""
    posted: dict[int, list[str]] = {group: [] for group in SECRETS}
    for number in range(per_group):
        for group in SECRETS:
            event_id = f"{group}-{number}"
            assert post(client, event(group, event_id)).content == b"ok"
            posted[group].append(event_id)
    return posted


def in_order(seen: Seen, group: int) -> list[str]:
    return [event_id for g, event_id in seen if g == group]


@contextmanager
def counting_slices(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    sizes: list[int] = []
    real = inbox.apply_sections

    def counted(sections: Any, **options: Any) -> Any:
        sizes.append(sum(len(s.updates) for s in sections))
        return real(sections, **options)

    monkeypatch.setattr(inbox, "apply_sections", counted)
    yield sizes


@pytest.mark.django_db
def test_the_endpoint_records_the_event_and_answers_ok_without_applying_it(
    client: Client, seen: Seen
) -> None:
    response = post(client, event(GROUP_ID, "e-1"))

    assert (response.status_code, response.content) == (200, b"ok")
    [row] = InboundEvent.objects.all()
    assert (row.group_id, row.event_id) == (GROUP_ID, "e-1")
    assert "secret" not in row.body and row.body["object"]["message"]["text"] == "привет"
    assert seen == [] and not VkEvent.objects.exists()

    assert apply_inbox() == 1
    assert seen == [(GROUP_ID, "e-1")] and not InboundEvent.objects.exists()
    assert VkEvent.objects.get().source == "callback"


@pytest.mark.django_db
def test_a_burst_across_communities_is_applied_in_few_transactions_in_order(
    client: Client, seen: Seen, monkeypatch: pytest.MonkeyPatch
) -> None:
    posted = burst(client, 40)  # 120 events of three communities

    with counting_slices(monkeypatch) as slices:
        assert apply_inbox(limit=60) == 120

    assert slices == [60, 60]
    for group, ids in posted.items():
        assert in_order(seen, group) == ids
    assert VkEvent.objects.count() == 120 and not InboundEvent.objects.exists()


@pytest.mark.django_db
def test_each_community_gets_its_share_of_a_slice_however_large_anothers_burst(
    client: Client, seen: Seen, monkeypatch: pytest.MonkeyPatch
) -> None:
    for number in range(100):
        post(client, event(88, f"big-{number}"))
    post(client, event(GROUP_ID, "small"))

    with counting_slices(monkeypatch) as slices:
        apply_inbox(limit=30)

    assert slices[0] == 16  # 15 of the burst, the small community's one
    assert (GROUP_ID, "small") in seen[:16]
    assert in_order(seen, 88) == [f"big-{number}" for number in range(100)]


@pytest.mark.django_db
def test_a_duplicate_post_and_a_retry_after_it_was_applied_change_the_game_once(
    client: Client, seen: Seen
) -> None:
    body = event(GROUP_ID, "dup-1")
    assert post(client, body).content == b"ok"
    assert post(client, body, **{"X-Retry-Counter": "1"}).content == b"ok"
    assert InboundEvent.objects.count() == 1  # waiting once

    apply_inbox()
    assert post(client, body, **{"X-Retry-Counter": "2"}).content == b"ok"  # applied already
    apply_inbox()

    assert seen == [(GROUP_ID, "dup-1")]
    assert VkEvent.objects.count() == 1 and not InboundEvent.objects.exists()


@pytest.mark.django_db
def test_a_crashing_handler_loses_only_its_event_and_the_sender_gets_an_apology(
    client: Client, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    configure(settings)
    applied: list[str] = []

    def dispatch(update: dict[str, Any]) -> None:
        if update["event_id"] == "boom":
            raise KeyError("bug")
        applied.append(update["event_id"])

    use_dispatch(monkeypatch, dispatch)
    for event_id, user in (("a", 41), ("boom", 77), ("b", 42)):
        post(client, event(GROUP_ID, event_id, user))

    assert apply_inbox() == 3

    assert applied[-2:] == ["a", "b"]  # again one by one, after the chunk's rollback
    assert VkEvent.objects.get(event_id="boom").error.startswith("KeyError")
    [apology] = Outbox.objects.all()
    assert apology.peer_ids == [77] and apology.text == render("player/internal_error")
    assert not InboundEvent.objects.exists()


@pytest.mark.django_db
def test_a_database_outage_in_the_applier_loses_nothing(
    client: Client, seen: Seen, monkeypatch: pytest.MonkeyPatch
) -> None:
    posted = burst(client, 3)
    real = inbox.apply_sections
    calls = 0

    def failing(sections: Any, **options: Any) -> Any:
        nonlocal calls
        calls += 1
        result = real(sections, **options)  # applied, then the commit never happens
        raise OperationalError("server closed the connection unexpectedly")
        return result

    monkeypatch.setattr(inbox, "apply_sections", failing)
    seen_before = len(seen)
    with pytest.raises(OperationalError):
        apply_inbox()
    assert calls == 1 and InboundEvent.objects.count() == 9 and not VkEvent.objects.exists()

    monkeypatch.setattr(inbox, "apply_sections", real)
    del seen[seen_before:]  # what the rolled-back transaction ran
    assert apply_inbox() == 9
    for group, ids in posted.items():
        assert in_order(seen, group) == ids
    assert VkEvent.objects.count() == 9 and not InboundEvent.objects.exists()


def test_fair_part_keeps_each_games_order_and_the_barriers() -> None:
    rows = [Inbound(n, GROUP_ID, {}) for n in range(8)]
    ids = lambda taken: [row.id for row in taken]  # noqa: E731

    # Game 1 has more than its quantum: its later rows wait, game 2's go on.
    assert ids(fair_part(rows[:5], [1, 1, 1, 2, 2], limit=10, quantum=2)) == [0, 1, 3, 4]
    # An update of no game after a row left out waits, and so does everything after it.
    assert ids(fair_part(rows[:5], [1, 1, 1, None, 2], limit=10, quantum=2)) == [0, 1]
    # With nothing left out before it, it goes with the rest, in its place.
    assert ids(fair_part(rows[:4], [None, 1, None, 2], limit=10, quantum=2)) == [0, 1, 2, 3]
    assert ids(fair_part(rows, [1, 2] * 4, limit=3, quantum=4)) == [0, 1, 2]


# --- several appliers, the web's thread: real transactions, each thread its own connection --


def _apply_in_threads(count: int, **options: Any) -> list[BaseException]:
    errors: list[BaseException] = []
    start = threading.Barrier(count)

    def run() -> None:
        try:
            start.wait()
            while InboundEvent.objects.exists():
                apply_inbox(**options)
        except BaseException as error:  # noqa: BLE001 - reported by the test
            errors.append(error)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    return errors


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("lease", [True, False], ids=["with-the-lease", "lease-bypassed"])
def test_two_appliers_at_once_apply_each_event_once_in_order(
    client: Client, seen: Seen, monkeypatch: pytest.MonkeyPatch, lease: bool
) -> None:
    """Without the lease (both appliers at work at once), the claims and the slice lock alone
    keep every event once and each community's events in order."""
    posted = burst(client, 50)
    if not lease:

        @contextmanager
        def always() -> Iterator[bool]:
            yield True

        monkeypatch.setattr(inbox, "applier_lease", always)

    assert _apply_in_threads(2, limit=20) == []

    assert len(seen) == len(set(seen)) == 150
    for group, ids in posted.items():
        assert in_order(seen, group) == ids
    assert VkEvent.objects.count() == 150 and not InboundEvent.objects.exists()


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_the_web_processs_applier_thread_applies_what_the_endpoint_recorded(
    client: Client, seen: Seen, settings: Any
) -> None:
    settings.CALLBACK_APPLY_IN_WEB = True
    try:
        posted = burst(client, 5)
        deadline = time.monotonic() + 30
        while InboundEvent.objects.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        inbox.applier.stop()
    for group, ids in posted.items():
        assert in_order(seen, group) == ids
    assert VkEvent.objects.count() == 15 and not InboundEvent.objects.exists()


@pytest.mark.django_db
def test_the_deadline_tick_applies_what_no_web_process_applied(
    client: Client, seen: Seen, rq_queues: Any
) -> None:
    from gameplay import jobs

    posted = burst(client, 2)

    report = jobs.tick()

    assert report["callbacks_applied"] == 6
    for group, ids in posted.items():
        assert in_order(seen, group) == ids
    assert not InboundEvent.objects.exists()
    assert "callbacks_applied" not in jobs.tick()  # nothing waits: nothing to say
