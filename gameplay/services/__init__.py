"""The only code that writes game state (DESIGN.md).

Each public function is one transaction that locks its game row, calls the rules, saves,
appends GameEvents and writes the messages it causes as Outbox rows. Refusals are
``gameplay.rules.RuleViolation`` subclasses with a Russian reason; nothing changes then.
"""

from .actions import night_action_submit
from .day import VoteOutcome, day_close
from .discipline import seat_modkill, seat_replace, strike_forgive, strike_give
from .night import (
    ActionOutcome,
    night_close,
    night_draft_edit,
    night_publish,
    night_reopen_mafia,
)
from .phases import game_end
from .setup import (
    DealSummary,
    deal_round_new,
    game_create,
    game_deal,
    game_deal_fixed,
    game_start,
)
from .signup import signup_create, signup_withdraw
from .votes import vote_submit

__all__ = [
    "ActionOutcome",
    "DealSummary",
    "VoteOutcome",
    "day_close",
    "deal_round_new",
    "game_create",
    "game_deal",
    "game_deal_fixed",
    "game_end",
    "game_start",
    "night_action_submit",
    "night_close",
    "night_draft_edit",
    "night_publish",
    "night_reopen_mafia",
    "seat_modkill",
    "seat_replace",
    "signup_create",
    "signup_withdraw",
    "strike_forgive",
    "strike_give",
    "vote_submit",
]
