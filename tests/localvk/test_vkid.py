"""VK ID in the local VK: the consent page, the code exchange with PKCE, renewals that rotate
the refresh token, user access tokens that expire or are revoked, the test controls and the
command-line options — all over real HTTP (see docs/vk.md, "VK ID")."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import re
import secrets
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import aiohttp
import pytest
import pytest_asyncio
from vkbottle.http import SingleAiohttpClient

from localvk import LocalVK, RunningServer, persist, running_server
from localvk.__main__ import build_parser, state_from_args
from localvk.communities import Communities
from localvk.vkid import code_challenge
from tests.localvk.support import ADMIN_ID, GROUP_ID, USER_TOKEN, control, make_state, raw_call

CLIENT_ID = 51234567
REDIRECT = "http://127.0.0.1:8000/panel/vkid/callback/"
OTHER_ADMIN = 600


class Clock:
    """VK ID's clock, moved by the tests (no sleeping for lifetimes)."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest_asyncio.fixture
async def vk() -> AsyncIterator[RunningServer]:
    """The test community (admin 500) and a second one (admin 600), a VK ID app, and a clock
    the test moves."""
    state = make_state()
    state.add_user(ADMIN_ID, "Анна", "Админова")
    async with running_server(state) as srv:
        srv.communities.create(
            group_id=GROUP_ID + 1, group_token="other-group", user_tokens={"other-user": 600}
        )
        srv.communities.vkid.add_app(CLIENT_ID, [REDIRECT, "http://app.test/cb?from=vkid"])
        srv.communities.vkid.clock = Clock()
        yield srv
        await SingleAiohttpClient().close()


def clock(srv: RunningServer) -> Clock:
    found = srv.communities.vkid.clock
    assert isinstance(found, Clock)
    return found


def verifier() -> str:
    return secrets.token_urlsafe(48)


def authorize_params(
    challenge: str, *, state: str = "state-" + "x" * 32, scope: str = "vkid.personal_info groups"
) -> dict[str, str]:
    return {
        "response_type": "code",
        "client_id": str(CLIENT_ID),
        "redirect_uri": REDIRECT,
        "state": state,
        "code_challenge": challenge,
        "code_challenge_method": "s256",
        "scope": scope,
    }


def query_of(location: str) -> dict[str, str]:
    return {key: values[0] for key, values in parse_qs(urlsplit(location).query).items()}


async def decide(
    http: aiohttp.ClientSession, srv: RunningServer, params: dict[str, str], **form: str
) -> aiohttp.ClientResponse:
    """Post the consent form (what «Разрешить» / «Отмена» send); the redirect is not followed."""
    async with http.post(
        f"{srv.url}/vkid/authorize", data={**params, **form}, allow_redirects=False
    ) as response:
        await response.read()
        return response


async def token_call(
    http: aiohttp.ClientSession,
    srv: RunningServer,
    form: dict[str, str],
    *,
    query: dict[str, str] | None = None,
) -> tuple[int, dict[str, Any]]:
    async with http.post(f"{srv.url}/vkid/oauth2/auth", params=query or {}, data=form) as r:
        return r.status, await r.json()


@dataclass
class SignIn:
    verifier: str
    code: str
    device_id: str
    redirect: dict[str, str]


async def get_code(
    http: aiohttp.ClientSession,
    srv: RunningServer,
    *,
    user_id: int = ADMIN_ID,
    scope: str = "vkid.personal_info groups",
) -> SignIn:
    secret = verifier()
    response = await decide(
        http,
        srv,
        authorize_params(code_challenge(secret), scope=scope),
        user_id=str(user_id),
        action="allow",
    )
    assert response.status == 302
    redirect = query_of(response.headers["Location"])
    return SignIn(secret, redirect["code"], redirect["device_id"], redirect)


def exchange_form(sign_in: SignIn, **overrides: str) -> dict[str, str]:
    form = {
        "grant_type": "authorization_code",
        "code": sign_in.code,
        "code_verifier": sign_in.verifier,
        "client_id": str(CLIENT_ID),
        "device_id": sign_in.device_id,
        "redirect_uri": REDIRECT,
        "state": "exchange-state",
    }
    form.update(overrides)
    return form


