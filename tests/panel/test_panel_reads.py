"""Every panel page a GM reads, read as a person would, with players named from the 49-name
table of tests/gameplay/test_messages.py (both sexes, VK silent on the sex, indeclinable,
double and Latin names), in every theme: the games list, «Мои игры», a game in sign-up, a
running one with its night's draft under review (the «Сейчас» tab, «Игроки», «Дисциплина»,
«Журнал» and its filter, every confirmation page), a finished one, and «Сообщества».

The pages are rendered from games played through the services once; for each name of the
table the seats are renamed (seat k takes name i + k) and every page is read again.
``test_every_panel_page_reads_right`` prints its counts: pages × names × themes, texts,
problems.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from gameplay import services, themes
from gameplay.messages import Person
from gameplay.models import (
    Game,
    GameEvent,
    ModerationFlag,
    Outbox,
    OutboxStatus,
    Seat,
)
from gameplay.services.spectators import spectator_chat_link
from gameplay.services.story import phase_story_set, theme_text_set
from tests.gameplay.test_messages import NAMES, SEED
from tests.panel.reading_support import panel_problems
from tests.panel.support import community_of, living, make_game, night_round, vote_round
from tests.panel.test_access import fill, game_patterns

pytestmark = pytest.mark.django_db

ACCUSATIVES = {name: accs for name, _, accs in NAMES}
GM = "gm:ведущий"
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
    services.strike_give(game_id=game.pk, seat=first.number, by=GM, reason="флуд")
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
        p for p in game_patterns() if p.name.startswith("panel_") and "download" not in p.name
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
    for game in games.values():
        Game.objects.filter(pk=game.pk).update(theme=theme)
        people = []
        seats = Seat.objects.filter(game=game).order_by("status", "number", "pk")
        for k, seat in enumerate(seats):
            name, sex, _ = NAMES[(offset + k) % len(NAMES)]
            Seat.objects.filter(pk=seat.pk).update(name=name, sex=sex)
            # a seat without a number (sign-up, a reserve) is named, never numbered: №0
            people.append(Person(seat.number or 0, name, sex))
        by_number = {p.number: p.name for p in people if p.number}
        for event in GameEvent.objects.filter(game=game, data__has_key="name"):
            number = event.data.get("seat")
            if number in by_number:
                event.data["name"] = by_number[number]
                event.save(update_fields=["data"])
        out[game.pk] = people
    return out


def test_every_panel_page_reads_right(
    gm: Any, gm_client: Client, capsys: pytest.CaptureFixture[str]
) -> None:
    games = played(gm)
    urls = [u for u in pages(gm, games) if gm_client.get(u).status_code == 200]  # not POST-only
    by_url = {u: g for g in games.values() for u in urls if f"/{g.pk}/" in u}
    people = rename(games, 0, themes.DEFAULT)
    everyone = {p.name for ps in people.values() for p in ps}
    # pages that name no player are read once per theme, the others once per name and theme
    named = {u for u in urls if any(n in gm_client.get(u).content.decode() for n in everyone)}
    bad: list[str] = []
    seen: set[str] = set()
    texts = 0
    for theme in themes.THEMES:
        for offset in range(len(NAMES)):
            people = rename(games, offset, theme)
            everyone = [p for ps in people.values() for p in ps]
            for url in urls if offset == 0 else sorted(named):
                response = gm_client.get(url)
                assert response.status_code == 200, url
                game = by_url.get(url)
                persons = people[game.pk] if game else everyone
                text, rows = visible(response.content.decode())
                texts += 1
                seen.update(m for m in MARKS if m in text)
                for problem in panel_problems(text, persons, ACCUSATIVES, rows=rows):
                    for p in persons:  # one line per kind of problem, whatever the name
                        problem = problem.replace(p.name, "<имя>")
                    bad.append(f"{url} [{NAMES[offset][0]}]: {problem}")
    with capsys.disabled():
        print(
            f"\npanel pages: {len(urls)} ({len(named)} naming players) × names: {len(NAMES)}"
            f" × themes: {len(themes.THEMES)}; {texts} texts read, {len(bad)} problems"
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

    ok = [
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
    planted = [
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
