"""Property tests of the rules (Hypothesis).

The number of examples comes from the active Hypothesis profile (tests/conftest.py: ``dev`` by
default, ``ci`` with 500 examples when ``HYPOTHESIS_PROFILE=ci``); nothing here overrides it.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import assume, event, given, note
from hypothesis import strategies as st

from gameplay.rules import (
    Act,
    Ballot,
    DayInput,
    EarlyClose,
    Item,
    NightContext,
    NightInput,
    Role,
    RoleCounts,
    RuleViolation,
    SeatState,
    Submission,
    Table,
    close_day,
    deal,
    decide_winner,
    resolve_night,
    validate_action,
    validate_vote,
    verify_commitment,
    verify_seed,
)
from gameplay.rules.errors import DeadCannotAct, SetupError
from tests.rules.sim import (
    GUESSES,
    ITEM_OF,
    ROLE_ACTIONS,
    GameSim,
    Knobs,
    effects,
    observed_day,
    observed_night,
    reference_close_day,
    reference_night,
    reference_winner,
)

ITEMS = (Item.CLOCK, Item.RED_BUTTON, Item.BOOK)
seeds = st.text(min_size=1, max_size=12)


@st.composite
def role_counts(draw, min_players: int = 4, max_players: int = 40) -> RoleCounts:
    """Any setup §1 allows: at most one of each special role, the mafia a minority (§7.4)."""
    players = draw(st.integers(min_players, max_players))
    commissar, doctor, maniac = draw(st.tuples(*[st.integers(0, 1)] * 3))
    mafia = draw(st.integers(1, (players - 1) // 2))
    civilian = players - mafia - commissar - doctor - maniac
    return RoleCounts(mafia, commissar, doctor, maniac, civilian)


@st.composite
def tables(
    draw,
    min_seats: int = 4,
    max_seats: int = 10,
    max_maniacs: int = 1,
    playable: bool = False,
    min_dead: int = 0,
) -> Table:
    """A table in any state: any roles (one commissar, doctor and maniac at most unless told),
    dead seats, strikes, items held or spent. ``playable``: one mafia or more, a minority."""
    n = draw(st.integers(min_seats, max_seats))
    order = draw(st.permutations(range(1, n + 1)))
    mafia = draw(st.integers(1, max(1, (n - 1) // 2)) if playable else st.integers(0, n))
    specials = [
        role
        for role, most in ((Role.COMMISSAR, 1), (Role.DOCTOR, 1), (Role.MANIAC, max_maniacs))
        for _ in range(draw(st.integers(0, most)))
    ]
    roles = {seat: Role.CIVILIAN for seat in order}
    for seat in order[:mafia]:
        roles[seat] = Role.MAFIA
    for seat, role in zip(order[mafia:], specials, strict=False):
        roles[seat] = role
    holders = (
        draw(st.lists(st.integers(1, n), min_size=min(3, n), max_size=3, unique=True)) if n else []
    )
    items = dict(zip(holders, ITEMS, strict=False))

    def bits() -> int:  # one draw per flag kind keeps generation cheap
        return draw(st.integers(0, 2**n - 1)) if n else 0

    dead, struck, used = bits() & bits(), bits(), bits() & bits()  # mostly alive and unused
    if min_dead:
        killed = st.lists(st.integers(1, n), min_size=min_dead, max_size=min_dead, unique=True)
        for seat in draw(killed):
            dead |= 1 << (seat - 1)
    return Table.of(
        SeatState(
            number=seat,
            role=roles[seat],
            alive=not dead >> (seat - 1) & 1,
            strikes=struck >> (seat - 1) & 1,
            item=items.get(seat),
            item_used=bool(used >> (seat - 1) & 1),
        )
        for seat in range(1, n + 1)
    )


# --- (a) whole games ----------------------------------------------------------------------------

knobs = st.builds(
    Knobs,
    miss_vote=st.floats(0, 0.3),
    herd=st.floats(0, 1),
    early=st.floats(0, 1),
    junk=st.floats(0, 0.6),
    miss_action=st.floats(0, 0.3),
    use_item=st.floats(0, 1),
    role_strike=st.floats(0, 0.6),
    gm_modkill=st.floats(0, 0.2),
    replace=st.floats(0, 0.2),
)


@given(
    counts=role_counts(),
    seed=seeds,
    rng=st.randoms(use_true_random=True),
    behaviour=knobs,
    early_close=st.sampled_from(EarlyClose),
)
def test_random_games_follow_the_rules_to_the_end(counts, seed, rng, behaviour, early_close):
    """Random valid and invalid votes and actions, GM modkills and replacements, played to the
    end: every refusal is a RuleViolation the rules call for, every accepted submission is one
    they allow, every phase's outcome matches the reference reading of RULES.md, and the game
    ends within the phase bound or is still consistent."""
    sim = GameSim(counts, seed, rng, behaviour, early_close)
    winner = sim.play(max_phases=3 * counts.total + 6)
    note(f"{counts} → {winner} after {len(sim.log)} phases")
    for phase in sim.log:
        note(f"{phase.kind} {phase.number}: {phase}")
    event(f"winner: {winner}")
    event(f"players: {counts.total // 10 * 10}–{counts.total // 10 * 10 + 9}")
    refused = sum((p.refused for p in sim.log), Counter())
    for code in refused:
        event(f"refused: {code}")


@given(
    counts=role_counts(max_players=6),
    seed=seeds,
    rng=st.randoms(use_true_random=False),
    behaviour=knobs,
    early_close=st.sampled_from(EarlyClose),
)
def test_small_random_games_follow_the_rules_with_shrinkable_choices(
    counts, seed, rng, behaviour, early_close
):
    """The same for small tables, with every choice of the game drawn (and shrunk, should it
    fail) by Hypothesis itself rather than by a seeded generator."""
    sim = GameSim(counts, seed, rng, behaviour, early_close)
    winner = sim.play(3 * counts.total + 6)
    for phase in sim.log:
        note(f"{phase.kind} {phase.number}: {phase}")
    event(f"winner: {winner}")


# --- (b) the dead never act ---------------------------------------------------------------------


@st.composite
def dead_submissions(draw):
    table = draw(tables(min_seats=2, min_dead=1))
    dead = [s.number for s in table.seats if not s.alive]
    n = len(table)
    return (
        table,
        draw(st.sampled_from(dead)),
        draw(st.sampled_from(Act)),
        draw(st.integers(0, n + 1)),
        draw(st.sampled_from([*Role, None])),
        NightContext(
            number=draw(st.integers(1, 20)),
            role_strike_used=draw(st.booleans()),
            last_heal_target=draw(st.none() | st.integers(1, n)),
        ),
        draw(st.integers(1, 10)),
        draw(st.booleans()),
    )


@given(dead_submissions())
def test_a_dead_seat_is_refused_whatever_it_sends(case):
    table, dead, act, target, guess, ctx, day, early = case
    with pytest.raises(DeadCannotAct):
        validate_action(table, ctx, dead, act, target, guess)
    with pytest.raises(DeadCannotAct):
        validate_vote(table, day, dead, target, early=early)
    with pytest.raises(DeadCannotAct):
        validate_vote(table, day, dead, target, current=Ballot(dead, target, early=True))


@st.composite
def nights(draw, max_seats: int = 10, min_dead: int = 0):
    """A table, the night's context and the valid submissions of its living players (most of
    them sensible: the actor's own actions at random targets)."""
    table = draw(tables(max_seats=max_seats, min_dead=min_dead))
    living = sorted(table.alive_numbers)
    assume(living)
    n = len(table)
    ctx = NightContext(
        number=draw(st.integers(1, 5)),
        role_strike_used=draw(st.booleans()),
        last_heal_target=draw(st.none() | st.integers(1, n)),
    )
    subs: list[Submission] = []
    for _ in range(draw(st.integers(0, 12))):
        actor = draw(st.sampled_from(living))
        seat = table.seat(actor)
        own = sorted(ROLE_ACTIONS[seat.role]) + ([Act(seat.item.value)] if seat.item else [])
        act = draw(st.sampled_from(own) if own and draw(st.booleans()) else st.sampled_from(Act))
        target = draw(st.integers(1, n))
        guess = draw(st.sampled_from(sorted(GUESSES)) | st.sampled_from([*Role, None]))
        try:
            subs.append(validate_action(table, ctx, actor, act, target, guess))
        except RuleViolation:
            pass
    return table, ctx, subs


