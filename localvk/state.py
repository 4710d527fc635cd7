"""``LocalVK``: everything the local VK server knows of one community, plus the in-process
control API.

One instance is one community (group id + community token(s) with their rights) with one or
more community-admin user tokens, its long poll, board, conversations, Callback API pusher,
connect-flow settings and call record. One server hosts several of them through a
:class:`~localvk.communities.Communities` registry (people are shared; a request goes to the
community its token says). The aiohttp app (:mod:`localvk.app`) serves them over HTTP; tests
can also drive one directly: inject what users do, flip settings, and inspect what the bot
did. All mutations take ``self.lock``, so a server running in another thread is safe to drive.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from .boardstore import Board
from .callback import CallbackPusher
from .callback_config import CallbackConfig
from .community_settings import CommunitySettings
from .conversations import Conversations
from .faults import FaultInjector
from .incoming import Incoming
from .limits import FloodControl, TokenRateLimits
from .longpoll import LongPollQueue
from .models import GROUP, USER, CallbackEvent, Chat, Message, Topic, User
from .names import generated_name
from .recording import CallLog, CallRecord
from .scopes import parse_scopes

if TYPE_CHECKING:
    from .communities import Communities


class LocalVK(Conversations, Incoming):
    """State of the local VK: one community, its tokens, and what happened so far.

    The conversations (messages and chats) are :class:`~localvk.conversations.Conversations`,
    what users do is :class:`~localvk.incoming.Incoming`; this class holds the state they
    share, the configuration, and the inspection and control API."""

    def __init__(
        self,
        *,
        group_id: int = 1,
        group_token: str = "group-token",
        user_tokens: Mapping[str, int] | Iterable[str] = ("user-token",),
        admin_user_id: int = 100,
        group_name: str = "Мафия (локальный VK)",
        screen_name: str | None = None,
        allow_messages_by_default: bool = True,
        group_rps: int = 20,
        user_rps: int = 3,
        flood_per_hour: int = 1000,
        history_size: int = 10_000,
        echo_own_board_posts: bool = True,
        base_url: str = "http://127.0.0.1:8081",
        scopes: str | Iterable[str] | None = None,
        lock: threading.RLock | None = None,
        users: dict[int, User] | None = None,
        call_seq: Callable[[], int] | None = None,
    ) -> None:
        """``scopes``: the community token's rights (default messages, manage, photos, docs).
        ``lock``, ``users`` and ``call_seq`` are shared by the communities of one server
        (:class:`~localvk.communities.Communities` passes them)."""
        if group_id < 1:
            raise ValueError("group_id must be positive")
        if not isinstance(group_token, str) or not group_token:
            raise ValueError("the community token must not be empty")
        self.group_id = group_id
        #: Every community token with its rights; ``group_token`` is the first.
        self.group_tokens: dict[str, frozenset[str]] = {group_token: parse_scopes(scopes)}
        if isinstance(user_tokens, Mapping):
            self.user_tokens = {str(t): int(uid) for t, uid in user_tokens.items()}
        else:
            self.user_tokens = {str(t): admin_user_id + i for i, t in enumerate(user_tokens)}
        if group_token in self.user_tokens:
            raise ValueError("the community token must differ from the user tokens")
        if any(not token for token in self.user_tokens):
            raise ValueError("a user token must not be empty")
        self.group_name = group_name
        self.screen_name = screen_name or f"club{group_id}"
        self.allow_messages_by_default = allow_messages_by_default
        self.base_url = base_url.rstrip("/")
        self.lock = lock if lock is not None else threading.RLock()
        self.limits = TokenRateLimits({GROUP: group_rps, USER: user_rps})
        self.flood = FloodControl(flood_per_hour)
        self.faults = FaultInjector()
        self.log = CallLog(call_seq)
        #: The server's registry of communities, once this one is in it.
        self.registry: Communities | None = None
        #: The connect flow's settings: long poll and Callback servers, bot settings.
        self.settings = CommunitySettings()
        self.longpoll = LongPollQueue(group_id, history_size=history_size, lock=self.lock)
        self.longpoll.delivers = self._longpoll_delivers
        #: The Callback API: pushes every event to the configured server (none by default).
        self.callbacks = CallbackPusher(group_id, self.faults, self.lock)
        #: Whether the pusher follows the servers added through the API (else /_test/callback
        #: or the command line configured it, or nothing did).
        self._api_callbacks = False
        self.longpoll.add_listener(self.callbacks.submit)
        self.board = Board(
            self.community_id, self.longpoll, self.lock, echo_own_posts=echo_own_board_posts
        )
        self.users: dict[int, User] = users if users is not None else {}
        self._reset_content()

    def _reset_content(self) -> None:
        self.messages: list[Message] = []
        self._message_seq = 0
        self._cmid: dict[int, int] = {}
        self.edit_seq = 0
        self._sent_by_random_id: dict[tuple[str, int, int], Message] = {}
        self.allowed: dict[int, bool] = {}
        self.chats: dict[int, Chat] = {}
        self.board.clear()
        self.callback_events: dict[str, CallbackEvent] = {}
        #: Users a person plays on the player page (localvk.sandbox): simulated
        #: players leave them alone.
        self.taken_over: set[int] = set()

    # --- configuration -------------------------------------------------------------------

    @property
    def community_id(self) -> int:
        """The community as a sender or chat member: ``-group_id``."""
        return -self.group_id

    @property
    def group_token(self) -> str:
        """The (first) community token."""
        return next(iter(self.group_tokens))

    def token_identity(self, token: str | None) -> tuple[str, int | None] | None:
        """(kind, user id) of a token: ("group", None), ("user", id), or None if unknown."""
        if token is None:
            return None
        for known in self.group_tokens:
            if secrets.compare_digest(token.encode(), known.encode()):
                return GROUP, None
        user_id = self.user_tokens.get(token)
        return (USER, user_id) if user_id is not None else None

    def token_scopes(self, token: str) -> frozenset[str]:
        """The rights of one of the community tokens (none for another token)."""
        return self.group_tokens.get(token, frozenset())

    def add_group_token(self, token: str, scopes: str | Iterable[str] | None = None) -> None:
        """Another community token (VK lets an admin create several, each with its rights);
        in a server with several communities, add it through the registry
        (:meth:`~localvk.communities.Communities.add_token`) so requests find it."""
        with self.lock:
            if not token or token in self.user_tokens:
                raise ValueError("a community token must be new and not empty")
            self.group_tokens[token] = parse_scopes(scopes)

    def is_admin(self, user_id: int | None) -> bool:
        """Whether the user is an admin of this community (one of its user tokens is theirs)."""
        return user_id is not None and user_id in self.user_tokens.values()

    def _longpoll_delivers(self, event_type: str) -> bool:
        return self.settings.longpoll_delivers(event_type)

    def apply_callback_servers(self) -> None:
        """Point the Callback API pusher at the newest server added through the API (with its
        secret, the community's confirmation code and the events ticked for it), or stop it
        when the last one was deleted."""
        with self.lock:
            server = self.settings.newest_server()
            if server is None:
                if self._api_callbacks:
                    self.callbacks.configure(None)
                    self._api_callbacks = False
                return
            self.callbacks.configure(
                CallbackConfig(
                    urls=(server.url,),
                    confirmation_code=self.settings.confirmation_code,
                    secret=server.secret_key,
                    events=tuple(sorted(server.events)),
                )
            )
            self._api_callbacks = True

    def configure_callbacks(self, config: CallbackConfig | None) -> None:
        """Push to ``config`` (None: stop), as ``/_test/callback`` or the command line say;
        a server added through the API later takes over again."""
        with self.lock:
            self.callbacks.configure(config)
            self._api_callbacks = False

    def callback_status(self, server_id: int) -> str:
        """VK's ``status`` of a Callback server: ``ok`` once it answered the confirmation,
        ``wait`` while it is being asked, ``unconfigured`` for one not pushed to."""
        with self.lock:
            newest = self.settings.newest_server()
            if newest is None or newest.id != server_id or not self._api_callbacks:
                return "unconfigured"
            return "ok" if self.callbacks.confirmed else "wait"

    def add_user(self, user_id: int, first_name: str, last_name: str, sex: int = 0) -> User:
        with self.lock:
            user = User(user_id, first_name, last_name, sex)
            self.users[user_id] = user
            return user

    def user(self, user_id: int) -> User:
        """A known user, or one with a generated (deterministic) Russian name."""
        with self.lock:
            known = self.users.get(user_id)
            if known is not None:
                return known
        first, last, sex = generated_name(user_id)
        return User(user_id, first, last, sex)

    def set_taken_over(self, user_id: int, taken: bool = True) -> None:
        """Mark a user as played by a person (simulated players then leave them alone)."""
        with self.lock:
            if taken:
                self.taken_over.add(user_id)
            else:
                self.taken_over.discard(user_id)

    def now(self) -> int:
        return int(time.time())

    # --- board ---------------------------------------------------------------------------

    @property
    def topics(self) -> dict[int, Topic]:
        return self.board.topics

    def create_topic(self, title: str, text: str = "", *, from_id: int | None = None) -> Topic:
        """A board topic; its first comment (``text``, if any) is by ``from_id`` (the community)."""
        return self.board.create_topic(title, text, from_id=from_id)

    def topic(self, topic_id: int) -> Topic:
        return self.board.topic(topic_id)

    # --- inspection and control ----------------------------------------------------------

    def calls(
        self,
        method: str | None = None,
        *,
        token_kind: str | None = None,
        since: int = 0,
        include_inner: bool = True,
    ) -> list[CallRecord]:
        with self.lock:
            return self.log.find(
                method, token_kind=token_kind, since=since, include_inner=include_inner
            )

    def max_requests_per_second(self, token_kind: str | None = None) -> int:
        """Most requests (with ``token_kind`` "group"/"user", or all) in any 1-second window."""
        with self.lock:
            return self.log.max_per_second(token_kind)

    def stats(self) -> dict[str, Any]:
        with self.lock:
            stats = self.log.stats()
            stats["faults_injected"] = dict(self.faults.injected)
            stats["messages_sent"] = len(self.sent_messages())
            stats["longpoll_ts"] = self.longpoll.ts
            stats["callback"] = self.callbacks.stats()
            return stats

    def expire_longpoll_keys(self) -> None:
        self.longpoll.expire_keys()

    def drop_longpoll_history(self) -> None:
        self.longpoll.drop_history()

    def reset(self) -> None:
        """Forget content, calls, limits and faults; keep tokens, users, the long-poll
        numbering and keys, and the Callback API server (its records are forgotten), so a bot
        that is polling or serving callbacks goes on undisturbed."""
        with self.lock:
            self._reset_content()
            self.callbacks.reset()
            self.log.clear()
            self.limits.reset()
            self.flood.reset()
            self.faults.clear()
            self.longpoll.clear()

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return {
                "group_id": self.group_id,
                "group_name": self.group_name,
                "screen_name": self.screen_name,
                "user_tokens": len(self.user_tokens),
                "scopes": [sorted(scopes) for scopes in self.group_tokens.values()],
                "settings": {
                    "longpoll": self.settings.longpoll_view(),
                    "callback_servers": [s.to_dict() for s in self.settings.callback_servers],
                    "bot_settings": dict(self.settings.bot_settings),
                },
                "messages": [m.to_dict() for m in self.messages],
                "chats": [c.to_dict() for c in self.chats.values()],
                "topics": [t.to_dict() for t in self.topics.values()],
                "allowed": {str(uid): ok for uid, ok in self.allowed.items()},
                "longpoll": {"ts": self.longpoll.ts, "events": len(self.longpoll.events())},
                "faults": self.faults.config.to_dict(),
            }
