"""The aiohttp application: VK's ``/method/<name>``, the long-poll endpoint of every hosted
community (``/lp/<group_id>``), VK ID (``/vkid/``, :mod:`localvk.vkid_routes`), ``/_test/``,
and the player page ``/sandbox/``
(:mod:`localvk.sandbox`); while it runs, each community's Callback API pusher
(:mod:`localvk.callback`) posts its events to its configured server."""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from .communities import Communities
from .control import add_control_routes
from .dispatch import handle_api_call
from .longpoll import MAX_WAIT
from .sandbox import add_sandbox_routes
from .state import LocalVK
from .vkid_routes import add_vkid_routes

logger = logging.getLogger(__name__)

#: The communities the app serves (:class:`~localvk.communities.Communities`).
COMMUNITIES_KEY = web.AppKey("localvk_communities", Communities)
DEFAULT_WAIT = 25
# An execute of 25 long Cyrillic messages is well over aiohttp's default 1 MiB body limit.
MAX_BODY_BYTES = 32 * 1024 * 1024

_dumps = functools.partial(json.dumps, ensure_ascii=False)


def json_response(data: Any, status: int = 200) -> web.Response:
    return web.json_response(data, status=status, dumps=_dumps)


async def request_params(request: web.Request) -> dict[str, str]:
    """Query and form parameters merged (the form wins), as VK reads them."""
    params: dict[str, str] = {key: value for key, value in request.query.items()}
    if request.method == "POST" and request.can_read_body:
        try:
            form = await request.post()
        except ValueError:
            form = None
        if form is not None:
            for key, value in form.items():
                if isinstance(value, str):
                    params[key] = value
    return params


def base_url(request: web.Request) -> str:
    return f"{request.scheme}://{request.host}"


def drop_connection(request: web.Request) -> web.StreamResponse:
    """Close the connection without an answer (the client sees a disconnect)."""
    transport = request.transport
    if transport is not None:
        transport.abort()
    raise web.HTTPServiceUnavailable()  # never written: the transport is gone


def bad_gateway() -> web.Response:
    """The page VK's front answers with while VK is down."""
    page = "<html><head><title>502 Bad Gateway</title></head><body>502 Bad Gateway</body></html>"
    return web.Response(status=502, text=page, content_type="text/html")


def communities_of(request: web.Request) -> Communities:
    return request.app[COMMUNITIES_KEY]


async def handle_method(request: web.Request) -> web.StreamResponse:
    params = await request_params(request)
    answer = await handle_api_call(
        communities_of(request),
        request.match_info["method"],
        params,
        base_url=base_url(request),
    )
    if answer.bad_gateway:
        return bad_gateway()
    if answer.drop is not None or answer.body is None:
        return drop_connection(request)
    return json_response(answer.body)


def _wait_seconds(params: Mapping[str, str]) -> float:
    try:
        wait = int(params.get("wait", DEFAULT_WAIT))
    except ValueError:
        wait = DEFAULT_WAIT
    return float(max(0, min(wait, MAX_WAIT)))


async def handle_longpoll(request: web.Request) -> web.StreamResponse:
    raw = request.match_info["group_id"]
    state = communities_of(request).find(int(raw)) if raw.isdigit() else None
    params = await request_params(request)
    if state is not None and state.faults.bad_gateway_longpoll():
        return bad_gateway()
    if state is None or params.get("act") != "a_check":
        return json_response({"failed": 2})
    answer = await state.longpoll.poll(
        params.get("key", ""), params.get("ts", ""), _wait_seconds(params)
    )
    return json_response(answer)


async def _on_startup(app: web.Application) -> None:
    await app[COMMUNITIES_KEY].start()


async def _on_shutdown(app: web.Application) -> None:
    app[COMMUNITIES_KEY].close()


async def _on_cleanup(app: web.Application) -> None:
    await app[COMMUNITIES_KEY].stop()


def make_app(state: LocalVK | Communities | None = None) -> web.Application:
    """The local VK server for ``state``: one community (its registry, if it is in one: the
    others are served too), or a :class:`~localvk.communities.Communities` (a default
    :class:`LocalVK` if omitted)."""
    app = web.Application(client_max_size=MAX_BODY_BYTES)
    app[COMMUNITIES_KEY] = Communities.of(state)
    app.router.add_route("*", "/method/{method}", handle_method)
    app.router.add_route("*", "/lp/{group_id}", handle_longpoll)
    add_vkid_routes(app, COMMUNITIES_KEY)
    add_control_routes(app, COMMUNITIES_KEY)
    add_sandbox_routes(app, COMMUNITIES_KEY)
    app.on_startup.append(_on_startup)
    app.on_shutdown.append(_on_shutdown)
    app.on_cleanup.append(_on_cleanup)
    return app
