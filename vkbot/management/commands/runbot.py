"""``manage.py runbot``: the VK bot, reading the Bots Long Poll of every community this
deployment serves (``gameplay.selectors.communities.served``), one loop per community
(:mod:`vkbot.supervisor`), started and stopped as communities connect and disconnect, their
batches applied together (:mod:`vkbot.applier`).

Every update goes through :mod:`vkbot.pipeline` (applied once, the ts kept in the database per
community). SIGINT and SIGTERM stop every loop after the slice being applied. Configuration
errors are one line on stderr and exit 2: ``VK_GROUP_ID`` without ``VK_GROUP_TOKEN`` or the
other way round, or the environment's token refused by VK when it is the only community
served. With no community at all, runbot waits for one to be connected in the panel.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser
from vkbottle.http import AiohttpClient, SingleAiohttpClient

from config.env import EnvError, exit_on_env_error
from gameplay.selectors.communities import Credentials
from gameplay.services.communities import community_sync_env
from vkbot.longpoll import DEFAULT_WAIT, LongPoller, LongPollFatalError
from vkbot.supervisor import Supervisor
from vkbot.vkapi import community_api

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _wait_seconds(value: str) -> int:
    number = int(value)
    if not 1 <= number <= 90:
        raise ValueError(value)
    return number


class Command(BaseCommand):
    help = (
        "Run the VK bot: read the Bots Long Poll of every connected community and apply "
        "every event once."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--wait",
            type=_wait_seconds,
            default=DEFAULT_WAIT,
            help=f"long-poll wait in seconds, 1-90 (default {DEFAULT_WAIT}, as VK recommends)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            self.check_environment()
            community_sync_env()
            wait = options["wait"]
            supervisor = Supervisor(
                lambda community: self.build_poller(community, wait),
                refresh=settings.VK_COMMUNITIES_REFRESH_SECONDS,
                announce=self.stdout.write,
            )
            asyncio.run(self.serve(supervisor))
        except EnvError as error:
            exit_on_env_error(error)
        except LongPollFatalError as error:
            exit_on_env_error(EnvError(f"{error}. Check VK_GROUP_TOKEN and VK_GROUP_ID."))

    def check_environment(self) -> None:
        """The environment's community is configured whole or not at all."""
        if settings.VK_GROUP_ID is not None and not settings.VK_GROUP_TOKEN:
            raise EnvError("VK_GROUP_TOKEN is not set: runbot needs the community token.")
        if settings.VK_GROUP_TOKEN and settings.VK_GROUP_ID is None:
            raise EnvError("VK_GROUP_ID is not set: runbot needs the community's numeric id.")

    def build_poller(self, community: Credentials, wait: int) -> LongPoller:
        """The long poll of one community, on its own token and its own HTTP client: a long
        poll holds a connection for up to ``wait`` seconds, and aiohttp's shared pool has 100,
        so with one shared client the 101st community's long poll (and every other request
        of the runbot) would wait for a free connection."""
        return LongPoller(
            community_api(community, http_client=AiohttpClient()),
            community.group_id,
            wait=wait,
            token=community.group_token,
        )

    async def serve(self, supervisor: Supervisor) -> None:
        loop = asyncio.get_running_loop()
        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, supervisor.request_stop)
        self.stdout.write("runbot: serving every connected community (Ctrl+C to stop)")
        try:
            await supervisor.run()
        finally:
            for sig in STOP_SIGNALS:
                loop.remove_signal_handler(sig)
            with contextlib.suppress(Exception):
                await SingleAiohttpClient().close()  # every community's client shares it
        self.stdout.write(
            f"runbot: stopped after {supervisor.batches} batches "
            f"({supervisor.applied} updates applied)"
        )
