"""``python -m localvk``: run the local VK server until interrupted."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Sequence

from . import persist
from .callback_config import add_callback_arguments, configure_callbacks
from .communities import Communities
from .community_options import add_community_arguments, declare_communities, default_scopes
from .server import start_site
from .state import LocalVK
from .vkid_options import add_vkid_arguments, configure_vkid

logger = logging.getLogger("localvk")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m localvk", description="A local stand-in for the VK API."
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8081)
    parser.add_argument("--group-id", type=int, default=1)
    parser.add_argument("--group-token", default="group-token")
    parser.add_argument(
        "--user-token",
        action="append",
        dest="user_tokens",
        metavar="TOKEN",
        help="a community admin's user token (repeatable; default: user-token)",
    )
    parser.add_argument("--admin-user-id", type=int, default=100)
    parser.add_argument("--group-name", default="Мафия (локальный VK)")
    parser.add_argument(
        "--deny-messages-by-default",
        action="store_true",
        help="users must write first (or be allowed via /_test/allow_messages) to get messages",
    )
    parser.add_argument("--group-rps", type=int, default=20)
    parser.add_argument("--user-rps", type=int, default=3)
    parser.add_argument(
        "--state-file",
        default=None,
        metavar="PATH",
        help="load the community's content from this JSON file at start (if it exists) and "
        "save it there while running and on exit",
    )
    parser.add_argument("--log-level", default="INFO")
    add_callback_arguments(parser)
    add_community_arguments(parser)
    add_vkid_arguments(parser)
    return parser


def state_from_args(args: argparse.Namespace) -> LocalVK:
    """The default community the options describe, with the others (``--community``) in its
    registry (``state.registry``); ValueError (an operator-facing message) if wrong."""
    state = LocalVK(
        group_id=args.group_id,
        group_token=args.group_token,
        user_tokens=args.user_tokens or ["user-token"],
        admin_user_id=args.admin_user_id,
        group_name=args.group_name,
        allow_messages_by_default=not args.deny_messages_by_default,
        group_rps=args.group_rps,
        user_rps=args.user_rps,
        scopes=default_scopes(args.group_scopes),
    )
    declare_communities(state, args.communities)
    configure_callbacks(
        state,
        args.callback_urls,
        confirmation_code=args.callback_confirmation,
        secret=args.callback_secret,
        concurrency=args.callback_concurrency,
        retries=args.callback_retries,
        duplicate_rate=args.callback_duplicate_rate,
    )
    configure_vkid(
        state,
        args.vkid_app_id,
        args.vkid_redirects,
        user_token_ttl=args.user_token_ttl,
        code_ttl=args.vkid_code_ttl,
    )
    return state


async def serve(
    state: LocalVK | Communities,
    host: str,
    port: int,
    *,
    state_file: str | os.PathLike[str] | None = None,
) -> None:
    """Serve every community of ``state``'s registry until SIGINT/SIGTERM; with
    ``state_file``, load it first and keep it saved."""
    communities = Communities.of(state)
    state = communities.default
    saver = None
    if state_file is not None:
        if persist.load(state, state_file):
            logger.info("local VK state loaded from %s", state_file)
        saver = persist.AutoSaver(state, state_file)
    runner, bound_port = await start_site(communities, host, port)
    logger.info(
        "local VK for group %s listening on http://%s:%s (API: http://%s:%s/method/, "
        "player page: http://%s:%s/sandbox/)",
        ",".join(str(c.group_id) for c in communities), host, bound_port, host, bound_port,
        host, bound_port,
    )  # fmt: skip
    if state.callbacks.config is not None:
        logger.info(
            "Callback API: pushing every event to %s once confirmed",
            ", ".join(state.callbacks.config.urls),
        )
    if communities.vkid.apps:
        logger.info(
            "VK ID: VK_ID_URL=http://%s:%s/vkid/ (apps %s)",
            host, bound_port, ", ".join(str(a) for a in communities.vkid.apps),
        )  # fmt: skip
    if saver is not None:
        saver.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        # Not available on every platform, nor outside the main thread.
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        communities.close()
        await runner.cleanup()
        if saver is not None:
            await saver.stop()
            logger.info("local VK state saved to %s", state_file)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(name)s %(message)s")
    try:
        state = state_from_args(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(serve(state, args.host, args.port, state_file=args.state_file))
    except persist.StateFileError as exc:
        print(f"error: {args.state_file}: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
