"""The GM's voice in the public posts: the story paragraph of a phase's result post, the exact
post as players will see it, and the game's theme texts (edited in the panel with a preview
rendered from the game itself).

A theme text is written in the GM language (``gameplay.gmtext``) and checked, at save and in
the preview, against the worst case of its slot for the game's real number of seats: every
message that shows the slot, every list in it as long as such a game makes it
(:func:`worst_cases`), within the render's budget and the slot's length.

A story paragraph and a theme text only ever fill the story slot of a post: the facts (who
died, who was executed and their role, the tally, strikes) are rendered by the post's own
template around them and cannot be removed (``gameplay.themes``).
"""

from __future__ import annotations

from typing import Any, cast

from django.db import transaction

from gameplay import gmtext, gmtext_data, themes
from gameplay.messages import MessageError, Person, render, when
from gameplay.models import Actor, EventKind, Game, Phase, PhaseKind, PhaseStatus, Seat
from gameplay.refusals import (
    NoSuchThemeText,
    PhaseChanged,
    StoryNotNow,
    StoryTooLong,
    ThemeTextBroken,
    ThemeTextTooLong,
)
from gameplay.rules import DayResult, Item, NightResolution, Role, close_day, dawn
from gameplay.selectors.vote_count import count_preview, count_worst_cases

from .common import current_phase, lock_game, log_event, players, table_of
from .day import day_input, day_result_text
from .game_over import counts
from .publication import night_result_text

STORY_MAX = 2000
THEME_TEXT_MAX = gmtext.SOURCE_MAX


# --- the post of the current phase ------------------------------------------------------------


#: What a page has read already: the game's players and what closing the open day now does.
Read = tuple[list[Seat], DayResult | None]


def post_preview(
    *, game: Game, phase: Phase | None = None, story: str | None = None, read: Read | None = None
) -> str | None:
    """The exact post players will see when the current phase's result is published: a night
    under review (its draft, as it stands now) or an open day (closed now). None otherwise."""
    phase = phase or current_phase(game)
    if phase is None:
        return None
    seats, day = read or (players(game), None)
    story = phase.story if story is None else story
    if phase.kind == PhaseKind.NIGHT and phase.status == PhaseStatus.REVIEW:
        return _night_post(game, phase, seats, story)
    if phase.kind == PhaseKind.DAY and phase.status == PhaseStatus.OPEN:
        return _day_post(game, phase, seats, story, day)
    return None


def _night_post(game: Game, phase: Phase, seats: list[Seat], story: str) -> str:
    assert phase.result is not None  # a night under review has its draft
    res = dawn(table_of(seats), NightResolution.from_dict(phase.result["draft"]))
    by_number = {cast(int, s.number): s for s in seats}  # the players' seats
    died = [by_number[n] for n in res.deaths if by_number[n].alive]
    penalised = [
        by_number[s.seat] for s in res.strikes if not s.modkill and by_number[s.seat].alive
    ]
    return night_result_text(
        game=game,
        number=phase.number,
        died=died,
        modkilled=[by_number[n] for n in res.modkilled],
        penalised=penalised,
        story=story,
    )


def _day_post(
    game: Game, phase: Phase, seats: list[Seat], story: str, day: DayResult | None
) -> str:
    result = day or close_day(table_of(seats), day_input(game=game, phase=phase))
    return day_result_text(
        game=game,
        number=phase.number,
        result=result,
        by_number={cast(int, s.number): s for s in seats},
        early=False,
        story=story,
    )


@transaction.atomic
def phase_story_set(*, game_id: int, by: Actor, story: str, phase_id: int | None = None) -> Phase:
    """The GM's story paragraph for the current phase's result post (an open day or a night
    under review); an empty one leaves the theme's text. Logged with its text."""
    game = lock_game(game_id=game_id)
    phase = current_phase(game)
    if phase is None or (phase_id is not None and phase.pk != phase_id):
        raise PhaseChanged()
    open_day = phase.kind == PhaseKind.DAY and phase.status == PhaseStatus.OPEN
    review = phase.kind == PhaseKind.NIGHT and phase.status == PhaseStatus.REVIEW
    if not (open_day or review):
        raise StoryNotNow()
    story = (story or "").replace("\r\n", "\n").strip()
    if len(story) > STORY_MAX:
        raise StoryTooLong(limit=STORY_MAX)
    phase.story = story
    phase.save(update_fields=["story"])
    log_event(game, EventKind.STORY_SET, by=by, phase=phase, story=story)
    return phase


