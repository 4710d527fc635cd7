"""Builders for the service tests: games made through the services themselves.

Nothing here writes to the database directly: every game, sign-up, deal, vote and night action
goes through ``gameplay.services``, so a test starts from a state the real code produced.

Players sign up in order and get VK ids ``1001, 1002, …``; the deal numbers seats by VK id,
so seat ``n`` is always VK id ``1000 + n``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from datetime import datetime
from typing import Any, cast

from gameplay import services
from gameplay.models import (
    Actor,
    Game,
    GameEvent,
    NightAction,
    Outbox,
    OutboxChannel,
    Phase,
    PhaseStatus,
    Seat,
    SeatStatus,
    Strike,
    Vote,
)
from gameplay.rules import Act, Item, Role, RoleCounts

VK_BASE = 1000

#: Sign-up names: Cyrillic, varied case, with and without «ё».
NAMES = tuple(
    "Аня Борис вера ГЛЕБ Дарья Егор Алёна Жанна Зоя Игорь Ксения ЛЁВА Марина Никита оля Пётр "
    "Рита Семён Таня Ульяна фёдор Христина Цветана Чеслав Шура Эля Юра Яна Артём Берта".split()
)

_topics = itertools.count(880_001)

#: The community of a test's games when it names none and the environment has none.
GROUP_ID = 77


def community_id(vk_group_id: int | None = None) -> int:
    """The community a test's game is made in (every game has one): the one named, else the
    environment's (``VK_GROUP_ID``), else :data:`GROUP_ID`. Its row is written when missing:
    the environment's as on start, another disconnected (no VK behind it)."""
    from django.conf import settings

    from gameplay.models import Community
    from gameplay.services.communities import community_record, community_sync_env

    env = settings.VK_GROUP_ID
    vk = vk_group_id if vk_group_id is not None else env if env is not None else GROUP_ID
    if vk == env:
        community_sync_env()
    elif not Community.objects.filter(vk_id=vk).exists():
        community_record(vk_id=vk, name=f"club{vk}", group_token="", connected=False)
    return int(vk)


def vk_id(number: int) -> int:
    """The VK id of the player who signed up ``number``-th (and sits at seat ``number``)."""
    return VK_BASE + number


def player_name(i: int) -> str:
    base = NAMES[(i - 1) % len(NAMES)]
    return base if i <= len(NAMES) else f"{base} {i}"


def default_counts(n: int) -> RoleCounts:
    return RoleCounts.default_for(n) if n >= 4 else RoleCounts()


def make_game(
    n: int = 26,
    counts: RoleCounts | None = None,
    *,
    deal: bool = False,
    start: bool = False,
    seed: str = "test-seed",
    now: datetime | None = None,
    name: str = "Машина времени",
    **settings: Any,
) -> Game:
    """A game with ``n`` signed-up players (round 1's seed is ``seed``); dealt if ``deal``,
    started if ``start``.

    ``counts`` defaults to RULES.md's table scaled to ``n``. ``settings`` are Game fields; the
    game gets its own discussion topic unless ``topic_id=None`` is passed, and the community
    :func:`community_id` gives.
    """
    settings.setdefault("topic_id", next(_topics))
    settings["vk_group_id"] = community_id(settings.get("vk_group_id"))
    game = services.game_create(
        name=name, counts=counts or default_counts(n), by=Actor.gm("test"), seed=seed, **settings
    )
    entries = [services.SignupEntry(vk_id(i), player_name(i)) for i in range(1, n + 1)]
    services.signups_create(game_id=game.pk, entries=entries)
    if deal or start:
        services.game_deal(game_id=game.pk, by=Actor.gm("test"))
    if start:
        services.game_start(game_id=game.pk, by=Actor.gm("test"), now=now)
    game.refresh_from_db()
    return game


# --- lookups -----------------------------------------------------------------------------------


def seats(game: Game, role: Role | str | None = None, *, alive: bool | None = None) -> list[Seat]:
    """Seated players in seat order, optionally of one role and/or only living (or dead)."""
    qs = Seat.objects.filter(game=game, status=SeatStatus.PLAYER, number__isnull=False)
    if role is not None:
        qs = qs.filter(role=Role(role).value)
    if alive is not None:
        qs = qs.filter(alive=alive)
    return list(qs.order_by("number"))


def seat(game: Game, role: Role | str, index: int = 0, *, alive: bool | None = True) -> Seat:
    """The ``index``-th seat (in seat order) with this role, living by default."""
    found = seats(game, role, alive=alive)
    assert len(found) > index, f"no {role} #{index} in game {game.pk}"
    return found[index]


