"""A fake of VK's HTTP API for «Подключить сообщество» (``panel.connect``): it answers at
vkbottle's HTTP client, so the panel's whole path runs (vkbottle's request and its error and
JSON validators included), with VK's own answer shapes (API 5.199: ``groups.getById`` gives
``{"groups": [...]}``)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import pytest
from vkbottle.http import AiohttpClient

MESSAGES, MANAGE = 4096, 262144
GROUPS, OFFLINE = 262144, 65536


@dataclass
class Club:
    vk_id: int
    name: str
    admins: set[int] = field(default_factory=set)


@dataclass
class FakeVk:
    clubs: dict[int, Club] = field(default_factory=dict)
    #: community token → (community id, rights mask)
    group_tokens: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: user token → (user id, rights mask)
    user_tokens: dict[str, tuple[int, int]] = field(default_factory=dict)
    users: dict[int, tuple[str, str]] = field(default_factory=dict)
    #: method → VK error code, or "timeout" / "down" (the network), or "garbage" (not JSON)
    fail: dict[str, Any] = field(default_factory=dict)
    calls: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    next_server: int = 1

    def club(
        self,
        vk_id: int,
        name: str,
        *,
        admin: int,
        first: str = "Анна",
        last: str = "Админова",
        rights: int = MESSAGES | MANAGE,
    ) -> tuple[str, str]:
        """A community with an admin; returns (its community token, the admin's user token)."""
        self.clubs[vk_id] = Club(vk_id, name, {admin})
        self.users[admin] = (first, last)
        group_token, user_token = f"vk1.a.group{vk_id}-secret", f"vk1.a.user{admin}-secret"
        self.group_tokens[group_token] = (vk_id, rights)
        self.user_tokens[user_token] = (admin, GROUPS | OFFLINE)
        return group_token, user_token

    def called(self, method: str) -> list[dict[str, Any]]:
        return [data for m, _token, data in self.calls if m == method]

    # --- the server --------------------------------------------------------------------------

    def answer(self, method: str, token: str, data: dict[str, Any]) -> Any:
        self.calls.append((method, token, dict(data)))
        failure = self.fail.get(method)
        if failure == "timeout":
            raise TimeoutError()
        if failure == "down":
            raise aiohttp.ClientConnectionError("connection refused")
        if failure == "garbage":
            return "<html>502 Bad Gateway</html>"
        if isinstance(failure, int):
            return self.error(failure)
        group = self.group_tokens.get(token)
        user = self.user_tokens.get(token)
        if group is None and user is None:
            return self.error(5)
        if group is not None:
            vk_id, mask = group
            return self.group_method(method, vk_id, mask, data)
        assert user is not None
        return self.user_method(method, user[0], user[1], data)

    @staticmethod
    def error(code: int) -> dict[str, Any]:
        return {"error": {"error_code": code, "error_msg": f"error {code}", "request_params": []}}

    def group_method(self, method: str, vk_id: int, mask: int, data: dict[str, Any]) -> Any:
        club = self.clubs[vk_id]
        if method == "groups.getById":
            return {
                "response": {
                    "groups": [
                        {
                            "id": vk_id,
                            "name": club.name,
                            "screen_name": f"club{vk_id}",
                            "type": "group",
                        }
                    ],
                    "profiles": [],
                }
            }
        if method == "groups.getTokenPermissions":
            names = [
                {"setting": bit, "name": name}
                for name, bit in (("messages", MESSAGES), ("manage", MANAGE))
                if mask & bit
            ]
            return {"response": {"mask": mask, "permissions": names}}
        if method in (
            "groups.setLongPollSettings",
            "groups.setCallbackSettings",
            "groups.setSettings",
            "groups.deleteCallbackServer",
        ):
            if not mask & MANAGE:
                return self.error(15)
            return {"response": 1}
        if method == "users.get":  # VK answers a community token with nobody
            return {"response": []}
        if method == "groups.getCallbackConfirmationCode":
            return {"response": {"code": f"code{vk_id}"}}
        if method == "groups.addCallbackServer":
            self.next_server += 1
            return {"response": {"server_id": self.next_server}}
        return self.error(3)

    def user_method(self, method: str, user_id: int, mask: int, data: dict[str, Any]) -> Any:
        if method == "users.get":
            first, last = self.users[user_id]
            return {"response": [{"id": user_id, "first_name": first, "last_name": last}]}
        if method == "groups.getById":
            club = self.clubs.get(int(data["group_id"]))
            if club is None:
                return self.error(100)
            return {
                "response": {
                    "groups": [
                        {
                            "id": club.vk_id,
                            "name": club.name,
                            "is_admin": int(user_id in club.admins),
                            "admin_level": 3 if user_id in club.admins else 0,
                        }
                    ],
                    "profiles": [],
                }
            }
        if method == "account.getAppPermissions":
            return {"response": mask}
        return self.error(3)


@pytest.fixture
def fake_vk(monkeypatch: pytest.MonkeyPatch) -> FakeVk:
    vk = FakeVk()

    async def request_text(
        self: AiohttpClient,
        url: str,
        method: str = "GET",
        data: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> str:
        params = kwargs.get("params") or {}
        assert url.startswith("http") and params.get("v") == "5.199"
        answer = vk.answer(
            url.rsplit("/", 1)[-1], str(params.get("access_token")), dict(data or {})
        )
        return answer if isinstance(answer, str) else json.dumps(answer)

    monkeypatch.setattr(AiohttpClient, "request_text", request_text)
    return vk
