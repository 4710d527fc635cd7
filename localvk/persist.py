"""Saving the local VK's content to a JSON file and loading it back (the demo's second run).

What is kept: known users, every message with its per-peer numbering and the ``random_id``
de-duplication, who allows messages, chats and their members and invite links, the board
(topics, comments, ``guid`` de-duplication), the long-poll numbering with its latest events
and event-id salt, pressed callback buttons still awaiting their answer, and the users a
person plays on the player page. Not kept: the call log, rate and flood counters, faults and
long-poll keys (pollers get ``failed: 2``, take a new key and keep their ts, as after a VK
restart). Also the connect-flow settings of each community (long poll and Callback servers,
bot settings, the confirmation code) and, when the server hosts more than the default
community, the others (``communities``: each with its tokens, name and content), so
communities created at runtime come back; a community declared again on the command line keeps
its declared tokens and gets its content back. And VK ID's sign-ins with their tokens
(``vkid``), so a panel signed in stays signed in across a restart.

:func:`save` writes atomically (a temporary file, then a rename), so a crash leaves the last
complete file. :class:`AutoSaver` saves every few seconds when something changed.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from .communities import Communities
from .community_settings import CommunitySettings
from .models import CallbackEvent, Chat, ChatMember, Message, User
from .state import LocalVK

logger = logging.getLogger(__name__)

FORMAT = "vkmafia-localvk"
VERSION = 1
#: Long-poll events kept in the file (a restarted bot re-reads at most these).
KEEP_EVENTS = 5000


class StateFileError(Exception):
    """The file is not a local VK state this code can load."""


def export_state(state: LocalVK) -> dict[str, Any]:
    """Everything worth keeping, as JSON-ready data: the default community ``state`` and
    the other communities of its registry."""
    with state.lock:
        others = [c for c in Communities.of(state) if c is not state]
        return {
            "format": FORMAT,
            "version": VERSION,
            "group_id": state.group_id,
            "saved_at": int(time.time()),
            "users": [asdict(u) for u in state.users.values()],
            **_export_content(state),
            "communities": [
                {"declaration": _declaration(other), **_export_content(other)} for other in others
            ],
            "vkid": Communities.of(state).vkid.export(),
        }


def _declaration(state: LocalVK) -> dict[str, Any]:
    return {
        "group_id": state.group_id,
        "group_tokens": [[token, sorted(scopes)] for token, scopes in state.group_tokens.items()],
        "user_tokens": [[token, uid] for token, uid in state.user_tokens.items()],
        "group_name": state.group_name,
        "screen_name": state.screen_name,
    }


def _export_content(state: LocalVK) -> dict[str, Any]:
    now = time.monotonic()
    with state.lock:
        return {
            "messages": [asdict(m) for m in state.messages],
            "message_seq": state._message_seq,
            "cmid": [[peer, n] for peer, n in state._cmid.items()],
            "random_ids": [
                [token, peer, random_id, message.id]
                for (token, peer, random_id), message in state._sent_by_random_id.items()
            ],
            "allowed": [[uid, ok] for uid, ok in state.allowed.items()],
            "chats": [
                {
                    "chat_id": c.chat_id,
                    "title": c.title,
                    "owner_id": c.owner_id,
                    "invite_link": c.invite_link,
                    "members": [asdict(m) for m in c.members.values()],
                }
                for c in state.chats.values()
            ],
            "board": state.board.export(),
            "longpoll": state.longpoll.export(keep=KEEP_EVENTS),
            "callback_events": [
                {**asdict(e), "age": max(0.0, now - e.created)}
                for e in state.callback_events.values()
                if e.answer is None
            ],
            "taken_over": sorted(state.taken_over),
            "settings": state.settings.export(),
        }


def import_state(state: LocalVK, data: Any) -> None:
    """Replace ``state``'s content with an :func:`export_state` (raises
    :class:`StateFileError` for data of another kind, another community or a broken file;
    ``state`` is then left as it was)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise StateFileError("not a local VK state file")
    if data.get("version") != VERSION:
        raise StateFileError(f"unsupported state version {data.get('version')!r}")
    if data.get("group_id") != state.group_id:
        raise StateFileError(
            f"the file is for community {data.get('group_id')}, the server is for {state.group_id}"
        )
    try:
        users = {int(u["id"]): User(**u) for u in data["users"]}
        _apply(state, data)
        with state.lock:
            state.users.clear()
            state.users.update(users)
        for extra in data.get("communities", []):
            _import_community(Communities.of(state), extra)
        if "vkid" in data:
            Communities.of(state).vkid.restore(data["vkid"])
    except (KeyError, TypeError, ValueError) as exc:
        raise StateFileError(f"broken state file: {type(exc).__name__}: {exc}") from exc


