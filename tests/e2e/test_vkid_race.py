"""One renewal per expiry, however many processes: a community's admin key (signed in with VK
ID) has expired at the local VK and in the database, board posts wait, and at the same instant
two delivery workers (separate processes running the worker's drain) and the web process (the
owner's «Подключить снова», which checks with the stored key) all need the key. VK ID takes a
refresh token once — the local VK refuses and counts a reused one — so a double renewal would
show: exactly one renewal happens, nobody is refused, every post goes out once.

Runs on both databases: PostgreSQL's row lock (``select_for_update``) and, on the embedded
default, SQLite's write lock taken at BEGIN (IMMEDIATE transactions) serialise the renewals.

The three processes share one Redis, as every deployment's processes do (tests/redis_support.py,
``shared_redis``): right after the renewal they all send with the one new key, and VK allows a
user key 3 requests a second however many processes use it — only the shared limiter keeps them
within that. (With a Redis each, a worker's board post and the web's three checks in the same
second made the fourth request fail with VK's error 6, and the GM read «повторите позже».)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import connections
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from gameplay import vkid
from gameplay.models import Community, Outbox, OutboxChannel, OutboxStatus
from gameplay.rules import RoleCounts
from gameplay.services.common import post_board
from gameplay.services.settings import game_open
from localvk import LocalVK, ServerThread
from panel import connect
from tests import forkserver
from tests.process_support import PROJECT, shared_database_url
from tests.redis_support import shared_redis
from tests.vkid_support import APP_ID, aim_at, sign_in

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

GROUP, ADMIN = 431, 910
POSTS = 12
#: How long a participant waits for the others (to start, to ask for the key) before going on.
WAIT = 120.0

#: VK ID answers a renewal this late (a slow network): whoever renews holds the lock that long,
#: and the others arrive while it does.
SLOW = 1.0

#: The two delivery workers: the worker's drain, its renewals traced (when asked, when answered,
#: whether it renewed), VK ID slowed down as above. The participants meet in ``barrier``: each
#: says it is ready, all go when ``go`` appears, each marks that it asked for the key, and
#: VK ID answers the renewal only once all three have asked (so all three are in the race
#: however slowly a loaded machine starts them).
#:
#: One process sets Django up and imports the delivery (vkbottle and all: two CPU-seconds and
#: more), then forks the two workers, separate processes from there on, each with its own log
#: and its own database connection and Redis pool: before the fork, no database connection is
#: open and no other thread runs (both checked). It exits 0 only when both did.
WORKERS = """
import os, pathlib, sys, time, traceback, django
django.setup()
from gameplay import vkid
import vkbot.delivery.senders as senders
from vkbot.delivery.drain import drain
barrier = pathlib.Path({barrier!r})
refresh, renew = vkid.refresh, senders.admin_token_renew
def slow_refresh(**kwargs):
    deadline = time.time() + {wait}
    while len(list(barrier.glob("*.asked"))) < 3 and time.time() < deadline:
        time.sleep(0.02)
    time.sleep({slow})
    return refresh(**kwargs)
def worker(n):
    def traced(**kwargs):
        asked = time.time()
        (barrier / f"worker{{n}}.asked").touch()
        renewal = renew(**kwargs)
        print("renew", asked, time.time(), int(renewal.renewed), flush=True)
        return renewal
    vkid.refresh, senders.admin_token_renew = slow_refresh, traced
    print("ready", flush=True)
    deadline = time.time() + {wait}
    while not (barrier / "go").exists() and time.time() < deadline:
        time.sleep(0.02)
    print("report", drain(max_seconds=25.0, wait_up_to=1.0).as_dict(), flush=True)
