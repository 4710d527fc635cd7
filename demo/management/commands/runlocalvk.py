"""``manage.py runlocalvk``: the local VK server, configured from Django settings.

The defaults come from ``VK_GROUP_ID``, ``VK_GROUP_TOKEN`` and ``VK_USER_TOKEN``; point the bot
at it with ``VK_API_URL=http://127.0.0.1:8081/method/``. With ``--callback-url`` (repeatable) it
also pushes every event to the web process(es) as VK's Callback API does; the confirmation code
and the secret default to ``VK_CONFIRMATION_CODE`` and ``VK_CALLBACK_SECRET``. More
communities: ``--community GROUP_ID:GROUP_TOKEN:USER_TOKEN[:NAME[:SCOPES]]`` (repeatable), the
default community token's rights: ``--group-scopes`` (see :mod:`localvk.community_options`).
VK ID (the panel's sign-in, under ``/vkid/``): ``--vkid-app-id`` and ``--vkid-redirect``
(repeatable), defaulting to the settings ``VK_ID_APP_ID`` and ``VK_ID_REDIRECT_URI`` (a URL or
a list) when present; ``--user-token-ttl`` (3600 s) (see :mod:`localvk.vkid_options`).

It lives in the demo app, not in ``vkbot``: :mod:`localvk` is for development and tests only and
is not in the production image, so nothing the image runs may import it.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from localvk.__main__ import serve
from localvk.callback_config import add_callback_arguments, configure_callbacks
from localvk.communities import Communities
from localvk.community_options import (
    add_community_arguments,
    declare_communities,
    default_scopes,
)
from localvk.persist import StateFileError
from localvk.state import LocalVK
from localvk.vkid_options import add_vkid_arguments, configure_vkid

DEFAULT_GROUP_TOKEN = "group-token"
DEFAULT_USER_TOKEN = "user-token"


class Command(BaseCommand):
    help = "Run the local VK API server (a stand-in for VK in tests and the demo)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8081)
        parser.add_argument("--group-id", type=int, default=None)
        parser.add_argument("--group-token", default=None)
        parser.add_argument(
            "--user-token", action="append", dest="user_tokens", default=None, metavar="TOKEN"
        )
        parser.add_argument("--admin-user-id", type=int, default=100)
        parser.add_argument("--group-name", default="Мафия (локальный VK)")
        parser.add_argument("--deny-messages-by-default", action="store_true")
        parser.add_argument("--group-rps", type=int, default=20)
        parser.add_argument("--user-rps", type=int, default=3)
        parser.add_argument(
            "--state-file",
            default=None,
            metavar="PATH",
            help="load the content from this JSON file at start and keep it saved there",
        )
        add_callback_arguments(parser)
        add_community_arguments(parser)
        add_vkid_arguments(parser)

    def build_state(self, options: dict[str, Any]) -> LocalVK:
        group_id = options["group_id"] or getattr(settings, "VK_GROUP_ID", None) or 1
        group_token = (
            options["group_token"] or getattr(settings, "VK_GROUP_TOKEN", "") or DEFAULT_GROUP_TOKEN
        )
        user_tokens = options["user_tokens"] or [
            getattr(settings, "VK_USER_TOKEN", "") or DEFAULT_USER_TOKEN
        ]
        urls = options["callback_urls"]
        try:
            state = LocalVK(
                group_id=int(group_id),
                group_token=group_token,
                user_tokens=user_tokens,
                admin_user_id=options["admin_user_id"],
                group_name=options["group_name"],
                allow_messages_by_default=not options["deny_messages_by_default"],
                group_rps=options["group_rps"],
                user_rps=options["user_rps"],
                scopes=default_scopes(options["group_scopes"]),
            )
            declare_communities(state, options["communities"])
            configure_callbacks(
                state,
                urls,
                # The settings' code and secret count only when pushing is asked for.
                confirmation_code=options["callback_confirmation"]
                or (getattr(settings, "VK_CONFIRMATION_CODE", "") if urls else None),
                secret=options["callback_secret"]
                or (getattr(settings, "VK_CALLBACK_SECRET", "") if urls else None),
                concurrency=options["callback_concurrency"],
                retries=options["callback_retries"],
                duplicate_rate=options["callback_duplicate_rate"],
            )
            app_id, redirects = _vkid_app(options)
            configure_vkid(
                state,
                app_id,
                redirects,
                user_token_ttl=options["user_token_ttl"],
                code_ttl=options["vkid_code_ttl"],
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        return state

    def handle(self, *args: Any, **options: Any) -> None:
        state = self.build_state(options)
        host, port = options["host"], options["port"]
        hosted = ", ".join(str(c.group_id) for c in Communities.of(state))
        self.stdout.write(
            f"Local VK for group {hosted} on http://{host}:{port} "
            f"(VK_API_URL=http://{host}:{port}/method/; player page "
            f"http://{host}:{port}/sandbox/). Ctrl+C to stop."
        )
        if state.callbacks.config is not None:
            self.stdout.write(
                "Callback API: every event goes to "
                f"{', '.join(state.callbacks.config.urls)} once confirmed."
            )
        vkid = Communities.of(state).vkid
        if vkid.apps:
            self.stdout.write(
                f"VK ID: VK_ID_URL=http://{host}:{port}/vkid/ (app "
                f"{', '.join(str(a) for a in vkid.apps)})."
            )
        try:
            with contextlib.suppress(KeyboardInterrupt):
                asyncio.run(serve(state, host, port, state_file=options["state_file"]))
        except StateFileError as exc:
            raise CommandError(f"{options['state_file']}: {exc}") from exc


def _vkid_app(options: dict[str, Any]) -> tuple[int | None, list[str] | None]:
    """The VK ID app from the options, else from the settings (only when both are set there,
    so a project without VK ID configured runs without it)."""
    if options["vkid_app_id"] is not None or options["vkid_redirects"]:
        return options["vkid_app_id"], options["vkid_redirects"]
    app_id = getattr(settings, "VK_ID_APP_ID", None)
    raw = getattr(settings, "VK_ID_REDIRECT_URI", None)
    redirects = [raw] if isinstance(raw, str) else list(raw or [])
    if not app_id or not redirects:
        return None, None
    return int(app_id), redirects
