"""``manage.py rotate_vk_ids``: draw a new offset for the ids VK de-duplicates messages by.

Run it after restoring a backup older than the last message sent: the restored database hands
out Outbox row ids again that VK has already seen (``gameplay.models.Deployment``).
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand
from django.db import DatabaseError

from gameplay.management.database import error_line
from outbox.ids import deployment_rotate_vk_ids


class Command(BaseCommand):
    help = (
        "Draw a new random offset for the random_id/guid of messages sent to VK (after restoring "
        "an older backup). Restart the bot and the workers afterwards."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            old, new = deployment_rotate_vk_ids()
        except DatabaseError as error:
            sys.stderr.write(f"rotate_vk_ids: cannot use the database: {error_line(error)}\n")
            sys.exit(2)
        self.stdout.write(
            f"VK id offset changed from {old} to {new}. Restart the bot and the workers so "
            "that they use it; messages already numbered keep their ids."
        )
