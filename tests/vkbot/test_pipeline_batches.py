"""A long-poll batch applied game by game (vkbot.pipeline.plan, vkbot.handlers.games_of):
each game's updates in their order, an update of no single game where it was, and the same
outcome as applying the updates one at a time; a refusal in the middle of a batch takes back its
own writes only (the kept rows themselves: tests/gameplay/unit_of_work/test_txcache.py)."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
from django.db import connection, transaction

from gameplay import services
from gameplay.models import Actor, Game, GameEvent, ModerationFlag, Outbox, Phase, Vote
from gameplay.rules import RuleViolation
from gameplay.services.common import lock_game
from gameplay.services.replies import reply
from gameplay.services.votes import vote_count_post, vote_submit
from localvk import RunningServer
from tests.gameplay.factories import topic_of
from tests.vkbot.bot_support import (
    GROUP_ID,
    board_post,
    make_game,
    phase,
    pm,
    roles_26,
    to_night,
)
from tests.vkbot.delivery_support import deliver, vk_fixture  # noqa: F401 (the ``vk`` fixture)
from tests.vkbot.ingest_support import use_dispatch
from vkbot import pipeline
from vkbot.handlers import dispatch, games_of
from vkbot.pipeline import CHUNK, apply_updates, plan

# --- the plan (pure) -------------------------------------------------------------------------


def flat(parts: list[list[int]]) -> list[int]:
    return [i for part in parts for i in part]


def test_a_batch_is_taken_game_by_game_between_updates_of_no_single_game() -> None:
    games = [1, 2, 1, 2, None, 1, None, None, 3]
    assert plan(games) == [[0, 2, 1, 3], [4], [5], [6, 7], [8]]
    assert plan([]) == []


def test_a_transaction_holds_at_most_a_chunk_and_a_small_game_is_never_split() -> None:
    games = [1] * (CHUNK + 10) + [2] * (CHUNK - 5) + [3] * 5
    parts = plan(games)
    assert [len(p) for p in parts] == [CHUNK, 10, CHUNK - 5 + 5]
    assert flat(parts) == list(range(len(games)))


@pytest.mark.parametrize("seed", range(30))
def test_the_plan_keeps_every_order_that_matters(seed: int) -> None:
    rng = random.Random(seed)
    games = [rng.choice([None, 1, 2, 3, 4, 5, 6]) for _ in range(rng.randint(1, 300))]
    parts = plan(games)
    order = flat(parts)
    assert sorted(order) == list(range(len(games))) and all(len(p) <= CHUNK for p in parts)
    at = {position: index for index, position in enumerate(order)}
    for game in {g for g in games if g is not None}:
        mine = [at[i] for i, g in enumerate(games) if g == game]
        assert mine == sorted(mine)
    for i, g in enumerate(games):
        if g is None:
            assert all(at[j] < at[i] for j in range(i)) and all(
                at[j] > at[i] for j in range(i + 1, len(games))
            )


# --- with the real handlers ------------------------------------------------------------------

pytestmark_db = pytest.mark.django_db

STRANGER = 777_001
BASES = (1000, 2000, 3000, 4000)


def day_three(vk_base: int) -> Game:
    game = make_game(roles_26(), vk_base=vk_base)
    for _ in range(2):
        to_night(game)
        services.night_close(game_id=game.pk, by=Actor.gm("test"))
        services.night_publish(game_id=game.pk, by=Actor.gm("test"))
    assert phase(game).number == 3
    return game


def script(game: Game, base: int) -> list[dict[str, Any]]:
    """Day 3: plain votes, a count on request, votes changed, early votes until the day
    closes early, votes refused after it, a night action in the night it opened, posts
    flagged for the GM."""
    topic = topic_of(game)
    out = [board_post(topic, base + n, "голос 20") for n in range(1, 8)]
    out += [pm(base + n, "голос 21") for n in range(8, 12)]
    out += [board_post(topic, base + 12, "подсчёт"), board_post(topic, base + 13, "голос 99")]
    out += [board_post(topic, base + n, "голос 22 досрочно") for n in range(1, 27)]
    out += [pm(base + 5, "голос 20"), pm(base + 1, "выстрел 3")]
    out += [
        board_post(topic, base + 4, "голос 9, идиот"),  # flagged (profanity)
        board_post(topic, base + 22, "я был мирным"),
    ]  # the executed: flagged
    return out


def interleave(a: list[dict[str, Any]], b: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i in range(max(len(a), len(b))):
        out += a[i : i + 1] + b[i : i + 1]
        if i == 9:
            out.append(pm(STRANGER, "статус"))  # of no game: applied where it is
    return out


_TIME = re.compile(r"\d{1,2}:\d{2}|\d{1,2}\.\d{1,2}(\.\d{2,4})?|[0-9a-f]{16,}")
#: A vote count's link to a board comment: the game's own topic and the post's own id.
_LINK = re.compile(r"https://vk\.com/topic-\d+_\d+\?post=\d+")


def outcome(game: Game, base: int) -> dict[str, Any]:
    """What a game's updates left, with VK ids and topics made comparable across games."""

    def norm(value: Any) -> Any:
        if isinstance(value, int) and base < value <= base + 26:
            return f"vk#{value - base}"
        if isinstance(value, str):
            text = _LINK.sub("https://vk.com/topic-G_T?post=P", value)
            text = re.sub(r"(id|vk:)(\d+)", lambda m: f"{m.group(1)}{norm(int(m.group(2)))}", text)
            return _TIME.sub("T", text)
        if isinstance(value, dict):
            return {
                k: norm(v)
                for k, v in value.items()
                if "deadline" not in k and not k.endswith("_at")
            }
        if isinstance(value, list):
            return [norm(v) for v in value]
        return value

    rows = Outbox.objects.filter(game=game).order_by("id")
    events = GameEvent.objects.filter(game=game).order_by("seq")
    votes = Vote.objects.filter(phase__game=game).order_by("id")
    return {
        "outbox": [(r.kind, r.channel, norm(sorted(r.peer_ids or [])), norm(r.text)) for r in rows],
        "events": [(e.seq, e.kind, norm(e.actor), norm(e.data)) for e in events],
        "votes": [
            (v.voter.number, v.target.number, v.early, v.current, v.void, v.source) for v in votes
        ],
        "phases": [
            (p.kind, p.number, p.status, p.closed_early)
            for p in Phase.objects.filter(game=game).order_by("id")
        ],
        "flags": [
            (f.kind, norm(f.vk_user_id), f.text, f.note)
            for f in ModerationFlag.objects.filter(game=game).order_by("id")
        ],
    }


