"""Scaling out: the Callback API behind several web processes instead of the long poll.

Two gunicorn servers of ``config.wsgi`` (one with two workers, one with one: three web
processes) on the test's PostgreSQL database and Redis, and one ``rqworker default vk
--with-scheduler`` delivering the Outbox to the local VK, which runs in this process and
pushes every event as VK's Callback API does: confirmation first, then round-robin over the
two servers and a third URL where nothing listens (a dead backend: those posts are retried at
the next URL with ``X-Retry-Counter``), a few posts in flight, and 30% of the events sent twice
to different URLs. No ``runbot``.

Two 26-player games: on Day 1 everyone votes at once (odd seats in the board, even seats by
the vote button); on Night 1 every role acts by private message and the others press the
status button. Then every vote and action is applied exactly once, every event is recorded
once, every reply reached the local VK once and every button was answered once, and both
servers served events (their access logs hold every post the pusher made to them).

Last, the two channels together, as docs/operations.md allows: ``runbot`` is started beside the web
processes and every player asks for their status (half by message, half by button); each
request, delivered by the long poll and by the Callback API, is answered once.
"""

from __future__ import annotations

import json
import random
import socket
import sys
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

from bench.e2e import check_delivery, make_vk, pending_rows, poll_position, worker_ready
from bench.env import GROUP_ID, ROOT, Services, process_env
from bench.games import BenchGame, create_game, day_votes, vote_text
from bench.procs import BOT, WORKER, Managed, ProcessError, wait_for
from gameplay import services
from gameplay.buttons import STATUS, VOTE, Payload
from gameplay.models import (
    Actor,
    GameEvent,
    NightAction,
    Outbox,
    OutboxStatus,
    Phase,
    PhaseKind,
    PhaseStatus,
    VkEvent,
    Vote,
)
from localvk import LocalVK, ServerThread
from localvk.callback_config import CallbackConfig
from tests.process_support import ForkedManaged, shared_database_url
from tests.soak.scenario import night_events, table_of

GAMES = 2
CODE = "scaleout-confirm"
SECRET = "scaleout-secret"
DUPLICATE_RATE = 0.3
#: gunicorn's access log: the worker's pid, the request, the status.
ACCESS_FORMAT = "%(p)s %(m)s %(U)s %(s)s"
READY_TIMEOUT = 45.0
#: Generous: a loaded CI host applies and delivers these in seconds; this only bounds a failure.
APPLY_TIMEOUT = 120.0

pytestmark = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres(
        reason="three web processes and a worker, as `make run` scales out (it refuses SQLite)"
    ),
    pytest.mark.redis(reason="the web processes, the worker and the test share the queues"),
]


@dataclass
class Web:
    """One gunicorn server (a master and its workers) and its access log."""

    process: Managed
    port: int
    access_log: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/vk/callback/"

    def served(self) -> list[tuple[str, str]]:
        """(worker pid, status) of every POST to the callback URL so far."""
        if not self.access_log.exists():
            return []
        found = []
        for line in self.access_log.read_text().splitlines():
            pid, method, path, status = line.split()
            if (method, path) == ("POST", "/vk/callback/"):
                found.append((pid, status))
        return found


@dataclass
class Cluster:
    state: LocalVK
    webs: list[Web]
    worker: Managed
    env: dict[str, str]
    logs: Path
    #: Confirmation requests this test sent itself (to see that a server is up).
    probes: Counter[str]

    def processes(self) -> list[Managed]:
        return [web.process for web in self.webs] + [self.worker]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def confirmation_answer(url: str) -> str | None:
    body = json.dumps({"type": "confirmation", "group_id": GROUP_ID}).encode()
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    try:
        # The master listens before its workers are up: wait for them rather than give up on
        # a request that a worker answers (and logs) later.
        with urllib.request.urlopen(request, timeout=READY_TIMEOUT) as response:
            return response.read().decode()
    except urllib.error.HTTPError as error:  # answered, but not with 200
        return f"HTTP {error.code}"
    except OSError:  # not listening yet
        return None