# --- theme texts ------------------------------------------------------------------------------


def _people(game: Game) -> list[Person]:
    seats = [s for s in players(game) if s.number is not None]
    if len(seats) >= 3:
        return [Person.of(s) for s in seats]
    return [Person(1, "Анна Петрова", 1), Person(2, "Иван Смирнов", 2), Person(3, "Саша Белых", 0)]


#: The game as the previews read it: its people (``_people``) and its current phase.
SlotReads = tuple[list[Person], Phase | None]


def slot_context(
    *, game: Game, slot: str, reads: SlotReads | None = None
) -> tuple[str, dict[str, Any]]:
    """The message that shows ``slot``, and its context made from the game as it is (``reads``:
    read once by a caller that shows several slots)."""
    ps, phase = reads or (_people(game), current_phase(game))
    number = phase.number if phase is not None else 1
    deadline = when(phase.deadline if phase is not None else None, game.time_zone)
    if slot == "welcome":
        return "board/roster", {
            "game": game.name,
            "seats": ps,
            "commitment": game.commitment or "—",
        }
    if slot == "day_story":
        return "board/day_opened", {"number": number, "deadline": deadline, "early": number >= 3}
    if slot == "night_story":
        return "board/night_opened", {"number": number, "deadline": deadline}
    if slot == "morning":
        return "board/night_result", {
            "number": number,
            "story": "",
            "modkilled": [],
            "penalties": [],
            "deaths": [{"person": ps[0], "role": ""}],
        }
    if slot == "execution":
        return "board/day_result", {
            "number": number,
            "early": False,
            "story": "",
            "modkilled": [],
            "penalties": [],
            "tally": [{"person": ps[0], "votes": 5}, {"person": ps[1], "votes": 2}],
            "executed": ps[0],
            "executed_role": Role.MAFIA.value,
        }
    if slot == "vote_count":
        return "board/vote_count", count_preview(game=game, people=ps)
    if slot == "end":
        return "board/game_over", {
            "game": game.name,
            "winner": "Мирный город",
            "winner_key": "town",
            "seats": [{"person": p, "role": Role.CIVILIAN.value, "item": ""} for p in ps[:3]],
            "night_log": [],
            "overrides": [],
            "seed": "(раскрывается в конце игры)",  # never the real seed before the end
            "commitment": game.commitment or "—",
            "counts": counts(game=game),
        }
    if slot.startswith(("role_", "item_")):
        return "player/role_card", _card_context(game, ps, slot)
    raise NoSuchThemeText()


def _card_context(game: Game, ps: list[Person], slot: str) -> dict[str, Any]:
    """A role card showing a role's slot (``role_<role>``) or an item's (``item_<item>``)."""
    role = slot[5:] if slot.startswith("role_") else Role.CIVILIAN.value
    return {
        "game": game.name,
        "number": ps[0].number,
        "role": role,
        "item": slot[5:] if slot.startswith("item_") else "",
        "commitment": "—",
        "mafia": ps[:2] if slot == "role_mafia" else [],
    }


# --- the worst case of a slot ----------------------------------------------------------------

_FIRST = ("Александра", "Вячеслав", "Анастасия", "Константин", "Маргарита", "Святослав")
_LAST = ("Константинопольская", "Преображенский", "Воскресенская", "Многогрешный")
_HASH = "f" * 64
#: The longest a deadline reads («31.12 23:59 МСК+10:30»).
_DEADLINE = "31.12 23:59 МСК+10:30"


def seat_count(*, game: Game) -> int:
    """The seats a game has, or will have when its composition is dealt (at least 3)."""
    return max(len(players(game)), sum(c["n"] for c in counts(game=game)), 3)


