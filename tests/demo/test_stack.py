"""What ``make demo`` runs (demo/stack.py), without starting it."""

from __future__ import annotations

import io
import os
import re
import socket
from pathlib import Path

from django.urls import reverse

from demo import config
from demo.config import DemoLayout
from demo.stack import WORKER_MUTE, DemoOptions, banner, processes, run, servers, setup_step
from ops.supervisor import Supervisor
from tests.demo.conftest import PROJECT


def options(tmp_path: Path, **changes: object) -> DemoOptions:
    layout = DemoLayout(data_dir=tmp_path, web_port=18001, vk_port=18082, redis_port=16391)
    return DemoOptions(layout=layout, project_dir=PROJECT, **changes)  # type: ignore[arg-type]


def test_the_processes_and_their_settings(tmp_path: Path) -> None:
    demo = options(tmp_path, seed="s1", auto_publish=True, players_seed=3)
    env = demo.layout.env()
    assert env["DATABASE_URL"] == f"sqlite:///{tmp_path / 'db.sqlite3'}"
    assert env["REDIS_URL"] == "redis://127.0.0.1:16391/0"
    assert env["VK_API_URL"] == "http://127.0.0.1:18082/method/"
    assert env["VK_GROUP_TOKEN"] == config.GROUP_TOKEN and env["VK_USER_TOKEN"]
    assert [s.name for s in servers(demo)] == ["redis", "localvk"]
    assert "--state-file" in servers(demo)[1].argv
    assert [s.name for s in processes(demo)] == ["web", "worker", "bot", "players"]
    worker = processes(demo)[1]
    assert "--with-scheduler" in worker.argv and "gameplay.worker.SimpleWorker" in worker.argv
    step = setup_step(demo)
    assert step[2:5] == ["demo_seed", "--migrate", "--wait"]
    assert "--auto-publish" in step and step[step.index("--seed") + 1] == "s1"
    assert [s.name for s in processes(options(tmp_path, players=False))] == ["web", "worker", "bot"]


def test_the_worker_hides_rq_routine_lines_only() -> None:
    mute = re.compile(WORKER_MUTE)
    assert mute.search("2026-11-30 07:12:01,186 INFO rq.worker [13332] Job OK (x)")
    assert mute.search("2026-11-30 07:12:01,186 INFO vkbot.delivery.jobs [1] Delivery run: {}")
    assert not mute.search(
        "2026-11-30 07:28:35,943 INFO gameplay.services.deadlines [21830] Deadline tick: 1 closed"
    )
    assert not mute.search("2026-11-30 07:28:35,943 ERROR rq.worker [1] Traceback")


def test_a_busy_port_stops_the_demo_before_anything_starts(tmp_path: Path) -> None:
    out = io.StringIO()
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        busy = sock.getsockname()[1]
        demo = DemoOptions(
            layout=DemoLayout(data_dir=tmp_path / "d", web_port=busy, vk_port=1, redis_port=2),
            project_dir=PROJECT,
        )
        supervisor = Supervisor(env=dict(os.environ), cwd=str(PROJECT), out=out, color=False)
        assert run(demo, supervisor) == 2
    assert f"web port {busy}" in out.getvalue() and "Is another demo running?" in out.getvalue()
    assert not (tmp_path / "d").exists() and supervisor.children == []


def test_the_local_vk_hosts_every_demo_community(tmp_path: Path) -> None:
    from localvk import Communities
    from localvk.__main__ import build_parser, state_from_args

    argv = servers(options(tmp_path))[1].argv
    # ``python -m localvk``: the server without Django, everything said in its options.
    assert argv[1:3] == ["-m", "localvk"]
    state = state_from_args(build_parser().parse_args(argv[3:]))
    registry = Communities.of(state)
    assert [c.group_id for c in registry] == [c.group_id for c in config.COMMUNITIES]
    for community in config.COMMUNITIES:
        hosted = registry.get(community.group_id)
        assert hosted.group_name == community.name
        assert community.group_token in hosted.group_tokens
        assert community.user_token in hosted.user_tokens
    # «Войти через VK ID»: the demo's app, its trusted redirect URL the panel's own.
    layout = options(tmp_path).layout
    [app] = registry.vkid.apps.values()
    assert app.client_id == config.VK_ID_APP_ID
    assert app.redirect_uris == (layout.web_url + reverse("panel:community_vkid"),)
    env = layout.env()
    assert env["VK_ID_URL"] == "http://127.0.0.1:18082/vkid/"
    assert env["VK_ID_APP_ID"] == str(config.VK_ID_APP_ID) and env["PUBLIC_URL"] == layout.web_url


def test_the_banner_says_how_to_try_connecting_a_community(tmp_path: Path) -> None:
    text = "\n".join(banner(options(tmp_path)))
    assert "«Сообщество» selector" in text and "sandbox/?group_id=2" in text
    for community in config.GAME_COMMUNITIES:
        assert f"«{community.name}», game «{community.game_name}»" in text
    assert "«Подключить сообщество»" in text and "not connected" in text
    assert "«Войти через VK ID»" in text
    for token in (config.CONNECT.group_token, config.CONNECT.user_token, config.CONNECT_WEAK_TOKEN):
        assert token in text
    assert "lacks «manage»" in text
