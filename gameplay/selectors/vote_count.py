"""The vote count of an open day, the way forum GMs post one: each candidate with the votes for
them (who cast each, and the board comment that did), the votes that moved away from them, who
has not voted, the leader, and what closing the day now would do (the rules' close on the
day's rows, with the strikes and their +2 penalty votes for the missing votes).

Three queries, whatever the size of the game: the seats, the day's votes, its penalties.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from gameplay.messages import Person, moment, when
from gameplay.models import (
    Game,
    Outbox,
    OutboxChannel,
    Phase,
    PhaseKind,
    PhaseStatus,
    Seat,
    SeatStatus,
    Strike,
    Vote,
)
from gameplay.rules import PENALTY_VOTES, DayResult, StrikeGiven, close_day

from .close import day_input_of_rows
from .table import current_phase

#: The Outbox kind of a vote count's post.
COUNT_KIND = "vote_count"
#: U+0336 after each character strikes a text through in any VK client (VK has no markup).
STRIKE = "\u0336"


@dataclass(frozen=True)
class CountedVote:
    """A current vote: its voter and the board comment that cast it (None: cast by private
    message, a button or the panel)."""

    voter: Seat
    post_id: int | None
    early: bool


@dataclass
class Candidate:
    seat: Seat
    #: The current votes for the candidate, in the order they were cast.
    votes: list[CountedVote] = field(default_factory=list)
    #: Penalty votes announced for this day (P2): they count in the tally.
    penalty: int = 0
    #: Voters whose last change took their vote away from the candidate (struck through).
    left: list[Seat] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.votes) + self.penalty


@dataclass
class VoteTally:
    phase: Phase
    #: The seated players, by seat number.
    seats: list[Seat]
    #: Most votes first (penalty votes included); then by seat number.
    candidates: list[Candidate]
    #: Living players without a standing vote, by seat number.
    missing: list[Seat]
    living: int
    voted: int
    #: The rules' close of the day now: the strikes for the missing votes, the tally after
    #: them. Only its strikes, modkills and tally are shown: whether the close would end the
    #: game is not (it would tell roles).
    close: DayResult

    @property
    def leaders(self) -> list[Seat]:
        """The candidates with the most votes now (one: the leader; several: a tie)."""
        top = max((c.total for c in self.candidates), default=0)
        return [c.seat for c in self.candidates if top and c.total == top]

    @property
    def strikes(self) -> dict[int, StrikeGiven]:
        """The strikes closing now would give, by seat number."""
        return {s.seat: s for s in self.close.strikes}

    @property
    def close_leaders(self) -> tuple[list[int], int]:
        """The seats with the most votes in the tally closing now would make, and their votes:
        one seat is the execution, several a tie (nobody leaves)."""
        tally = self.close.tally
        top = max(tally.values(), default=0)
        return sorted(n for n, v in tally.items() if top and v == top), top


def vote_tally(phase: Phase) -> VoteTally:
    """The count of ``phase`` (an open day) as it stands."""
    seats = list(
        Seat.objects.filter(
            game_id=phase.game_id, status=SeatStatus.PLAYER, number__isnull=False
        ).order_by("number")
    )
    votes = list(Vote.objects.filter(phase=phase).order_by("id"))
    strikes = list(Strike.objects.filter(seat__game_id=phase.game_id, penalty_day=phase.number))
    by_pk = {s.pk: s for s in seats}
    living = {s.pk for s in seats if s.alive}
    candidates: dict[int, Candidate] = {}

    def candidate(pk: int) -> Candidate:
        return candidates.setdefault(pk, Candidate(by_pk[pk]))

    history: dict[int, list[Vote]] = {}
    for v in votes:
        if v.voter_id in living:
            history.setdefault(v.voter_id, []).append(v)
    voted = set()
    for voter, cast in history.items():
        current = next((v for v in reversed(cast) if v.current), None)
        standing = current if current is not None and not current.void else None
        if standing is not None and standing.target_id in living:
            voted.add(voter)
            candidate(standing.target_id).votes.append(
                CountedVote(by_pk[voter], standing.vk_post_id, standing.early)
            )
        before = [v for v in cast if not v.current]
        if before and before[-1].target_id in living:
            left = before[-1].target_id
            if standing is None or standing.target_id != left:
                candidate(left).left.append(by_pk[voter])
    for s in strikes:
        if not s.forgiven and s.seat_id in living and s.penalty_votes:
            candidate(s.seat_id).penalty += s.penalty_votes
    for c in candidates.values():
        c.votes.sort(key=lambda v: v.voter.number or 0)
    table, day = day_input_of_rows(phase, seats, votes, strikes)
    return VoteTally(
        phase=phase,
        seats=seats,
        candidates=sorted(candidates.values(), key=lambda c: (-c.total, c.seat.number or 0)),
        missing=[s for s in seats if s.alive and s.pk not in voted],
        living=len(living),
        voted=len(voted),
        close=close_day(table, day),
    )


def last_count_at(*, game: Game, topic_id: int, since: datetime) -> datetime | None:
    """When the last vote count was posted in ``topic_id`` (since ``since``, the day's
    opening), whoever asked for it; None if none was."""
    return (
        Outbox.objects.filter(
            game=game,
            channel=OutboxChannel.BOARD,
            topic_id=topic_id,
            kind=COUNT_KIND,
            created_at__gte=since,
        )
        .order_by("-id")
        .values_list("created_at", flat=True)
        .first()
    )


# --- the post's context ----------------------------------------------------------------------


def board_link(*, group_id: int | None, topic_id: int | None, post_id: int | None) -> str:
    """The address of a board comment (``https://vk.com/topic-<group>_<topic>?post=<id>``);
    empty when one of them is unknown."""
    if not (group_id and topic_id and post_id):
        return ""
    return f"https://vk.com/topic-{group_id}_{topic_id}?post={post_id}"


def struck(text: str) -> str:
    """``text`` struck through (a combining long stroke after each character)."""
    return "".join(ch + STRIKE for ch in text)


def count_context(
    *, game: Game, tally: VoteTally, now: datetime, final: bool = False
) -> dict[str, Any]:
    """What the vote count's text (``board/vote_count``, worded by the theme's
    ``vote_count`` slot) is given: the facts of ``tally`` as plain data."""
    phase = tally.phase
    by_number = {s.number: s for s in tally.seats}
    strikes: dict[Any, StrikeGiven] = tally.strikes  # looked up by the seats' numbers
    close, top = tally.close_leaders
    return {
        "day": phase.number,
        "at": moment(now, game.time_zone),
        "deadline": when(phase.deadline, game.time_zone),
        "final": final,
        "voted": tally.voted,
        "living": tally.living,
        "candidates": [
            {
                "person": Person.of(c.seat),
                "votes": len(c.votes),
                "penalty": c.penalty,
                "total": c.total,
                "voters": [
                    {
                        "person": Person.of(v.voter),
                        "link": board_link(
                            group_id=game.vk_group_id, topic_id=game.topic_id, post_id=v.post_id
                        ),
                        "early": v.early,
                    }
                    for v in c.votes
                ],
                "left": [
                    {"person": Person.of(s), "struck": struck(str(Person.of(s)))} for s in c.left
                ],
            }
            for c in tally.candidates
        ],
        "missing": [
            {
                "person": Person.of(s),
                "modkill": bool(strikes.get(s.number) and strikes[s.number].modkill),
                "penalty": strikes[s.number].penalty_votes if s.number in strikes else 0,
            }
            for s in tally.missing
        ],
        "leaders": [Person.of(s) for s in tally.leaders],
        "leader_votes": max((c.total for c in tally.candidates), default=0),
        "executed": Person.of(by_number[close[0]]) if len(close) == 1 else None,
        "tie": [Person.of(by_number[n]) for n in close] if len(close) > 1 else [],
        "close_votes": top,
        "penalised": [
            Person.of(by_number[n]) for n, st in sorted(strikes.items()) if not st.modkill
        ],
        "penalty_votes": PENALTY_VOTES,
        "modkilled": [Person.of(by_number[n]) for n in tally.close.modkilled],
    }


# --- an example, and the worst case (the GM's editor of the theme's text) -----------------------


def count_preview(*, game: Game, people: list[Person]) -> dict[str, Any]:
    """The context of the theme editor's preview: the open day's count as it stands, or one of
    an example day (two votes for the first of ``people``, one cast in the board, the rest
    missing)."""
    phase = current_phase(game)
    now = datetime.now(UTC)
    if phase is not None and phase.kind == PhaseKind.DAY and phase.status == PhaseStatus.OPEN:
        return count_context(game=game, tally=vote_tally(phase), now=now)
    ps = people
    link = board_link(group_id=game.vk_group_id, topic_id=game.topic_id or 1, post_id=101)
    return {
        "day": phase.number if phase is not None else 1,
        "at": moment(now, game.time_zone),
        "deadline": when(None, game.time_zone),
        "final": False,
        "voted": 2,
        "living": len(ps),
        "candidates": [
            {
                "person": ps[0],
                "votes": 2,
                "penalty": 0,
                "total": 2,
                "voters": [
                    {"person": ps[1], "link": link, "early": False},
                    {"person": ps[2], "link": "", "early": False},
                ],
                "left": [],
            }
        ],
        "missing": [{"person": p, "penalty": PENALTY_VOTES, "modkill": False} for p in ps[3:]],
        "leaders": [ps[0]],
        "leader_votes": 2,
        "executed": ps[0],
        "tie": [],
        "close_votes": 2,
        "penalised": ps[3:],
        "penalty_votes": PENALTY_VOTES,
        "modkilled": [],
    }


def count_worst_cases(ps: list[Person], moment_text: str) -> list[dict[str, Any]]:
    """The contexts of a count at its longest for a table of ``ps``: a day every player voted
    in, each for another and each after changing their vote once (a vote and a struck one per
    candidate, the longest links); and a day nobody voted in (every player missing, struck or
    modkilled). ``moment_text``: the longest a time reads."""
    n = len(ps)
    link = board_link(group_id=10**10, topic_id=10**10, post_id=10**10)
    base = {
        "day": n,
        "at": moment_text,
        "deadline": moment_text,
        "final": False,
        "living": n,
        "leaders": ps,
        "leader_votes": n,
        "tie": ps,
        "executed": ps[0],
        "close_votes": n,
        "penalty_votes": PENALTY_VOTES,
    }
    everyone = {
        **base,
        "voted": n,
        "candidates": [
            {
                "person": p,
                "votes": n,
                "penalty": n,
                "total": n,
                "voters": [{"person": ps[i - 1], "link": link, "early": True}],
                "left": [{"person": ps[i - 2], "struck": struck(str(ps[i - 2]))}],
            }
            for i, p in enumerate(ps)
        ],
        "missing": [],
        "penalised": [],
        "modkilled": [],
    }
    nobody = {
        **base,
        "voted": 0,
        "candidates": [
            {"person": p, "votes": 0, "penalty": n, "total": n, "voters": [], "left": []}
            for p in ps
        ],
        "missing": [{"person": p, "penalty": n, "modkill": True} for p in ps],
        "penalised": ps,
        "modkilled": ps,
    }
    return [everyone, nobody]