def _worst_people(n: int) -> list[Person]:
    """``n`` players, each with a name of their own and as long as VK names run."""
    out = []
    for i in range(n):
        first, last = _FIRST[i % len(_FIRST)], _LAST[(i // len(_FIRST)) % len(_LAST)]
        female = first.endswith("а") or first.endswith("я")
        out.append(Person(i + 1, f"{first} {last}", 1 if female else 2))
    return out


def worst_cases(
    *, slot: str, seats: int, game: str = "", commitment: str = _HASH
) -> list[tuple[str, dict[str, Any]]]:
    """Every message that shows ``slot``, with the context a game of ``seats`` players can
    give it at its largest: every list as long as it gets (a night log of four actions a seat),
    numbers at their widest, names at their longest. Pure: no game needed."""
    ps = _worst_people(seats)
    game = game or "И" * 200
    n = seats
    deaths = [{"person": p, "role": Role.MAFIA.value} for p in ps]
    if slot == "welcome":
        rounds = [(i, _HASH, "e" * 64) for i in range(1, 6)]
        return [
            (
                "board/roster",
                {"game": game, "seats": ps, "commitment": commitment, "rounds": rounds},
            )
        ]
    if slot in ("day_story", "night_story"):
        name = "board/day_opened" if slot == "day_story" else "board/night_opened"
        return [(name, {"number": n, "deadline": _DEADLINE, "early": True})]
    if slot == "morning":
        penalties = ps
        ctx = {"number": n, "story": "", "deaths": deaths, "modkilled": deaths}
        return [("board/night_result", {**ctx, "penalties": penalties})]
    if slot == "execution":
        tally = [{"person": p, "votes": n} for p in ps]
        return [
            (
                "board/day_result",
                {
                    "number": n,
                    "early": True,
                    "story": "",
                    "modkilled": deaths,
                    "penalties": tally,
                    "tally": tally,
                    "executed": ps[0],
                    "executed_role": Role.MAFIA.value,
                },
            )
        ]
    if slot == "vote_count":
        return [("board/vote_count", ctx) for ctx in count_worst_cases(ps, _DEADLINE)]
    if slot == "end":
        return [("board/game_over", _worst_end(ps, game, commitment))]
    if slot.startswith("role_"):
        return [("player/role_card", _worst_card(ps, game, commitment, slot[5:], Item.BOOK.value))]
    if slot.startswith("item_"):
        item = slot[5:]
        prompt = {"number": n, "item": item, "deadline": _DEADLINE, "act": item}
        return [
            ("player/role_card", _worst_card(ps, game, commitment, Role.MAFIA.value, item)),
            ("player/act_prompt", {**prompt, "no_self": True, "healed": ps[0]}),
        ]
    raise NoSuchThemeText()


def _worst_card(
    ps: list[Person], game: str, commitment: str, role: str, item: str
) -> dict[str, Any]:
    mafia = ps if role == Role.MAFIA.value else []
    return {
        "game": game,
        "number": len(ps),
        "role": role,
        "item": item,
        "commitment": commitment,
        "mafia": mafia,
    }


def _worst_end(ps: list[Person], game: str, commitment: str) -> dict[str, Any]:
    n = len(ps)
    log = [
        {
            "number": n,
            "actor": ps[i % n],
            "target": ps[(i + 1) % n],
            "act": "mafia_shot",
            "item": False,
            "title": "выстрел мафии",
            "guess": Role.COMMISSAR.value,
        }
        for i in range(4 * n)
    ]
    decisions = [
        {"kind": "modkill", "person": p, "count": n, "reason": "причина " * 20} for p in ps
    ]
    return {
        "game": game,
        "winner": "Мирный город",
        "winner_key": "town",
        "seats": [{"person": p, "role": Role.MAFIA.value, "item": Item.BOOK.value} for p in ps],
        "night_log": log,
        "overrides": decisions,
        "seed": "e" * 64,
        "commitment": commitment,
        "counts": [{"role": r.value, "n": n} for r in Role],
        "rounds": [(i, _HASH, "e" * 64) for i in range(1, 6)],
        "roster_ids": ",".join(str(2_000_000_000 + i) for i in range(n)),
        "from_seed": True,
        "players_url": "https://example.org/players/",
    }


def theme_text_check(*, slot: str, text: str, seats: int, game: str = "") -> None:
    """Refuse (:class:`MessageError`, with the line) a text of ``slot`` that does not compile
    in the GM language, or does not render in the worst case of a game of ``seats`` players:
    over the budget of steps, longer than the slot may be, or naming what the message lacks."""
    compiled = gmtext.compile_text(text)
    for _name, ctx in worst_cases(slot=slot, seats=seats, game=game):
        try:
            gmtext.render(
                compiled,
                gmtext_data.data_of(ctx),
                output=themes.output_limit(slot),
                steps=themes.step_limit(slot),
            )
        except gmtext.TextRefusal as e:
            if e.code not in gmtext.BUDGET_CODES:
                raise
            why = render("gm/text_for_seats", seats=seats, why=e.reason)
            raise gmtext.TextRefusal(e.code, why, e.line) from None


def theme_preview(
    *, game: Game, slot: str, text: str, theme: str | None = None, reads: SlotReads | None = None
) -> str:
    """The post that shows ``slot`` with ``text`` in it, rendered from the game; raises
    :class:`MessageError` (with the line and the reason) for a text that does not render, or
    would not in the worst case of the game's real number of seats (:func:`theme_text_check`)."""
    if slot not in themes.SLOTS:
        raise MessageError("нет такого текста темы")
    name, ctx = slot_context(game=game, slot=slot, reads=reads)
    current = themes.of(game)
    key = theme if theme in themes.THEMES else current.key
    if text.strip():
        theme_text_check(slot=slot, text=text, seats=seat_count(game=game), game=game.name)
        # and in this game's post as it is now, with no fallback to hide a failure
        limit = themes.output_limit(slot)
        gmtext.render(
            gmtext.compile_text(text),
            gmtext_data.data_of(ctx),
            output=limit,
            steps=themes.step_limit(slot),
        )
    return render(name, **{**ctx, "theme": themes.Theme(key, {**current.texts, slot: text})})


@transaction.atomic
def theme_text_set(*, game_id: int, by: Actor, slot: str, text: str) -> Game:
    """The game's own version of one theme text (empty: back to the theme's). A text that
    does not render is refused with its line and the reason, and nothing changes."""
    game = lock_game(game_id=game_id)
    if slot not in themes.SLOTS:
        raise NoSuchThemeText()
    text = (text or "").replace("\r\n", "\n").strip()
    if len(text) > THEME_TEXT_MAX:
        raise ThemeTextTooLong(limit=THEME_TEXT_MAX)
    if text == themes.source(game.theme, slot).strip():
        text = ""  # the theme's own text: no override needed
    try:
        theme_preview(game=game, slot=slot, text=text)
    except MessageError as e:
        where = f"Строка {e.line}: " if e.line else ""
        raise ThemeTextBroken(where=where, why=e.reason) from None
    texts = dict(game.theme_texts or {})
    if text:
        texts[slot] = text
    else:
        texts.pop(slot, None)
    game.theme_texts = texts
    game.save(update_fields=["theme_texts"])
    log_event(game, EventKind.THEME_TEXT_SET, by=by, slot=slot, text=text)
    return game


def slot_sources(*, game: Game) -> list[dict[str, Any]]:
    """Every theme text of the game: slot, title, the text in force, whether the game changed
    it, and its preview."""
    theme, reads = themes.of(game), (_people(game), current_phase(game))
    out = []
    for slot, title in themes.SLOTS.items():
        text = theme.source(slot)
        try:
            own = theme.texts.get(slot, "")
            preview = theme_preview(game=game, slot=slot, text=own, reads=reads)
        except MessageError as e:
            preview = f"Ошибка: {e}"
        row = {"slot": slot, "title": title, "text": text, "own": slot in theme.texts}
        out.append({**row, "preview": preview})
    return out