def _import_community(communities: Communities, data: dict[str, Any]) -> None:
    """One more community: the one declared with that id, else a new one as saved."""
    declared = data["declaration"]
    state = communities.find(int(declared["group_id"]))
    if state is None:
        (token, scopes), *more = declared["group_tokens"]
        state = communities.create(
            group_id=int(declared["group_id"]),
            group_token=str(token),
            user_tokens={str(t): int(uid) for t, uid in declared["user_tokens"]},
            group_name=str(declared["group_name"]),
            screen_name=str(declared["screen_name"]),
            scopes=[str(s) for s in scopes],
        )
        for token, scopes in more:
            communities.add_token(state.group_id, str(token), scopes=[str(s) for s in scopes])
    _apply(state, data)


def _apply(state: LocalVK, data: dict[str, Any]) -> None:
    messages = [Message(**m) for m in data["messages"]]
    by_id = {m.id: m for m in messages}
    random_ids = {
        (str(token), int(peer), int(rid)): by_id[int(mid)]
        for token, peer, rid, mid in data["random_ids"]
        if int(mid) in by_id
    }
    chats: dict[int, Chat] = {}
    for raw in data["chats"]:
        chat = Chat(
            chat_id=int(raw["chat_id"]),
            title=str(raw["title"]),
            owner_id=int(raw["owner_id"]),
            invite_link=raw["invite_link"],
        )
        for member in raw["members"]:
            item = ChatMember(**member)
            chat.members[item.member_id] = item
        chats[chat.chat_id] = chat
    now = time.monotonic()
    events = {}
    for raw in data["callback_events"]:
        fields = {k: v for k, v in raw.items() if k != "age"}
        fields["created"] = now - float(raw.get("age", 0.0))
        event = CallbackEvent(**fields)
        events[event.event_id] = event
    settings = None
    if "settings" in data:
        settings = CommunitySettings()
        settings.restore(data["settings"])
    with state.lock:
        board_before = state.board.export()
        longpoll_before = state.longpoll.export()
        try:
            state.board.restore(data["board"])
            state.longpoll.restore(data["longpoll"])
        except Exception:
            state.board.restore(board_before)
            state.longpoll.restore(longpoll_before)
            raise
        if settings is not None:
            state.settings = settings
            state.apply_callback_servers()
        state.messages = messages
        state._message_seq = max(int(data["message_seq"]), max(by_id, default=0))
        state._cmid = {int(peer): int(n) for peer, n in data["cmid"]}
        state.edit_seq = max((m.edit_seq for m in messages), default=0)
        state._sent_by_random_id = random_ids
        state.allowed = {int(uid): bool(ok) for uid, ok in data["allowed"]}
        state.chats = chats
        state.callback_events = events
        state.taken_over = {int(uid) for uid in data["taken_over"]}


def fingerprint(state: LocalVK) -> tuple[Any, ...]:
    """Changes whenever something :func:`export_state` keeps has changed (cheap)."""
    with state.lock:
        communities = Communities.of(state)
        return (
            len(state.users),
            tuple(_fingerprint(community) for community in communities),
            communities.vkid.fingerprint(),
        )


def _fingerprint(state: LocalVK) -> tuple[Any, ...]:
    with state.lock:
        return (
            state.group_id,
            state.settings.fingerprint(),
            state._message_seq,
            state.edit_seq,
            state.longpoll.ts,
            state.board._comment_seq,
            state.board._topic_seq,
            len(state.users),
            tuple(sorted(state.allowed.items())),
            tuple(sorted(state.taken_over)),
            tuple((c.chat_id, len(c.members), c.invite_link) for c in state.chats.values()),
            sum(1 for e in state.callback_events.values() if e.answer is None),
        )


def save(state: LocalVK, path: str | os.PathLike[str]) -> None:
    """Write the state to ``path`` atomically."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    data = export_state(state)
    fd, tmp = tempfile.mkstemp(prefix=target.name + ".", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(data, out, ensure_ascii=False, separators=(",", ":"))
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load(state: LocalVK, path: str | os.PathLike[str]) -> bool:
    """Load ``path`` into ``state`` if the file exists; returns whether it did."""
    source = Path(path)
    if not source.exists():
        return False
    try:
        data = json.loads(source.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise StateFileError(f"cannot read {source}: {exc}") from exc
    import_state(state, data)
    return True


class AutoSaver:
    """Saves ``state`` to ``path`` every ``interval`` seconds when it changed, and once more
    on :meth:`stop`."""

    def __init__(self, state: LocalVK, path: str | os.PathLike[str], interval: float = 3.0):
        self.state = state
        self.path = Path(path)
        self.interval = interval
        self._saved: tuple[Any, ...] | None = fingerprint(state)
        self._task: asyncio.Task[None] | None = None

    def save_if_changed(self) -> bool:
        current = fingerprint(self.state)
        if current == self._saved:
            return False
        save(self.state, self.path)
        self._saved = current
        return True

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                await asyncio.to_thread(self.save_if_changed)
            except OSError as exc:  # the next round tries again
                logger.error("Could not save the local VK state to %s: %s", self.path, exc)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
        save(self.state, self.path)
        self._saved = fingerprint(self.state)
