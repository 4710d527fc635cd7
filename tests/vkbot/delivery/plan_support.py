"""Outbox rows for the pure planning tests (no database): ``row`` a private message, ``post``
a board post, and ``no_offset`` (the deployment's id offset 0, so a row's ``random_id`` is its
id: ``outbox.ids``) for a test module to use."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from gameplay.models import Outbox, OutboxChannel
from vkbot.delivery.batch import Call


@pytest.fixture(scope="module")
def no_offset() -> Iterator[None]:
    from outbox import ids as deployment

    saved, deployment._offset = deployment._offset, 0
    yield
    deployment._offset = saved


def row(pk: int, peers: list[int], text: str, **fields: Any) -> Outbox:
    fields.setdefault("channel", OutboxChannel.MESSAGE)
    return Outbox(pk=pk, peer_ids=peers, text=text, **fields)


def post(pk: int, text: str, topic: int = 5, **fields: Any) -> Outbox:
    return Outbox(pk=pk, channel=OutboxChannel.BOARD, topic_id=topic, text=text, **fields)


def sends(calls: list[Call]) -> list[tuple[str, str, int]]:
    return [(c.params["message"], c.params["peer_ids"], c.params["random_id"]) for c in calls]
