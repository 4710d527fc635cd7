"""Every panel page a GM reads, read as a person would, with players named from the 49-name
table of tests/gameplay/test_messages.py (both sexes, VK silent on the sex, indeclinable,
double and Latin names), in every theme: the games list, «Мои игры», a game in sign-up, a
running one with its night's draft under review (the «Сейчас» tab, «Игроки», «Дисциплина»,
«Журнал» and its filter, every confirmation page), a finished one, and «Сообщества».

The pages are rendered from games played through the services once and each is read in each
theme. The constructions that decline a player's name or agree with it («Штраф №3 Михаилу
Мальцеву?», «№8 проверила», a row's «жива», «не голосовала») are then read again with the
seats renamed (seat k takes name offset + k), in the fewest renders that put each of the 49
names in each construction (in a theme that shows it: a construction both themes show alike
is one). ``test_every_panel_page_reads_right`` prints its counts: pages × themes, names ×
constructions, texts, problems.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from gameplay import grammar, services, themes
from gameplay.messages import Person
from gameplay.models import (
    Actor,
    Game,
    GameEvent,
    ModerationFlag,
    Outbox,
    OutboxStatus,
    Seat,
)
from gameplay.services.spectators import spectator_chat_link
from gameplay.services.story import phase_story_set, theme_text_set
from tests.gameplay.factories import number_of
from tests.gameplay.test_messages import NAMES, SEED
from tests.panel.reading_support import gender_of, panel_problems
from tests.panel.support import community_of, living, make_game, night_round, vote_round
from tests.panel.test_access import fill, game_patterns

pytestmark = pytest.mark.django_db

ACCUSATIVES = {name: accs for name, _, accs in NAMES}
GM = Actor.gm("ведущий")
CASES = ("gent", "datv", "accs", "ablt", "loct")
#: VK's own terms a GM types in the panel: a page's address (vk.com/id123), a user's id.
VK_TERMS = re.compile(
    r"\b(?:https?://)?vk\.(?:com|me)/\S*|\bid\b|\bclub\d*|\btopic-[\d_]*"
    r"|\b(?:API|Long Poll|Callback|access_token|groups|offline|VK ID|[Ss]tandalone)\b|ID_ПРИЛОЖЕНИЯ"
)
#: What the pages must show at least once with some name: the checks are not vacuous.
MARKS = ["проверил", "проверила", "не голосовал", "не голосовала", "Штраф №", "Модкилл №"]


def visible(html: str) -> tuple[str, list[str]]:
    """A page's text as a GM reads it (form values are the GM's own, left out), and its table
    rows and list items, each as one line."""
    html = re.sub(r"<(script|style|svg|textarea|code|pre|kbd)\b.*?</\1>", " ", html, flags=re.S)
    html = re.sub(r"<(input|select)\b[^>]*>", " ", html)
    main = re.search(r'<div id="content".*', html, flags=re.S)
    html = main.group(0) if main else html

    def text(part: str) -> str:
        part = re.sub(
            r"<br\s*/?>|</(p|li|tr|div|h\d|td|th|dt|dd|label|summary|button)>", "\n", part
        )
        part = re.sub(r"<[^>]+>", " ", part)
        from html import unescape

        return "\n".join(" ".join(line.split()) for line in unescape(part).splitlines()).strip()

    rows = [text(r) for r in re.findall(r"<(?:tr|li)\b.*?</(?:tr|li)>", html, flags=re.S)]
    page = VK_TERMS.sub(" ", re.sub(r"\n{2,}", "\n", text(html)))
    return page, [VK_TERMS.sub(" ", r) for r in rows]


def played(gm: Any) -> dict[str, Game]:
    """A game in sign-up, one running with its first night's draft under review (votes
    missed, a GM's strike, a flag, a failed delivery, the spectators' chat), a finished one."""
    signup = make_game(
        gm, players=5, name="Набор", deal=False, start=False, vk_base=960_000, seed=SEED
    )
    game = make_game(gm, players=10, auto_publish=False, seed=SEED)
    vote_round(game, skip=2)
    first = living(game)[0]
    services.strike_give(game_id=game.pk, seat=number_of(first), by=GM, reason="флуд")
    services.day_close(game_id=game.pk, by=GM)
    night_round(game)
    services.night_close(game_id=game.pk, by=GM)
    spectator_chat_link(game_id=game.pk, by=GM, chat=7)
    phase_story_set(game_id=game.pk, by=GM, story="Город не спал.")
    theme_text_set(game_id=game.pk, by=GM, slot="day_story", text="День {{ number }}.")
    ModerationFlag.objects.create(game=game, seat=first, kind="profanity", text="…")
    Outbox.objects.filter(game=game, kind="roster").update(status=OutboxStatus.FAILED)
    over = make_game(gm, players=7, name="Сыграна", vk_base=970_000, seed=SEED)
    vote_round(over)
    services.day_close(game_id=over.pk, by=GM)
    services.game_end(game_id=over.pk, by=GM, reason="время вышло")
    day = make_game(gm, players=7, name="День", vk_base=980_000, seed=SEED)
    make_game(gm, players=5, name="Ещё набор", deal=False, start=False, vk_base=990_000)
    vote_round(day, skip=3)
    GameEvent.objects.filter(actor="test").update(actor=GM)  # the tests' games' creator
    return {"signup": signup, "running": game, "over": over, "day": day}


def pages(gm: Any, games: dict[str, Game]) -> list[str]:
    home = community_of(555, owner=gm, name="Мафия на Неве", connected_at=timezone.now())
    out = [reverse("admin:index"), reverse("admin:gameplay_game_changelist")]
    out += [reverse("panel:communities"), reverse("panel:community_connect")]
    out += [
        reverse(f"panel:{name}", kwargs={"vk_id": home.vk_id})
        for name in ("community", "community_history", "community_disconnect")
    ]
    patterns = [
        p
        for p in game_patterns()
        if p.name and p.name.startswith("panel_") and "download" not in p.name
    ]
    running = games["running"]
    out += [fill(p, running) for p in patterns]
    kinds = GameEvent.objects.filter(game=running).values_list("kind", flat=True).distinct()
    log = reverse("admin:panel_log", kwargs={"game_id": running.pk})
    out += [f"{log}?kind={k}" for k in sorted(set(kinds))]
    for key in ("signup", "over", "day"):
        out += [
            reverse(f"admin:{p.name}", kwargs={"game_id": games[key].pk})
            for p in patterns
            if re.findall(r"<(?:\w+:)?(\w+)>", str(p.pattern)) == ["game_id"]
        ]
    return out


def rename(games: dict[str, Game], offset: int, theme: str) -> dict[int, list[Person]]:
    """Seat k of each game takes name ``offset + k`` of the table (and its sex); the log's
    stored names follow. Returns each game's people."""
    out = {}
    ids = [g.pk for g in games.values()]
    Game.objects.filter(pk__in=ids).update(theme=theme)
    all_seats = list(Seat.objects.filter(game__in=ids).order_by("status", "number", "pk"))
    all_events = list(GameEvent.objects.filter(game__in=ids, data__has_key="name"))
    for game in games.values():
        people = []
        seats = [s for s in all_seats if s.game_id == game.pk]
        for k, seat in enumerate(seats):
            seat.name, seat.sex, _ = NAMES[(offset + k) % len(NAMES)]
            # a seat without a number (sign-up, a reserve) is named, never numbered: №0
            people.append(Person(seat.number or 0, seat.name, seat.sex))
        by_number = {p.number: p.name for p in people if p.number}
        for event in all_events:
            number = event.data.get("seat")
            if event.game_id == game.pk and number in by_number:
                event.data["name"] = by_number[number]
        out[game.pk] = people
    _save(all_seats, ["name", "sex"])
    _save(all_events, ["data"])
    return out


