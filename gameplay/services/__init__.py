"""The only code that writes game state (docs/architecture.md).

Each public function is one transaction that locks its game row, calls the rules, saves,
appends GameEvents and writes the messages it causes as Outbox rows. Refusals are typed
``gameplay.rules.RuleViolation`` subclasses (the rules' own in ``gameplay.rules.errors``, the
rest in ``gameplay.refusals``) whose Russian text lives in ``templates/messages/refusals/``;
nothing changes then. Public functions take keyword arguments only.

The modules are named for what they act on, not for who calls them: the bot and the panel
call the same command for the same action (a vote is ``votes.vote_submit`` whether a seat
number or a VK user casts it; a sign-up is ``signup.signup_create`` from VK or the panel).

- ``setup``: creating a game, the start; ``deal``: the rounds of the deal, the deal;
  ``signup``: signing up, the reserve, withdrawal, the GM's lists and removals
  (``signup_batch``: many sign-ups in one go);
  ``settings``: a game's settings and GMs (the panel's «Настройки»).
- ``phases``: opening days and nights, the end of the game (``game_over``: the end-of-game
  post's facts);
  ``day``: closing a day; ``votes``: casting a vote and the count;
  ``night``: closing and reviewing a night, the GM's edits; ``publication``: publishing it;
  ``actions``: sending a night action;
  ``acting``: who acts from VK (their living seat, a button's phase).
- ``deadlines``: the deadline tick, reminders, and the GM's hand on the open phase's end
  (extend it, close it now as confirmed).
- ``discipline``: modkills, replacements, strikes; ``moderation``: flags and the GM's
  decisions on them.
- ``spectators``: the spectator chat (G6); ``mafia``: the mafia's channel (G5).
- ``replies``: the bot's answers (a message, a chat message, a button's answer, a board reply);
  ``retries``: the GM's retry of failed deliveries; ``settle``: a delivery round's outcome
  recorded (and a chat VK created linked); ``story``: the GM's story and theme texts.
- ``communities``: the communities hosted (the environment's kept in step), a connection
  recorded, disconnection, who runs games where; ``admin_tokens``: a community admin's user
  token (board posts) recorded, renewed before it expires (VK ID), refused (sign in again).
- ``longpoll_leases``: several runbots sharing the communities' long polls: each
  community's lease (claimed, renewed, released, checked in the batch's transaction), the
  runbots alive and each one's fair share; ``inbox``: the Callback API's events recorded
  until applied, claimed by the transaction that applies them, one applier at a time.
- ``vkrefs``: the VK references a GM types (pure parsing); ``common``: locking, the event log,
  queueing Outbox rows (the delivery itself is the ``outbox`` package, below the services).

Layers (a module imports only modules below it; ``|`` separates independent ones)::

    deadlines | moderation | settle
    actions | discipline | settings | signup | spectators | story | votes
    day | night | setup | signup_batch
    publication
    mafia | phases | deal
    prompts | replies | retries
    acting | common | communities | game_over | vkrefs
    admin_tokens | inbox | longpoll_leases
"""

from .actions import ActionOutcome, night_action_submit
from .day import day_close
from .deal import DealSummary, deal_round_new, game_deal, game_deal_fixed
from .discipline import seat_modkill, seat_replace, strike_forgive, strike_give
from .night import (
    night_close,
    night_draft_edit,
    night_publish,
    night_reopen_mafia,
)
from .phases import game_end
from .setup import game_create, game_start
from .signup import signup_create, signup_withdraw
from .signup_batch import SignupEntry, signups_create
from .votes import VoteOutcome, vote_submit

__all__ = [
    "ActionOutcome",
    "DealSummary",
    "SignupEntry",
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
    "signups_create",
    "strike_forgive",
    "strike_give",
    "vote_submit",
]