async def sign_in(
    http: aiohttp.ClientSession,
    srv: RunningServer,
    *,
    user_id: int = ADMIN_ID,
    scope: str = "vkid.personal_info groups",
) -> tuple[SignIn, dict[str, Any]]:
    code = await get_code(http, srv, user_id=user_id, scope=scope)
    status, body = await token_call(http, srv, exchange_form(code))
    assert status == 200, body
    return code, body


def refresh_form(device_id: str, refresh_token: str, **overrides: str) -> dict[str, str]:
    form = {
        "grant_type": "refresh_token",
        "refresh_token": refresh_token,
        "client_id": str(CLIENT_ID),
        "device_id": device_id,
        "state": "refresh-state",
    }
    form.update(overrides)
    return form


async def create_comment(
    http: aiohttp.ClientSession, srv: RunningServer, token: str, *, group_id: int = GROUP_ID
) -> dict[str, Any]:
    topic = srv.community(group_id).create_topic("Игра")
    _, answer = await raw_call(
        http,
        srv,
        "board.createComment",
        {"group_id": group_id, "topic_id": topic.id, "message": "Ночь", "from_group": 1},
        token=token,
    )
    return answer


# --- the consent page ---------------------------------------------------------------------


async def test_the_page_lists_the_admins_who_may_sign_in(
    vk: RunningServer, http: aiohttp.ClientSession
) -> None:
    params = authorize_params(code_challenge(verifier()))
    async with http.get(f"{vk.url}/vkid/authorize", params=params) as response:
        assert response.status == 200
        assert response.content_type == "text/html"
        page = await response.text()
    assert "Войти через VK ID" in page
    assert "Анна Админова" in page and f"id{ADMIN_ID}" in page and f"id{OTHER_ADMIN}" in page
    assert page.count(">Разрешить</button>") == 2
    assert ">Отмена</button>" in page
    # The forms carry the request back.
    assert f'value="{params["code_challenge"]}"' in page
    assert 'name="user_id" value="500"' in page


@pytest.mark.parametrize("method", ["s256", "S256"])
async def test_s256_is_accepted_in_either_case(
    vk: RunningServer, http: aiohttp.ClientSession, method: str
) -> None:
    """VK's API description and SDKs send ``s256``, one VK page and RFC 7636 ``S256``."""
    secret = verifier()
    params = {**authorize_params(code_challenge(secret)), "code_challenge_method": method}
    async with http.get(f"{vk.url}/vkid/authorize", params=params) as response:
        assert response.status == 200
    answer = await decide(http, vk, params, user_id=str(ADMIN_ID), action="allow")
    code = query_of(answer.headers["Location"])
    status, body = await token_call(
        http, vk, exchange_form(SignIn(secret, code["code"], code["device_id"], code))
    )
    assert status == 200 and body["user_id"] == ADMIN_ID


async def test_allow_goes_back_with_code_state_device_id(
    vk: RunningServer, http: aiohttp.ClientSession
) -> None:
    params = authorize_params(code_challenge(verifier()))
    response = await decide(http, vk, params, user_id=str(ADMIN_ID), action="allow")
    assert response.status == 302
    location = response.headers["Location"]
    assert location.startswith(REDIRECT + "?")
    redirect = query_of(location)
    assert redirect["state"] == params["state"]
    assert redirect["expires_in"] == "600" and redirect["type"] == "code_v2"
    assert len(redirect["code"]) >= 32 and len(redirect["device_id"]) >= 32
    assert set(redirect) == {"code", "state", "device_id", "expires_in", "type", "ext_id"}
    assert vk.communities.vkid.stats()["codes"] == 1


async def test_a_redirect_url_with_a_query_keeps_it(
    vk: RunningServer, http: aiohttp.ClientSession
) -> None:
    params = {
        **authorize_params(code_challenge(verifier())),
        "redirect_uri": "http://app.test/cb?from=vkid",
    }
    response = await decide(http, vk, params, user_id=str(ADMIN_ID), action="allow")
    location = response.headers["Location"]
    assert location.startswith("http://app.test/cb?from=vkid&code=")


