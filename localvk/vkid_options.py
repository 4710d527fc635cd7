"""Command-line options for VK ID (``python -m localvk`` and ``manage.py runlocalvk``): the app
a panel signs in with, its trusted redirect URLs, and the lifetimes of what it issues.

Example (the project's ``VK_ID_URL`` then is ``http://127.0.0.1:8081/vkid/``)::

    python -m localvk --vkid-app-id 51234567 \\
        --vkid-redirect http://127.0.0.1:8000/panel/vkid/callback/ --user-token-ttl 3600
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from .communities import Communities
from .state import LocalVK
from .vkid_records import ACCESS_TOKEN_TTL, CODE_TTL


def add_vkid_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("VK ID (user access keys for the panel, under /vkid/)")
    group.add_argument(
        "--vkid-app-id",
        type=int,
        default=None,
        metavar="CLIENT_ID",
        help="the VK ID app's id (client_id) the panel signs in with",
    )
    group.add_argument(
        "--vkid-redirect",
        action="append",
        dest="vkid_redirects",
        default=None,
        metavar="URL",
        help="a trusted redirect URL of that app (repeatable; matched exactly)",
    )
    group.add_argument(
        "--user-token-ttl",
        type=float,
        default=ACCESS_TOKEN_TTL,
        metavar="SECONDS",
        help=f"lifetime of the user access tokens VK ID issues (default {ACCESS_TOKEN_TTL:g})",
    )
    group.add_argument(
        "--vkid-code-ttl",
        type=float,
        default=CODE_TTL,
        metavar="SECONDS",
        help=f"lifetime of an authorization code (default {CODE_TTL:g})",
    )


def configure_vkid(
    state: LocalVK | Communities,
    app_id: int | None,
    redirects: Sequence[str] | None,
    *,
    user_token_ttl: float = ACCESS_TOKEN_TTL,
    code_ttl: float = CODE_TTL,
) -> None:
    """Apply the options to the server's VK ID; ValueError (an operator-facing message) if
    they do not fit together."""
    vkid = Communities.of(state).vkid
    if user_token_ttl <= 0 or code_ttl <= 0:
        raise ValueError("--user-token-ttl and --vkid-code-ttl must be positive")
    vkid.configure(access_ttl=user_token_ttl, code_ttl=code_ttl)
    if app_id is None:
        if redirects:
            raise ValueError("--vkid-redirect needs --vkid-app-id")
        return
    if not redirects:
        raise ValueError("--vkid-app-id needs at least one --vkid-redirect")
    vkid.add_app(app_id, redirects)
