"""gameplay.selectors.admin_tokens: a community admin's token as stored: whether it renews
itself, when it is due, whether VK refused it, and the board posts waiting for it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from gameplay.models import AdminTokenSource, Community, Outbox, OutboxChannel, OutboxStatus
from gameplay.selectors.admin_tokens import (
    admin_token,
    board_posts_waiting,
    renew_at,
    renews_itself,
    stored_for_env,
)
from gameplay.services.communities import community_record
from tests.gameplay.factories import make_game

pytestmark = pytest.mark.django_db

ISSUED = datetime(2025, 3, 2, 9, 0, tzinfo=UTC)


def vk_id_row(**fields: Any) -> Community:
    """A community whose admin signed in with VK ID (not saved)."""
    values: dict[str, Any] = {
        "vk_id": 5,
        "user_token": "access",
        "user_token_source": AdminTokenSource.VK_ID,
        "user_refresh_token": "refresh",
        "user_device_id": "device",
        "user_token_issued_at": ISSUED,
        "user_token_expires_at": ISSUED + timedelta(hours=1),
    }
    return Community(**{**values, **fields})


@pytest.mark.parametrize(
    ("fields", "renews"),
    [
        ({}, True),
        ({"user_token_source": AdminTokenSource.PASTED}, False),
        ({"user_refresh_token": ""}, False),
        ({"user_device_id": ""}, False),
    ],
)
def test_only_a_vk_id_token_with_its_refresh_token_and_device_renews_itself(
    fields: dict[str, Any], renews: bool
) -> None:
    row = vk_id_row(**fields)
    assert renews_itself(row) is renews
    assert (renew_at(row) is None) is not renews


def test_a_token_is_due_a_margin_before_it_expires(settings: Any) -> None:
    settings.VK_USER_TOKEN_RENEW_SECONDS = 300
    expires = ISSUED + timedelta(hours=1)
    assert renew_at(vk_id_row()) == expires - timedelta(seconds=300)
    short = vk_id_row(user_token_expires_at=ISSUED + timedelta(seconds=400))
    assert renew_at(short) == ISSUED + timedelta(seconds=300)  # a quarter of its lifetime


def test_a_token_of_unknown_expiry_or_none_at_all_is_due_now() -> None:
    for row in (vk_id_row(user_token_expires_at=None), vk_id_row(user_token="")):
        due = renew_at(row)
        assert due is not None and due < datetime.now(UTC)


def test_the_environments_token_is_the_databases_once_it_gave_a_refresh_token(
    settings: Any,
) -> None:
    settings.VK_USER_REFRESH_TOKEN = ""
    assert not stored_for_env(vk_id_row(from_env=True))
    settings.VK_USER_REFRESH_TOKEN = "env-refresh"
    assert stored_for_env(vk_id_row(from_env=True))
    assert not stored_for_env(vk_id_row(from_env=False))


def test_the_admin_token_says_when_it_is_due_and_whether_vk_refused_it() -> None:
    token = admin_token(vk_id_row())
    assert (token.token, token.renew_at, token.refused) == ("access", renew_at(vk_id_row()), False)
    assert "access" not in repr(token)
    refused = admin_token(vk_id_row(user_token_refused_at=ISSUED))
    assert refused.refused


def test_the_board_posts_waiting_are_the_pending_ones_of_the_communitys_games() -> None:
    ours = community_record(vk_id=81, name="Наше", group_token="t", connected=True)
    community_record(vk_id=82, name="Чужое", group_token="t", connected=True)
    game, other = make_game(n=3, vk_group_id=81), make_game(n=3, vk_group_id=82)
    before = board_posts_waiting(ours)

    def row(game_: Any, channel: str, status: str = OutboxStatus.PENDING) -> None:
        Outbox.objects.create(game=game_, channel=channel, text="x", topic_id=1, status=status)

    row(game, OutboxChannel.BOARD)
    row(game, OutboxChannel.BOARD)
    row(game, OutboxChannel.BOARD, OutboxStatus.SENT)
    row(game, OutboxChannel.MESSAGE)
    row(other, OutboxChannel.BOARD)
    assert board_posts_waiting(ours) == before + 2