async def test_cancel_goes_back_with_access_denied(
    vk: RunningServer, http: aiohttp.ClientSession
) -> None:
    params = authorize_params(code_challenge(verifier()))
    response = await decide(http, vk, params, action="deny")
    assert response.status == 302
    redirect = query_of(response.headers["Location"])
    assert redirect["error"] == "access_denied" and redirect["state"] == params["state"]
    assert "code" not in redirect
    assert vk.communities.vkid.stats()["denied"] == 1


async def test_only_a_listed_admin_can_be_chosen(
    vk: RunningServer, http: aiohttp.ClientSession
) -> None:
    params = authorize_params(code_challenge(verifier()))
    for form in ({"user_id": "42", "action": "allow"}, {"action": "allow"}, {"user_id": "500"}):
        response = await decide(http, vk, params, **form)
        assert response.status == 400
    assert vk.communities.vkid.stats()["codes"] == 0


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"client_id": "999"}, "invalid_client"),
        ({"client_id": ""}, "invalid_client"),
        ({"redirect_uri": "http://evil.test/cb"}, "invalid_request"),
        ({"redirect_uri": REDIRECT + "x"}, "invalid_request"),
    ],
)
async def test_an_unknown_app_or_untrusted_redirect_is_an_error_page(
    vk: RunningServer, http: aiohttp.ClientSession, change: dict[str, str], reason: str
) -> None:
    """Such a request cannot be sent back to the app: VK shows its own page."""
    params = {**authorize_params(code_challenge(verifier())), **change}
    async with http.get(
        f"{vk.url}/vkid/authorize", params=params, allow_redirects=False
    ) as response:
        assert response.status == 400
        assert reason in await response.text()
    response = await decide(http, vk, params, user_id=str(ADMIN_ID), action="allow")
    assert response.status == 400


@pytest.mark.parametrize(
    ("change", "error"),
    [
        ({"response_type": "token"}, "unsupported_response_type"),
        ({"code_challenge": ""}, "invalid_request"),
        ({"code_challenge": "short"}, "invalid_request"),
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"code_challenge_method": ""}, "invalid_request"),
        ({"state": ""}, "invalid_request"),
    ],
)
async def test_other_mistakes_go_back_with_an_error(
    vk: RunningServer, http: aiohttp.ClientSession, change: dict[str, str], error: str
) -> None:
    params = {**authorize_params(code_challenge(verifier())), **change}
    async with http.get(
        f"{vk.url}/vkid/authorize", params=params, allow_redirects=False
    ) as response:
        assert response.status == 302
        redirect = query_of(response.headers["Location"])
    assert redirect["error"] == error and redirect["error_description"]
    assert redirect.get("state", "") == params["state"]
    assert "code" not in redirect


# --- the code exchange ----------------------------------------------------------------------


async def test_a_code_becomes_tokens(vk: RunningServer, http: aiohttp.ClientSession) -> None:
    code = await get_code(http, vk)
    status, body = await token_call(http, vk, exchange_form(code))
    assert status == 200
    assert set(body) == {
        "access_token", "refresh_token", "id_token", "token_type", "expires_in", "user_id",
        "state", "scope",
    }  # fmt: skip
    assert body["token_type"] == "Bearer" and body["expires_in"] == 3600
    assert body["user_id"] == ADMIN_ID and body["state"] == "exchange-state"
    assert body["scope"] == "vkid.personal_info groups"
    header, payload, _ = body["id_token"].split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    assert claims["sub"] == str(ADMIN_ID) and claims["app"] == CLIENT_ID
    assert vk.communities.vkid.stats()["grants"] == 1