@pytestmark_db
def test_a_batch_of_two_games_ends_as_the_same_updates_one_at_a_time(settings: Any) -> None:
    """Two games' Day 3 interleaved in one batch (with an update of no game among them) end
    as the same updates applied one at a time without the pipeline (nothing kept, nothing
    queued)."""
    settings.VK_GROUP_ID = GROUP_ID
    a, b, c, d = (day_three(base) for base in BASES)
    batch = interleave(script(a, BASES[0]), script(b, BASES[1]))
    keys = games_of(batch)
    assert {k for k in keys} == {a.pk, b.pk, None}
    assert apply_updates(batch, "7", source=pipeline.LONGPOLL, group_id=GROUP_ID) == len(batch)

    # The reference: each update's handlers in a transaction of their own, nothing kept.
    for update in interleave(script(c, BASES[2]), script(d, BASES[3])):
        with transaction.atomic():
            dispatch(update)

    batched, single = outcome(a, BASES[0]), outcome(c, BASES[2])
    for key in batched:
        for i, (x, y) in enumerate(zip(batched[key], single[key], strict=False)):
            assert x == y, (key, i)
    assert batched == single
    assert outcome(b, BASES[1]) == outcome(d, BASES[3])
    # The day closed early in the middle of the batch: the votes after it were refused.
    assert ("day", 3, "done", True) in batched["phases"]
    assert batched["phases"][-1][:2] == ("night", 3)
    assert any(kind == "night_action" for _, kind, _, _ in batched["events"]), (
        batched["phases"],
        batched["outbox"][-6:],
    )
    assert [e[0] for e in batched["events"]] == list(range(1, len(batched["events"]) + 1))
    assert {kind for kind, *_ in batched["flags"]} == {"profanity", "dead_post"}
    stranger = (
        Outbox.objects.filter(game=None, peer_ids__contains=[STRANGER])
        if (connection.vendor == "postgresql")
        else [r for r in Outbox.objects.filter(game=None) if STRANGER in (r.peer_ids or [])]
    )
    assert len(list(stranger)) == 2


# --- a refusal in the middle of a batch ------------------------------------------------------


def _sent(vk: RunningServer, peer: int) -> list[str]:
    """The texts the community sent ``peer`` (the local VK's record)."""
    return [m.text for m in vk.state.sent_messages(peer)]


