"""Several communities in one local VK server: a registry of :class:`~localvk.state.LocalVK`
states, one per community, and which one a request belongs to.

Why a registry of whole per-community states rather than one state keyed by community
inside: everything VK keeps per community — its tokens and their rights, long-poll queue and
keys, board numbering, conversations and peer ids, Callback server, rate limits, connect-flow
settings, the record of calls — is exactly what a ``LocalVK`` already is, with its tests. So
a community is a whole ``LocalVK``, and the default (first) one is the one a single-community
caller knows (``srv.state``); a second community is a second ``LocalVK`` beside it.
What VK shares between communities is shared here: the people (one ``users`` dict: a user
may write to two communities), one lock (a request touches one community, but inspection may
look at several) and one sequence of call numbers (``seq`` orders calls across communities).

A request is attributed as VK does it, by its token: a community token belongs to exactly one
community; a user token belongs to a person who may admin several communities, so its call
goes to the community its ``group_id`` (or first of ``group_ids``) names when that one is
hosted, else to the first community the token was declared for (its "home"). A user token is
rate-limited once, whichever community its calls go to (VK limits per token). A user token
issued by VK ID (:attr:`Communities.vkid`) is its user's: its home is the first community that
user administers, and it carries the rights granted at sign-in.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .models import GROUP, USER
from .recording import CallRecord, token_fingerprint
from .scopes import parse_scopes
from .state import LocalVK
from .vkid import VKID

logger = logging.getLogger(__name__)

#: Options a new community takes over from the default one unless given.
INHERITED = (
    "allow_messages_by_default", "group_rps", "user_rps", "flood_per_hour", "history_size",
    "echo_own_board_posts", "base_url",
)  # fmt: skip


@dataclass(frozen=True)
class Identity:
    """Who calls: the community the call goes to, the token's kind and user, and the
    community whose rate limiter counts the token."""

    state: LocalVK
    kind: str
    user_id: int | None
    home: LocalVK
    #: A VK ID token's rights (None: a declared token, with every right).
    scopes: frozenset[str] | None = None


class Communities:
    """The communities one server hosts; the first is the default."""

    def __init__(self, default: LocalVK | None = None) -> None:
        self.default = default if default is not None else LocalVK()
        self._states: dict[int, LocalVK] = {}
        self._group_tokens: dict[str, LocalVK] = {}
        #: user token -> (user id, the communities it admins, first = home)
        self._user_tokens: dict[str, tuple[int, list[LocalVK]]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._index(self.default)
        #: VK ID: the sign-ins of the admins and the user tokens they yield.
        self.vkid = VKID(lock=self.default.lock)

    @classmethod
    def of(cls, state: LocalVK | Communities | None) -> Communities:
        """The registry of ``state`` (a new one with it as the default if it has none)."""
        if isinstance(state, Communities):
            return state
        if state is not None and state.registry is not None:
            return state.registry
        return cls(state)

    # --- the communities ------------------------------------------------------------------

    @property
    def lock(self) -> Any:
        return self.default.lock

    def __iter__(self) -> Iterator[LocalVK]:
        with self.lock:
            return iter(list(self._states.values()))

    def __len__(self) -> int:
        return len(self._states)

    def __contains__(self, group_id: object) -> bool:
        return group_id in self._states

    def get(self, group_id: int | None = None) -> LocalVK:
        """The community ``group_id`` (None: the default); ValueError if not hosted."""
        if group_id is None:
            return self.default
        state = self._states.get(int(group_id))
        if state is None:
            raise ValueError(f"no community {group_id} on this server")
        return state

    def find(self, group_id: int) -> LocalVK | None:
        return self._states.get(group_id)

    def create(
        self,
        *,
        group_id: int,
        group_token: str,
        user_tokens: Mapping[str, int] | Iterable[str] = (),
        group_name: str | None = None,
        screen_name: str | None = None,
        scopes: str | Iterable[str] | None = None,
        **options: Any,
    ) -> LocalVK:
        """A new community beside the others (ValueError if its id or a token clashes).

        A user token already known keeps its user (that person admins both communities); a
        new one gets a new admin user id after the known ones."""
        with self.lock:
            if group_id in self._states:
                raise ValueError(f"community {group_id} already exists")
            tokens = self._user_token_ids(user_tokens)
            defaults = self.default
            inherited = {
                "allow_messages_by_default": defaults.allow_messages_by_default,
                "group_rps": defaults.limits.per_kind.get(GROUP, 20),
                "user_rps": defaults.limits.per_kind.get(USER, 3),
                "flood_per_hour": defaults.flood.per_hour,
                "history_size": defaults.longpoll.history_size,
                "echo_own_board_posts": defaults.board.echo_own_posts,
                "base_url": defaults.base_url,
            }
            unknown = set(options) - set(INHERITED)
            if unknown:
                raise TypeError(f"unknown community options: {', '.join(sorted(unknown))}")
            inherited.update(options)
            state = LocalVK(
                group_id=group_id,
                group_token=group_token,
                user_tokens=tokens,
                group_name=group_name or f"Сообщество {group_id}",
                screen_name=screen_name,
                scopes=scopes,
                lock=defaults.lock,
                users=defaults.users,
                call_seq=defaults.log.next_seq,
                **inherited,
            )
            self._index(state)
        self._start(state)
        return state

    def add_token(
        self,
        group_id: int,
        token: str,
        *,
        kind: str = GROUP,
        scopes: str | Iterable[str] | None = None,
        user_id: int | None = None,
    ) -> dict[str, Any]:
        """Another token for a community: a community token with ``scopes``, or an admin's
        user token (``user_id``: a new admin id if omitted, the known one for a known token)."""
        with self.lock:
            state = self.get(group_id)
            if kind == GROUP:
                self._check_new_group_token(token)
                state.add_group_token(token, scopes)
                self._group_tokens[token] = state
                return {"group_id": group_id, "kind": GROUP, "scopes": sorted(parse_scopes(scopes))}
            if kind != USER:
                raise ValueError("kind should be group or user")
            if user_id is None:
                (uid,) = self._user_token_ids([token]).values()
            else:
                uid = int(user_id)
                self._user_token_ids({token: uid})
            if token in state.user_tokens:
                raise ValueError("the community has this user token already")
            state.user_tokens[token] = uid
            self._index_user_token(token, uid, state)
            return {"group_id": group_id, "kind": USER, "user_id": uid}

    def _user_token_ids(self, tokens: Mapping[str, int] | Iterable[str]) -> dict[str, int]:
        """User ids for the tokens of a new community, checked against the known ones."""
        if isinstance(tokens, Mapping):
            wanted = {str(t): int(uid) for t, uid in tokens.items()}
        else:
            wanted = {str(t): -1 for t in tokens}
        next_id = 1 + max((uid for uid, _ in self._user_tokens.values()), default=99)
        result: dict[str, int] = {}
        for token, uid in wanted.items():
            if not token:
                raise ValueError("a user token must not be empty")
            if token in self._group_tokens:
                raise ValueError("a user token must differ from every community token")
            known = self._user_tokens.get(token)
            if known is not None:
                if uid not in (-1, known[0]):
                    raise ValueError(f"user token already belongs to user {known[0]}")
                result[token] = known[0]
            elif uid == -1:
                result[token] = next_id
                next_id += 1
            else:
                result[token] = uid
        return result

    def _check_new_group_token(self, token: str) -> None:
        if not token:
            raise ValueError("the community token must not be empty")
        if token in self._group_tokens or token in self._user_tokens:
            raise ValueError("the community token is in use already")

    def _index(self, state: LocalVK) -> None:
        if state.registry is not None and state.registry is not self:
            raise ValueError("the community belongs to another server")
        if state.group_id in self._states:
            raise ValueError(f"community {state.group_id} already exists")
        for token in state.group_tokens:
            self._check_new_group_token(token)
        for token, uid in state.user_tokens.items():
            if token in self._group_tokens:
                raise ValueError("a user token must differ from every community token")
            known = self._user_tokens.get(token)
            if known is not None and known[0] != uid:
                raise ValueError(f"user token already belongs to user {known[0]}")
        self._states[state.group_id] = state
        for token in state.group_tokens:
            self._group_tokens[token] = state
        for token, uid in state.user_tokens.items():
            self._index_user_token(token, uid, state)
        state.registry = self

    def _index_user_token(self, token: str, uid: int, state: LocalVK) -> None:
        known = self._user_tokens.setdefault(token, (uid, []))
        if state not in known[1]:
            known[1].append(state)

    # --- requests -------------------------------------------------------------------------

    def resolve(self, token: str | None, params: Mapping[str, str]) -> Identity | None:
        """Whose call it is (see the module doc); None for a missing or unknown token."""
        if not token:
            return None
        with self.lock:
            state = self._group_tokens.get(token)
            if state is not None and state.token_identity(token) is not None:
                return Identity(state, GROUP, None, state)
            known = self._user_tokens.get(token)
            if known is not None:
                uid, admins = known
                home = admins[0]
                target = self._named_community(params) or home
                return Identity(target, USER, uid, home)
            issued = self.vkid.access(token)
            if issued is None:
                return None
            administered = self.administered_by(issued.user_id)
            home = administered[0] if administered else self.default
            target = self._named_community(params) or home
            return Identity(target, USER, issued.user_id, home, issued.scopes)

    def administered_by(self, user_id: int) -> list[LocalVK]:
        """The communities ``user_id`` administers (one of their user tokens is declared)."""
        with self.lock:
            return [state for state in self._states.values() if state.is_admin(user_id)]

    def admins(self) -> dict[int, list[LocalVK]]:
        """Every community admin, with the communities they administer, by user id."""
        with self.lock:
            found: dict[int, list[LocalVK]] = {}
            for state in self._states.values():
                for uid in sorted(set(state.user_tokens.values())):
                    found.setdefault(uid, []).append(state)
            return dict(sorted(found.items()))

    def _named_community(self, params: Mapping[str, str]) -> LocalVK | None:
        raw = params.get("group_id") or (params.get("group_ids") or "").split(",")[0]
        text = raw.strip()
        if text.startswith("club") and text[4:].isdigit():
            text = text[4:]
        if text.isdigit():
            return self._states.get(int(text))
        return next((s for s in self._states.values() if s.screen_name == text), None)

    # --- running in the server's event loop -------------------------------------------------

    async def start(self) -> None:
        """The server starts: every community's long poll opens and its pusher runs."""
        self._loop = asyncio.get_running_loop()
        for state in self:
            state.longpoll.reopen()
            await state.callbacks.start()

    def close(self) -> None:
        """Answer every waiting poller now (the server shuts down)."""
        for state in self:
            state.longpoll.close()

    async def stop(self) -> None:
        self._loop = None
        for state in self:
            await state.callbacks.stop()

    def _start(self, state: LocalVK) -> None:
        """A community created while the server runs gets its pusher started too."""
        loop = self._loop
        if loop is None:
            return
        try:
            running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            task = loop.create_task(state.callbacks.start())
            task.add_done_callback(_log_failure)
        else:
            with contextlib.suppress(RuntimeError):  # the loop is closed
                asyncio.run_coroutine_threadsafe(state.callbacks.start(), loop).result(10)

    # --- inspection -----------------------------------------------------------------------

    def calls(
        self,
        method: str | None = None,
        *,
        token_kind: str | None = None,
        since: int = 0,
        include_inner: bool = True,
    ) -> list[CallRecord]:
        """Every community's calls, in the order they came (by ``seq``)."""
        with self.lock:
            found = [
                record
                for state in self._states.values()
                for record in state.log.find(
                    method, token_kind=token_kind, since=since, include_inner=include_inner
                )
            ]
        return sorted(found, key=lambda record: record.seq)

    def describe(self, state: LocalVK) -> dict[str, Any]:
        """A community as ``/_test/communities`` shows it (tokens only as fingerprints)."""
        with self.lock:
            return {
                "group_id": state.group_id,
                "name": state.group_name,
                "screen_name": state.screen_name,
                "default": state is self.default,
                "group_tokens": [
                    {"token": token_fingerprint(token), "scopes": sorted(scopes)}
                    for token, scopes in state.group_tokens.items()
                ],
                "admins": sorted(set(state.user_tokens.values())),
            }

    def reset(self) -> None:
        """Every community's :meth:`~localvk.state.LocalVK.reset`, and VK ID's record of events
        (its apps and sign-ins stay, as tokens do)."""
        for state in self:
            state.reset()
        self.vkid.clear_events()


def _log_failure(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.error("could not start a community's Callback API pusher", exc_info=task.exception())