@given(nights(min_dead=1), st.data())
def test_submissions_of_the_dead_change_nothing_in_a_resolution(night_case, data):
    """P7/V7: whatever a dead seat's submissions say, the resolution is the one without them."""
    table, ctx, subs = night_case
    dead = [s.number for s in table.seats if not s.alive]
    ghost = data.draw(
        st.lists(
            st.builds(
                Submission,
                actor=st.sampled_from(dead),
                act=st.sampled_from(Act),
                target=st.integers(1, len(table)),
                guess=st.sampled_from([*GUESSES, None]),
            ),
            min_size=1,
            max_size=6,
        )
    )
    with_ghosts = resolve_night(table, NightInput.from_submissions(ctx.number, ghost + subs))
    without = resolve_night(table, NightInput.from_submissions(ctx.number, subs))
    assert effects(with_ghosts) == effects(without)
    dead_set = set(dead)
    assert not dead_set & {c.commissar for c in with_ghosts.checks}
    assert not dead_set & set(with_ghosts.deaths)
    assert not dead_set & {s.seat for s in with_ghosts.strikes}


@given(nights(), st.data())
def test_resolve_night_matches_the_five_steps_of_rules_section_5(night_case, data):
    """§5 and the dawn (P1–P3, §7) against the reference reading, including players modkilled
    during the night after their submissions were accepted (V7)."""
    table, ctx, subs = night_case
    living = sorted(table.alive_numbers)
    removed = data.draw(st.lists(st.sampled_from(living), max_size=2, unique=True))
    at_close = table.without(removed)
    night = NightInput.from_submissions(ctx.number, subs)
    res = resolve_night(at_close, night)
    assert observed_night(res) == reference_night(at_close, night)
    assert [s.number for s in res.steps] == [1, 2, 3, 4, 5]
    assert set(res.deaths) <= set(at_close.alive_numbers)
    event(f"deaths: {len(res.deaths)}")


