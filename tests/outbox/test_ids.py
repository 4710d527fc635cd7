"""The deployment's offset for VK's de-duplication ids (outbox.ids)."""

from __future__ import annotations

import importlib
import io

import pytest
from django.core.management import call_command

from gameplay.models import Deployment
from outbox import ids as deployment
from outbox.ids import (
    RANDOM_ID_MODULUS,
    board_guid,
    deployment_rotate_vk_ids,
    outbox_random_id,
    vk_id_offset,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(deployment, "_offset", None)


def test_the_migration_draws_one_offset_per_database() -> None:
    from django.apps import apps

    migration = importlib.import_module("gameplay.migrations.0007_deployment")
    Deployment.objects.all().delete()  # a transactional test elsewhere may have flushed it
    migration.draw_offset(apps, None)
    migration.draw_offset(apps, None)  # idempotent
    [row] = Deployment.objects.all()
    assert row.pk == 1 and 1 <= row.vk_id_offset < RANDOM_ID_MODULUS
    assert vk_id_offset() == row.vk_id_offset
    assert outbox_random_id(5) == (5 + row.vk_id_offset) % RANDOM_ID_MODULUS
    assert board_guid(5) == f"vkmafia-outbox-{row.vk_id_offset:x}-5"


def test_random_ids_are_int32_never_zero_and_never_repeat_in_a_database() -> None:
    # The row may be gone (a transactional test elsewhere flushes the tables): set it either way.
    Deployment.objects.update_or_create(pk=1, defaults={"vk_id_offset": RANDOM_ID_MODULUS - 3})
    ids = [outbox_random_id(pk) for pk in range(1, 8)]
    assert len(set(ids)) == len(ids)
    assert all(0 < i <= 2**31 - 1 for i in ids)
    assert RANDOM_ID_MODULUS in ids  # where the remainder would be 0 (no de-duplication)


def test_a_database_without_the_row_gets_one() -> None:
    Deployment.objects.all().delete()
    offset = vk_id_offset()
    assert Deployment.objects.get(pk=1).vk_id_offset == offset


def test_rotating_changes_the_ids_of_rows_sent_from_now_on() -> None:
    before = (vk_id_offset(), outbox_random_id(7), board_guid(7))
    out = io.StringIO()
    call_command("rotate_vk_ids", stdout=out)
    row = Deployment.objects.get(pk=1)
    assert row.vk_id_offset != before[0] and row.rotated_at is not None
    assert f"from {before[0]} to {row.vk_id_offset}" in out.getvalue()
    assert (outbox_random_id(7), board_guid(7)) != before[1:]
    assert vk_id_offset() == row.vk_id_offset


def test_rotating_with_no_row_creates_one() -> None:
    Deployment.objects.all().delete()
    old, new = deployment_rotate_vk_ids()
    assert old == 0 and Deployment.objects.get(pk=1).vk_id_offset == new