def number_of(s: Seat) -> int:
    """A player's seat number (a dealt player has one; a sign-up or a reserve has none)."""
    assert s.number is not None, f"seat {s.pk} ({s.name}) has no number"
    return s.number


def topic_of(game: Game) -> int:
    """The game's discussion topic (a test's game has one unless made with ``topic_id=None``)."""
    assert game.topic_id is not None, f"game {game.pk} has no discussion topic"
    return game.topic_id


def recruit_topic_of(game: Game) -> int:
    """The game's sign-up topic (the test made its game with one)."""
    assert game.recruit_topic_id is not None, f"game {game.pk} has no sign-up topic"
    return game.recruit_topic_id


def queued(row: Outbox | None) -> Outbox:
    """The row a service queued (``post_board`` queues none for a game without a topic)."""
    assert row is not None, "nothing was queued"
    return row


def seat_no(game: Game, number: int) -> Seat:
    return Seat.objects.get(game=game, number=number)


def holder(game: Game, item: Item | str) -> Seat:
    return Seat.objects.get(game=game, item=Item(item).value, status=SeatStatus.PLAYER)


def label(s: Seat, case: str = "nomn") -> str:
    """How the bot names a seat publicly (gameplay.messages.Person), in ``case``."""
    from gameplay.grammar import decline_name

    return f"№{s.number} {decline_name(s.name, case, s.sex)}"


def civilians(game: Game, *, exclude: Iterable[int] = ()) -> list[Seat]:
    """Living civilians without an item (nothing they do or suffer touches another rule)."""
    skip = set(exclude)
    return [
        s for s in seats(game, Role.CIVILIAN, alive=True) if not s.item and s.number not in skip
    ]


def current_phase(game: Game) -> Phase:
    return Phase.objects.filter(game=game, status__in=[PhaseStatus.OPEN, PhaseStatus.REVIEW]).get()


def deadline_of(phase: Phase) -> datetime:
    """The phase's deadline (an open phase of a game with deadlines has one)."""
    assert phase.deadline is not None, f"{phase} has no deadline"
    return phase.deadline


def last_phase(game: Game) -> Phase:
    return cast(Phase, Phase.objects.filter(game=game).order_by("-id").first())  # one at least


def outbox(
    game: Game, kind: str | None = None, *, channel: str | None = None, after: int = 0
) -> list[Outbox]:
    qs = Outbox.objects.filter(game=game, pk__gt=after)
    if kind is not None:
        qs = qs.filter(kind=kind)
    if channel is not None:
        qs = qs.filter(channel=channel)
    return list(qs.order_by("id"))


def board(game: Game, kind: str | None = None, *, after: int = 0) -> list[Outbox]:
    return outbox(game, kind, channel=OutboxChannel.BOARD, after=after)


def pms_to(game: Game, vk_user_id: int, kind: str | None = None, *, after: int = 0) -> list[Outbox]:
    return [
        o
        for o in outbox(game, kind, channel=OutboxChannel.MESSAGE, after=after)
        if vk_user_id in o.peer_ids
    ]


def last_outbox_id() -> int:
    last = Outbox.objects.order_by("-id").values_list("id", flat=True).first()
    return last or 0


def events(game: Game, kind: str | None = None) -> list[GameEvent]:
    qs = GameEvent.objects.filter(game=game)
    if kind is not None:
        qs = qs.filter(kind=kind)
    return list(qs.order_by("seq"))


def event_count(game: Game) -> int:
    return GameEvent.objects.filter(game=game).count()


def snapshot(game: Game) -> dict[str, object]:
    """Everything a refused command must leave untouched."""
    return {
        "votes": list(
            Vote.objects.filter(phase__game=game)
            .order_by("id")
            .values_list("id", "voter_id", "target_id", "early", "current", "void")
        ),
        "actions": list(
            NightAction.objects.filter(phase__game=game)
            .order_by("id")
            .values_list("id", "actor_id", "act", "target_id", "current")
        ),
        "events": event_count(game),
        "outbox": Outbox.objects.filter(game=game).count(),
        "strikes": Strike.objects.filter(seat__game=game).count(),
        "seats": list(
            Seat.objects.filter(game=game)
            .order_by("id")
            .values_list(
                "id",
                "vk_user_id",
                "status",
                "number",
                "role",
                "item",
                "item_used",
                "alive",
                "strikes",
            )
        ),
        "phases": list(
            Phase.objects.filter(game=game).order_by("id").values_list("id", "status", "result")
        ),
        "game": Game.objects.filter(pk=game.pk).values_list(
            "status", "seed", "commitment", "winner", "role_strike_used"
        )[0],
    }