# --- (c) items, (d) determinism, (e) commitments -------------------------------------------------


@given(seed=seeds, counts=role_counts())
def test_exactly_one_item_lands_with_the_mafia(seed, counts):
    d = deal(seed, counts)
    mafia = {n for n, role in enumerate(d.roles, start=1) if role is Role.MAFIA}
    assert [draw.attempt for draw in d.draws] == list(range(1, len(d.draws) + 1))
    for draw in d.draws:
        assert [item for item, _ in draw.holders] == list(ITEMS)
        seats = [seat for _, seat in draw.holders]
        assert len(set(seats)) == 3 and all(1 <= s <= counts.total for s in seats)
        assert draw.mafia_items == len(set(seats) & mafia)
        assert draw.accepted is (draw.mafia_items == 1)
    assert [draw.accepted for draw in d.draws].count(True) == 1
    assert d.draws[-1].accepted
    assert d.items == d.draws[-1].holders
    assert len({seat for _, seat in d.items} & mafia) == 1
    event(f"draws: {min(len(d.draws), 5)}{'+' if len(d.draws) >= 5 else ''}")


@given(seed=seeds, counts=role_counts())
def test_the_same_seed_deals_the_same_game(seed, counts):
    first, second = deal(seed, counts), deal(seed, counts)
    assert first == second
    assert first.commitment == second.commitment
    assert Counter(first.roles) == Counter(counts.pool())
    assert verify_seed(seed, counts, first.commitment)


@given(seed=seeds, counts=role_counts(max_players=20), data=st.data())
def test_any_single_tampered_field_breaks_the_commitment(seed, counts, data):
    d = deal(seed, counts)
    roles, items, published = list(d.roles), dict(d.items), d.commitment
    assert verify_commitment(seed, roles, items, published)

    i = data.draw(st.integers(0, len(roles) - 1), label="i")
    j = data.draw(st.sampled_from([k for k, r in enumerate(roles) if r is not roles[i]]), "j")
    swapped = list(roles)
    swapped[i], swapped[j] = swapped[j], swapped[i]
    assert not verify_commitment(seed, swapped, items, published)

    item = data.draw(st.sampled_from(ITEMS), label="item")
    others = [s for s in range(1, counts.total + 1) if s != items[item]]
    seat = data.draw(st.sampled_from(others), label="new seat")
    assert not verify_commitment(seed, roles, {**items, item: seat}, published)

    pos = data.draw(st.integers(0, len(seed) - 1), label="pos")
    char = data.draw(st.characters(codec="utf-8"), label="char")  # seeds are UTF-8 text
    if char == seed[pos]:
        char = "x" if char != "x" else "y"
    tampered = seed[:pos] + char + seed[pos + 1 :]
    assert not verify_commitment(tampered, roles, items, published)
    assert not verify_seed(tampered, counts, published)


