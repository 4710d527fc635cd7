"""What a simulated player knows, read the way a person reads it: their own private messages
(the role card, check results, «you are out») and the public board (the roster, the day's
opening, executions, night deaths, modkills, the end). Nothing here sees the database.

The patterns follow the bot's Russian texts (``templates/messages/``);
a text this does not recognise is simply ignored, so a change of wording makes the players
less clever, never broken.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from gameplay.buttons import BadPayload, Payload, decode

ROLE_WORDS = {
    "Мафия": "mafia",
    "Комиссар": "commissar",
    "Доктор": "doctor",
    "Мирный житель": "civilian",
    "Маньяк": "maniac",
}
_CARD = re.compile(r"Игра «(?P<game>.+?)»\. Ваш номер: (?P<n>\d+)\.")
_ROLE = re.compile(r"Ваша роль — (?P<role>Мафия|Комиссар|Доктор|Мирный житель|Маньяк)")
_TEAM = re.compile(r"^Мафия: (?P<team>.+)$", re.M)
_SEAT = re.compile(r"№(\d+)")
_CHECK = re.compile(r"проверка: №(?P<n>\d+).* — (?P<result>мафия|не мафия)\.")
_OUT = ("Вы выбыли из игры", "Ведущий исключил вас из игры")
_REPLACED = re.compile(r"^Ваше место в игре «.+» передано")
# Board posts: the delivery may merge several posts into one comment (separated by a blank
# line), so every pattern looks at whole lines anywhere in the text.
_ROSTER = re.compile(r"^Игра «(?P<game>.+?)» начинается!", re.M)
_ROSTER_BLOCK = re.compile(r"^Состав:\n(?P<lines>(?:№\d+ .+(?:\n|$))+)", re.M)
_ROSTER_LINE = re.compile(r"^№(?P<n>\d+) (?P<name>.+)$", re.M)
_DAY = re.compile(r"^День (?P<n>\d+)\..*(?:\n.*)?Голосуйте в этой теме", re.M)
_DAY_RESULT = re.compile(r"^Итоги дня (?P<n>\d+)", re.M)
_NIGHT_RESULT = re.compile(r"^Утро после ночи (?P<n>\d+)\.", re.M)
# Lines that announce deaths: every seat number in them died (a night's deaths and a group of
# modkills are one sentence with a list).
_DEATH_LIST = re.compile(
    r"^(?:Казн(?:ён|ена) |Казнь: |Этой ночью погиб|Жертва этой ночи|Исключены из игры).*$", re.M
)
_MODKILL = re.compile(r"^№(?P<n>\d+) .*исключ(?:ён|ена|ается) из игры", re.M)
_GAME_OVER = re.compile(r"^Игра «(?P<game>.+?)» окончена", re.M)
_DEADLINE = re.compile(r"до (?P<d>\d\d)\.(?P<m>\d\d) (?P<H>\d\d):(?P<M>\d\d)")
_ACCEPTED = ("Принято:", "Ваш голос", "Ваш досрочный голос")


@dataclass
class Button:
    row: int
    column: int
    label: str
    kind: str
    payload: Payload | None


def buttons_of(message: dict[str, Any]) -> list[Button]:
    """The buttons of a message (the page's keyboard view), with our payloads decoded."""
    keyboard = message.get("keyboard") or {}
    out = []
    for r, row in enumerate(keyboard.get("rows") or []):
        for c, button in enumerate(row):
            try:
                payload = decode(button.get("payload")) if button.get("payload") else None
            except BadPayload:
                payload = None
            out.append(
                Button(r, c, str(button.get("label") or ""), str(button.get("type")), payload)
            )
    return out


def deadline_of(text: str, tz: str, now: datetime) -> datetime | None:
    """The «до 30.11 21:15» deadline in a prompt (the game's time zone), or None."""
    match = _DEADLINE.search(text or "")
    if match is None:
        return None
    zone = ZoneInfo(tz)
    local_now = now.astimezone(zone)
    try:
        moment = local_now.replace(
            month=int(match["m"]),
            day=int(match["d"]),
            hour=int(match["H"]),
            minute=int(match["M"]),
            second=59,
            microsecond=0,
        )
    except ValueError:
        return None
    if moment < local_now - timedelta(days=180):  # «до 01.01» seen in late December
        moment = moment.replace(year=moment.year + 1)
    return moment


def is_confirmation(text: str) -> bool:
    return (text or "").startswith(_ACCEPTED)


@dataclass
class Me:
    """One player's own knowledge."""

    user_id: int
    name: str = ""
    game: str | None = None
    number: int | None = None
    role: str | None = None
    team: set[int] = field(default_factory=set)
    alive: bool = True
    checked: dict[int, bool] = field(default_factory=dict)

    @property
    def playing(self) -> bool:
        return self.number is not None and self.alive

    def read_private(self, text: str) -> None:
        """A message from the community to this player."""
        card = _CARD.search(text)
        if card:
            self.game = card["game"]
            self.number = int(card["n"])
            self.alive = True
            self.checked = {}
            role = _ROLE.search(text)
            self.role = ROLE_WORDS.get(role["role"]) if role else None
            team = _TEAM.search(text)
            self.team = {int(n) for n in _SEAT.findall(team["team"])} if team else set()
            if self.role == "mafia":
                self.team.add(self.number)
            return
        check = _CHECK.search(text)
        if check:
            self.checked[int(check["n"])] = check["result"] == "мафия"
        if text.startswith(_OUT) or _REPLACED.match(text):
            self.alive = False


@dataclass
class Table:
    """What the board says about the game (the same for every player)."""

    game: str | None = None
    topic_id: int | None = None
    seats: dict[int, str] = field(default_factory=dict)
    dead: set[int] = field(default_factory=set)
    day: int = 0
    closed_days: set[int] = field(default_factory=set)
    published_nights: set[int] = field(default_factory=set)
    over: bool = False

    def living(self) -> list[int]:
        return sorted(n for n in self.seats if n not in self.dead)

    def read_board(self, topic_id: int, text: str) -> None:
        """A comment of the community in the board (one post or several merged)."""
        roster = _ROSTER.search(text)
        if roster:
            self.game = roster["game"]
            self.topic_id = topic_id
            block = _ROSTER_BLOCK.search(text, roster.end())
            lines = block["lines"] if block else ""
            self.seats = {int(m["n"]): m["name"].strip() for m in _ROSTER_LINE.finditer(lines)}
            self.dead = set()
            self.day = 0
            self.closed_days = set()
            self.published_nights = set()
            self.over = False
        elif topic_id != self.topic_id:
            return
        for day in _DAY.finditer(text):
            self.day = max(self.day, int(day["n"]))
        self.closed_days.update(int(m["n"]) for m in _DAY_RESULT.finditer(text))
        self.published_nights.update(int(m["n"]) for m in _NIGHT_RESULT.finditer(text))
        for line in _DEATH_LIST.finditer(text):
            self.dead.update(int(n) for n in _SEAT.findall(line.group(0)))
        self.dead.update(int(m["n"]) for m in _MODKILL.finditer(text))
        over = _GAME_OVER.search(text)
        if over and over["game"] == self.game:
            self.over = True