@pytest.fixture
def cluster(tmp_path: Path, rq_queues: Any) -> Iterator[Cluster]:
    settings.VK_GROUP_ID = GROUP_ID
    assert settings.REDIS_URL  # a real Redis: the redis mark
    state = make_vk(GAMES)
    with ServerThread(state) as server:
        env = process_env(
            Services(shared_database_url(), settings.REDIS_URL),
            server.api_url,
            VK_CALLBACK_SECRET=SECRET,
            VK_CONFIRMATION_CODE=CODE,
            OUTBOX_RETRY_BASE_MS="200",
            LOG_LEVEL="INFO",  # the web processes log the retries they get
        )
        webs = []
        for name, workers in (("web-a", 2), ("web-b", 1)):
            port, access_log = free_port(), tmp_path / f"{name}.access.log"
            command = [
                sys.executable, "-m", "gunicorn", "config.wsgi", "--chdir", str(ROOT),
                "--bind", f"127.0.0.1:{port}", "--workers", str(workers), "--no-control-socket",
                "--access-logfile", str(access_log), "--access-logformat", ACCESS_FORMAT,
            ]  # fmt: skip
            web_process = ForkedManaged(name, command, env, tmp_path / f"{name}.log")
            webs.append(Web(web_process, port, access_log))
        worker = ForkedManaged("worker", WORKER, {**env, "LOG_LEVEL": "WARNING"},
                         tmp_path / "worker.log")  # fmt: skip
        cluster = Cluster(state, webs, worker, env, tmp_path, Counter())
        for process in cluster.processes():
            process.start()
        try:
            for web in webs:

                def up(web: Web = web) -> bool:
                    answer = confirmation_answer(web.url)
                    cluster.probes[web.url] += answer is not None
                    return answer == CODE

                wait_for(up, timeout=READY_TIMEOUT, what=f"{web.process.name} to answer",
                         interval=0.2, processes=cluster.processes())  # fmt: skip
            wait_for(lambda: worker_ready("project"), timeout=READY_TIMEOUT,
                     what="the worker to start", processes=cluster.processes())  # fmt: skip
            yield cluster
        finally:
            state.callbacks.configure(None)
            for process in cluster.processes():
                process.stop()


def open_phase(game: BenchGame) -> Phase:
    return Phase.objects.get(game_id=game.game_id, status=PhaseStatus.OPEN)


def press(state: LocalVK, user: int, payload: Payload) -> dict[str, Any]:
    return state.inject_message_event(user, json.loads(payload.encode()))


def settle(cluster: Cluster, ids: list[str], what: str) -> None:
    """Wait until every event is recorded, the pusher has nothing in flight and the Outbox
    is delivered."""
    wait_for(
        lambda: VkEvent.objects.filter(event_id__in=ids).count() == len(set(ids))
        and cluster.state.callbacks.pending == 0,
        timeout=APPLY_TIMEOUT, what=what, processes=cluster.processes(),
    )  # fmt: skip
    try:
        wait_for(
            lambda: pending_rows() == 0, timeout=APPLY_TIMEOUT,
            what=f"the Outbox delivered after {what}", processes=cluster.processes(),
        )  # fmt: skip
    except ProcessError as error:
        raise ProcessError(f"{error}\n{undelivered(cluster)}") from None


def undelivered(cluster: Cluster) -> str:
    """What a delivery timeout needs to be understood: the pending rows and the worker's log."""
    rows = Outbox.objects.filter(status=OutboxStatus.PENDING).order_by("id")[:20]
    lines = [
        f"Outbox #{r.pk} {r.channel}/{r.kind} attempts={r.attempts} locked_until={r.locked_until}"
        f" next_attempt_at={r.next_attempt_at} last_error={r.last_error[:200]!r}"
        for r in rows
    ]
    tail = cluster.worker.log_tail(40)
    return "pending rows:\n" + "\n".join(lines) + "\nworker log:\n" + tail