async def test_the_web_sdk_way_parameters_in_the_query_code_in_the_body(
    vk: RunningServer, http: aiohttp.ClientSession
) -> None:
    """VK's web SDK posts everything but ``code`` in the query string."""
    code = await get_code(http, vk)
    query = exchange_form(code)
    del query["code"]
    status, body = await token_call(http, vk, {"code": code.code}, query=query)
    assert status == 200 and body["state"] == "exchange-state"


async def test_the_verifier_must_match_the_challenge(
    vk: RunningServer, http: aiohttp.ClientSession
) -> None:
    code = await get_code(http, vk)
    status, body = await token_call(http, vk, exchange_form(code, code_verifier=verifier()))
    assert (status, body["error"]) == (400, "invalid_grant")
    assert body["error_description"] == "code_challenge does not match code_verifier"
    assert body["state"] == "exchange-state"
    # A plain verifier equal to the challenge (method "plain") is no S256 either.
    challenge = code_challenge(code.verifier)
    status, body = await token_call(http, vk, exchange_form(code, code_verifier=challenge))
    assert (status, body["error"]) == (400, "invalid_grant")
    # The right verifier still works: a refused exchange does not spend the code.
    status, _ = await token_call(http, vk, exchange_form(code))
    assert status == 200


def test_code_challenge_is_rfc_7636_s256() -> None:
    """RFC 7636 appendix B's example."""
    assert (
        code_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    )
    digest = hashlib.sha256(b"x" * 43).digest()
    assert code_challenge("x" * 43) == base64.urlsafe_b64encode(digest).decode().rstrip("=")


async def test_a_code_works_once(vk: RunningServer, http: aiohttp.ClientSession) -> None:
    code = await get_code(http, vk)
    assert (await token_call(http, vk, exchange_form(code)))[0] == 200
    status, body = await token_call(http, vk, exchange_form(code))
    assert (status, body["error"], body["error_description"]) == (
        400,
        "invalid_grant",
        "code was already used",
    )


async def test_a_code_lives_ten_minutes(vk: RunningServer, http: aiohttp.ClientSession) -> None:
    code = await get_code(http, vk)
    clock(vk).now += 600
    status, body = await token_call(http, vk, exchange_form(code))
    assert (status, body["error"]) == (400, "invalid_grant")
    assert body["error_description"] == "code is invalid or expired"


async def test_the_code_lifetime_is_configurable(
    vk: RunningServer, http: aiohttp.ClientSession
) -> None:
    status, _ = await control(http, vk, "vkid", {"code_ttl": 30})
    assert status == 200
    code = await get_code(http, vk)
    assert code.redirect["expires_in"] == "30"
    clock(vk).now += 29
    assert (await token_call(http, vk, exchange_form(code)))[0] == 200


@pytest.mark.parametrize(
    ("override", "description"),
    [
        ({"redirect_uri": "http://app.test/cb?from=vkid"}, "redirect_uri is invalid"),
        ({"device_id": "another-device"}, "device_id is invalid"),
        ({"code": "no-such-code"}, "code is invalid or expired"),
    ],
)
async def test_a_code_is_bound_to_its_redirect_and_device(
    vk: RunningServer, http: aiohttp.ClientSession, override: dict[str, str], description: str
) -> None:
    code = await get_code(http, vk)
    status, body = await token_call(http, vk, exchange_form(code, **override))
    assert (status, body["error"]) == (400, "invalid_grant")
    assert body["error_description"].startswith(description)


async def test_a_code_is_bound_to_its_app(vk: RunningServer, http: aiohttp.ClientSession) -> None:
    vk.communities.vkid.add_app(777, [REDIRECT])
    code = await get_code(http, vk)
    status, body = await token_call(http, vk, exchange_form(code, client_id="777"))
    assert (status, body["error"]) == (400, "invalid_grant")
    status, body = await token_call(http, vk, exchange_form(code, client_id="778"))
    assert (status, body["error"]) == (401, "invalid_client")


