"""Running the local VK: in the current event loop (``running_server``), in a background
thread (``ServerThread``, for synchronous code), or as a process (``python -m localvk``)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any

from aiohttp import web

from .app import make_app
from .communities import Communities
from .state import LocalVK

if TYPE_CHECKING:
    from vkbottle import API

SHUTDOWN_TIMEOUT = 1.0


@dataclass
class RunningServer:
    """A started server: its default community's state, where it listens, and every
    community it hosts (``communities``: ``srv.communities.create(...)`` adds one)."""

    state: LocalVK
    host: str
    port: int

    @property
    def communities(self) -> Communities:
        return Communities.of(self.state)

    def community(self, group_id: int | None = None) -> LocalVK:
        """A hosted community's state (None: the default one)."""
        return self.communities.get(group_id)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def api_url(self) -> str:
        """What to put in vkbottle's ``API_URL`` (or the project's ``VK_API_URL``)."""
        return f"{self.url}/method/"

    def vk_api(self, token: str | None = None) -> API:
        """A real vkbottle ``API`` talking to this server (the community token by default)."""
        return point_api_at(self.api_url, token or self.state.group_token)


def point_api_at(api_url: str, token: str) -> API:
    """vkbottle ``API(token)`` whose requests go to ``api_url``.

    vkbottle builds every URL as ``self.API_URL + method``; ``API_URL`` is a class attribute,
    so setting it on the instance redirects that instance only (no global patching).
    """
    from vkbottle import API

    api = API(token)
    api.API_URL = api_url
    return api


async def start_site(
    state: LocalVK | Communities, host: str, port: int
) -> tuple[web.AppRunner, int]:
    communities = Communities.of(state)
    runner = web.AppRunner(
        make_app(communities), access_log=None, shutdown_timeout=SHUTDOWN_TIMEOUT
    )
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    bound_port = int(runner.addresses[0][1])
    for community in communities:
        community.base_url = f"http://{host}:{bound_port}"
    return runner, bound_port


@asynccontextmanager
async def running_server(
    state: LocalVK | Communities | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    **state_options: Any,
) -> AsyncIterator[RunningServer]:
    """Serve ``state`` (a community with the others of its registry, a
    :class:`~localvk.communities.Communities`, or ``LocalVK(**state_options)``) on
    ``host:port`` (0: a free port)."""
    if state is None:
        state = LocalVK(**state_options)
    elif state_options:
        raise TypeError("pass either a LocalVK or options for a new one, not both")
    communities = Communities.of(state)
    runner, bound_port = await start_site(communities, host, port)
    try:
        yield RunningServer(communities.default, host, bound_port)
    finally:
        communities.close()
        await runner.cleanup()


class ServerThread:
    """The local VK in a daemon thread with its own event loop; a context manager."""

    def __init__(
        self,
        state: LocalVK | Communities | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self.communities = Communities.of(state)
        self.state = self.communities.default
        self.host = host
        self.port = port
        self._loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None

    @property
    def server(self) -> RunningServer:
        return RunningServer(self.state, self.host, self.port)

    @property
    def url(self) -> str:
        return self.server.url

    def start(self, timeout: float = 10.0) -> RunningServer:
        self._thread = threading.Thread(target=self._run, name="localvk", daemon=True)
        self._thread.start()
        if not self._ready.wait(timeout):
            raise RuntimeError("the local VK server did not start in time")
        if self._error is not None:
            raise RuntimeError("the local VK server failed to start") from self._error
        return self.server

    def _run(self) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        asyncio.set_event_loop(loop)
        try:
            self._runner, self.port = loop.run_until_complete(
                start_site(self.communities, self.host, self.port)
            )
        except BaseException as exc:  # reported to the starting thread
            self._error = exc
            self._ready.set()
            loop.close()
            return
        self._ready.set()
        try:
            loop.run_forever()
        finally:
            self.communities.close()
            if self._runner is not None:
                loop.run_until_complete(self._runner.cleanup())
            loop.close()

    def stop(self, timeout: float = 10.0) -> None:
        if self._loop is not None and self._thread is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout)

    def __enter__(self) -> RunningServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