import threading
from django.db import connections
assert all(c.connection is None for c in connections.all()), "a database connection before the fork"
assert threading.active_count() == 1, f"threads before the fork: {{threading.enumerate()}}"
children = []
for n in range(2):
    pid = os.fork()
    if pid == 0:
        log = os.open({logs!r}.format(n=n), os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        os.dup2(log, 1)
        os.dup2(log, 2)
        status = 1
        try:
            worker(n)
            status = 0
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(status)
    children.append(pid)
sys.exit(max(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) != 0 for pid in children))
"""


def wait_for_file(path: Path, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists() and time.monotonic() < deadline:
        time.sleep(0.02)


def traces(log: str) -> list[tuple[float, float, int]]:
    """The renewals a worker asked for: (asked, answered, renewed)."""
    lines = [line.split() for line in log.splitlines() if line.startswith("renew ")]
    return [(float(a), float(b), int(c)) for _, a, b, c in lines]


def test_two_workers_and_the_web_at_expiry_renew_once(
    settings: Any, django_user_model: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.OUTBOX_DELIVERY_ENABLED = False
    settings.VK_GROUP_ID = None
    settings.VK_GROUP_TOKEN = settings.VK_USER_TOKEN = ""
    gm = django_user_model.objects.create_user("ведущий", password="x", is_staff=True)
    client = Client()
    client.force_login(gm)
    state = LocalVK(group_id=GROUP, group_token=f"race-group-{time.time_ns()}",
                    user_tokens={"declared-admin": ADMIN}, group_name="Гонка")  # fmt: skip
    with ServerThread(state) as vk, shared_redis() as redis_url:
        aim_at(settings, vk)
        community = sign_in(client, vk, group_token=state.group_token, admin=ADMIN)
        topic = state.create_topic("Игра", "Здесь идёт игра.")
        game = game_open(name="Гонка", counts=RoleCounts.default_for(8), gm=gm,
                         vk_group_id=GROUP, topic_id=topic.id, seed="race")  # fmt: skip
        for n in range(POSTS):
            post_board(game=game, text=f"Пост №{n} ждёт ключа.", kind="post")
        # The key runs out, at VK and in the database.
        vk.communities.vkid.expire(access_token=community.user_token)
        Community.objects.filter(pk=community.pk).update(
            user_token_expires_at=timezone.now() - timedelta(seconds=1)
        )
        before = vk.communities.vkid.stats()

        barrier = tmp_path / "barrier"
        barrier.mkdir()
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": shared_database_url(),
            "REDIS_URL": redis_url,  # the web's limiters, so one budget per key (above)
            "VK_API_URL": vk.api_url,
            "VK_ID_URL": f"{vk.url}/vkid/",
            "VK_ID_APP_ID": str(APP_ID),
            "PUBLIC_URL": settings.PUBLIC_URL,
            "OUTBOX_DELIVERY_ENABLED": "false",
            "LOG_LEVEL": "INFO",
        }
        for name in ("VK_GROUP_ID", "VK_GROUP_TOKEN", "VK_USER_TOKEN"):
            env.pop(name, None)
        for n in range(2):
            (tmp_path / f"worker{n}.log").touch()
        workers = forkserver.Popen(
            [
                sys.executable,
                "-c",
                WORKERS.format(
                    barrier=str(barrier),
                    wait=WAIT,
                    slow=SLOW,
                    logs=str(tmp_path / "worker{n}.log"),
                ),
            ],
            cwd=PROJECT,
            env=env,
            stdout=(tmp_path / "workers.log").open("wb"),
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its workers with it, should the test end them
        )
        web: dict[str, Any] = {"traces": []}
        refresh, renew = vkid.refresh, connect.admin_token_renew

        def slow_refresh(**kwargs: Any) -> Any:
            deadline = time.monotonic() + WAIT
            while len(list(barrier.glob("*.asked"))) < 3 and time.monotonic() < deadline:
                time.sleep(0.02)
            time.sleep(SLOW)
            return refresh(**kwargs)

        def traced(**kwargs: Any) -> Any:
            asked = time.time()
            (barrier / "web.asked").touch()
            renewal = renew(**kwargs)
            web["traces"].append((asked, time.time(), int(renewal.renewed)))
            return renewal

        monkeypatch.setattr(vkid, "refresh", slow_refresh)
        monkeypatch.setattr(connect, "admin_token_renew", traced)

        def reconnect() -> None:
            wait_for_file(barrier / "go")
            try:
                response = client.post(
                    reverse("panel:community_reconnect", kwargs={"vk_id": GROUP}),
                    {"how": "paste"},
                    follow=True,
                )
                web["said"] = [str(m) for m in response.context["messages"]]
            finally:
                connections.close_all()

        thread = threading.Thread(target=reconnect)
        thread.start()
        try:
            deadline = time.monotonic() + WAIT
            while time.monotonic() < deadline and not all(
                "ready" in (tmp_path / f"worker{n}.log").read_text() for n in range(2)
            ):
                time.sleep(0.05)
            start = time.time()
            (barrier / "go").touch()
            thread.join(WAIT)
            status = workers.wait(90)
            assert status == 0, "".join(
                (tmp_path / name).read_text()[-3000:]
                for name in ("workers.log", "worker0.log", "worker1.log")
            )
        finally:
            if workers.poll() is None:
                os.killpg(workers.pid, signal.SIGKILL)
        after = vk.communities.vkid.stats()
        logs = [(tmp_path / f"worker{n}.log").read_text() for n in range(2)]

    community.refresh_from_db()
    renewals = after["refreshes"] - before["refreshes"]
    firsts = [traces(log)[0] for log in logs] + [web["traces"][0]]
    [renewed] = [t for t in firsts if t[2]]
    print(f"\nrenewals at the race: {renewals} (refused {after['refused']}, "
          f"reused {after['reused_refresh']}); asked at +{[round(t[0] - start, 3) for t in firsts]}"
          f" s, the renewal held the lock {renewed[1] - renewed[0]:.2f} s")  # fmt: skip
    # All three asked while the one renewal held the row: the others waited for it, found the
    # key renewed and took it.
    assert all(t[0] < renewed[1] for t in firsts), firsts
    assert sum(t[2] for log in logs for t in traces(log)) + sum(t[2] for t in web["traces"]) == 1
    assert web.get("said") == ["Сообщество «Гонка» подключено снова."], (web, logs)
    assert renewals == 1 and community.user_token_renewals == 1, logs
    assert after["reused_refresh"] == 0 and after["refused"] == 0
    assert community.user_token_refused_at is None
    rows = Outbox.objects.filter(game=game, channel=OutboxChannel.BOARD)
    assert set(rows.values_list("status", flat=True)) == {OutboxStatus.SENT}
    comments = "\n\n".join(c.text for c in state.topic(topic.id).comments)
    for n in range(POSTS):
        assert comments.count(f"Пост №{n} ждёт ключа.") == 1