@pytest.mark.parametrize(
    "missing", ["code", "code_verifier", "device_id", "redirect_uri", "state", "client_id"]
)
async def test_a_missing_parameter_is_invalid_request(
    vk: RunningServer, http: aiohttp.ClientSession, missing: str
) -> None:
    code = await get_code(http, vk)
    form = exchange_form(code)
    del form[missing]
    status, body = await token_call(http, vk, form)
    assert (status, body["error"]) == (400, "invalid_request")
    assert missing in body["error_description"]


async def test_grant_types(vk: RunningServer, http: aiohttp.ClientSession) -> None:
    status, body = await token_call(http, vk, {"grant_type": "password", "state": "s"})
    assert (status, body["error"], body["state"]) == (400, "unsupported_grant_type", "s")
    status, body = await token_call(http, vk, {"state": "s"})
    assert (status, body["error"]) == (400, "invalid_request")
    # A JSON body is not a form: VK reads nothing from it.
    async with http.post(
        f"{vk.url}/vkid/oauth2/auth", json={"grant_type": "authorization_code"}
    ) as response:
        assert response.status == 400
        assert (await response.json())["error"] == "invalid_request"
    assert vk.communities.vkid.stats()["refused"] == 3


# --- the access token at the API ----------------------------------------------------------


async def test_the_access_token_is_the_users_token(
    vk: RunningServer, http: aiohttp.ClientSession
) -> None:
    _, tokens = await sign_in(http, vk)
    answer = await create_comment(http, vk, tokens["access_token"])
    assert isinstance(answer.get("response"), int), answer
    [comment] = [c for t in vk.state.topics.values() for c in t.comments if c.text == "Ночь"]
    assert comment.from_id == -GROUP_ID
    [call] = vk.state.calls("board.createComment")
    assert (call.token_kind, call.user_id) == ("user", ADMIN_ID)
    _, users = await raw_call(http, vk, "users.get", {}, token=tokens["access_token"])
    assert users["response"][0]["id"] == ADMIN_ID


async def test_only_for_the_communities_the_user_administers(
    vk: RunningServer, http: aiohttp.ClientSession
) -> None:
    _, tokens = await sign_in(http, vk)
    answer = await create_comment(http, vk, tokens["access_token"], group_id=GROUP_ID + 1)
    assert answer["error"]["error_code"] == 15
    _, other = await sign_in(http, vk, user_id=OTHER_ADMIN)
    answer = await create_comment(http, vk, other["access_token"], group_id=GROUP_ID + 1)
    assert "response" in answer, answer


async def test_the_board_needs_the_groups_right(
    vk: RunningServer, http: aiohttp.ClientSession
) -> None:
    _, tokens = await sign_in(http, vk, scope="vkid.personal_info")
    assert tokens["scope"] == "vkid.personal_info"
    answer = await create_comment(http, vk, tokens["access_token"])
    assert answer["error"]["error_code"] == 15
    assert answer["error"]["error_msg"] == "Access denied: no access to call this method"
    # A declared user token has every right.
    assert "response" in await create_comment(http, vk, USER_TOKEN)


async def test_the_default_scope_is_personal_info(
    vk: RunningServer, http: aiohttp.ClientSession
) -> None:
    _, tokens = await sign_in(http, vk, scope="")
    assert tokens["scope"] == "vkid.personal_info"


async def test_an_expired_token_gets_error_5(
    vk: RunningServer, http: aiohttp.ClientSession
) -> None:
    _, tokens = await sign_in(http, vk)
    clock(vk).now += 3599
    assert "response" in await create_comment(http, vk, tokens["access_token"])
    clock(vk).now += 1
    answer = await create_comment(http, vk, tokens["access_token"])
    assert answer["error"]["error_code"] == 5
    assert answer["error"]["error_msg"] == "User authorization failed: access_token has expired."
    _, unknown = await raw_call(http, vk, "users.get", {}, token="vk2.a.nobody")
    assert unknown["error"]["error_msg"] == "User authorization failed: invalid access_token (4)."


