"""Helpers for the ingestion tests (pipeline, Callback API, long poll).

Test handlers replace ``vkbot.handlers.dispatch`` (the contract: a synchronous function of one
raw VK update, run inside the pipeline's transaction) through a stand-in ``vkbot.handlers``
module put in ``sys.modules`` for the test.

The game: five players signed up and seated through the real services; seat ``n`` is VK user
``VK_BASE + n``; Day 1 is open.
"""

from __future__ import annotations

import re
import sys
import types
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import pytest_asyncio
from asgiref.sync import sync_to_async
from django.db import connections

from gameplay import services
from gameplay.models import EventKind, GameEvent, Outbox, Source, VkEvent, Vote
from gameplay.rules import Item, Role, RuleViolation
from gameplay.services.common import lock_game, log_event, send_message
from tests.gameplay.factories import community_id
from tests.localvk.support import GROUP_ID, GROUP_TOKEN

Dispatch = Callable[[dict[str, Any]], None]

VK_BASE = 3000
SECRET = "callback-secret-42"
CONFIRMATION_CODE = "c0nf1rm"
ROLES = (Role.MAFIA, Role.COMMISSAR, Role.DOCTOR, Role.CIVILIAN, Role.CIVILIAN)
VOTE = re.compile(r"^голос\s+(\d+)$", re.IGNORECASE)


@pytest_asyncio.fixture(autouse=True)
async def close_db_thread_connections() -> AsyncIterator[None]:
    """Close the connections asgiref's database thread opened in the test (autouse where
    imported): a connection left open there would keep PostgreSQL from dropping the test
    database at the end of the run."""
    yield
    await sync_to_async(connections.close_all, thread_sensitive=True)()


def configure(settings: Any, *, api_url: str = "http://127.0.0.1:9/method/") -> None:
    """The VK settings of the test community (pytest-django's ``settings`` fixture)."""
    settings.VK_GROUP_ID = GROUP_ID
    settings.VK_GROUP_TOKEN = GROUP_TOKEN
    settings.VK_CALLBACK_SECRET = SECRET
    settings.VK_CONFIRMATION_CODE = CONFIRMATION_CODE
    settings.VK_API_URL = api_url
    settings.VK_API_VERSION = "5.199"


def use_dispatch(monkeypatch: pytest.MonkeyPatch, dispatch: Dispatch, **extra: Any) -> None:
    """Make ``dispatch`` the bot's ``vkbot.handlers.dispatch`` for this test.

    A stand-in ``vkbot.handlers`` module holds it (with ``extra`` attributes, e.g.
    ``facts_needed``), so these tests do not depend on the state of the real handlers; the
    real ones have their own test (test_ingest_real_handlers.py)."""
    module = types.ModuleType("vkbot.handlers")
    module.dispatch = dispatch  # type: ignore[attr-defined]
    for name, value in extra.items():
        setattr(module, name, value)
    monkeypatch.setitem(sys.modules, "vkbot.handlers", module)
    monkeypatch.setattr("vkbot.handlers", module, raising=False)


def make_game(name: str = "Тест приёма событий", topic_id: int | None = None) -> int:
    """A running 5-player game on Day 1 (in board topic ``topic_id``), made through the
    services."""
    from gameplay.rules import RoleCounts

    game = services.game_create(
        name=name,
        counts=RoleCounts(mafia=1, commissar=1, doctor=1, maniac=0, civilian=2),
        topic_id=topic_id,
        vk_group_id=community_id(),
    )
    entries = [services.SignupEntry(VK_BASE + n, f"Игрок {n}") for n in range(1, len(ROLES) + 1)]
    services.signups_create(game_id=game.pk, entries=entries)
    assignment: dict[int, tuple[Role, Item | None]] = {
        n: (role, None) for n, role in enumerate(ROLES, start=1)
    }
    services.game_deal_fixed(game_id=game.pk, assignment=assignment)
    services.game_start(game_id=game.pk)
    return game.pk


def vote_dispatch(game_id: int) -> Dispatch:
    """A handler that changes the game: «голос N» in a private message casts a vote (every
    application adds a Vote row and a ``vote`` GameEvent, so applying twice shows)."""

    def dispatch(update: dict[str, Any]) -> None:
        if update.get("type") != "message_new":
            return
        message = update["object"]["message"]
        found = VOTE.match(message.get("text", "").strip())
        voter = message["from_id"] - VK_BASE
        if not found:
            return
        try:
            services.vote_submit(
                game_id=game_id, voter=voter, target=int(found.group(1)), source=Source.PM
            )
        except RuleViolation as refusal:
            send_message(
                game=None, peer_ids=[message["from_id"]], text=refusal.reason, kind="refusal"
            )

    return dispatch


#: The log's kind of a recorded message: one no service writes in these tests (the log takes
#: only an ``EventKind``).
RECORDED = EventKind.MAFIA_RELAY


def record_dispatch(game_id: int) -> Dispatch:
    """A handler that appends every private message's text to the game's event log."""

    def dispatch(update: dict[str, Any]) -> None:
        if update.get("type") == "message_new":
            game = lock_game(game_id=game_id)
            message = update["object"]["message"]
            log_event(game, RECORDED, text=message["text"], event_id=update["event_id"])

    return dispatch


def recorded_texts(game_id: int) -> list[str]:
    return [
        e.data["text"]
        for e in GameEvent.objects.filter(game_id=game_id, kind=RECORDED).order_by("seq")
    ]


def votes_cast(game_id: int) -> int:
    """Every vote row ever written in the game (changed votes included)."""
    return Vote.objects.filter(phase__game_id=game_id).count()


def vote_events(game_id: int) -> int:
    return GameEvent.objects.filter(game_id=game_id, kind="vote").count()


def message_update(
    from_id: int, text: str, *, event_id: str | None = "e-1", group_id: int = GROUP_ID
) -> dict[str, Any]:
    """A ``message_new`` update as VK sends it (Bots Long Poll / Callback API, v5.199)."""
    update: dict[str, Any] = {
        "group_id": group_id,
        "type": "message_new",
        "v": "5.199",
        "object": {
            "message": {
                "id": 10,
                "date": 1_700_000_000,
                "peer_id": from_id,
                "from_id": from_id,
                "text": text,
                "conversation_message_id": 3,
                "out": 0,
                "attachments": [],
                "fwd_messages": [],
                "important": False,
                "is_hidden": False,
            },
            "client_info": {"keyboard": True, "inline_keyboard": True, "lang_id": 0},
        },
    }
    if event_id is not None:
        update["event_id"] = event_id
    return update


def snapshot(game_id: int) -> tuple[int, int, int, int]:
    """What an applied event could change: votes, game events, outbox rows, recorded events."""
    return (
        votes_cast(game_id),
        GameEvent.objects.filter(game_id=game_id).count(),
        Outbox.objects.count(),
        VkEvent.objects.count(),
    )
