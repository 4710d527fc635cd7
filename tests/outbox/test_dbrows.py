"""outbox.dbrows: the hot writes in plain SQL write what the ORM would (primary keys, the
``auto_now_add`` time, JSON), in chunks, and each updated row's named fields only."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from gameplay.models import Outbox, OutboxChannel, VkEvent
from outbox import dbrows

pytestmark = pytest.mark.django_db


def row(n: int, **fields: object) -> Outbox:
    return Outbox(
        channel=OutboxChannel.MESSAGE,
        peer_ids=[1000 + n, 2000 + n],
        text=f"текст {n}",
        kind="test",
        payload={"n": n, "слово": "ё"},
        **fields,
    )


def inserts(captured: CaptureQueriesContext) -> int:
    return sum(q["sql"].startswith("INSERT") for q in captured.captured_queries)


def test_insert_sets_primary_keys_in_order_and_writes_what_the_orm_reads_back() -> None:
    rows = [row(n) for n in range(3)]
    before = timezone.now()
    with CaptureQueriesContext(connection) as captured:
        dbrows.insert(rows)
    assert inserts(captured) == 1
    assert [r.pk for r in rows] == sorted(r.pk for r in rows) and None not in [r.pk for r in rows]
    assert all(not r._state.adding and r._state.db == connection.alias for r in rows)
    for n, r in enumerate(rows):
        stored = Outbox.objects.get(pk=r.pk)
        assert (stored.text, stored.peer_ids, stored.payload) == (
            f"текст {n}",
            [1000 + n, 2000 + n],
            {"n": n, "слово": "ё"},
        )
        assert stored.status == r.status and stored.attempts == 0
        assert stored.created_at is not None and stored.created_at >= before
        assert stored.created_at == r.created_at  # pre_save ran on the instance too


def test_insert_goes_in_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dbrows, "INSERT_CHUNK", 2)
    rows = [row(n) for n in range(5)]
    with CaptureQueriesContext(connection) as captured:
        dbrows.insert(rows)
    assert inserts(captured) == 3
    assert len({r.pk for r in rows}) == 5
    assert list(Outbox.objects.order_by("pk").values_list("text", flat=True)) == [
        f"текст {n}" for n in range(5)
    ]


def test_nothing_to_insert_or_update_runs_no_statement() -> None:
    with CaptureQueriesContext(connection) as captured:
        dbrows.insert([])
        dbrows.update_each([], ["text"])
    assert captured.captured_queries == []


def test_a_model_with_a_database_default_is_refused() -> None:
    event = VkEvent(event_id="e1", type="message_new")
    with pytest.raises(ValueError, match="database default"):
        dbrows.insert([event])
    assert not VkEvent.objects.exists()


def test_update_each_writes_the_named_fields_of_each_row_only() -> None:
    rows = [row(n) for n in range(3)]
    dbrows.insert(rows)
    for n, r in enumerate(rows):
        r.result = {"sent": {str(1000 + n): n}}
        r.attempts = 5
        r.text = "не сохранять"
    dbrows.update_each(rows[:2], ["result", "attempts"])
    stored = {r.pk: r for r in Outbox.objects.all()}
    for n, r in enumerate(rows[:2]):
        assert stored[r.pk].result == {"sent": {str(1000 + n): n}}
        assert stored[r.pk].attempts == 5
        assert stored[r.pk].text == f"текст {n}"
    untouched = stored[rows[2].pk]
    assert (untouched.result, untouched.attempts) == (None, 0)


def test_update_where_updates_the_matching_rows_only_and_counts_them() -> None:
    rows = [row(n, topic_id=1 if n < 2 else 2, attempts=n % 2) for n in range(4)]
    dbrows.insert(rows)
    ids = [r.pk for r in rows]
    match = {"topic_id": 1, "attempts": 1}
    assert dbrows.update_where(Outbox, {"text": "новый", "attempts": 5}, match) == 1
    assert dbrows.update_where(Outbox, {"text": "новый"}, match) == 0  # none left to match
    got = {r.pk: (r.text, r.attempts) for r in Outbox.objects.filter(pk__in=ids)}
    assert got == {
        ids[0]: ("текст 0", 0),
        ids[1]: ("новый", 5),
        ids[2]: ("текст 2", 0),
        ids[3]: ("текст 3", 1),
    }
    with pytest.raises(ValueError):
        dbrows.update_where(Outbox, {"text": "x"}, {"topic_id": None})