async def test_tokens_expire_in_real_time_after_the_configured_lifetime(
    http: aiohttp.ClientSession,
) -> None:
    """No moved clock: a server with ``--user-token-ttl`` 1 second."""
    state = make_state()
    async with running_server(state) as srv:
        srv.communities.vkid.add_app(CLIENT_ID, [REDIRECT])
        status, config = await control(http, srv, "vkid", {"access_ttl": 1})
        assert (status, config["access_ttl"]) == (200, 1.0)
        _, tokens = await sign_in(http, srv)
        assert tokens["expires_in"] == 1
        _, ok = await raw_call(http, srv, "users.get", {}, token=tokens["access_token"])
        assert "response" in ok
        await asyncio.sleep(1.1)
        _, late = await raw_call(http, srv, "users.get", {}, token=tokens["access_token"])
        assert late["error"]["error_code"] == 5


# --- renewals -------------------------------------------------------------------------------


async def test_a_renewal_rotates_both_tokens(
    vk: RunningServer, http: aiohttp.ClientSession
) -> None:
    code, first = await sign_in(http, vk)
    clock(vk).now += 3000
    status, second = await token_call(
        http, vk, refresh_form(code.device_id, first["refresh_token"])
    )
    assert status == 200
    assert second["access_token"] != first["access_token"]
    assert second["refresh_token"] != first["refresh_token"]
    assert second["state"] == "refresh-state" and second["user_id"] == ADMIN_ID
    assert second["expires_in"] == 3600 and second["scope"] == first["scope"]
    # The new access token lives an hour from the renewal.
    clock(vk).now += 3599
    assert "response" in await create_comment(http, vk, second["access_token"])
    # And the new refresh token renews again.
    status, third = await token_call(
        http, vk, refresh_form(code.device_id, second["refresh_token"])
    )
    assert status == 200
    assert vk.communities.vkid.stats()["refreshes"] == 2


async def test_a_used_refresh_token_is_refused_and_counted(
    vk: RunningServer, http: aiohttp.ClientSession
) -> None:
    code, first = await sign_in(http, vk)
    form = refresh_form(code.device_id, first["refresh_token"])
    assert (await token_call(http, vk, form))[0] == 200
    status, body = await token_call(http, vk, form)
    assert status == 400
    assert body == {
        "error": "invalid_grant",
        "error_description": "refresh_token is missing or invalid",
        "state": "refresh-state",
    }
    stats = vk.communities.vkid.stats()
    assert (stats["refreshes"], stats["refused"], stats["reused_refresh"]) == (1, 1, 1)
    status, events = await control(http, vk, "vkid/events?kind=refused")
    assert status == 200
    [refused] = events["events"]
    assert refused["reused"] is True and refused["user_id"] == ADMIN_ID
    assert refused["grant_type"] == "refresh_token"


async def test_a_double_renewal_at_once_lets_one_through(
    vk: RunningServer, http: aiohttp.ClientSession
) -> None:
    code, first = await sign_in(http, vk)
    form = refresh_form(code.device_id, first["refresh_token"])
    answers = await asyncio.gather(*(token_call(http, vk, form) for _ in range(2)))
    assert sorted(status for status, _ in answers) == [200, 400]
    assert vk.communities.vkid.stats()["reused_refresh"] == 1


async def test_a_renewal_needs_the_sign_ins_device_and_app(
    vk: RunningServer, http: aiohttp.ClientSession
) -> None:
    code, first = await sign_in(http, vk)
    status, body = await token_call(
        http, vk, refresh_form("another-device", first["refresh_token"])
    )
    assert (status, body["error"], body["error_description"]) == (
        400,
        "invalid_grant",
        "device_id is invalid",
    )
    status, body = await token_call(
        http, vk, refresh_form(code.device_id, first["refresh_token"], client_id="1")
    )
    assert (status, body["error"]) == (401, "invalid_client")
    # Refusals do not spend the refresh token.
    assert (await token_call(http, vk, refresh_form(code.device_id, first["refresh_token"])))[
        0
    ] == 200