def _save(rows: list[Any], fields: list[str]) -> None:
    """``bulk_update`` as one UPDATE a row run with ``executemany`` (50 renames: a second less
    than the ORM's CASE per row and field)."""
    if not rows:
        return
    meta = rows[0]._meta
    columns = [meta.get_field(f) for f in fields]
    sets = ", ".join(f"{connection.ops.quote_name(c.column)} = %s" for c in columns)
    params = [
        [c.get_db_prep_save(getattr(row, c.attname), connection) for c in columns] + [row.pk]
        for row in rows
    ]
    with connection.cursor() as cursor:
        cursor.executemany(
            f"UPDATE {connection.ops.quote_name(meta.db_table)} SET {sets} WHERE id = %s", params
        )


def constructions(
    text: str, rows: list[str], person: Person, persons: list[Person]
) -> frozenset[str]:
    """The constructions of a page that decline ``person``'s name or agree with it: each line
    of its text naming the player (by name or seat number) with every player's name as «<имя>»
    (in another case «<имя в падеже>»), a number as «N», a word agreeing in gender in its
    dictionary form («<проверить>» for «проверил» and «проверила»); and each table row or list
    item about the player alone, as the agreeing words it has («строка: не голосовать,
    живой») — whatever role, item or seat the row shows. The same construction rendered for
    another name or seat reads the same."""
    out = set()
    forms = sorted(_forms(persons).items(), key=lambda f: -len(f[0]))
    for line in text.split("\n"):
        if person.name not in line and not (
            person.number and re.search(rf"№{person.number}(?!\d)", line)
        ):
            continue
        for form, mark in forms:
            line = line.replace(form, mark)
        words = re.split(r"([а-яёА-ЯЁ]+)", re.sub(r"\d+", "N", line))
        agreeing: list[bool] | set[str] = [gender_of(w) is not None for w in words]
        line = "".join(f"<{_lemma(w)}>" if a else w for w, a in zip(words, agreeing, strict=True))
        if any(agreeing) or "<имя в падеже>" in line:
            out.add(line)
    for row in rows:
        if person.name not in row or any(p.name in row for p in persons if p.name != person.name):
            continue
        words = re.findall(r"[а-яё]+", row.replace(person.name, " ").lower())
        agreeing = {
            ("не " if before == "не" else "") + _lemma(word)
            for before, word in zip(["", *words], words, strict=False)
            if gender_of(word) is not None
        }
        if agreeing:
            out.add("строка: " + ", ".join(sorted(agreeing)))
    return frozenset(out)


