"""gameplay.vkid, VK ID's client, against the local VK's VK ID over HTTP: the authorize
address (PKCE S256, the scopes the board needs), the code exchanged for a pair, a renewal that
rotates the refresh token, and VK ID's «no» (a spent refresh token) told apart from VK ID not
answering."""

from __future__ import annotations

import base64
import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest

from gameplay import vkid
from localvk import LocalVK, RunningServer, ServerThread
from tests.vkid_support import APP_ID, aim_at, issue, query_of

ADMIN = 980
REDIRECT = "http://testserver/panel/communities/vkid/"


@pytest.fixture
def vk(settings: Any) -> Iterator[RunningServer]:
    state = LocalVK(group_id=471, group_token="v-group", user_tokens={"declared": ADMIN})
    with ServerThread(state) as server:
        aim_at(settings, server)
        yield server


def test_the_challenge_is_s256_of_a_verifier_that_stays_on_the_server() -> None:
    pkce = vkid.new_pkce()
    digest = hashlib.sha256(pkce.verifier.encode()).digest()
    assert pkce.challenge == base64.urlsafe_b64encode(digest).decode().rstrip("=")
    assert 43 <= len(pkce.verifier) <= 128 and pkce.verifier not in repr(pkce)
    address = vkid.authorize_url(app_id=APP_ID, redirect_uri=REDIRECT, pkce=pkce)
    query = query_of(address)
    assert query["code_challenge"] == pkce.challenge and query["code_challenge_method"] == "s256"
    assert query["scope"].split() == ["vkid.personal_info", "groups"]
    assert pkce.verifier not in address


def test_a_code_becomes_a_pair_and_a_renewal_rotates_it(vk: RunningServer) -> None:
    grant = issue(vk, admin=ADMIN, redirect=REDIRECT)
    assert grant.user_id == ADMIN and "groups" in grant.scopes and grant.expires_in == 3600
    assert grant.access_token not in repr(grant)

    renewed = vkid.refresh(
        app_id=APP_ID, refresh_token=grant.refresh_token, device_id=grant.device_id
    )
    assert renewed.refresh_token != grant.refresh_token
    assert renewed.access_token != grant.access_token

    with pytest.raises(vkid.VkIdRefused) as refused:  # a refresh token works once
        vkid.refresh(app_id=APP_ID, refresh_token=grant.refresh_token, device_id=grant.device_id)
    assert refused.value.error == "invalid_grant"
    assert grant.refresh_token not in str(refused.value)


def test_vk_id_not_answering_is_not_a_refusal(settings: Any) -> None:
    settings.VK_ID_URL = "http://127.0.0.1:9/vkid/"
    with pytest.raises(vkid.VkIdUnavailable):
        vkid.refresh(app_id=APP_ID, refresh_token="r", device_id="d")


class _Busy(BaseHTTPRequestHandler):
    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.dumps({"error": "temporarily_unavailable", "error_description": "later"})
        self.send_response(503)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body.encode())

    def log_message(self, *args: Any) -> None:
        pass


def test_vk_id_asking_to_come_back_later_is_not_a_refusal(settings: Any) -> None:
    server = HTTPServer(("127.0.0.1", 0), _Busy)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        settings.VK_ID_URL = f"http://127.0.0.1:{server.server_port}/"
        with pytest.raises(vkid.VkIdUnavailable, match="temporarily_unavailable"):
            vkid.refresh(app_id=APP_ID, refresh_token="r", device_id="d")
    finally:
        server.shutdown()
        server.server_close()