async def test_a_renewal_may_narrow_the_scope_not_widen_it(
    vk: RunningServer, http: aiohttp.ClientSession
) -> None:
    code, first = await sign_in(http, vk)
    status, body = await token_call(
        http, vk, refresh_form(code.device_id, first["refresh_token"], scope="groups wall")
    )
    assert (status, body["error"]) == (400, "invalid_scope")
    status, body = await token_call(
        http, vk, refresh_form(code.device_id, first["refresh_token"], scope="groups")
    )
    assert (status, body["scope"]) == (200, "groups")


async def test_an_expired_refresh_token_is_refused(
    vk: RunningServer, http: aiohttp.ClientSession
) -> None:
    code, first = await sign_in(http, vk)
    status, answer = await control(http, vk, "vkid/expire", {"user_id": ADMIN_ID, "refresh": True})
    assert (status, answer) == (200, {"expired": 1})
    status, body = await token_call(http, vk, refresh_form(code.device_id, first["refresh_token"]))
    assert (status, body["error"]) == (400, "invalid_grant")
    assert vk.communities.vkid.stats()["reused_refresh"] == 0


# --- controls ---------------------------------------------------------------------------------


async def test_revoking_ends_the_users_sign_ins(
    vk: RunningServer, http: aiohttp.ClientSession
) -> None:
    code, mine = await sign_in(http, vk)
    _, theirs = await sign_in(http, vk, user_id=OTHER_ADMIN)
    status, answer = await control(http, vk, "vkid/revoke", {"user_id": ADMIN_ID})
    assert (status, answer) == (200, {"revoked": 1})
    status, body = await token_call(http, vk, refresh_form(code.device_id, mine["refresh_token"]))
    assert (status, body["error"]) == (400, "invalid_grant")
    answer = await create_comment(http, vk, mine["access_token"])
    assert answer["error"]["error_msg"] == (
        "User authorization failed: user revoke access for this token."
    )
    # Another admin's sign-in goes on.
    assert "response" in await create_comment(
        http, vk, theirs["access_token"], group_id=GROUP_ID + 1
    )


async def test_expire_now_one_token(vk: RunningServer, http: aiohttp.ClientSession) -> None:
    code, first = await sign_in(http, vk)
    _, second = await token_call(http, vk, refresh_form(code.device_id, first["refresh_token"]))
    status, answer = await control(http, vk, "vkid/expire", {"access_token": first["access_token"]})
    assert (status, answer) == (200, {"expired": 1})
    expired = await create_comment(http, vk, first["access_token"])
    assert expired["error"]["error_code"] == 5
    assert "response" in await create_comment(http, vk, second["access_token"])
    # The refresh token was not touched.
    status, _ = await token_call(http, vk, refresh_form(code.device_id, second["refresh_token"]))
    assert status == 200


async def test_configure_and_inspect(http: aiohttp.ClientSession) -> None:
    async with running_server(make_state()) as srv:
        status, config = await control(
            http,
            srv,
            "vkid",
            {"client_id": CLIENT_ID, "redirect_uris": [REDIRECT], "access_ttl": 5},
        )
        assert status == 200
        assert config["apps"] == [{"client_id": CLIENT_ID, "redirect_uris": [REDIRECT]}]
        assert config["access_ttl"] == 5.0 and config["code_ttl"] == 600.0
        code, tokens = await sign_in(http, srv)
        status, seen = await control(http, srv, "vkid")
        assert status == 200
        [grant] = seen["grants"]
        assert grant["user_id"] == ADMIN_ID and grant["device_id"] == code.device_id
        assert tokens["refresh_token"] not in json.dumps(seen)  # fingerprints only
        assert tokens["access_token"] not in json.dumps(seen)
        assert seen["stats"]["grants"] == 1
        for bad in ({"client_id": 1}, {"redirect_uris": [REDIRECT]}, {"access_ttl": 0}):
            assert (await control(http, srv, "vkid", bad))[0] == 400
        assert (await control(http, srv, "vkid/revoke", {}))[0] == 400
        # A reset forgets the events, not the sign-ins.
        assert (await control(http, srv, "reset", {}))[0] == 200
        assert srv.communities.vkid.stats()["grants"] == 0
        _, users = await raw_call(http, srv, "users.get", {}, token=tokens["access_token"])
        assert "response" in users