# --- driving a game ----------------------------------------------------------------------------


def vote(game: Game, voter: Seat | int, target: Seat | int, **kw: Any) -> services.VoteOutcome:
    # The players' seats have their numbers.
    v = voter if isinstance(voter, int) else cast(int, voter.number)
    t = target if isinstance(target, int) else cast(int, target.number)
    return services.vote_submit(game_id=game.pk, voter=v, target=t, **kw)


def act(
    game: Game, actor: Seat | int, what: Act | str, target: Seat | int, **kw: Any
) -> services.ActionOutcome:
    a = actor if isinstance(actor, int) else cast(int, actor.number)
    t = target if isinstance(target, int) else cast(int, target.number)
    return services.night_action_submit(game_id=game.pk, actor=a, act=what, target=t, **kw)


def vote_all(game: Game, target: Seat | int, *, skip: Iterable[Seat | int] = ()) -> None:
    """Every living player except ``skip`` votes for ``target``; the target votes for the first
    other living player (not in ``skip``)."""
    t = target if isinstance(target, int) else cast(int, target.number)
    skipped = {s if isinstance(s, int) else s.number for s in skip}
    living = [cast(int, s.number) for s in seats(game, alive=True)]
    for n in living:
        if n in skipped:
            continue
        if n == t:
            other = next(m for m in living if m != t and m not in skipped)
            vote(game, n, other)
        else:
            vote(game, n, t)


def tie_day(game: Game) -> None:
    """Every living player votes so that the day ends in a tie (nobody leaves, nobody is
    struck), then the day is closed."""
    living = [cast(int, s.number) for s in seats(game, alive=True)]
    a, b, others = living[0], living[1], living[2:]
    assert len(others) >= 2, "a tie without strikes needs at least four living players"
    plan = {a: b, b: a}
    half = len(others) // 2
    for i, n in enumerate(others[: 2 * half]):
        plan[n] = a if i < half else b
    if len(others) % 2:
        plan[others[-1]] = others[0]  # one vote for a third player keeps the tie
    for voter, target in plan.items():
        vote(game, voter, target)
    result = services.day_close(game_id=game.pk, by=Actor.gm("test"))
    assert result.executed is None and not result.strikes, result.explanation


def duty_actions(
    game: Game, *, skip: Iterable[Role] = (), avoid: Iterable[Seat | int] = ()
) -> None:
    """The commissar checks, the maniac shoots someone and the doctor heals that player:
    every duty role (not in ``skip``) acts and nobody dies. The maniac's victim is taken from
    the end of the seat list and is never one of ``avoid``."""
    skipped = set(skip)
    avoided = {s if isinstance(s, int) else s.number for s in avoid}
    doctor = seats(game, Role.DOCTOR, alive=True)
    maniac = seats(game, Role.MANIAC, alive=True)
    commissar = seats(game, Role.COMMISSAR, alive=True)
    if doctor:
        avoided.add(doctor[0].last_heal_target)
    candidates = [*reversed(civilians(game)), *reversed(seats(game, alive=True))]
    victim = next(s for s in candidates if s.number not in avoided and s.role != Role.MANIAC)
    if commissar and Role.COMMISSAR not in skipped:
        other = next(s for s in seats(game, alive=True) if s.number != commissar[0].number)
        act(game, commissar[0], Act.CHECK, other)
    if maniac and Role.MANIAC not in skipped:
        act(game, maniac[0], Act.MANIAC_SHOT, victim)
    if doctor and Role.DOCTOR not in skipped:
        act(game, doctor[0], Act.HEAL, victim)


def quiet_night(game: Game) -> None:
    """A night in which every duty role acts and nobody dies, closed and published."""
    duty_actions(game)
    services.night_close(game_id=game.pk, by=Actor.gm("test"))
    if current_phase(game).status == PhaseStatus.REVIEW:
        services.night_publish(game_id=game.pk, by=Actor.gm("test"))


def advance_to_day(game: Game, number: int) -> None:
    """Play tied days and quiet nights (nobody leaves, nobody is struck) until Day ``number``
    is open."""
    while True:
        phase = current_phase(game)
        if phase.kind == "day" and phase.number == number:
            return
        if phase.kind == "day":
            tie_day(game)
        else:
            quiet_night(game)


def to_night(game: Game) -> Phase:
    """Close Day 1 in a tie: Night 1 opens with everyone alive and no strikes."""
    tie_day(game)
    phase = current_phase(game)
    assert phase.kind == "night"
    return phase
