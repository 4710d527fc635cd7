"""A token saved through the panel never shows again: not in the database
in plain text (the raw column, a pg_dump or the SQLite file), not in any panel page of its
community or its games, not in the game's export, not in the log lines of the connect, not on
an error page; Django's admin does not list communities at all."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path
from typing import Any

import pytest
from django.contrib import admin
from django.db import connection
from django.test import Client
from django.urls import reverse

from gameplay.models import Community, Game, Seat
from gameplay.models.secrets import FERNET_PREFIX
from tests.panel.support import make_game, vote_round
from tests.panel.test_access import every_url_pattern, params_of
from tests.panel.vk_fake import FakeVk


def _connect(
    client: Client, fake_vk: FakeVk, caplog: pytest.LogCaptureFixture, settings: Any
) -> tuple[Community, list[str], str]:
    settings.VK_CALLBACK_MODE = True  # a Callback secret too
    settings.PUBLIC_URL = "https://mafia.example.org"
    group_token, user_token = fake_vk.club(110, "Тайный клуб", admin=9)
    with caplog.at_level(logging.DEBUG):
        response = client.post(
            reverse("panel:community_connect"),
            {"group_token": group_token, "user_token": user_token},
            follow=True,
        )
    assert response.status_code == 200
    row = Community.objects.get(vk_id=110)
    assert row.connected and row.callback_secret
    return row, [group_token, user_token, row.callback_secret], caplog.text


def _database_dump() -> str:
    """What someone who copies the database reads: ``pg_dump`` of the communities' table on
    PostgreSQL; on the embedded default, the SQLite file itself and its write-ahead log."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        connection.close()  # checkpointed or not, the committed rows are in the file or its WAL
        files = [Path(db["NAME"]), Path(f"{db['NAME']}-wal")]
        raw = b"".join(f.read_bytes() for f in files if f.exists())
        return raw.decode("utf-8", errors="replace")
    command = ["pg_dump", "--data-only", "--table=gameplay_community"]
    command += ["-h", db["HOST"] or "127.0.0.1", "-p", str(db["PORT"] or 5432)]
    command += ["-U", db["USER"] or "postgres", db["NAME"]]
    return subprocess.run(command, capture_output=True, text=True, check=True, timeout=60).stdout


def _leaks(text: str, secrets: list[str]) -> list[str]:
    return [s[:12] for s in secrets if s in text]


@pytest.mark.django_db(transaction=True)
def test_tokens_are_not_in_the_database_in_plain_text(
    fake_vk: FakeVk, gm_client: Client, caplog: pytest.LogCaptureFixture, settings: Any
) -> None:
    row, secrets, _ = _connect(gm_client, fake_vk, caplog, settings)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT group_token, user_token, callback_secret FROM "
            "gameplay_community WHERE vk_id = %s",
            [row.vk_id],
        )
        stored = cursor.fetchone()
    assert all(value.startswith(FERNET_PREFIX) for value in stored)
    assert not _leaks(" ".join(stored), secrets)
    dump = _database_dump()
    assert "Тайный клуб" in dump and stored[0] in dump  # the row is in it, encrypted
    assert not _leaks(dump, secrets)


@pytest.mark.django_db
def test_tokens_are_not_in_the_log_pages_or_export(
    fake_vk: FakeVk, gm: Any, gm_client: Client, caplog: pytest.LogCaptureFixture, settings: Any
) -> None:
    row, secrets, log_text = _connect(gm_client, fake_vk, caplog, settings)
    assert "Community 110 connected from the panel" in log_text
    assert not _leaks(log_text, secrets)
    game = make_game(gm, players=7, vk_group_id=row.vk_id)
    vote_round(game)
    seat = Seat.objects.filter(game=game, number__isnull=False).first()
    assert seat is not None
    values = {
        "vk_id": row.vk_id,
        "game_id": game.pk,
        "user_id": gm.pk,
        "seat_id": seat.pk,
        "number": seat.number,
        "vk_user_id": seat.vk_user_id,
    }
    seen = 0
    for name, pattern in every_url_pattern():
        params = params_of(pattern)
        if not params or not set(params) <= set(values) or name == "admin:logout":
            continue
        response = gm_client.get(reverse(name, kwargs={p: values[p] for p in params}))
        body = response.content.decode(errors="replace")
        assert not _leaks(body, secrets), name
        seen += response.status_code == 200
    for name in ("panel:communities", "panel:community_connect", "admin:index"):
        assert not _leaks(gm_client.get(reverse(name)).content.decode(), secrets), name
    assert seen > 20
    page = gm_client.get(reverse("panel:community", kwargs={"vk_id": row.vk_id})).content
    assert "Ключ доступа сообщества: сохранён" in page.decode()
    export = gm_client.get(reverse("admin:panel_export_download", kwargs={"game_id": game.pk}))
    assert export.status_code == 200 and export["Content-Type"].startswith("application/json")
    assert '"players"' in export.content.decode()  # the export itself, not an error
    assert not _leaks(export.content.decode(), secrets)


@pytest.mark.django_db
def test_an_unexpected_failure_mid_connect_shows_no_token(
    fake_vk: FakeVk, gm_client: Client, caplog: pytest.LogCaptureFixture, monkeypatch: Any
) -> None:
    group_token, user_token = fake_vk.club(111, "Клуб", admin=9)
    real = fake_vk.answer

    def broken(method: str, token: str, data: dict) -> Any:
        if method == "groups.setLongPollSettings":
            raise RuntimeError(f"boom at https://api.vk.ru/method/{method}?access_token={token}")
        return real(method, token, data)

    monkeypatch.setattr(fake_vk, "answer", broken)
    with caplog.at_level(logging.DEBUG):
        response = gm_client.post(
            reverse("panel:community_connect"),
            {"group_token": group_token, "user_token": user_token},
        )
    body = response.content.decode()
    assert response.status_code == 200 and "Traceback" not in body
    assert "VK ответил непонятно" in body
    assert not _leaks(body + caplog.text, [group_token, user_token])
    assert not Community.objects.exists()


def test_the_django_admin_does_not_list_communities() -> None:
    assert Community not in admin.site._registry
    assert Game in admin.site._registry