@given(
    st.builds(
        RoleCounts,
        mafia=st.integers(-1, 8),
        commissar=st.integers(-1, 2),
        doctor=st.integers(-1, 2),
        maniac=st.integers(-1, 2),
        civilian=st.integers(-1, 12),
    )
)
def test_setup_validation_refuses_exactly_the_impossible_counts(counts):
    counts_list = list(counts.as_dict().values())
    possible = (
        min(counts_list) >= 0
        and counts.mafia >= 1
        and max(counts.commissar, counts.doctor, counts.maniac) <= 1
        and counts.total - counts.mafia >= 2  # one item of three with the mafia (§1)
        and reference_winner(
            Table.of(SeatState(n, r) for n, r in enumerate(counts.pool(), start=1))
        )
        is None
    )
    try:
        counts.validate()
    except SetupError as err:
        assert not possible, err.reason
    else:
        assert possible


# --- (f) the day's tally ------------------------------------------------------------------------


@st.composite
def days(draw: st.DrawFn) -> tuple[Table, DayInput]:
    table = draw(tables(min_seats=3, max_seats=12, playable=True))
    living = sorted(table.alive_numbers)
    assume(len(living) >= 2 and reference_winner(table) is None)
    number = draw(st.integers(1, 6))
    ballots: dict[int, Ballot] = {}
    for voter in living:
        if draw(st.integers(0, 4)) == 0:
            continue  # misses the vote
        target = draw(st.sampled_from([n for n in living if n != voter]))
        early = draw(st.booleans())
        ballots[voter] = validate_vote(table, number, voter, target, early=early).ballot
    carried = {
        seat: 2 for seat in draw(st.lists(st.integers(1, len(table)), max_size=3, unique=True))
    }
    without_vote = [n for n in living if n not in ballots]
    excused = frozenset(
        draw(st.lists(st.sampled_from(without_vote), unique=True)) if without_vote else ()
    )
    return table, DayInput(number, ballots, carried, excused)


@given(days())
def test_close_day_tally_is_living_votes_plus_penalties(case):
    table, day = case
    result = close_day(table, day)
    living = table.alive_numbers - set(result.modkilled)
    votes = Counter(
        b.target for b in day.ballots.values() if b.voter in living and b.target in living
    )
    penalties = Counter({s: v for s, v in day.carried_penalties.items() if s in living})
    for strike in result.strikes:
        if not strike.modkill:
            penalties[strike.seat] += 2
    assert result.tally == dict(votes + penalties)
    assert result.penalties == dict(penalties)
    if result.executed is not None:
        top = max(result.tally.values())
        assert [s for s, v in result.tally.items() if v == top] == [result.executed]
    elif result.tally and result.winner is None:
        top = max(result.tally.values())
        assert len([s for s, v in result.tally.items() if v == top]) > 1
    assert observed_day(result) == reference_close_day(table, day)
    event(f"executed: {result.executed is not None}; modkills: {bool(result.modkilled)}")


# --- (g) the winner -----------------------------------------------------------------------------


@given(tables(min_seats=0, max_seats=12))
def test_decide_winner_matches_rules_section_7(table):
    assert decide_winner(table) == reference_winner(table)
    event(f"winner: {reference_winner(table)}")


def test_items_of_the_simulator_cover_every_item_act():
    # Guards the reference tables in sim.py against drifting from the vocabulary.
    assert set(ITEM_OF.values()) == set(Item)
    assert {a for acts in ROLE_ACTIONS.values() for a in acts} | set(ITEM_OF) == set(Act)
