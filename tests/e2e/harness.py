"""The world of the end-to-end game: the local VK server, ``runbot``'s long-poll loop and the
Outbox delivery, all in this process, and VK users who act only as VK lets them.

- The local VK (``localvk``) serves in the test's event loop; the bot is the code
  ``manage.py runbot`` runs (``Command.build_poller`` + ``Command.serve``) as a task of the same
  loop; the delivery is :class:`vkbot.delivery.drain.Drainer` (what ``manage.py deliver --once``
  runs).
- Every database call — the bot's (``sync_to_async(thread_sensitive=True)`` inside the long-poll
  loop), the GM's services and the delivery — runs in asgiref's one database thread, so the
  in-memory SQLite test database is never written by two connections at once; on PostgreSQL it
  changes nothing.
- :meth:`World.settle` waits until the bot has applied everything the local VK published and
  the Outbox is drained (the delivery's own board posts and chat removals publish new events,
  so it repeats until nothing moves).
- A :class:`Player` writes private messages, posts in the board, presses buttons of keyboards
  the community actually sent them (``localvk.sandbox.views.press``: a callback button is
  a ``message_event``, a text button a message with the payload) and joins chats by link.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from asgiref.sync import sync_to_async
from django.conf import settings

from gameplay.buttons import Payload, decode
from gameplay.models import Outbox, OutboxStatus, VkEvent
from localvk import Message, RunningServer
from localvk.sandbox import views as phone
from vkbot.delivery.drain import Drainer
from vkbot.management.commands.runbot import Command as RunbotCommand
from vkbot.pipeline import stored_ts
from vkbot.supervisor import Supervisor

T = TypeVar("T")

#: The longest a step may take to be applied and delivered.
SETTLE_TIMEOUT = 60.0
#: ``runbot --wait``: VK's recommended 25 s (a poll returns at once when events arrive).
LONGPOLL_WAIT = 25


async def db(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run ``fn`` in the database thread (the one the bot's long-poll loop uses)."""
    return await sync_to_async(fn, thread_sensitive=True)(*args, **kwargs)


class World:
    """The local VK, the running bot and the delivery."""

    def __init__(self, server: RunningServer, group_id: int) -> None:
        self.server = server
        self.state = server.state
        self.group_id = group_id
        self.command = RunbotCommand()
        self._bot: asyncio.Task[None] | None = None
        self._poller: Any = None
        self._drainer: Drainer | None = None
        self.settles = 0
        #: Outbox rows whose failure the test expects (a player who had not allowed messages).
        self.accepted_failures: set[int] = set()

    # --- the bot -----------------------------------------------------------------------------

    async def start_bot(self) -> None:
        """``manage.py runbot`` in this loop: the same poller and serve()."""
        self._poller = Supervisor(
            lambda community: self.command.build_poller(community, LONGPOLL_WAIT),
            refresh=settings.VK_COMMUNITIES_REFRESH_SECONDS,
            announce=lambda line: None,
        )
        self._bot = asyncio.create_task(self.command.serve(self._poller))
        deadline = time.monotonic() + 10
        while not self.state.calls("groups.getLongPollServer"):
            assert not self._bot.done(), "runbot stopped at once"
            assert time.monotonic() < deadline, "runbot did not ask for a long-poll server"
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        if self._bot is not None:
            self._poller.request_stop()
            await asyncio.wait_for(self._bot, 10)
            self._bot = None
        if self._drainer is not None:
            await db(self._drainer.close)
            self._drainer = None

    async def _caught_up(self, deadline: float) -> None:
        """Until the bot has stored (so applied) the local VK's current long-poll ts."""
        while True:
            assert self._bot is not None and not self._bot.done(), "runbot is not running"
            wanted = str(self.state.longpoll.ts)
            if await db(stored_ts, self.group_id) == wanted:
                return
            assert time.monotonic() < deadline, f"runbot did not apply events up to ts {wanted}"
            await asyncio.sleep(0.01)

    # --- the delivery ------------------------------------------------------------------------

    def _drain(self) -> tuple[int, float | None]:
        """One drain run (rounds until nothing is due within 5 s): rows claimed, next due."""
        if self._drainer is None:
            self._drainer = Drainer()
        before = self._drainer.report.claimed
        report = self._drainer.run(max_seconds=30.0, wait_up_to=5.0)
        return report.claimed - before, report.next_due_in

    async def settle(self, *, check: bool = True) -> None:
        """Until every event is applied and every Outbox row delivered; then (``check``)
        that no handler crashed and no delivery failed."""
        deadline = time.monotonic() + SETTLE_TIMEOUT
        while True:
            await self._caught_up(deadline)
            published = self.state.longpoll.ts
            _, next_due = await db(self._drain)
            # The drain ran until nothing was pending: settled, unless what it delivered
            # published events (its board posts, chat removals) for the bot to apply.
            if next_due is None and self.state.longpoll.ts == published:
                break
            assert time.monotonic() < deadline, "the Outbox did not drain"
        self.settles += 1
        if not check:
            return
        problems = await db(_problems, self.accepted_failures)
        assert not problems, "\n".join(problems)

    @property
    def bot_batches(self) -> int:
        return int(self._poller.batches) if self._poller is not None else 0


def _problems(accepted: set[int]) -> list[str]:
    """Handler crashes and failed deliveries so far (but the ``accepted`` rows)."""
    out = [
        f"handler crashed on {e.type} {e.event_id}: {e.error}"
        for e in VkEvent.objects.exclude(error="")
    ]
    out += [
        f"delivery failed: {o.kind} to {o.peer_ids or o.topic_id}: {o.last_error}"
        for o in Outbox.objects.filter(status=OutboxStatus.FAILED).exclude(pk__in=accepted)
    ]
    out += [f"apology sent to {o.peer_ids}" for o in Outbox.objects.filter(kind="internal_error")]
    return out