@pytestmark_db
@pytest.mark.parametrize("refused", ["запас", "голоса"])
def test_a_refusal_after_the_lock_keeps_what_the_earlier_events_queued(
    vk: RunningServer, refused: str
) -> None:
    """Event 1 is a vote (its confirmation and its log row queued, not inserted yet); event 2,
    another player's «запас» (already signed up) or «голоса» (a count was just posted), is
    refused by a service that locked the game in its own savepoint, whose rollback takes only
    its own writes: event 1's confirmation goes out once, event 2 reads its refusal, event 3
    votes on top."""
    topic = vk.state.create_topic("Машина времени")
    game = make_game(roles_26(), topic_id=topic.id)
    Outbox.objects.all().delete()  # the setup's messages: not what this test delivers
    vote_count_post(game_id=game.pk)  # «голоса» now: too soon
    events_before = GameEvent.objects.filter(game=game).count()
    batch = [pm(1001, "голос 20"), pm(1002, refused), pm(1003, "голос 20")]

    assert apply_updates(batch, "9", source=pipeline.LONGPOLL, group_id=GROUP_ID) == 3

    echoes = Outbox.objects.filter(game=game, kind="vote_echo").order_by("id")
    assert [r.peer_ids for r in echoes] == [[1001], [1003]]
    [refusal] = Outbox.objects.filter(kind="refusal")
    assert refusal.peer_ids == [1002]
    expected = "вы уже" if refused == "запас" else "подсчёт голосов уже публиковался"
    assert expected in refusal.text.lower()
    votes = GameEvent.objects.filter(game=game).order_by("seq")
    assert [e.data["voter"] for e in votes if e.kind == "vote"] == [1, 3]
    seqs = [e.seq for e in votes]
    assert seqs == list(range(1, events_before + 3))

    report = deliver()
    assert report.sent and not Outbox.objects.exclude(status="sent").exists()
    accepted = "Ваш голос за №20"
    assert [t for t in _sent(vk, 1001) if t.startswith(accepted)] == [echoes[0].text]
    assert [t for t in _sent(vk, 1003) if t.startswith(accepted)] == [echoes[1].text]
    assert _sent(vk, 1002) == [refusal.text]


@pytestmark_db
@pytest.mark.parametrize("afresh", [False, True], ids=["after-its-vote", "after-a-lock"])
def test_a_refused_event_leaves_the_kept_game_as_the_events_before_it_left_it(
    settings: Any, monkeypatch: pytest.MonkeyPatch, afresh: bool
) -> None:
    """Event 2 votes in a savepoint of its own (the kept ballots, count and log seq change),
    then is refused there (``afresh``: after locking the game again, which writes the rows
    queued so far in that savepoint): the kept game forgets its vote, so event 3 — the same
    player voting again — is their first vote and the day's 10th, which posts the count, and
    event 1's rows stand once."""
    settings.VK_GROUP_ID = GROUP_ID
    game = make_game(roles_26())
    for voter in range(1, 9):
        services.vote_submit(game_id=game.pk, voter=voter, target=20)
    events_before = GameEvent.objects.filter(game=game).count()
    rows_before = Outbox.objects.order_by("-id").values_list("id", flat=True).first() or 0

    def dispatch(update: dict[str, Any]) -> None:
        message = update["object"]["message"]
        try:
            with transaction.atomic():
                vote_submit(game_id=game.pk, vk_user_id=message["from_id"], target=20)
                if message["text"] == "отказ":
                    if afresh:
                        lock_game(game_id=game.pk)
                    raise RuleViolation("отказано")
        except RuleViolation as refusal:
            reply(vk_user_id=message["from_id"], text=refusal.reason, game=game, kind="refusal")

    use_dispatch(monkeypatch, dispatch)
    batch = [pm(1009, "голос"), pm(1010, "отказ"), pm(1010, "голос")]
    assert apply_updates(batch, "10", source=pipeline.LONGPOLL, group_id=GROUP_ID) == 3

    rows = Outbox.objects.filter(id__gt=rows_before, kind__in=["vote_echo", "refusal"])
    assert [(r.kind, r.peer_ids) for r in rows.order_by("id")] == [
        ("vote_echo", [1009]),
        ("refusal", [1010]),
        ("vote_echo", [1010]),
    ]
    votes = Vote.objects.filter(phase__game=game, voter__number__in=[9, 10])
    assert sorted(votes.values_list("voter__number", "current")) == [(9, True), (10, True)]
    [count] = Outbox.objects.filter(game=game, kind="vote_count")
    assert "проголосовали 10 из 26" in count.text.lower()
    log = GameEvent.objects.filter(game=game, seq__gt=events_before).order_by("seq")
    assert [(e.kind, e.data.get("voter")) for e in log] == [("vote", 9), ("vote", 10)]
    assert [e.seq for e in log] == [events_before + 1, events_before + 2]