@cache
def _lemma(word: str) -> str:
    """A word agreeing in gender, in its dictionary form: the same for «проверил» and
    «проверила»."""
    return grammar.morph().parse(word)[0].normal_form


def _forms(persons: list[Person]) -> dict[str, str]:
    """Each player's name in every case → its mark: «<имя>» or «<имя в падеже>»."""
    out = {}
    for p in persons:
        for form in (ACCUSATIVES[p.name], *_declined(p.name, p.sex)):
            out[form] = "<имя в падеже>"
    out.update({p.name: "<имя>" for p in persons})
    return out


@cache
def _declined(name: str, sex: int) -> tuple[str, ...]:
    return tuple(grammar.decline_name(name, case, sex) for case in CASES)


def plan(cover: dict[Any, set[Any]], *, done: set[Any]) -> set[Any]:
    """The fewest renders beside those ``done``, chosen greedily, that together with them give
    every (construction, name) pair any render of ``cover`` would."""
    wanted = set().union(*cover.values()) if cover else set()
    for key in done:
        wanted -= cover[key]
    chosen: set[Any] = set()
    while wanted:
        best = max(cover, key=lambda k: len(cover[k] & wanted))
        chosen.add(best)
        wanted -= cover[best]
    return chosen


@pytest.mark.slow  # every page in every theme, and again per name: `make test` runs it
def test_every_panel_page_reads_right(
    gm: Any, gm_client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every page is read once per theme; the pages that name players are read again with the
    seats renamed (seat k takes name offset + k), as often as it takes for each of the 49 names
    to appear in each construction a page shows about a player (a row, «Штраф №N …», «№N
    проверила», «не голосовала», …)."""
    games = played(gm)
    urls = pages(gm, games)
    by_url = {u: g for g in games.values() for u in urls if f"/{g.pk}/" in u}
    bad: list[str] = []
    seen: set[str] = set()
    texts: list[str] = []
    pages_read: set[str] = set()
    named: set[str] = set()

    def read(url: str, people: dict[int, list[Person]], offset: int) -> tuple[str, list[str]]:
        response = gm_client.get(url)
        if response.status_code != 200 and url not in pages_read:
            return "", []  # an action's address (POST only, or a redirect): no page to read
        assert response.status_code == 200, url
        pages_read.add(url)
        game = by_url.get(url)
        persons = people[game.pk] if game else [p for ps in people.values() for p in ps]
        text, rows = visible(response.content.decode())
        texts.append(url)
        seen.update(m for m in MARKS if m in text)
        for problem in panel_problems(text, persons, ACCUSATIVES, rows=rows):
            for p in persons:  # one line per kind of problem, whatever the name
                problem = problem.replace(p.name, "<имя>")
            bad.append(f"{url} [{NAMES[offset][0]}]: {problem}")
        return text, rows

    # (theme, page, offset) → the (construction, name) pairs that render shows
    cover: dict[tuple[str, str, int], set[tuple[str, int]]] = {}
    for theme in themes.THEMES:
        people = rename(games, 0, theme)
        for url in list(urls):
            text, rows = read(url, people, 0)
            if not text:
                urls.remove(url)
                continue
            game = by_url.get(url)
            if game is None:
                continue
            persons = people[game.pk]
            shapes = [constructions(text, rows, p, persons) for p in persons]
            if not any(shapes):
                continue
            named.add(url)
            for offset in range(len(NAMES)):
                cover[theme, url, offset] = {
                    (shape, (offset + k) % len(NAMES))
                    for k, seat_shapes in enumerate(shapes)
                    for shape in seat_shapes
                }
    everything = set().union(*cover.values())
    lines = {shape for shape, _ in everything}
    chosen = plan(cover, done={key for key in cover if key[2] == 0})
    for theme, offset in sorted({(t, o) for t, _, o in chosen}):
        people = rename(games, offset, theme)
        for url in sorted(u for t, u, o in chosen if (t, o) == (theme, offset)):
            read(url, people, offset)
    with capsys.disabled():
        print(
            f"\npanel pages: {len(urls)} ({len(named)} declining or agreeing a name) × themes:"
            f" {len(themes.THEMES)}; each of {len(NAMES)} names in each of {len(lines)}"
            f" constructions declining or agreeing it ({len(everything)} pairs, each in a theme"
            f" that shows it);"
            f" {len(texts)} texts read, {len(bad)} problems"
        )
    kinds = sorted({re.sub(r"/\d+/", "/N/", re.sub(r" \[.*?\]", "", b)) for b in bad})
    assert not bad, "\n".join(kinds[:150])
    assert seen == set(MARKS), set(MARKS) - seen


def test_the_panel_reader_catches_each_mistake() -> None:
    """Each mistake seen in the panel, planted in a text, is caught; its fix is not."""
    zoya, vera, nikita = (
        Person(8, "Зоя Власова", 1),
        Person(5, "Вера Исаева", 1),
        Person(1, "Никита Ковальский", 2),
    )
    misha, alyona, nick = (
        Person(3, "Михаил Мальцев", 2),
        Person(4, "Алёна Климова", 1),
        Person(6, "Nick", 0),
    )
    ps = [zoya, vera, nikita, misha, alyona, nick, Person(21, "Иван Петров", 2)]
    accs = {
        "Зоя Власова": "Зою Власову",
        "Вера Исаева": "Веру Исаеву",
        "Никита Ковальский": "Никиту Ковальского",
        "Михаил Мальцев": "Михаила Мальцева",
        "Алёна Климова": "Алёну Климову",
        "Nick": "Nick",
        "Иван Петров": "Ивана Петрова",
    }

    def caught(text: str, **kw: Any) -> bool:
        return bool(panel_problems(text, ps, accs, **kw))

    ok: list[tuple[str, dict[str, Any]]] = [
        ("Проверки: №8 проверила №21: не мафия", {}),
        ("№5 проверила №6", {}),
        ("", {"rows": ["8 Зоя Власова жива не голосовала"]}),
        ("5 игр. 3 игры. 1 игра.", {}),
        ("По присланным действиям погибает: №1 Никита Ковальский.", {}),
        ("Штраф №3 Михаилу Мальцеву?", {}),
        ("Модкилл №4 Алёне Климовой?", {}),
        ("№3 Михаил Мальцев: 1-й штраф. Причина: флуд", {"sentence": True}),
        ("Вам штраф: решение ведущего (флуд).", {}),
        ("Мафия не стреляла. Штраф за это можно дать вручную.", {"sentence": True}),
        ("Текст не сохранён. Строка 2: неизвестная переменная «день».", {"sentence": True}),
        ("Абзац ведущего", {}),
        ("VK отказал на шаге «проверка ключа»: слишком много запросов подряд.", {}),
        ("Причина: обязательное поле.", {}),
    ]
    for text, kw in ok:
        assert not caught(text, **kw), (text, panel_problems(text, ps, accs, **kw))
    planted: list[tuple[str, dict[str, Any]]] = [
        ("Проверки: №8 проверил №21: не мафия", {}),
        ("№5 проверил №6", {}),
        ("", {"rows": ["8 Зоя Власова жива не голосовал"]}),
        ("5 игры", {}),
        ("По присланным действиям погибают: №1 Никита Ковальский.", {}),
        ("Штраф №3 Михаил Мальцев?", {}),
        ("Модкилл №4 Алёна Климова?", {}),
        ("Штраф №3 Михаил Мальцев (1-й).", {}),
        ("Вам штраф: штраф ведущего: флуд.", {}),
        ("мафия не стреляла — штраф можно дать вручную", {"sentence": True}),
        ("Текст не сохранён. неизвестная переменная «день».", {}),
        ("Журнал: story_set", {}),
        ("'static' is not a registered tag library.", {}),
        ("integer modulo by zero", {}),
        ("Не найден шаблон admin/base.html", {}),
        ("VK отказал на шаге «включение Long Poll» (ошибка 6).", {}),
        ("Сообщество настроено на сервере (VK_GROUP_ID).", {}),
        ("Исправить черовик\nОбязательное поле.", {}),
    ]
    for text, kw in planted:
        assert caught(text, **kw), text
