"""A small synchronous client for the local VK server: VK API calls (as the bot makes them,
form-encoded POSTs with a token) and the local server's ``/_test/`` control endpoints. The
demo's setup uses it; it never talks to the real VK (the URL is the local server's).

The server may host several communities: every control call takes ``group_id`` (None: the
server's default community)."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

API_VERSION = "5.199"


class VkCallError(Exception):
    """The local VK answered an error (``code`` is VK's error code, 0 for HTTP trouble)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(f"VK error {code}: {message}" if code else message)
        self.code = code


class LocalVkClient:
    def __init__(self, base_url: str, *, timeout: float = 10.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout

    def call(self, method: str, token: str, **params: Any) -> Any:
        """``/method/<method>`` with ``token``; returns ``response`` or raises
        :class:`VkCallError`."""
        query = urllib.parse.urlencode({"access_token": token, "v": API_VERSION})
        form = urllib.parse.urlencode({k: str(v) for k, v in params.items()}).encode()
        data = self._request(
            f"{self.base_url}/method/{method}?{query}", form, "application/x-www-form-urlencoded"
        )
        if "error" in data:
            error = data["error"]
            raise VkCallError(int(error.get("error_code", 0)), str(error.get("error_msg", "")))
        return data["response"]

    def control(self, path: str, body: Any = None, *, group_id: int | None = None) -> Any:
        """A ``/_test/`` endpoint: POST with a JSON body, GET without; ``group_id``: the
        community it is about (in the body of a POST, the query of a GET)."""
        url = f"{self.base_url}/_test/{path}"
        if group_id is not None:
            if body is None:
                separator = "&" if "?" in path else "?"
                url += f"{separator}{urllib.parse.urlencode({'group_id': group_id})}"
            else:
                if not isinstance(body, dict):
                    raise TypeError("a body with group_id must be a JSON object")
                body = {**body, "group_id": group_id}
        payload = None if body is None else json.dumps(body).encode()
        return self._request(url, payload, "application/json")

    def communities(self) -> list[dict[str, Any]]:
        """Every community the server hosts (``GET /_test/communities``)."""
        return list(self.control("communities")["communities"])

    def create_community(
        self,
        group_id: int,
        group_token: str,
        *,
        user_tokens: list[str] | dict[str, int] | None = None,
        name: str | None = None,
        screen_name: str | None = None,
        scopes: list[str] | str | None = None,
    ) -> dict[str, Any]:
        """A new community on the server (``POST /_test/communities``); ``scopes`` None:
        the default rights (messages, manage, photos, docs), ``[]``: none."""
        body: dict[str, Any] = {"group_id": group_id, "group_token": group_token}
        if user_tokens is not None:
            body["user_tokens"] = user_tokens
        if name is not None:
            body["name"] = name
        if screen_name is not None:
            body["screen_name"] = screen_name
        if scopes is not None:
            body["scopes"] = scopes
        return dict(self.control("communities", body))

    def add_token(
        self,
        group_id: int,
        token: str,
        *,
        kind: str = "group",
        scopes: list[str] | str | None = None,
        user_id: int | None = None,
    ) -> dict[str, Any]:
        """Another community token (``kind="group"``, with ``scopes``) or admin user token
        (``kind="user"``) for a community (``POST /_test/communities/tokens``)."""
        body: dict[str, Any] = {"group_id": group_id, "token": token, "kind": kind}
        if scopes is not None:
            body["scopes"] = scopes
        if user_id is not None:
            body["user_id"] = user_id
        return dict(self.control("communities/tokens", body))

    def reachable(self) -> bool:
        try:
            self.control("stats")
        except VkCallError:
            return False
        return True

    def _request(self, url: str, body: bytes | None, content_type: str) -> Any:
        request = urllib.request.Request(url, data=body, method="POST" if body else "GET")
        if body is not None:
            request.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read().decode())
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode(errors="replace")[:300]
            raise VkCallError(0, f"HTTP {exc.code} from {url}: {detail}") from exc
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise VkCallError(0, f"cannot reach the local VK at {url}: {exc}") from exc
