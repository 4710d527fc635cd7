"""The gameplay app's tables, by what they hold (all with app label ``gameplay``):

- ``game``: the game, its seats, replacements, phases, votes, night actions and items spent;
- ``community``: the VK communities hosted and their members (tokens encrypted: ``secrets``);
- ``deal``: the verifiable deal's seeds and draws;
- ``discipline``: strikes, the GM's moderation flags, the spectator chat's members;
- ``log``: the game's event log;
- ``transport``: the Outbox, the Callback inbox, incoming VK events applied, the long poll's
  state, the deployment's ids;
- ``runbot``: the runbots alive and their leases on the communities' long polls.

Every model and enum is importable from here (``from gameplay.models import Game``).
"""

from .community import AdminTokenSource, Community, CommunityMember, CommunityRole
from .deal import DealRound, Draw
from .discipline import (
    FlagKind,
    FlagStatus,
    ModerationFlag,
    SpectatorMember,
    SpectatorStatus,
    Strike,
)
from .game import (
    ACTIVE_STATUSES,
    SEX_CHOICES,
    DeathCause,
    Game,
    GameStatus,
    ItemUse,
    NightAction,
    Phase,
    PhaseKind,
    PhaseStatus,
    Replacement,
    Seat,
    SeatStatus,
    Source,
    Vote,
)
from .log import Actor, EventKind, GameEvent
from .runbot import LongPollLease, RunbotProcess
from .transport import (
    Deployment,
    InboundEvent,
    Outbox,
    OutboxChannel,
    OutboxStatus,
    PollState,
    VkEvent,
)

__all__ = [
    "AdminTokenSource",
    "Community",
    "CommunityMember",
    "CommunityRole",
    "ACTIVE_STATUSES",
    "Actor",
    "SEX_CHOICES",
    "DealRound",
    "DeathCause",
    "Deployment",
    "Draw",
    "EventKind",
    "FlagKind",
    "FlagStatus",
    "Game",
    "InboundEvent",
    "GameEvent",
    "GameStatus",
    "ItemUse",
    "LongPollLease",
    "ModerationFlag",
    "NightAction",
    "Outbox",
    "OutboxChannel",
    "OutboxStatus",
    "Phase",
    "PhaseKind",
    "PhaseStatus",
    "PollState",
    "Replacement",
    "RunbotProcess",
    "Seat",
    "SeatStatus",
    "Source",
    "SpectatorMember",
    "SpectatorStatus",
    "Strike",
    "VkEvent",
    "Vote",
]
