"""What the pipeline does when a handler crashes on an update (``vkbot.pipeline``): the crash
noted on the event's record and logged (the texts people wrote redacted), and an apology to
the user who sent the update."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from django.db import InterfaceError, OperationalError, transaction

from gameplay import unit_of_work
from gameplay.messages import render
from gameplay.models import VkEvent
from gameplay.services.common import send_message
from vkbot.updates import dump, sender_of

logger = logging.getLogger("vkbot.pipeline")

#: Errors that mean the database itself is unavailable (the pipeline lets them through).
_INFRASTRUCTURE_ERRORS = (OperationalError, InterfaceError)


class Crashed(Exception):
    """A handler crashed on the lone update of a transaction: raised out of the transaction, so
    that all of it rolls back, for ``vkbot.pipeline`` to record the crash in a fresh one."""

    def __init__(
        self, update: Mapping[str, Any], event_id: str, kind: str, source: str, error: Exception
    ) -> None:
        super().__init__(event_id)
        self.update = update
        self.event_id = event_id
        self.kind = kind
        self.source = source
        self.error = error


def note_crash(group_id: int | None, event_id: str, exc: Exception) -> None:
    """What went wrong, on the event's record, for the operator."""
    note = f"{type(exc).__name__}: {exc}"[:2000]
    VkEvent.objects.filter(group_id=group_id or 0, event_id=event_id).update(error=note)


def log_crash(
    update: Mapping[str, Any], event_id: str, kind: str, source: str, exc: Exception
) -> None:
    logger.error(
        "The handler failed on VK event %s (%s) from %s; its changes were rolled back and "
        "the event will not be retried. Update: %s",
        event_id, kind, source, dump(update),
        exc_info=exc,
    )  # fmt: skip


def apologise(update: Mapping[str, Any], event_id: str) -> None:
    user_id = sender_of(update)
    if user_id is None:
        return
    try:
        with transaction.atomic():
            send_message(
                game=None,
                peer_ids=[user_id],
                text=render("player/internal_error"),
                kind="internal_error",
            )
            unit_of_work.flush()
    except _INFRASTRUCTURE_ERRORS:
        raise
    except Exception:
        logger.exception("Could not queue the apology to VK user %s (event %s)", user_id, event_id)
