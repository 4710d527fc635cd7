"""What every handler shares: reading a raw VK update defensively, facts about users the
pipeline may have fetched from VK beforehand, and replying (always through the Outbox)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from gameplay.messages import render
from gameplay.models import Game, Seat
from gameplay.refusals import OutOfGame
from gameplay.selectors import bot as sel
from gameplay.services import common, replies
from vkbot import parsing

CHAT_PEER_BASE = 2_000_000_000


@dataclass(frozen=True)
class VkFacts:
    """What the ingestion pipeline may have asked VK before opening its transaction (see
    ``vkbot.handlers.facts_needed``): users' names (``users.get``) and whether the community
    may write to them (``messages.isMessagesFromGroupAllowed``). Missing facts are unknown:
    a sign-up then takes the name ``id<N>`` and records ``pm_allowed=None``. ``sexes`` is
    users.get's ``sex`` (1 female, 2 male; absent or 0 unknown), asked with the names."""

    names: Mapping[int, str] = field(default_factory=dict)
    pm_allowed: Mapping[int, bool] = field(default_factory=dict)
    sexes: Mapping[int, int] = field(default_factory=dict)


@dataclass(frozen=True)
class FactsRequest:
    names: frozenset[int] = frozenset()
    pm_allowed: frozenset[int] = frozenset()


# --- reading raw updates ---------------------------------------------------------------------


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_int(value: Any) -> int | None:
    """An int from VK (never a bool; numeric strings are accepted, as VK sometimes sends)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit() and len(value) < 20:
        return int(value)
    return None


def user_id(value: Any) -> int | None:
    """A VK user id (positive, below the chat peer range) or None."""
    n = as_int(value)
    return n if n is not None and 0 < n < CHAT_PEER_BASE else None


def as_str(value: Any, limit: int = 4000) -> str:
    """A string from VK, cut to ``limit``; NUL characters (which no text column takes) go."""
    return value[:limit].replace("\x00", "") if isinstance(value, str) else ""


# --- replies ---------------------------------------------------------------------------------


def say(
    vk_user_id: int,
    text: str,
    *,
    game: Game | int | None = None,
    keyboard: dict[str, Any] | None = None,
    kind: str = "reply",
    edit: int | None = None,
) -> None:
    """Answer the user; ``edit``: the ``conversation_message_id`` of the bot's message this
    answer replaces (a page of buttons turned: ``replies.reply``)."""
    replies.reply(
        vk_user_id=vk_user_id, text=text, game=game, keyboard=keyboard, kind=kind, edit=edit
    )


def refuse(vk_user_id: int, reason: str, *, game: Game | int | None = None) -> None:
    """A refusal: always answered, never more than the rule's reason. A ``RuleViolation`` a
    handler raises is answered by ``routes`` with this; a handler calls it for the texts that
    are no typed refusal (not playing, an unknown command)."""
    replies.reply(vk_user_id=vk_user_id, text=reason, game=game, kind="refusal")


# --- who the sender is -----------------------------------------------------------------------


@dataclass
class Sender:
    """A VK user and their seats in active games."""

    vk_user_id: int
    seats: list[Seat]
    #: The game the command is for, once its handler knows it: the game a refusal's answer
    #: belongs to (``routes``).
    game_id: int | None = None

    @classmethod
    def load(cls, vk_user_id: int, *, hot: bool = False) -> Sender:
        """The user's seats; ``hot``: for a vote or a night action, their games locked as they
        are read (``gameplay.services.common.hot_seats_of_user``: the service then reads its
        game without locking it again)."""
        if hot:
            return cls(vk_user_id, common.hot_seats_of_user(vk_user_id=vk_user_id))
        return cls(vk_user_id, sel.seats_of_user(vk_user_id))

    @property
    def playing(self) -> list[Seat]:
        """Seats in running games (living ones first)."""
        out = [
            s
            for s in self.seats
            if s.status == "player" and s.number is not None and s.game.status == "running"
        ]
        return sorted(out, key=lambda s: (not s.alive, s.game_id))

    def in_game(self, game_id: int) -> Seat | None:
        return next((s for s in self.seats if s.game_id == game_id and s.status == "player"), None)

    def name(self, facts: VkFacts) -> str:
        return (facts.names.get(self.vk_user_id) or "").strip()[:200] or f"id{self.vk_user_id}"

    def sex(self, facts: VkFacts) -> int:
        """VK's ``sex`` of the sender (0 when unknown)."""
        sex = facts.sexes.get(self.vk_user_id, 0)
        return sex if sex in (1, 2) else 0


def single_running_seat(sender: Sender) -> Seat | str:
    """The one running game this text command is for, or the refusal to send.

    A user alive in one game and dead in others plays the living one."""
    seats = sender.playing
    if not seats:
        if any(s.game.status in ("recruiting", "dealt") for s in sender.seats):
            return render("player/not_started")
        return render("player/not_playing")
    living = [s for s in seats if s.alive]
    if len(living) == 1:
        return living[0]
    if not living:
        return seats[0]  # dead everywhere: any of them gets the polite refusal
    return render("player/several_games")


def living_seat(sender: Sender) -> Seat | None:
    """The sender's living seat in the one running game a text command is for (a vote, a night
    action, the mafia's channel), its game the sender's command's (``Sender.game_id``); None
    when the sender plays in no running game or in several, the sender told why. A dead
    seat's command is refused (``OutOfGame``, answered by ``routes``)."""
    seat = single_running_seat(sender)
    if isinstance(seat, str):
        refuse(sender.vk_user_id, seat)
        return None
    sender.game_id = seat.game_id
    if not seat.alive:
        raise OutOfGame()
    return seat


def target_number(seat: Seat, target: parsing.Target, seats: Sequence[Seat] | None = None) -> int:
    """The seat number a typed target designates in ``seat``'s game: its number, the sender's
    own for «я» (the rules refuse what they refuse, with their reason), or the seat a name or a
    mention finds in ``seats`` (the game's roster, read when not given) — or a refusal."""
    if target.number is not None:
        return target.number
    if target.me:
        return cast(int, seat.number)  # a player's seat
    roster = sel.roster(seat.game_id) if seats is None else seats
    return cast(int, sel.find_seat(roster, vk_user_id=target.vk_id, name=target.name).number)
