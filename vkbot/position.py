"""Where each community's Bots Long Poll goes on: the ts the last applied batch left, one
:class:`~gameplay.models.PollState` row per community (stored by :mod:`vkbot.pipeline` in the
transaction of the batch it follows)."""

from __future__ import annotations

from collections.abc import Mapping

from django.conf import settings

from config.env import EnvError
from gameplay.models import PollState


def community_of(group_id: int | None) -> int:
    """``group_id``, or the environment's community (``VK_GROUP_ID``) for None."""
    if group_id is not None:
        return int(group_id)
    if settings.VK_GROUP_ID is None:
        raise EnvError("VK_GROUP_ID is not set: the long-poll position belongs to a community.")
    return int(settings.VK_GROUP_ID)


def store_ts(ts: str | int, group_id: int | None = None) -> None:
    """Remember where the long poll goes on for ``group_id`` (``VK_GROUP_ID``)."""
    group = community_of(group_id)
    PollState.objects.update_or_create(group_id=group, defaults={"ts": str(ts)})


def store_positions(positions: Mapping[int, str | int]) -> None:
    """Remember where each community's long poll goes on (group id → ts), in one statement."""
    rows = [PollState(group_id=int(g), ts=str(ts)) for g, ts in sorted(positions.items())]
    if rows:
        PollState.objects.bulk_create(
            rows,
            update_conflicts=True,
            unique_fields=["group_id"],
            update_fields=["ts", "updated_at"],
        )


def stored_ts(group_id: int | None = None) -> str | None:
    """The long-poll ts the last applied batch left for ``group_id`` (``VK_GROUP_ID``)."""
    group = community_of(group_id)
    ts = PollState.objects.filter(group_id=group).values_list("ts", flat=True).first()
    return ts or None