def test_callbacks_round_robin_over_several_web_processes_apply_every_event_once(
    cluster: Cluster,
) -> None:
    started = time.monotonic()
    state = cluster.state
    games = [create_game(n) for n in range(1, GAMES + 1)]
    dead = f"http://127.0.0.1:{free_port()}/vk/callback/"
    state.faults.configure(callback_duplicate_rate=DUPLICATE_RATE, seed=6)
    state.callbacks.configure(
        CallbackConfig(
            urls=(cluster.webs[0].url, cluster.webs[1].url, dead),
            confirmation_code=CODE,
            secret=SECRET,
            concurrency=6,
            backoff=0.05,
            confirm_interval=0.2,
        )
    )
    wait_for(lambda: state.callbacks.confirmed, timeout=10, what="the confirmation")

    # Day 1: everyone votes at once (a tie: nobody is executed).
    plan = day_votes()
    ids, presses = [], []
    phases = {game.game_id: open_phase(game).pk for game in games}
    for voter, target in sorted(plan.items()):
        for game in games:
            if voter % 2:
                update = state.inject_board_post(game.vk(voter), game.topic_id, vote_text(target))
            else:
                payload = Payload(VOTE, game=game.game_id, phase=phases[game.game_id],
                                  target=target)  # fmt: skip
                update = press(state, game.vk(voter), payload)
                presses.append(update["object"]["event_id"])
            ids.append(update["event_id"])
    settle(cluster, ids, "Day 1's votes")
    for game in games:
        phase_id = phases[game.game_id]
        got: Counter[Any] = Counter(Vote.objects.filter(phase_id=phase_id)
                      .values_list("voter__number", "target__number"))  # fmt: skip
        assert got == Counter(plan.items()), f"game {game.number}: the votes differ"
        assert GameEvent.objects.filter(phase_id=phase_id, kind="vote").count() == len(plan)
        services.day_close(game_id=game.game_id, by=Actor.gm("scaleout"))

    # Night 1: every role acts by message, the others press the status button.
    expected: dict[int, Counter[tuple[Any, ...]]] = {}
    night_ids = []
    for game in games:
        table = table_of(game)
        assert table is not None
        expected[game.game_id] = Counter()
        for event in night_events(random.Random(f"scaleout:{game.number}"), game, table, 1):
            if event.expects is None:
                update = press(state, game.vk(event.seat), Payload(STATUS))
                presses.append(update["object"]["event_id"])
            else:
                update = state.inject_message(game.vk(event.seat), event.text)
                expected[game.game_id][event.expects[1:]] += 1
            night_ids.append(update["event_id"])
    settle(cluster, night_ids, "Night 1's actions")
    for game in games:
        phase = open_phase(game)
        assert phase.kind == PhaseKind.NIGHT
        got = Counter(NightAction.objects.filter(phase=phase)
                      .values_list("actor__number", "act", "target__number", "guess"))  # fmt: skip
        assert got == expected[game.game_id], f"game {game.number}: the night actions differ"
        logged = GameEvent.objects.filter(phase=phase, kind="night_action").count()
        assert logged == sum(expected[game.game_id].values())
    ids += night_ids

    # Every event once, through the Callback API only.
    recorded = VkEvent.objects.filter(event_id__in=ids)
    assert recorded.count() == len(set(ids)) == len(ids)
    assert set(recorded.values_list("source", flat=True)) == {"callback"}
    # Every reply once; every button answered once.
    assert check_delivery(state) == []
    assert not Outbox.objects.filter(status=OutboxStatus.FAILED).exists()
    assert all(state.callback_events[e].answer is not None for e in presses)
    assert not [c for c in state.calls("messages.sendMessageEventAnswer") if c.error_code]

    # The pusher: every event accepted (the players' and the echoes of the bot's own board
    # posts), some twice by different servers, retries after the dead URL; nothing given up.
    deliveries = [d for d in state.callbacks.deliveries() if d.type != "confirmation"]
    accepted: dict[str, set[str]] = {}
    for d in deliveries:
        if d.ok:
            accepted.setdefault(d.event_id, set()).add(d.url)
    stats = state.callbacks.stats()
    assert set(ids) <= set(accepted) and len(accepted) == stats["events"]
    assert stats["failed"] == 0 and stats["duplicated"] > 0
    assert sum(1 for urls in accepted.values() if len(urls) == 2) > 0
    retried = [d for d in deliveries if d.attempt > 0 and d.ok]
    assert retried and all(d.url != dead for d in retried)

    # Both servers served events: their access logs hold every post made to them.
    def logged_posts() -> list[int]:
        return [len(web.served()) for web in cluster.webs]

    posts = [
        cluster.probes[web.url]
        + sum(1 for d in state.callbacks.deliveries() if d.url == web.url and d.status)
        for web in cluster.webs
    ]
    wait_for(
        lambda: logged_posts() == posts,
        timeout=5,
        what=f"the access logs to show {posts} posts (they show {logged_posts()})",
    )
    served = {web.process.name: Counter(pid for pid, _ in web.served()) for web in cluster.webs}
    assert all(served.values()) and all(
        status == "200" for web in cluster.webs for _, status in web.served()
    )
    web_logs = "".join(web.process.log_path.read_text() for web in cluster.webs)
    assert "is VK's retry 1" in web_logs
    seconds = time.monotonic() - started
    print("scale-out:", json.dumps({
        "events": len(ids), "seconds": round(seconds, 1), "served_by_pid": served,
        "pusher": {k: stats[k] for k in ("events", "duplicated", "posts", "ok", "retries")},
        "messages": len(state.sent_messages()),
    }))  # fmt: skip

    both_channels(cluster, games)


