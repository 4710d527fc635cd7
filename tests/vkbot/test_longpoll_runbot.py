"""``manage.py runbot``: configuration errors, and a run against the local VK stopped by
SIGTERM after the batch it is applying."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from gameplay.models import VkEvent
from tests.vkbot.ingest_support import (
    configure,
    make_game,
    record_dispatch,
    recorded_texts,
    use_dispatch,
)
from tests.vkbot.localvk_support import make_state
from vkbot.localvk import ServerThread
from vkbot.pipeline import stored_ts

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("setting", "value", "message"),
    [
        ("VK_GROUP_TOKEN", "", "VK_GROUP_TOKEN is not set"),
        ("VK_GROUP_ID", None, "VK_GROUP_ID is not set"),
    ],
)
def test_missing_configuration_is_one_line_and_exit_2(
    settings: Any, capsys: pytest.CaptureFixture[str], setting: str, value: Any, message: str
) -> None:
    configure(settings)
    setattr(settings, setting, value)
    with pytest.raises(SystemExit) as exit_info:
        call_command("runbot")
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("Configuration error: ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err


def test_a_bad_wait_is_refused() -> None:
    with pytest.raises(CommandError):
        call_command("runbot", "--wait", "0")


def test_manage_py_runbot_without_a_token_exits_2() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("VK_")}
    env["VK_GROUP_ID"] = "77"
    result = subprocess.run(
        [sys.executable, "manage.py", "runbot"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "Configuration error: VK_GROUP_TOKEN is not set: runbot needs the community token."
    ]


@pytest.mark.django_db(transaction=True)
def test_a_token_vk_refuses_is_a_configuration_error(
    settings: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    with ServerThread(make_state()) as srv:
        configure(settings, api_url=srv.api_url)
        settings.VK_GROUP_TOKEN = "revoked-token"
        with pytest.raises(SystemExit) as exit_info:
            call_command("runbot", "--wait", "1")
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "error 5" in err and "VK_GROUP_TOKEN" in err and "Traceback" not in err


@pytest.mark.django_db(transaction=True)
def test_runbot_applies_updates_and_stops_on_sigterm(
    settings: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    game_id = make_game()
    record = record_dispatch(game_id)
    seen: list[str] = []
    applying, release = threading.Event(), threading.Event()

    def dispatch(update: dict[str, Any]) -> None:
        record(update)
        seen.append(update["object"]["message"]["text"])
        if len(seen) == 1:
            applying.set()
            release.wait(5)  # SIGTERM arrives while this batch is being applied

    use_dispatch(monkeypatch, dispatch)
    with ServerThread(make_state()) as srv:
        configure(settings, api_url=srv.api_url)

        def user_and_operator() -> None:
            deadline = time.monotonic() + 10
            while not srv.state.calls("groups.getLongPollServer"):
                if time.monotonic() > deadline:
                    return
                time.sleep(0.01)
            time.sleep(0.1)
            with srv.state.lock:  # one batch
                srv.state.inject_message(42, "first")
                srv.state.inject_message(42, "second")
            if applying.wait(5):
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.2)
            release.set()

        helper = threading.Thread(target=user_and_operator)
        helper.start()
        started = time.monotonic()
        call_command("runbot", "--wait", "1")
        helper.join(10)
        ts = str(srv.state.longpoll.ts)

    assert time.monotonic() - started < 8
    assert recorded_texts(game_id) == ["first", "second"]  # the whole batch, then the stop
    assert stored_ts() == ts and VkEvent.objects.count() == 2
    out = capsys.readouterr().out
    assert "long poll for group 77" in out and "stopped after 1 batches (2 updates applied)" in out