# --- the command line -----------------------------------------------------------------------


def test_the_command_line_configures_vk_id() -> None:
    args = build_parser().parse_args(
        [
            "--vkid-app-id", str(CLIENT_ID), "--vkid-redirect", REDIRECT,
            "--vkid-redirect", "http://localhost:8000/cb", "--user-token-ttl", "5",
            "--vkid-code-ttl", "60",
        ]
    )  # fmt: skip
    vkid = Communities.of(state_from_args(args)).vkid
    assert vkid.apps[CLIENT_ID].redirect_uris == (REDIRECT, "http://localhost:8000/cb")
    assert (vkid.access_ttl, vkid.code_ttl) == (5.0, 60.0)
    plain = Communities.of(state_from_args(build_parser().parse_args([]))).vkid
    assert plain.apps == {} and plain.access_ttl == 3600.0


@pytest.mark.parametrize(
    "argv",
    [
        ["--vkid-redirect", REDIRECT],
        ["--vkid-app-id", "5"],
        ["--vkid-app-id", "5", "--vkid-redirect", REDIRECT, "--user-token-ttl", "0"],
    ],
)
def test_the_command_line_refuses_a_half_app(argv: list[str]) -> None:
    with pytest.raises(ValueError, match="vkid|ttl"):
        state_from_args(build_parser().parse_args(argv))


def test_an_unconfigured_server_knows_no_app() -> None:
    with pytest.raises(Exception, match="client_id is invalid"):
        Communities(LocalVK()).vkid.check_authorize(authorize_params("x" * 43))


def test_device_ids_and_codes_are_opaque() -> None:
    vkid = Communities(make_state()).vkid
    vkid.add_app(CLIENT_ID, [REDIRECT])
    request = vkid.check_authorize(authorize_params(code_challenge(verifier())))
    first, second = vkid.issue_code(request, ADMIN_ID), vkid.issue_code(request, ADMIN_ID)
    assert first["code"] != second["code"] and first["device_id"] != second["device_id"]
    assert re.fullmatch(r"[A-Za-z0-9_\-]+", first["device_id"])


async def test_sign_ins_survive_a_restart_with_a_state_file(
    tmp_path: Path, http: aiohttp.ClientSession
) -> None:
    path = tmp_path / "state.json"
    async with running_server(make_state()) as first:
        first.communities.vkid.add_app(CLIENT_ID, [REDIRECT])
        code, tokens = await sign_in(http, first)
        _, renewed = await token_call(
            http, first, refresh_form(code.device_id, tokens["refresh_token"])
        )
        persist.save(first.state, path)
    restarted = make_state()
    assert persist.load(restarted, path)
    async with running_server(restarted) as second:
        second.communities.vkid.add_app(CLIENT_ID, [REDIRECT])
        _, users = await raw_call(http, second, "users.get", {}, token=renewed["access_token"])
        assert users["response"][0]["id"] == ADMIN_ID
        status, body = await token_call(
            http, second, refresh_form(code.device_id, tokens["refresh_token"])
        )
        assert (status, body["error"]) == (400, "invalid_grant")
        assert second.communities.vkid.stats()["reused_refresh"] == 1
        status, body = await token_call(
            http, second, refresh_form(code.device_id, renewed["refresh_token"])
        )
        assert status == 200 and body["user_id"] == ADMIN_ID


async def test_app_permissions_are_the_rights_the_sign_in_granted(
    http: aiohttp.ClientSession, vk: RunningServer
) -> None:
    _, granted = await sign_in(http, vk, scope="vkid.personal_info groups")
    _, answer = await raw_call(
        http, vk, "account.getAppPermissions", {}, token=granted["access_token"]
    )
    assert answer["response"] == 262144  # groups; vkid.personal_info has no bit
    _, bare = await sign_in(http, vk, scope="vkid.personal_info")
    _, answer = await raw_call(
        http, vk, "account.getAppPermissions", {}, token=bare["access_token"]
    )
    assert answer["response"] == 0