def both_channels(cluster: Cluster, games: list[BenchGame]) -> None:
    """``runbot`` beside the web processes: every status request, delivered by both channels,
    is answered once."""
    state = cluster.state
    bot = ForkedManaged("bot", BOT, cluster.env, cluster.logs / "bot.log")
    bot.start()
    try:
        processes = [*cluster.processes(), bot]
        wait_for(lambda: poll_position() > 0, timeout=READY_TIMEOUT, what="the bot to poll",
                 processes=processes)  # fmt: skip
        watermark = Outbox.objects.order_by("-id").values_list("id", flat=True).first() or 0
        ids: list[str] = []
        by_button: Counter[int] = Counter()
        by_message: Counter[int] = Counter()
        for game in games:
            table = table_of(game)
            assert table is not None
            for seat in table.living:
                user = game.vk(seat)
                if seat % 2:
                    update = state.inject_message(user, "статус")
                    by_message[user] += 1
                else:
                    update = press(state, user, Payload(STATUS))
                    by_button[user] += 1
                ids.append(update["event_id"])
        target_ts = state.longpoll.ts
        settle(cluster, ids, "the status requests")
        wait_for(lambda: poll_position() >= target_ts, timeout=APPLY_TIMEOUT,
                 what="the bot to read them too", processes=processes)  # fmt: skip
    finally:
        bot.stop()
    new = Outbox.objects.filter(id__gt=watermark)
    statuses = Counter(p for peers in new.filter(kind="status").values_list("peer_ids", flat=True)
                       for p in peers)  # fmt: skip
    answers = Counter(p for peers in new.filter(kind="event_answer")
                      .values_list("peer_ids", flat=True) for p in peers)  # fmt: skip
    assert statuses == by_message + by_button
    assert answers == by_button
    assert VkEvent.objects.filter(event_id__in=ids).count() == len(ids)
    assert check_delivery(state) == []
    sources = Counter(VkEvent.objects.filter(event_id__in=ids).values_list("source", flat=True))
    print("both channels:", dict(sources))
