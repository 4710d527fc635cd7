"""RULES.md §1 Setup: role counts, the default table, and the item draw."""

from __future__ import annotations

import pytest

from gameplay.rules import Item, ItemDraw, Role, RoleCounts, RuleViolation, deal, draw_items
from gameplay.rules.errors import SetupError
from tests.rules.builders import CYRILLIC

# --- role counts ----------------------------------------------------------------------------


def test_setup_default_counts_are_the_26_player_table():
    assert RoleCounts() == RoleCounts(mafia=6, commissar=1, doctor=1, maniac=1, civilian=17)
    assert RoleCounts().total == 26
    assert RoleCounts.default_for(26) == RoleCounts()


@pytest.mark.parametrize("players", range(4, 41))
def test_setup_default_for_any_size_is_valid_and_fills_every_seat(players: int):
    counts = RoleCounts.default_for(players)
    counts.validate()
    assert counts.total == players
    assert counts.mafia >= 1
    # A playable game: the mafia start as a minority of the table (§7 rule 4 must not hold).
    assert counts.mafia < players - counts.mafia
    assert max(counts.commissar, counts.doctor, counts.maniac) <= 1


@pytest.mark.parametrize("players", [7, 13, 26, 40])
def test_setup_default_for_has_every_special_role_from_seven_players(players: int):
    counts = RoleCounts.default_for(players)
    assert (counts.commissar, counts.doctor, counts.maniac) == (1, 1, 1)


@pytest.mark.parametrize("players", [-1, 0, 3])
def test_setup_default_for_refuses_fewer_than_four_players(players: int):
    with pytest.raises(SetupError) as info:
        RoleCounts.default_for(players)
    assert CYRILLIC.search(info.value.reason)


@pytest.mark.parametrize(
    "counts",
    [
        pytest.param(RoleCounts(mafia=-1, civilian=20), id="negative"),
        pytest.param(RoleCounts(mafia=0, civilian=10), id="no-mafia"),
        pytest.param(RoleCounts(mafia=2, commissar=2, civilian=10), id="two-commissars"),
        pytest.param(RoleCounts(mafia=2, doctor=2, civilian=10), id="two-doctors"),
        pytest.param(RoleCounts(mafia=2, maniac=2, civilian=10), id="two-maniacs"),
        # Exactly one of three items must land with the mafia: two players outside it at least.
        pytest.param(
            RoleCounts(mafia=1, commissar=0, doctor=0, maniac=0, civilian=1), id="one-non-mafia"
        ),
        # §7 rule 4 holds at the start: the game would be over before it began.
        pytest.param(
            RoleCounts(mafia=3, commissar=1, doctor=1, maniac=0, civilian=1), id="mafia-wins-at-0"
        ),
        pytest.param(RoleCounts(mafia=6, civilian=3), id="mafia-majority"),
    ],
)
def test_setup_impossible_counts_are_refused_with_a_russian_reason(counts: RoleCounts):
    with pytest.raises(SetupError) as info:
        counts.validate()
    assert isinstance(info.value, RuleViolation)
    assert CYRILLIC.search(info.value.reason), info.value.reason
    with pytest.raises(SetupError):
        deal("seed", counts)


@pytest.mark.parametrize(
    "counts",
    [
        RoleCounts(mafia=1, commissar=1, doctor=0, maniac=0, civilian=2),
        RoleCounts(mafia=2, commissar=0, doctor=0, maniac=0, civilian=3),
        RoleCounts(mafia=1, commissar=0, doctor=0, maniac=1, civilian=2),
        RoleCounts(mafia=3, commissar=1, doctor=1, maniac=1, civilian=1),
    ],
)
def test_setup_small_playable_counts_are_accepted(counts: RoleCounts):
    counts.validate()
    assert len(deal("s", counts).roles) == counts.total


def test_setup_deal_hands_out_exactly_the_counted_roles():
    counts = RoleCounts(mafia=3, commissar=1, doctor=1, maniac=1, civilian=6)
    roles = deal("counted", counts).roles
    assert len(roles) == 12
    assert roles.count(Role.MAFIA) == 3
    assert roles.count(Role.COMMISSAR) == 1
    assert roles.count(Role.DOCTOR) == 1
    assert roles.count(Role.MANIAC) == 1
    assert roles.count(Role.CIVILIAN) == 6


# --- items ----------------------------------------------------------------------------------


def _mafia_seats(roles: tuple[Role, ...]) -> set[int]:
    return {n for n, r in enumerate(roles, start=1) if r is Role.MAFIA}


@pytest.mark.parametrize("seed", [f"items-{i}" for i in range(30)])
def test_setup_items_exactly_one_lands_with_the_mafia(seed: str):
    d = deal(seed, RoleCounts())
    holders = dict(d.items)
    assert set(holders) == {Item.CLOCK, Item.RED_BUTTON, Item.BOOK}
    assert len(set(holders.values())) == 3, "each item goes to a different player"
    assert all(1 <= s <= 26 for s in holders.values())
    assert len(set(holders.values()) & _mafia_seats(d.roles)) == 1


@pytest.mark.parametrize("seed", [f"draws-{i}" for i in range(30)])
def test_setup_items_every_draw_is_kept_with_its_mafia_count(seed: str):
    d = deal(seed, RoleCounts())
    mafia = _mafia_seats(d.roles)
    assert [draw.attempt for draw in d.draws] == list(range(1, len(d.draws) + 1))
    for draw in d.draws:
        seats = [seat for _, seat in draw.holders]
        assert len(set(seats)) == 3
        assert draw.mafia_items == len(set(seats) & mafia)
        assert draw.accepted == (draw.mafia_items == 1)
    assert [draw.accepted for draw in d.draws] == [False] * (len(d.draws) - 1) + [True]
    assert d.items == d.draws[-1].holders


def test_setup_items_redraws_happen_and_are_recorded():
    # With 6 mafia of 26, about 44% of draws are accepted: over 30 seeds, some need re-draws.
    redraws = [len(deal(f"draws-{i}", RoleCounts()).draws) for i in range(30)]
    assert max(redraws) > 1
    assert min(redraws) == 1


def test_setup_items_with_two_players_outside_the_mafia_still_terminates():
    roles = (Role.MAFIA, Role.MAFIA, Role.CIVILIAN, Role.MAFIA, Role.COMMISSAR)
    draws = draw_items("tight", roles)
    assert draws[-1].accepted
    assert {seat for _, seat in draws[-1].holders} >= {3, 5}


def test_setup_items_refused_when_exactly_one_with_the_mafia_is_impossible():
    with pytest.raises(SetupError):
        draw_items("x", (Role.MAFIA, Role.MAFIA, Role.CIVILIAN))
    with pytest.raises(SetupError):
        draw_items("x", (Role.CIVILIAN, Role.CIVILIAN, Role.CIVILIAN))


def test_setup_item_draw_as_dict_names_items_and_seats():
    draw = ItemDraw(
        attempt=2,
        holders=((Item.CLOCK, 3), (Item.RED_BUTTON, 9), (Item.BOOK, 1)),
        mafia_items=1,
    )
    assert draw.as_dict() == {
        "attempt": 2,
        "holders": {"clock": 3, "red_button": 9, "book": 1},
        "mafia_items": 1,
    }


def test_setup_items_and_roles_have_russian_titles():
    for item in Item:
        assert CYRILLIC.search(item.title)
    for role in Role:
        assert CYRILLIC.search(role.title)
