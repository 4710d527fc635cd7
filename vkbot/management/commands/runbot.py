"""``manage.py runbot``: the VK bot, reading the community's Bots Long Poll.

Every update goes through :mod:`vkbot.pipeline` (applied once, the ts kept in the database).
SIGINT and SIGTERM stop it after the batch being applied. Missing ``VK_GROUP_TOKEN`` or
``VK_GROUP_ID``, or a token VK refuses, is a configuration error: one line on stderr, exit 2.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from config.env import EnvError, exit_on_env_error
from vkbot.longpoll import DEFAULT_WAIT, LongPoller, LongPollFatalError
from vkbot.vkapi import group_api

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def _wait_seconds(value: str) -> int:
    number = int(value)
    if not 1 <= number <= 90:
        raise ValueError(value)
    return number


class Command(BaseCommand):
    help = "Run the VK bot: read the community's Bots Long Poll and apply every event once."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--wait",
            type=_wait_seconds,
            default=DEFAULT_WAIT,
            help=f"long-poll wait in seconds, 1-90 (default {DEFAULT_WAIT}, as VK recommends)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            poller = self.build_poller(options["wait"])
            asyncio.run(self.serve(poller))
        except EnvError as error:
            exit_on_env_error(error)
        except LongPollFatalError as error:
            exit_on_env_error(EnvError(f"{error}. Check VK_GROUP_TOKEN and VK_GROUP_ID."))

    def build_poller(self, wait: int) -> LongPoller:
        if not settings.VK_GROUP_TOKEN:
            raise EnvError("VK_GROUP_TOKEN is not set: runbot needs the community token.")
        if settings.VK_GROUP_ID is None:
            raise EnvError("VK_GROUP_ID is not set: runbot needs the community's numeric id.")
        return LongPoller(group_api(), settings.VK_GROUP_ID, wait=wait)

    async def serve(self, poller: LongPoller) -> None:
        loop = asyncio.get_running_loop()
        for sig in STOP_SIGNALS:
            loop.add_signal_handler(sig, poller.request_stop)
        self.stdout.write(
            f"runbot: long poll for group {poller.group_id} via {poller.api.API_URL} "
            "(Ctrl+C to stop)"
        )
        try:
            await poller.run()
        finally:
            for sig in STOP_SIGNALS:
                loop.remove_signal_handler(sig)
            with contextlib.suppress(Exception):
                await poller.api.http_client.close()
        self.stdout.write(
            f"runbot: stopped after {poller.batches} batches ({poller.applied} updates applied)"
        )
