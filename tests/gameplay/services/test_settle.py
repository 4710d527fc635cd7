"""gameplay.services.settle: a delivery round's outcomes recorded for the rows still held, and a
chat VK created linked to its game in the same transaction (or, when the game can no longer
take it, the GM told its number)."""

from __future__ import annotations

import pytest

from gameplay.models import (
    Actor,
    FlagKind,
    Game,
    ModerationFlag,
    Outbox,
    OutboxChannel,
    OutboxStatus,
)
from gameplay.services.common import send_message
from gameplay.services.phases import game_end
from gameplay.services.settle import delivery_settle
from gameplay.services.spectators import spectator_chat_create
from outbox.leases import outbox_claim
from outbox.outcomes import Settlement
from tests.gameplay.factories import events, make_game, vk_id
from tests.module_db import module_rows

pytestmark = pytest.mark.django_db

CHAT = 2_000_000_012


def _day_one() -> int:
    return make_game(n=5, start=True).pk


_day_one_rows = module_rows(_day_one)


@pytest.fixture
def game(_day_one_rows: int) -> Game:
    """Five players, Day 1 open (built once per module)."""
    return Game.objects.get(pk=_day_one_rows)


def settle_all(chat: int | None = None, added: list[int] | None = None) -> int:
    """Claim every due row and settle each as sent; the ``create_chat`` row with ``chat``."""
    lease, rows = outbox_claim(limit=500, lease_seconds=60)
    settlements = [
        Settlement(
            r.pk,
            "sent",
            result={"chat_id": chat - 2_000_000_000, "peer_id": chat, "added": added or []},
            created_chat=chat,
        )
        if chat is not None and r.channel == OutboxChannel.CREATE_CHAT
        else Settlement(r.pk, "sent")
        for r in rows
    ]
    return delivery_settle(lease=lease, settlements=settlements)


def test_only_the_rows_held_under_the_lease_are_settled(game: Game) -> None:
    lease, held = outbox_claim(limit=500, lease_seconds=60)
    [late] = send_message(game=game, peer_ids=[vk_id(1)], text="после захвата", kind="t")
    settled = delivery_settle(
        lease=lease, settlements=[Settlement(r.pk, "sent") for r in [*held, late]]
    )
    assert settled == len(held) > 0
    assert set(
        Outbox.objects.filter(pk__in=[r.pk for r in held]).values_list("status", flat=True)
    ) == {OutboxStatus.SENT}
    late.refresh_from_db()
    assert late.status == OutboxStatus.PENDING


def test_a_chat_vk_created_is_linked_to_its_game(game: Game) -> None:
    spectator_chat_create(game_id=game.pk, by=Actor.gm("anna"))
    assert settle_all(chat=CHAT, added=[vk_id(2), vk_id(1)]) == Outbox.objects.count()
    game.refresh_from_db()
    assert game.spectator_chat_id == CHAT
    [created] = events(game, "spectator_chat_created")
    assert created.data["peer_id"] == CHAT and created.data["added"] == [vk_id(1), vk_id(2)]
    [linked] = events(game, "spectator_chat_linked")
    assert linked.actor == "gm:anna" and linked.data["peer_id"] == CHAT


def test_a_chat_created_for_a_game_that_ended_meanwhile_is_told_to_the_gm(game: Game) -> None:
    row = spectator_chat_create(game_id=game.pk, by=Actor.gm("anna"))
    game_end(game_id=game.pk, by=Actor.gm("anna"))
    settle_all(chat=CHAT)
    game.refresh_from_db()
    assert game.spectator_chat_id is None
    row.refresh_from_db()
    assert row.status == OutboxStatus.SENT  # the row is settled all the same
    [flag] = ModerationFlag.objects.filter(game=game, kind=FlagKind.DELIVERY)
    assert f"номер беседы {CHAT - 2_000_000_000}" in flag.text and "игра завершена" in flag.text
