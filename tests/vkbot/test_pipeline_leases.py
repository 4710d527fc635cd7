"""A runbot's batches under its lease of the community (vkbot.pipeline ``holder``,
gameplay.services.longpoll_leases): a runbot that does not hold the lease applies nothing and
stores no position, and events are applied exactly once across a handover — the next holder
polls from the stored position, and what it polls again is skipped as already applied."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from gameplay.models import LongPollLease, VkEvent
from gameplay.services.longpoll_leases import LeaseLost, longpoll_lease_claim
from tests.vkbot.ingest_support import (
    GROUP_ID,
    VK_BASE,
    configure,
    make_game,
    message_update,
    record_dispatch,
    recorded_texts,
    use_dispatch,
)
from vkbot import longpoll
from vkbot.pipeline import CHUNK, Section, apply_sections, apply_updates, stored_ts

pytestmark = pytest.mark.django_db

A, B = "host:1:a", "host:2:b"
TTL = 6.0


def updates(*numbers: int) -> list[dict[str, Any]]:
    return [message_update(VK_BASE + 1, f"сообщение {n}", event_id=f"e{n}") for n in numbers]


def texts(*numbers: int) -> list[str]:
    return [f"сообщение {n}" for n in numbers]


def expire() -> None:
    past = timezone.now() - timedelta(seconds=1)
    LongPollLease.objects.filter(group_id=GROUP_ID).update(expires_at=past)


@pytest.fixture
def game(settings: Any, monkeypatch: pytest.MonkeyPatch) -> int:
    configure(settings)
    game_id = make_game()
    use_dispatch(monkeypatch, record_dispatch(game_id))
    return game_id


@pytest.mark.django_db(transaction=True)  # runbot's database thread closes old connections
def test_a_runbot_without_the_lease_applies_nothing_and_stores_no_position(game: int) -> None:
    assert longpoll_lease_claim(group_id=GROUP_ID, holder=B, ttl=TTL)

    with pytest.raises(LeaseLost):
        apply_updates(updates(1, 2), "3", group_id=GROUP_ID, holder=A)
    with pytest.raises(LeaseLost):
        longpoll._store_ts("7", GROUP_ID, A)  # a position reached without a batch

    assert recorded_texts(game) == [] and not VkEvent.objects.exists()
    assert stored_ts(GROUP_ID) is None
    assert apply_updates(updates(1, 2), "3", group_id=GROUP_ID, holder=B) == 2
    assert stored_ts(GROUP_ID) == "3"


def test_events_are_applied_exactly_once_across_a_handover(game: int) -> None:
    assert longpoll_lease_claim(group_id=GROUP_ID, holder=A, ttl=TTL)
    assert apply_updates(updates(1, 2), "3", group_id=GROUP_ID, holder=A) == 2
    # A polls the next batch (3, 4), then stalls; its lease expires and B takes it over.
    stalled = updates(3, 4)
    expire()
    assert longpoll_lease_claim(group_id=GROUP_ID, holder=B, ttl=TTL)

    # B polls from the stored position, and once more from further back (a failed: 1 replay).
    assert stored_ts(GROUP_ID) == "3"
    assert apply_updates(updates(3, 4), "5", group_id=GROUP_ID, holder=B) == 2
    assert apply_updates(updates(1, 2, 3, 4, 5), "6", group_id=GROUP_ID, holder=B) == 1
    # A wakes up and applies what it had polled: refused, nothing twice.
    with pytest.raises(LeaseLost):
        apply_updates(stalled, "5", group_id=GROUP_ID, holder=A)

    assert recorded_texts(game) == texts(1, 2, 3, 4, 5)
    assert VkEvent.objects.count() == 5 and stored_ts(GROUP_ID) == "6"


def test_a_lease_lost_in_the_middle_of_a_batch_leaves_the_rest_to_the_next_holder(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batch's first chunk is committed under A's lease, which is lost before the second:
    A stops there, without the batch's position; B polls the whole batch again and applies
    the second chunk only."""
    configure(settings)
    game_id = make_game()
    record = record_dispatch(game_id)
    last_of_first_chunk = f"e{CHUNK}"

    def dispatch(update: dict[str, Any]) -> None:
        record(update)
        if update["event_id"] == last_of_first_chunk:
            expire()  # committed with the first chunk

    use_dispatch(monkeypatch, dispatch)
    numbers = range(1, CHUNK + 11)
    assert longpoll_lease_claim(group_id=GROUP_ID, holder=A, ttl=TTL)

    with pytest.raises(LeaseLost):
        apply_updates(updates(*numbers), "99", group_id=GROUP_ID, holder=A)
    assert recorded_texts(game_id) == texts(*range(1, CHUNK + 1))
    assert stored_ts(GROUP_ID) is None

    assert longpoll_lease_claim(group_id=GROUP_ID, holder=B, ttl=TTL)
    assert apply_updates(updates(*numbers), "99", group_id=GROUP_ID, holder=B) == 10
    assert recorded_texts(game_id) == texts(*numbers)
    assert stored_ts(GROUP_ID) == "99"


def test_a_slice_of_several_communities_applies_the_held_ones_and_reports_the_lost(
    game: int,
) -> None:
    other = GROUP_ID + 1
    assert longpoll_lease_claim(group_id=GROUP_ID, holder=A, ttl=TTL)
    assert longpoll_lease_claim(group_id=other, holder=B, ttl=TTL)
    foreign = [
        message_update(VK_BASE + 1, "чужое", event_id="x1", group_id=other),
    ]
    result = apply_sections(
        [
            Section(GROUP_ID, updates(1, 2), ts="3"),
            Section(other, foreign, ts="9"),
        ],
        source="longpoll",
        holder=A,
    )
    assert result.applied == {GROUP_ID: 2} and result.lost == {other}
    assert recorded_texts(game) == texts(1, 2)
    assert stored_ts(GROUP_ID) == "3" and stored_ts(other) is None
    assert not VkEvent.objects.filter(group_id=other).exists()
    # Applied again (a replay of the same batch): every event is skipped as a duplicate.
    again = apply_sections([Section(GROUP_ID, updates(1, 2), ts="3")], source="longpoll", holder=A)
    assert again.applied == {GROUP_ID: 0} and recorded_texts(game) == texts(1, 2)
