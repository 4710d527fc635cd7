"""The deployment's offset for the ids VK de-duplicates by (``gameplay.models.Deployment``).

``outbox_random_id`` and ``board_guid`` turn an Outbox row id into the ``random_id`` of a
``messages.send`` and the ``guid`` of a ``board.createComment``. Within one database they never
repeat (row ids don't); across databases they differ by each one's random offset. The offset is
read once per process; a database whose row is missing (emptied by hand) gets a new one.
"""

from __future__ import annotations

import secrets

from django.db import transaction
from django.utils import timezone

from gameplay.models import Deployment

#: VK's ``random_id`` is a signed 32-bit integer; 0 means "no de-duplication".
RANDOM_ID_MODULUS = 2_147_483_647
GUID_PREFIX = "vkmafia-outbox-"

_offset: int | None = None


def new_offset() -> int:
    """A random offset in [1, 2^31 - 1)."""
    return secrets.randbelow(RANDOM_ID_MODULUS - 1) + 1


def vk_id_offset() -> int:
    """This database's offset (cached for the life of the process)."""
    global _offset
    if _offset is None:
        row, _ = Deployment.objects.get_or_create(pk=1, defaults={"vk_id_offset": new_offset()})
        _offset = int(row.vk_id_offset)
    return _offset


def outbox_random_id(outbox_id: int) -> int:
    """The ``random_id`` of an Outbox row's message: never 0, never repeated in a database."""
    # 0 (no de-duplication at VK) becomes 2^31 - 1, the one value the remainder never takes.
    return (int(outbox_id) + vk_id_offset()) % RANDOM_ID_MODULUS or RANDOM_ID_MODULUS


def board_guid(outbox_id: int) -> str:
    """The ``guid`` of the board comment led by an Outbox row."""
    return f"{GUID_PREFIX}{vk_id_offset():x}-{outbox_id}"


@transaction.atomic
def deployment_rotate_vk_ids() -> tuple[int, int]:
    """Draw a new offset; returns (old, new). Rows whose ids are already recorded keep them (a
    re-send stays a no-op); rows sent from now on use the new offset once processes restart."""
    global _offset
    row = Deployment.objects.select_for_update().filter(pk=1).first()
    new = new_offset()
    if row is None:
        Deployment.objects.create(pk=1, vk_id_offset=new, rotated_at=timezone.now())
        old = 0
    else:
        old = int(row.vk_id_offset)
        while new == old:
            new = new_offset()
        row.vk_id_offset, row.rotated_at = new, timezone.now()
        row.save(update_fields=["vk_id_offset", "rotated_at"])
    _offset = new
    return old, new
