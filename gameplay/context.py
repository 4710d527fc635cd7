"""The community a piece of work is done for, when it is not a game's.

The bot applies each batch of VK updates for one community (one long poll per community, one
Callback request per event): ``vkbot`` enters :func:`serving` around it, and

- the bot's lookups (``gameplay.selectors.bot``) find only that community's games — a topic
  id or a chat's peer id means something only within a community, and a player who plays in
  two communities writes to each about its own game;
- a reply outside any game (``гайд``, a refusal) goes out as that community
  (``gameplay.services.common.queue_outbox`` stamps ``Outbox.group_id``).

Outside :func:`serving` (the panel, the deadline tick, the tests of one community) nothing is
filtered: a game's own rows carry its community, and the rest go out as the environment's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_group: ContextVar[int | None] = ContextVar("vkmafia_community", default=None)


def current_group() -> int | None:
    """The VK id of the community being served, or None outside :func:`serving`."""
    return _group.get()


@contextmanager
def serving(group_id: int | None) -> Iterator[None]:
    token = _group.set(int(group_id) if group_id is not None else None)
    try:
        yield
    finally:
        _group.reset(token)
