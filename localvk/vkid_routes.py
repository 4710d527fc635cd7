"""VK ID over HTTP: ``/vkid/authorize`` (the consent page a person clicks, and its form) and
``/vkid/oauth2/auth`` (the code exchange and renewals), the paths VK serves at
``https://id.vk.com/``; the rules are :mod:`localvk.vkid`'s.

The page lists the local VK's community admins (the users whose user tokens are declared):
each can sign in with «Разрешить»; «Отмена» goes back with ``error=access_denied``. The form
posts back to ``/vkid/authorize`` with the request's parameters, ``user_id`` and ``action``
(``allow`` or ``deny``), so a test can skip the page and post that directly.
"""

from __future__ import annotations

import functools
import html
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from aiohttp import web

from .vkid_records import AuthorizeError, AuthorizeRequest, VKIDError

if TYPE_CHECKING:
    from .communities import Communities
    from .state import LocalVK

PREFIX = "/vkid"
_dumps = functools.partial(json.dumps, ensure_ascii=False)
#: RFC 6749 §5.1: token answers are not to be cached.
_NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
#: The parameters the consent form carries back.
_FORM_PARAMS = (
    "response_type", "client_id", "redirect_uri", "state", "code_challenge",
    "code_challenge_method", "scope",
)  # fmt: skip


async def _params(request: web.Request) -> dict[str, str]:
    """Query and form parameters merged (the form wins): VK's web SDK sends ``oauth2/auth``'s
    parameters in the query string and the code or refresh token in the body."""
    params = dict(request.query)
    if request.method == "POST" and request.can_read_body:
        try:
            form = await request.post()
        except ValueError:
            form = None
        if form is not None:
            params.update({k: v for k, v in form.items() if isinstance(v, str)})
    return params


def with_query(uri: str, extra: Mapping[str, str]) -> str:
    """``uri`` with ``extra`` appended to its query (kept if it has one, as VK's SDK does)."""
    parts = urlsplit(uri)
    added = urlencode(extra)
    query = f"{parts.query}&{added}" if parts.query else added
    return urlunsplit(parts._replace(query=query))


def _redirect(location: str) -> web.Response:
    return web.Response(status=302, headers={"Location": location})


def add_vkid_routes(app: web.Application, key: web.AppKey[Communities]) -> None:
    """Register VK ID's routes on ``app``."""

    async def authorize_page(request: web.Request) -> web.StreamResponse:
        communities = request.app[key]
        params = await _params(request)
        try:
            checked = communities.vkid.check_authorize(params)
        except AuthorizeError as exc:
            return _refusal(params, exc)
        return web.Response(
            text=_consent_page(checked, communities.admins()),
            content_type="text/html",
            charset="utf-8",
        )

    async def authorize_decision(request: web.Request) -> web.StreamResponse:
        communities = request.app[key]
        params = await _params(request)
        try:
            checked = communities.vkid.check_authorize(params)
        except AuthorizeError as exc:
            return _refusal(params, exc)
        action = params.get("action")
        if action == "deny":
            communities.vkid.record_denied(checked)
            return _redirect(
                with_query(
                    checked.redirect_uri,
                    {
                        "error": "access_denied",
                        "error_description": "User denied access",
                        "state": checked.state,
                    },
                )
            )
        raw_user = params.get("user_id") or ""
        admins = communities.admins()
        if action != "allow" or not raw_user.isdigit() or int(raw_user) not in admins:
            return _error_page("Выберите пользователя из списка.", status=400)
        answer = communities.vkid.issue_code(checked, int(raw_user))
        return _redirect(with_query(checked.redirect_uri, answer))

    async def token(request: web.Request) -> web.StreamResponse:
        params = await _params(request)
        try:
            body: dict[str, Any] = request.app[key].vkid.exchange(params)
            status = 200
        except VKIDError as exc:
            body, status = exc.to_dict(params.get("state")), exc.status
        return web.json_response(body, status=status, dumps=_dumps, headers=_NO_STORE)

    app.router.add_get(f"{PREFIX}/authorize", authorize_page)
    app.router.add_post(f"{PREFIX}/authorize", authorize_decision)
    app.router.add_post(f"{PREFIX}/oauth2/auth", token)


