"""The game's vocabulary: roles, factions, items, night actions (RULES.md §1, §4)."""

from __future__ import annotations

from enum import StrEnum


class Faction(StrEnum):
    MAFIA = "mafia"
    TOWN = "town"
    NEUTRAL = "neutral"


class Role(StrEnum):
    MAFIA = "mafia"
    COMMISSAR = "commissar"
    DOCTOR = "doctor"
    CIVILIAN = "civilian"
    MANIAC = "maniac"

    @property
    def faction(self) -> Faction:
        if self is Role.MAFIA:
            return Faction.MAFIA
        if self is Role.MANIAC:
            return Faction.NEUTRAL
        return Faction.TOWN

    @property
    def title(self) -> str:  # type: ignore[override]  # the display name, not str.title()
        return ROLE_TITLES[self]


ROLE_TITLES: dict[Role, str] = {
    Role.MAFIA: "Мафия",
    Role.COMMISSAR: "Комиссар",
    Role.DOCTOR: "Доктор",
    Role.CIVILIAN: "Мирный житель",
    Role.MANIAC: "Маньяк",
}

#: Roles a role strike may guess (RULES.md §4).
GUESSABLE_ROLES: frozenset[Role] = frozenset({Role.COMMISSAR, Role.DOCTOR, Role.MANIAC})

#: Roles that must send a role action every night they are alive (RULES.md P1).
DUTY_ROLES: frozenset[Role] = frozenset({Role.COMMISSAR, Role.DOCTOR, Role.MANIAC})


class Item(StrEnum):
    CLOCK = "clock"
    RED_BUTTON = "red_button"
    BOOK = "book"

    @property
    def title(self) -> str:  # type: ignore[override]  # the display name, not str.title()
        return ITEM_TITLES[self]


ITEM_TITLES: dict[Item, str] = {
    Item.CLOCK: "Старинные часы",
    Item.RED_BUTTON: "Загадочная красная кнопка",
    Item.BOOK: "Книга из будущего",
}

#: The order items are drawn in; part of the verifiable deal algorithm.
ITEM_ORDER: tuple[Item, ...] = (Item.CLOCK, Item.RED_BUTTON, Item.BOOK)


class Act(StrEnum):
    """Everything a player can send at night."""

    MAFIA_SHOT = "mafia_shot"
    ROLE_STRIKE = "role_strike"
    CHECK = "check"
    COMMISSAR_SHOT = "commissar_shot"
    HEAL = "heal"
    MANIAC_SHOT = "maniac_shot"
    CLOCK = "clock"
    RED_BUTTON = "red_button"
    BOOK = "book"

    @property
    def slot(self) -> Slot:
        return ACT_SLOTS[self]

    @property
    def item(self) -> Item | None:
        return ITEM_ACTS.get(self)


class Slot(StrEnum):
    """What a submission replaces: a later valid submission in the same slot wins.

    ``ROLE`` is per actor (the commissar's check and shot replace each other); the others are
    per night: the mafia's shot and role strike are the team's, and each item has one use.
    """

    ROLE = "role"
    MAFIA_SHOT = "mafia_shot"
    ROLE_STRIKE = "role_strike"
    ITEM = "item"


ACT_SLOTS: dict[Act, Slot] = {
    Act.MAFIA_SHOT: Slot.MAFIA_SHOT,
    Act.ROLE_STRIKE: Slot.ROLE_STRIKE,
    Act.CHECK: Slot.ROLE,
    Act.COMMISSAR_SHOT: Slot.ROLE,
    Act.HEAL: Slot.ROLE,
    Act.MANIAC_SHOT: Slot.ROLE,
    Act.CLOCK: Slot.ITEM,
    Act.RED_BUTTON: Slot.ITEM,
    Act.BOOK: Slot.ITEM,
}

ITEM_ACTS: dict[Act, Item] = {
    Act.CLOCK: Item.CLOCK,
    Act.RED_BUTTON: Item.RED_BUTTON,
    Act.BOOK: Item.BOOK,
}

#: Role actions by role (RULES.md §4). Mafia acts are handled separately (team slots).
ROLE_ACTS: dict[Role, frozenset[Act]] = {
    Role.MAFIA: frozenset({Act.MAFIA_SHOT, Act.ROLE_STRIKE}),
    Role.COMMISSAR: frozenset({Act.CHECK, Act.COMMISSAR_SHOT}),
    Role.DOCTOR: frozenset({Act.HEAL}),
    Role.MANIAC: frozenset({Act.MANIAC_SHOT}),
    Role.CIVILIAN: frozenset(),
}

#: Acts whose target may be the actor (RULES.md §4 table).
SELF_TARGET_ALLOWED: frozenset[Act] = frozenset({Act.MAFIA_SHOT, Act.HEAL, Act.BOOK})

#: Step-4 kills (RULES.md §5).
KILL_ACTS: frozenset[Act] = frozenset(
    {Act.MAFIA_SHOT, Act.MANIAC_SHOT, Act.COMMISSAR_SHOT, Act.RED_BUTTON}
)

ACT_TITLES: dict[Act, str] = {
    Act.MAFIA_SHOT: "выстрел мафии",
    Act.ROLE_STRIKE: "ролевой удар",
    Act.CHECK: "проверка",
    Act.COMMISSAR_SHOT: "выстрел комиссара",
    Act.HEAL: "лечение",
    Act.MANIAC_SHOT: "выстрел маньяка",
    Act.CLOCK: "Старинные часы",
    Act.RED_BUTTON: "Загадочная красная кнопка",
    Act.BOOK: "Книга из будущего",
}


class EarlyClose(StrEnum):
    """When early votes close a day (RULES.md V6)."""

    MAJORITY = "majority"
    ALL = "all"


class Winner(StrEnum):
    TOWN = "town"
    MAFIA = "mafia"
    MANIAC = "maniac"
    DRAW = "draw"

    @property
    def title(self) -> str:  # type: ignore[override]  # the display name, not str.title()
        return WINNER_TITLES[self]


WINNER_TITLES: dict[Winner, str] = {
    Winner.TOWN: "Мирный город",
    Winner.MAFIA: "Мафия",
    Winner.MANIAC: "Маньяк",
    Winner.DRAW: "Ничья",
}
