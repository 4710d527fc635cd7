"""The game's rules (RULES.md) as pure Python: no Django, no clock, no global randomness.

Time and seeds are arguments; state is passed in as immutable snapshots (``Table``) and the
functions return what happened, with an explanation the GM can read: facts (rules/facts.py)
that the panel puts in words. Every refusal is a ``RuleViolation`` subclass (rules/errors.py)
whose Russian text lives in templates/messages/refusals/.

Where things are: roles.py (the vocabulary), state.py (the table), deal.py (the verifiable
deal), day.py (votes and the day's close), night.py (night submissions), targets.py (what may
be sent at whom: validation and buttons), night_resolution.py (the five steps and dawn),
night_result.py (a night's outcome), facts.py (the explanations' lines and the GM's edits),
discipline.py (strikes, modkills, replacements), spectators.py (G6), winner.py (§7).
"""

from .day import (
    EARLY_VOTE_FROM_DAY,
    AcceptedVote,
    Ballot,
    DayInput,
    DayResult,
    close_day,
    early_close_reached,
    validate_vote,
)
from .deal import (
    ChainError,
    Deal,
    ItemDraw,
    RevealedRound,
    RoleCounts,
    SeededStream,
    commitment,
    deal,
    deal_for_roster,
    draw_items,
    round_commitment,
    shuffle_roles,
    verify_chain,
    verify_commitment,
    verify_seed,
)
from .discipline import (
    PENALTY_VOTES,
    StrikeGiven,
    StrikeReason,
    give_strike,
    validate_modkill,
    validate_replacement,
)
from .errors import RuleViolation
from .facts import Fact, GmEdit, Why
from .night import NightContext, NightInput, Submission, validate_action
from .night_resolution import amend_night, dawn, redraft, resolve_night
from .night_result import CheckResult, NightResolution, NightStep
from .roles import Act, EarlyClose, Faction, Item, Role, Slot, Winner
from .state import SeatState, Table
from .targets import night_acts, valid_targets, vote_targets
from .winner import decide_winner

__all__ = [
    "EARLY_VOTE_FROM_DAY",
    "PENALTY_VOTES",
    "AcceptedVote",
    "Act",
    "Ballot",
    "ChainError",
    "CheckResult",
    "DayInput",
    "DayResult",
    "Deal",
    "EarlyClose",
    "Fact",
    "Faction",
    "GmEdit",
    "Item",
    "ItemDraw",
    "NightContext",
    "NightInput",
    "NightResolution",
    "NightStep",
    "Role",
    "RoleCounts",
    "RuleViolation",
    "SeatState",
    "SeededStream",
    "Slot",
    "StrikeGiven",
    "StrikeReason",
    "Submission",
    "Table",
    "Why",
    "Winner",
    "RevealedRound",
    "amend_night",
    "dawn",
    "redraft",
    "close_day",
    "commitment",
    "deal",
    "deal_for_roster",
    "decide_winner",
    "draw_items",
    "early_close_reached",
    "give_strike",
    "resolve_night",
    "round_commitment",
    "shuffle_roles",
    "night_acts",
    "valid_targets",
    "vote_targets",
    "validate_action",
    "validate_modkill",
    "validate_replacement",
    "validate_vote",
    "verify_chain",
    "verify_commitment",
    "verify_seed",
]