def _refusal(params: Mapping[str, str], exc: AuthorizeError) -> web.Response:
    """A refused ``authorize``: back to the app with ``error`` when its redirect URL is
    trusted, else VK's own error page."""
    if exc.redirect:
        answer = {"error": exc.error, "error_description": exc.description}
        if params.get("state"):
            answer["state"] = params["state"]
        return _redirect(with_query(params["redirect_uri"], answer))
    return _error_page(f"Ошибка авторизации: {exc.error} ({exc.description}).", status=400)


_STYLE = """
body { font-family: sans-serif; background: #f0f2f5; margin: 0; }
main { max-width: 30rem; margin: 3rem auto; background: #fff; border-radius: 12px;
       padding: 1.5rem 2rem; box-shadow: 0 1px 4px rgba(0, 0, 0, .1); }
h1 { font-size: 1.3rem; margin-top: 0; }
ul { list-style: none; padding: 0; }
li { display: flex; justify-content: space-between; align-items: center; padding: .6rem 0;
     border-bottom: 1px solid #e7e8ec; gap: 1rem; }
small { color: #818c99; }
button { background: #0077ff; color: #fff; border: 0; border-radius: 8px; padding: .5rem 1rem;
         font-size: 1rem; cursor: pointer; }
button.cancel { background: #e5ebf1; color: #2c2d2e; }
"""


def _document(title: str, body: str) -> str:
    return (
        '<!doctype html>\n<html lang="ru"><head><meta charset="utf-8">'
        f"<title>{html.escape(title)}</title><style>{_STYLE}</style></head>"
        f"<body><main>{body}</main></body></html>\n"
    )


def _error_page(text: str, *, status: int) -> web.Response:
    body = f"<h1>VK ID</h1><p>{html.escape(text)}</p>"
    return web.Response(
        text=_document("VK ID", body), status=status, content_type="text/html", charset="utf-8"
    )


def _hidden(request: AuthorizeRequest) -> str:
    values = {
        "response_type": "code",
        "client_id": str(request.client_id),
        "redirect_uri": request.redirect_uri,
        "state": request.state,
        "code_challenge": request.code_challenge,
        "code_challenge_method": "s256",
        "scope": request.scope,
    }
    return "".join(
        f'<input type="hidden" name="{name}" value="{html.escape(values[name])}">'
        for name in _FORM_PARAMS
    )


def _consent_page(request: AuthorizeRequest, admins: Mapping[int, list[LocalVK]]) -> str:
    """«Войти через VK ID»: who may sign in (each with «Разрешить»), and «Отмена»."""
    hidden = _hidden(request)
    action = f"{PREFIX}/authorize"
    rows = []
    for user_id, communities in admins.items():
        user = communities[0].user(user_id)
        names = ", ".join(html.escape(c.group_name) for c in communities)
        rows.append(
            f"<li><span>{html.escape(user.first_name)} {html.escape(user.last_name)}"
            f"<br><small>id{user_id} · администратор: {names}</small></span>"
            f'<form method="post" action="{action}">{hidden}'
            f'<input type="hidden" name="user_id" value="{user_id}">'
            '<button name="action" value="allow">Разрешить</button></form></li>'
        )
    listing = (
        f"<ul>{''.join(rows)}</ul>"
        if rows
        else "<p>Нет администраторов сообществ: войти некому.</p>"
    )
    body = (
        "<h1>Войти через VK ID</h1>"
        f"<p>Приложение {request.client_id} запрашивает доступ: "
        f"<b>{html.escape(request.scope)}</b>.</p>"
        f"<p>Выберите, кем войти (локальный VK):</p>{listing}"
        f'<form method="post" action="{action}">{hidden}'
        '<button class="cancel" name="action" value="deny">Отмена</button></form>'
    )
    return _document("Войти через VK ID", body)
