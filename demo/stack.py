"""What ``make demo`` runs, in order: the Redis stand-in and the local VK server (with the
player page, hosting the demo's communities: :data:`demo.config.COMMUNITIES`) while the setup
migrates the database and then (once they answer) sets the demo games up; then, side by side,
the GM panel, the worker (delivery and deadline ticks, with the scheduler), the bot and the
simulated players (of every game community)."""

from __future__ import annotations

import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from ops.probes import http_ok, port_in_use
from ops.supervisor import Service, Supervisor

from . import config
from .config import DemoLayout

#: rq's routine lines (every job, every registry cleaning) and the delivery's per-run report.
WORKER_MUTE = r" INFO (rq\.\w+|vkbot\.delivery\.jobs) \["


@dataclass(frozen=True)
class DemoOptions:
    layout: DemoLayout
    project_dir: Path
    gm_user: str = "gm"
    gm_password: str = "gm"
    day_minutes: int = 5
    night_minutes: int = 5
    auto_publish: bool = False
    seed: str | None = None
    new_game: bool = False
    players: bool = True
    min_delay: float = 3.0
    max_delay: float = 150.0
    players_seed: int | None = None


def redis_ok(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=2) as sock:
            sock.sendall(b"*1\r\n$4\r\nPING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _manage(options: DemoOptions, *args: str) -> list[str]:
    return [sys.executable, str(options.project_dir / "manage.py"), *args]


def setup_step(options: DemoOptions) -> list[str]:
    """The database migration and the game's setup (it waits for the servers)."""
    seed = _manage(
        options,
        "demo_seed",
        "--migrate",
        "--wait",
        "90",
        "--vk-url",
        options.layout.vk_url,
        "--gm-user",
        options.gm_user,
        "--gm-password",
        options.gm_password,
        "--day-minutes",
        str(options.day_minutes),
        "--night-minutes",
        str(options.night_minutes),
    )
    if options.auto_publish:
        seed.append("--auto-publish")
    if options.seed:
        seed += ["--seed", options.seed]
    if options.new_game:
        seed.append("--new-game")
    return seed


def servers(options: DemoOptions) -> list[Service]:
    """The Redis stand-in and the local VK: needed by the setup."""
    layout = options.layout
    return [
        Service(
            "redis",
            [
                sys.executable,
                "-m",
                "demo.redis_server",
                "--host",
                layout.host,
                "--port",
                str(layout.redis_port),
            ],
            probe=lambda: redis_ok(layout.host, layout.redis_port),
            ready_timeout=20,
            stop_timeout=3,
            stop_group="servers",
        ),
        Service(
            "localvk",
            # ``python -m localvk``: the local VK server alone. It needs nothing of Django (the
            # stack gives every option here, so no default has to come from the settings), so
            # the process neither reads the project's settings nor loads its apps.
            [
                sys.executable,
                "-m",
                "localvk",
                "--host",
                layout.host,
                "--port",
                str(layout.vk_port),
                "--group-id",
                str(config.GROUP_ID),
                "--group-name",
                config.GROUP_NAME,
                "--group-token",
                config.GROUP_TOKEN,
                "--user-token",
                config.USER_TOKEN,
                "--admin-user-id",
                str(config.ADMIN_USER_ID),
                "--state-file",
                str(layout.localvk_state),
                "--vkid-app-id",
                str(config.VK_ID_APP_ID),
                "--vkid-redirect",
                layout.vkid_redirect,
                *(
                    arg
                    for community in config.COMMUNITIES[1:]
                    for arg in ("--community", community.localvk_option())
                ),
            ],
            probe=lambda: http_ok(f"{layout.vk_url}/_test/stats"),
            stop_timeout=8,
            stop_group="servers",
        ),
    ]


def processes(options: DemoOptions) -> list[Service]:
    """The panel, the worker, the bot and the simulated players."""
    layout = options.layout
    services = [
        Service(
            "web",
            _manage(options, "runserver", f"{layout.host}:{layout.web_port}", "--noreload"),
            probe=lambda: http_ok(f"{layout.web_url}/admin/login/"),
            stop_timeout=5,
            stop_group="back",
        ),
        Service(
            "worker",
            _manage(
                options,
                "rqworker",
                "default",
                "vk",
                "--with-scheduler",
                "--worker-class",
                "gameplay.worker.SimpleWorker",
            ),
            ready_line=r"Listening on",
            mute=WORKER_MUTE,
            stop_timeout=15,
            stop_group="back",
        ),
        Service(
            "bot",
            _manage(options, "runbot"),
            ready_line=r"runbot: long poll",
            stop_timeout=10,
            stop_group="front",
        ),
    ]
    if options.players:
        players = _manage(
            options,
            "demo_players",
            "--vk-url",
            layout.vk_url,
            "--min-delay",
            str(options.min_delay),
            "--max-delay",
            str(options.max_delay),
        )
        if options.players_seed is not None:
            players += ["--seed", str(options.players_seed)]
        services.append(
            Service(
                "players", players, ready_line=r"demo players:", stop_timeout=5, stop_group="front"
            )
        )
    return services


def banner(options: DemoOptions) -> list[str]:
    layout = options.layout
    connect = config.CONNECT
    lines = [
        "The demo is running. Ctrl-C stops everything; `make demo` again continues the games.",
        f"  GM panel:     {layout.web_url}/admin/  (user {options.gm_user}, "
        f"password {options.gm_password})",
        f"  Player page:  {layout.sandbox_url}  (its «Сообщество» selector switches community; "
        "or add ?group_id=N)",
    ]
    for community in config.GAME_COMMUNITIES:
        lines.append(
            f"  Group {community.group_id}:      «{community.name}», game «{community.game_name}»"
            f" ({community.players} players): {layout.sandbox_url}?group_id={community.group_id}"
        )
    lines += [
        f"  Group {connect.group_id}:      «{connect.name}», not connected: in the panel's "
        "«Подключить сообщество» enter",
        f"                the community token {connect.group_token} and press «Войти через VK "
        "ID»; on the local VK's",
        f"                page allow as the admin of «{connect.name}» (or paste the user token "
        f"{connect.user_token})",
        f"                (community token {config.CONNECT_WEAK_TOKEN} lacks «manage»: the "
        "panel refuses it)",
        f"  Local VK API: {layout.api_url}",
        f"  Data:         {layout.data_dir} (SQLite database and the local VK's state)",
    ]
    return lines


def run(options: DemoOptions, supervisor: Supervisor) -> int:
    """Start the demo and supervise it until stopped; returns the exit status."""
    from ops.supervisor import Interrupted, StartupError

    layout = options.layout
    busy = [
        f"{name} port {port}"
        for name, port in (
            ("web", layout.web_port),
            ("local VK", layout.vk_port),
            ("Redis stand-in", layout.redis_port),
        )
        if port_in_use(layout.host, port)
    ]
    if busy:
        supervisor.say(
            "cannot start: in use on "
            + layout.host
            + ": "
            + ", ".join(busy)
            + ". Is another demo running? Stop it, or choose other ports (see "
            "`manage.py demo --help`)."
        )
        return 2
    layout.data_dir.mkdir(parents=True, exist_ok=True)
    try:
        # The servers start while the setup migrates the database; it waits for them.
        started = supervisor.spawn_group(servers(options))
        supervisor.run_step("setup", setup_step(options))
        supervisor.wait_group(started)
        supervisor.start_group(processes(options))
    except Interrupted:
        supervisor.say("interrupted while starting")
        supervisor.stop_all()
        return 130
    except StartupError as exc:
        supervisor.say(f"cannot start the demo: {exc}")
        supervisor.stop_all()
        return 1
    for line in banner(options):
        supervisor.say(line)
    status = supervisor.watch()
    supervisor.say("stopping the demo…")
    supervisor.stop_all()
    supervisor.say("stopped.")
    return status
