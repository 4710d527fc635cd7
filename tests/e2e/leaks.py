"""The leak scan of the end-to-end game: everything the local VK holds — every private message
the community sent (text and button labels) and every board comment it posted — checked
against what RULES.md lets the reader know.

A line names a player by seat number («№5»), a VK mention (``[id123|…]``) or their full name.
A line naming another player S together with a word of S's actual role is a leak unless:
the reader is mafia and so is S (the team knows itself); S's role was public when the message
was sent (executed or modkilled and announced, or the game was over); it is the commissar's
own check result on S; or it is the mafia's own role strike (its guess, read by the mafia).
A line naming another player S together with a night-action word is a leak unless S is the
target of one of the reader's own night actions, or — for a mafia reader — the target or the
sender of a team action; «отправил» (who sent a team action) is for the mafia alone.

Board posts are public: before the game's final post, no line may name a player's role
unless that player was executed or modkilled, nor any night action.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from localvk import Comment, Message

ROLE_WORDS: dict[str, re.Pattern[str]] = {
    "mafia": re.compile(r"(?<!\w)мафи", re.I),
    "commissar": re.compile(r"(?<!\w)комиссар", re.I),
    "doctor": re.compile(r"(?<!\w)доктор", re.I),
    "maniac": re.compile(r"(?<!\w)маньяк", re.I),
    "civilian": re.compile(r"(?<!\w)мирн", re.I),
}
ACTION_WORDS = re.compile(
    r"(?<!\w)(?:выстрел|стреля|удар|провер|лечени|лечил|лечит|лечу|часы|часами|кнопк|книг"
    r"|отправил|отправитель|назвал|называет)",
    re.I,
)
#: Who sent a team action: «(отправил №3 …)», «(отправитель — №3 …)», «№3 … называет №5 …».
SENDER_WORD = re.compile(r"(?<!\w)(?:отправил\w*|отправитель\s+—|назвал\w*|называет)\s+№", re.I)
TEAM_ACTS = frozenset({"mafia_shot", "role_strike"})


@dataclass(frozen=True)
class SeatInfo:
    number: int
    role: str
    names: tuple[str, ...]


@dataclass
class Knowledge:
    """What the game looked like, for judging messages.

    ``holders``: per VK user, the (seat, from message id, to message id) spans in which they
    held a seat (a replacement ends one span and starts another). ``public_from``: seat →
    the message id after which its role was public. ``actions``: (actor, act, target) of
    every night action sent (current or replaced)."""

    seats: dict[int, SeatInfo]
    holders: dict[int, list[tuple[int, int, int]]]
    public_from: dict[int, int] = field(default_factory=dict)
    over_from: int | None = None
    actions: list[tuple[int, str, int]] = field(default_factory=list)

    def seat_of(self, vk_id: int, message_id: int) -> int | None:
        for seat, start, end in self.holders.get(vk_id, []):
            if start < message_id <= end:
                return seat
        return None

    def mentioned(self, line: str) -> set[int]:
        found = {int(n) for n in re.findall(r"№\s?(\d+)", line)}
        for vk in re.findall(r"\[id(\d+)\|", line):
            found.update(s for s, _, _ in self.holders.get(int(vk), []))
        folded = line.casefold().replace("ё", "е")
        for info in self.seats.values():
            if any(n.casefold().replace("ё", "е") in folded for n in info.names):
                found.add(info.number)
        return {n for n in found if n in self.seats}

    def entitled(self, reader: int) -> set[int]:
        """Seats the reader may see named with a night action."""
        mafia = {n for n, s in self.seats.items() if s.role == "mafia"}
        out = {target for actor, _, target in self.actions if actor == reader}
        if reader in mafia:
            out |= mafia
            out |= {t for actor, act, t in self.actions if act in TEAM_ACTS and actor in mafia}
        return out

    def checked(self, reader: int) -> set[int]:
        return {t for actor, act, t in self.actions if actor == reader and act == "check"}


def private_leaks(knowledge: Knowledge, messages: Mapping[int, Iterable[Message]]) -> list[str]:
    """Leaks in the private messages of each VK user (``messages``: user → their inbox)."""
    found: list[str] = []
    for vk_id, inbox in messages.items():
        for message in inbox:
            reader = knowledge.seat_of(vk_id, message.id)
            lines = message.text.splitlines() + _labels(message)
            for before in message.history:  # what it said before an edit (a page turned)
                lines += before["text"].splitlines() + _labels_of(before["keyboard"])
            for line in lines:
                for problem in _judge(knowledge, reader, message.id, line):
                    found.append(f"to id{vk_id} (seat {reader}) #{message.id}: {problem}: {line}")
    return found


def _judge(knowledge: Knowledge, reader: int | None, at: int, line: str) -> list[str]:
    problems: list[str] = []
    over = knowledge.over_from is not None and at > knowledge.over_from
    seats = knowledge.seats
    reader_mafia = reader is not None and seats[reader].role == "mafia"
    entitled = knowledge.entitled(reader) if reader is not None else set()
    for other in knowledge.mentioned(line) - ({reader} if reader is not None else set()):
        role = seats[other].role
        if ROLE_WORDS[role].search(line):
            public = over or at > knowledge.public_from.get(other, 10**12)
            team = reader_mafia and role == "mafia"
            check = (
                reader is not None
                and other in knowledge.checked(reader)
                and ("проверка" in line.lower())
            )
            guess = reader_mafia and "удар" in line.lower()
            if not (public or team or check or guess):
                problems.append(f"names the role of №{other}")
        if ACTION_WORDS.search(line) and other not in entitled and not over:
            problems.append(f"names a night action about №{other}")
    if SENDER_WORD.search(line) and not reader_mafia and not over:
        problems.append("says who sent a team action")
    return problems


def board_leaks(
    knowledge: Knowledge, comments: Iterable[Comment], *, revealed: set[int], final_id: int
) -> list[str]:
    """Leaks in the community's own comments before the final one (``final_id``): roles of
    players other than the ``revealed`` (executed, modkilled), and night actions."""
    found: list[str] = []
    for comment in comments:
        if comment.id >= final_id or comment.from_id > 0:
            continue
        for line in comment.text.splitlines():
            named = knowledge.mentioned(line)
            for other in sorted(named - revealed):
                if ROLE_WORDS[knowledge.seats[other].role].search(line):
                    found.append(f"board #{comment.id} names the role of №{other}: {line}")
            if named and ACTION_WORDS.search(line):
                found.append(f"board #{comment.id} names a night action: {line}")
    return found


def _labels(message: Message) -> list[str]:
    return _labels_of(message.keyboard)


def _labels_of(keyboard: dict[str, Any] | None) -> list[str]:
    return [
        str((button.get("action") or {}).get("label", ""))
        for row in (keyboard or {}).get("buttons") or []
        for button in row
    ]
