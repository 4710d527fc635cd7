"""The local VK's VK ID for the project's tests: settings aimed at it, and the admin's
«Разрешить» on its consent page posted as the page's form does (docs/vk.md, "VK ID")."""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from localvk import RunningServer

APP_ID = 51_000_001
#: The panel's address in the tests' own requests (the Django test client's host).
PUBLIC_URL = "http://testserver"


def callback_path() -> str:
    from django.urls import reverse

    return reverse("panel:community_vkid")


def aim_at(settings: Any, vk: RunningServer, *, public_url: str = PUBLIC_URL) -> str:
    """Point the API and VK ID at the local VK and register the VK ID app with the panel's
    redirect address; returns that address."""
    settings.VK_API_URL = vk.api_url
    settings.VK_API_VERSION = "5.199"
    settings.VK_ID_URL = f"{vk.url}/vkid/"
    settings.VK_ID_APP_ID = APP_ID
    settings.PUBLIC_URL = public_url
    redirect = public_url.rstrip("/") + callback_path()
    vk.communities.vkid.add_app(APP_ID, [redirect])
    return redirect


def query_of(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).items()}


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


def consent(vk: RunningServer, authorize_url: str, *, user_id: int, action: str = "allow") -> str:
    """The admin ``user_id`` presses «Разрешить» (or «Отмена») on VK ID's page opened at
    ``authorize_url``; returns where VK ID sends the browser back (its 302's Location)."""
    params = query_of(authorize_url)
    body = urllib.parse.urlencode({**params, "user_id": str(user_id), "action": action}).encode()
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        opener.open(urllib.request.Request(f"{vk.url}/vkid/authorize", data=body), timeout=10)
    except urllib.error.HTTPError as answer:
        if answer.code == 302:
            return str(answer.headers["Location"])
        raise
    raise AssertionError("VK ID's consent did not redirect")


def path_and_query(url: str) -> str:
    parts = urllib.parse.urlsplit(url)
    return f"{parts.path}?{parts.query}"


def sign_in(client: Any, vk: RunningServer, *, group_token: str, admin: int) -> Any:
    """Connect a community from «Подключить сообщество» with «Войти через VK ID», the admin
    ``admin`` allowing on the local VK's page (``client``: a logged-in panel user's Django
    test client). Returns the community's row."""
    from django.urls import reverse

    from gameplay.models import Community

    response = client.post(
        reverse("panel:community_connect"), {"how": "vkid", "group_token": group_token}
    )
    assert response.status_code == 302, response.content[:2000]
    back = consent(vk, str(response["Location"]), user_id=admin)
    answer = client.get(path_and_query(back), follow=True)
    said = [str(m) for m in answer.context["messages"]]
    assert answer.status_code == 200 and "подключено" in " ".join(said), said
    vk_id = int(answer.redirect_chain[-1][0].rstrip("/").rsplit("/", 1)[-1])
    return Community.objects.get(vk_id=vk_id)


def issue(vk: RunningServer, *, admin: int, redirect: str) -> Any:
    """A VK ID token pair for ``admin``, as the panel gets one (``gameplay.vkid``: the
    authorize address, «Разрешить», the code exchanged with the verifier)."""
    from gameplay import vkid

    pkce = vkid.new_pkce()
    address = vkid.authorize_url(app_id=APP_ID, redirect_uri=redirect, pkce=pkce)
    back = query_of(consent(vk, address, user_id=admin))
    return vkid.exchange_code(
        app_id=APP_ID, code=back["code"], device_id=back["device_id"], redirect_uri=redirect,
        pkce=pkce,
    )  # fmt: skip
