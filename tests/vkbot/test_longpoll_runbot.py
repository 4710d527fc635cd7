"""``manage.py runbot``: configuration errors, and a run against the local VK stopped by
SIGTERM after the batch it is applying."""

from __future__ import annotations

import os
import signal
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from bench.procs import ProcessError, wait_for
from gameplay.models import VkEvent
from localvk import ServerThread
from tests import forkserver
from tests.localvk.support import long_polls, make_state
from tests.vkbot.ingest_support import (
    configure,
    make_game,
    record_dispatch,
    recorded_texts,
    use_dispatch,
)
from vkbot.longpoll import LongPoller
from vkbot.management.commands.runbot import Command as Runbot
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
    result = forkserver.run(
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
            release.wait(60)  # SIGTERM arrives while this batch is being applied

    use_dispatch(monkeypatch, dispatch)
    pollers: list[LongPoller] = []
    build_poller = Runbot.build_poller

    def build_and_keep(self: Runbot, community: Any, wait: int) -> LongPoller:
        pollers.append(build_poller(self, community, wait))
        return pollers[-1]

    monkeypatch.setattr(Runbot, "build_poller", build_and_keep)
    problems: list[str] = []
    with ServerThread(make_state()) as srv:
        configure(settings, api_url=srv.api_url)
        watch = long_polls(srv.state)

        def user_and_operator() -> None:
            try:
                # Once runbot waits in a_check, both messages reach it, and in one batch.
                wait_for(watch.polled, timeout=30, what="runbot to wait in a_check")
                with srv.state.lock:
                    srv.state.inject_message(42, "first")
                    srv.state.inject_message(42, "second")
                if not applying.wait(30):
                    raise ProcessError("runbot did not apply the batch within 30 s")
                os.kill(os.getpid(), signal.SIGTERM)
                # Released only once runbot has taken the SIGTERM: it came mid-batch.
                wait_for(lambda: pollers[0].stopping, timeout=30, what="runbot to take SIGTERM")
            except ProcessError as error:
                problems.append(str(error))
            finally:
                release.set()

        helper = threading.Thread(target=user_and_operator)
        helper.start()
        call_command("runbot", "--wait", "1")
        helper.join(60)
        ts = str(srv.state.longpoll.ts)

    assert not helper.is_alive() and problems == []
    assert recorded_texts(game_id) == ["first", "second"]  # the whole batch, then the stop
    assert stored_ts() == ts and VkEvent.objects.count() == 2
    out = capsys.readouterr().out
    assert "long poll for group 77" in out and "stopped after 1 batches (2 updates applied)" in out