# --- VK users --------------------------------------------------------------------------------


@dataclass
class Player:
    """A VK user: what they do goes to the local VK exactly as from a phone."""

    world: World
    vk: int
    first: str
    last: str

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}"

    @property
    def mention(self) -> str:
        return f"[id{self.vk}|{self.first}]"

    @property
    def sex(self) -> int:
        """What VK's users.get tells of them (1 female, 2 male): the cast's surnames show it."""
        return 1 if self.last.endswith("а") else 2

    def accs(self) -> str:
        """Their name as «голосует за …» says it."""
        from gameplay.grammar import decline_name

        return decline_name(self.name, "accs", self.sex)

    def g(self, male: str, female: str) -> str:
        return female if self.sex == 1 else male

    def __repr__(self) -> str:
        return f"<Player id{self.vk} {self.name}>"

    # what they do

    def say(self, text: str) -> None:
        """A private message to the community."""
        self.world.state.inject_message(self.vk, text)

    def post(self, topic_id: int, text: str) -> int:
        """A comment in a board topic; returns its id."""
        update = self.world.state.inject_board_post(self.vk, topic_id, text)
        return int(update["object"]["id"])

    def edit(self, topic_id: int, comment_id: int, text: str) -> None:
        """They edit their comment."""
        self.world.state.inject_board_post_edit(topic_id, comment_id, text)

    def press(self, message: Message, **match: Any) -> Payload:
        """Press the button of ``message`` whose payload has the ``match`` fields."""
        for r, row in enumerate((message.keyboard or {}).get("buttons") or []):
            for c, button in enumerate(row):
                payload = _payload(button)
                if payload is not None and all(getattr(payload, k) == v for k, v in match.items()):
                    phone.press(self.world.state, self.vk, message.id, r, c)
                    return payload
        raise AssertionError(f"{self}: no button {match} in {message.text!r}")

    def press_label(self, message: Message, label: str) -> None:
        for r, row in enumerate((message.keyboard or {}).get("buttons") or []):
            for c, button in enumerate(row):
                if (button.get("action") or {}).get("label") == label:
                    phone.press(self.world.state, self.vk, message.id, r, c)
                    return
        raise AssertionError(f"{self}: no button «{label}» in {message.text!r}")

    async def choose(self, message: Message, action: str, target: int, **match: Any) -> None:
        """Press the target's button on a paged keyboard, turning pages with «▶» as a person
        would (the bot edits the message into the next page: ``messages.edit``)."""
        for _ in range(6):
            if any(
                p.action == action and p.target == target and _has(p, match)
                for p in payloads(message)
            ):
                self.press(message, action=action, target=target, **match)
                return
            assert "▶" in labels(message), f"{self}: №{target} is on no page for {action}"
            last_seen = self.inbox()[-1].id
            before = message.edit_seq
            self.press_label(message, "▶")
            await self.world.settle()
            assert message.edit_seq > before, f"{self}: «▶» did not turn the page in place"
            assert self.inbox()[-1].id == last_seen, f"{self}: «▶» sent a new message"
        raise AssertionError(f"{self}: could not reach №{target} for {action}")

    def press_menu(self, label: str) -> None:
        """Press a button of the regular keyboard under the input field (VK keeps showing the
        latest one the community sent)."""
        shown = phone.current_keyboard(self.world.state.conversation(self.vk), self.vk)
        assert shown is not None, f"{self}: no keyboard under the input field"
        self.press_label(shown, label)

    def join_chat(self, link: str) -> None:
        phone.join_by_link(self.world.state, self.vk, link)

    # what they see

    def inbox(self) -> list[Message]:
        """Everything the community sent them, oldest first."""
        return self.world.state.sent_messages(self.vk)

    def texts(self, after: int = 0) -> list[str]:
        return [m.text for m in self.inbox() if m.id > after]

    def received(self, needle: str, after: int = 0) -> list[Message]:
        """Messages after message id ``after`` that say ``needle``, now or before an edit."""
        return [
            m
            for m in self.inbox()
            if m.id > after
            and any(needle in text for text in [*(h["text"] for h in m.history), m.text])
        ]

    def last_keyboard(self, action: str, *, after: int = 0, **match: Any) -> Message:
        """The latest message (sent or edited after message id ``after``) with a button for
        ``action``."""
        for message in sorted(self.inbox(), key=_changed, reverse=True):
            if _changed(message) <= after:
                break
            if any(p.action == action and _has(p, match) for p in payloads(message)):
                return message
        raise AssertionError(f"{self}: no keyboard for {action} {match} after #{after}")


def _changed(message: Message) -> int:
    """When a message last changed, on the message sequence (sent, or edited: ``edit_seq``)."""
    return max(message.id, message.edit_seq)


def payloads(message: Message) -> list[Payload]:
    out = []
    for row in (message.keyboard or {}).get("buttons") or []:
        for button in row:
            payload = _payload(button)
            if payload is not None:
                out.append(payload)
    return out


def labels(message: Message) -> list[str]:
    return [
        str((b.get("action") or {}).get("label", ""))
        for row in (message.keyboard or {}).get("buttons") or []
        for b in row
    ]


def _payload(button: dict[str, Any]) -> Payload | None:
    raw = (button.get("action") or {}).get("payload")
    if raw is None:
        return None
    try:
        return decode(raw)
    except ValueError:
        return None


def _has(payload: Payload, match: dict[str, Any]) -> bool:
    return all(getattr(payload, k) == v for k, v in match.items())
