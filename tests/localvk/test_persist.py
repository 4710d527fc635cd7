"""Saving the local VK's state to a file and loading it back (the demo's second run)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from localvk import LocalVK, persist
from localvk.errors import VKError
from tests import forkserver
from tests.localvk.support import GROUP_ID, GROUP_TOKEN, USER_TOKEN, make_state

PROJECT = Path(__file__).resolve().parents[2]


def busy_state() -> LocalVK:
    state = make_state()
    state.add_user(1001, "Аня", "Иванова", 1)
    state.send_message(
        token=GROUP_TOKEN,
        token_kind="group",
        sender_id=-GROUP_ID,
        peer_id=1001,
        text="Роль",
        random_id=77,
        keyboard={
            "inline": True,
            "buttons": [
                [{"action": {"type": "callback", "label": "№2", "payload": '{"a":"vote"}'}}]
            ],
        },
    )
    state.inject_message(1001, "статус")
    state.set_messages_allowed(1002, False)
    chat = state.create_chat("Зрители", [1001])
    chat.invite_link = "https://vk.me/join/abc"
    topic = state.create_topic("Игра", "День 1")
    state.board.add_comment(topic, -GROUP_ID, "Итоги", guid=(USER_TOKEN, "g-1"))
    state.inject_board_post(1001, topic.id, "голос 2")
    state.inject_message_event(1001, {"a": "vote"})
    state.set_taken_over(1001)
    return state


def comparable(data: dict[str, Any]) -> dict[str, Any]:
    data = dict(data)
    data.pop("saved_at")
    for event in data["callback_events"]:
        event.pop("age")
        event.pop("created")
    return data


def test_a_saved_state_loads_back_the_same(tmp_path: Path) -> None:
    state = busy_state()
    path = tmp_path / "localvk.json"
    persist.save(state, path)
    loaded = make_state()
    assert persist.load(loaded, path) is True
    assert comparable(persist.export_state(loaded)) == comparable(persist.export_state(state))
    assert loaded.taken_over == {1001}
    assert loaded.messages_allowed(1002) is False
    assert loaded.chats[1].members.keys() == {-GROUP_ID, 1001}


def test_a_loaded_state_behaves_like_the_old_one(tmp_path: Path) -> None:
    state = busy_state()
    old_key = state.longpoll.current_key()
    ts = state.longpoll.ts
    events = state.longpoll.events()
    path = tmp_path / "s.json"
    persist.save(state, path)
    loaded = make_state()
    persist.load(loaded, path)
    # random_id and guid de-duplication survive: a re-send after a restart is a no-op.
    again = loaded.send_message(
        token=GROUP_TOKEN,
        token_kind="group",
        sender_id=-GROUP_ID,
        peer_id=1001,
        text="Роль",
        random_id=77,
    )
    assert again.id == state.messages[0].id
    topic = loaded.topic(1)
    assert (
        loaded.board.add_comment(topic, -GROUP_ID, "Итоги", guid=(USER_TOKEN, "g-1")).id
        == state.topic(1).comments[1].id
    )
    # The long poll goes on with the same numbering and event ids; old keys are gone.
    assert loaded.longpoll.check(old_key, str(ts)) == {"failed": 2}
    key = loaded.longpoll.current_key()
    assert loaded.longpoll.check(key, "1")["updates"] == events
    update = loaded.inject_message(1001, "ещё")
    assert loaded.longpoll.ts == ts + 1
    assert update["event_id"] not in {e["event_id"] for e in events}
    # New ids continue after the old ones.
    assert loaded.messages[-1].id == state.messages[-1].id + 1
    assert loaded.create_topic("Новая").id == 2
    # The pending callback button can still be answered.
    event_id = next(iter(loaded.callback_events))
    assert loaded.callback_events[event_id].answer is None


def test_a_missing_file_is_a_fresh_start(tmp_path: Path) -> None:
    state = make_state()
    assert persist.load(state, tmp_path / "none.json") is False
    assert state.messages == []


@pytest.mark.parametrize(
    "content, error",
    [
        ("not json", "cannot read"),
        ('{"format": "other"}', "not a local VK state"),
        ('{"format": "vkmafia-localvk", "version": 99}', "unsupported"),
        ('{"format": "vkmafia-localvk", "version": 1, "group_id": 5}', "community 5"),
        ('{"format": "vkmafia-localvk", "version": 1, "group_id": 77, "users": []}', "broken"),
    ],
)
def test_a_bad_file_is_refused_and_changes_nothing(
    tmp_path: Path, content: str, error: str
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    state = busy_state()
    before = comparable(persist.export_state(state))
    with pytest.raises(persist.StateFileError, match=error):
        persist.load(state, path)
    assert comparable(persist.export_state(state)) == before


def test_a_bad_long_poll_section_leaves_the_board_as_it_was(tmp_path: Path) -> None:
    data = persist.export_state(busy_state())
    data["longpoll"]["next_seq"] = 1  # events numbered past it
    state = busy_state()
    before = comparable(persist.export_state(state))
    with pytest.raises(persist.StateFileError):
        persist.import_state(state, data)
    assert comparable(persist.export_state(state)) == before


def test_the_autosaver_writes_only_after_a_change(tmp_path: Path) -> None:
    state = make_state()
    path = tmp_path / "auto.json"
    saver = persist.AutoSaver(state, path)
    assert saver.save_if_changed() is False and not path.exists()
    state.inject_message(1001, "привет")
    assert saver.save_if_changed() is True
    assert json.loads(path.read_text())["messages"][0]["text"] == "привет"
    assert saver.save_if_changed() is False
    state.set_taken_over(1001)
    assert saver.save_if_changed() is True
    with pytest.raises(VKError):
        state.send_message(
            token="t", token_kind="group", sender_id=-1, peer_id=-5, text="x", random_id=0
        )
    assert saver.save_if_changed() is False  # a refused call changes nothing


def _port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait(url: str) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(url, timeout=1):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _serve(path: Path, port: int) -> subprocess.Popen[bytes]:
    return forkserver.Popen(
        [
            sys.executable,
            "-m",
            "localvk",
            "--port",
            str(port),
            "--group-id",
            "77",
            "--state-file",
            str(path),
            "--log-level",
            "WARNING",
        ],
        cwd=PROJECT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


@pytest.mark.slow
def test_the_server_saves_on_sigterm_and_loads_on_start(tmp_path: Path) -> None:
    path = tmp_path / "state.json"
    port = _port()
    server = _serve(path, port)
    try:
        _wait(f"http://127.0.0.1:{port}/_test/stats")
        body = json.dumps({"text": "сохрани меня"}).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/sandbox/api/users/1001/send", data=body, method="POST"
        )
        urllib.request.urlopen(request, timeout=5).close()
    finally:
        server.send_signal(signal.SIGTERM)
        assert server.wait(15) == 0
    assert json.loads(path.read_text())["messages"][0]["text"] == "сохрани меня"
    server = _serve(path, port)
    try:
        _wait(f"http://127.0.0.1:{port}/_test/stats")
        with urllib.request.urlopen(
            f"http://127.0.0.1:{port}/sandbox/api/users/1001", timeout=5
        ) as response:
            data = json.loads(response.read())
        assert [m["text"] for m in data["messages"]] == ["сохрани меня"]
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(15)
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    failed = _serve(bad, _port())
    assert failed.wait(30) == 2
    assert b"not a local VK state" in (failed.stderr.read() if failed.stderr else b"")
    assert os.path.exists(bad)
