"""The panel's own sentences live in templates (panel/flash.py): every flash and confirmation
name the views use has its file, every file is used, each uses only what its callers pass, and
each renders to plain Russian — no ``{{``, no ``None``, the player's gender agreed."""

from __future__ import annotations

import ast
import re
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from panel import flash

ROOT = Path(__file__).resolve().parents[2]
VIEWS = sorted((ROOT / "panel").rglob("*.py"))
TEMPLATES = ROOT / "templates" / "panel"
KINDS = {"say": "flash", "text": "flash", "confirmation": "confirm"}


def calls() -> dict[tuple[str, str], list[set[str]]]:
    """(kind, name) → the keyword names of each call that renders it."""
    found: dict[tuple[str, str], list[set[str]]] = {}
    for path in VIEWS:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            called = (
                func.id
                if isinstance(func, ast.Name)
                else (func.attr if isinstance(func, ast.Attribute) else "")
            )
            kind = KINDS.get(called)
            args = [a for a in node.args if isinstance(a, ast.Constant)]
            if kind is None or not args or not isinstance(args[0].value, str):
                continue
            keywords = {k.arg for k in node.keywords if k.arg and k.arg != "level"}
            found.setdefault((kind, args[0].value), []).append(keywords)
    return found


def variables(source: str) -> set[str]:
    """The context names a template reads (loop variables and ``forloop`` left out)."""
    loops = set(re.findall(r"{%\s*for\s+(\w+)\s+in", source))
    used = set(re.findall(r"{{\s*(\w+)", source))
    used |= set(re.findall(r"{%\s*(?:if|elif)\s+(?:not\s+)?(\w+)", source))
    used |= set(re.findall(r"{%\s*for\s+\w+\s+in\s+(\w+)", source))
    return used - loops - {"forloop"}


def test_every_name_the_views_use_has_its_template_and_every_template_is_used() -> None:
    used = calls()
    assert len(used) >= 40
    for kind, name in used:
        assert (TEMPLATES / kind / f"{name}.txt").is_file(), (kind, name)
    on_disk = {
        (p.parent.name, p.stem) for k in ("flash", "confirm") for p in (TEMPLATES / k).glob("*.txt")
    }
    assert on_disk == set(used), on_disk ^ set(used)


def test_every_text_reads_only_what_its_callers_pass() -> None:
    for (kind, name), callers in calls().items():
        needed = variables((TEMPLATES / kind / f"{name}.txt").read_text(encoding="utf-8"))
        for keywords in callers:
            assert needed <= keywords, (kind, name, needed - keywords)


def seat(sex: int = 0, **fields: Any) -> SimpleNamespace:
    values = {
        "number": 3,
        "name": "Мария Ефремова",
        "vk_user_id": 1001,
        "strikes": 1,
        "alive": True,
        "sex": sex,
        **fields,
    }
    return SimpleNamespace(**values)


GAME = SimpleNamespace(name="Весна", topic_id=5, time_zone="Europe/Moscow")
#: A value for every context name a text reads, by name.
SAMPLE: dict[str, Any] = {
    "community": "Мафия на Неве",
    "username": "Анна",
    "public": True,
    "seat": seat(1),
    "number": 2,
    "name": "Юлия Анисимова",
    "acted": True,
    "game": GAME,
    "running": True,
    "title": "ЗЗ — Весна",
    "count": 3,
    "executed": seat(2),
    "published": False,
    "seats": [3, 5],
    "deaths": [4],
    "reserve": False,
    "discarded": True,
    "draws": 2,
    "mafia_items": 1,
    "dealt": True,
    "slot": "Утро",
    "discards": True,
    "players": 7,
    "deadline": datetime(2026, 12, 1, 18, 30, tzinfo=UTC),
    "closed": [seat(0)],
    "minutes": 15,
}


def rendered(kind: str, name: str, context: dict[str, Any]) -> list[str]:
    if kind == "confirm":
        page = flash.confirmation(name, **context)
        return [page["question"], *page["details"]]
    return [flash.text(name, **context)]


@pytest.mark.parametrize(("kind", "name"), sorted(calls()))
def test_every_text_renders_to_plain_russian(kind: str, name: str) -> None:
    source = (TEMPLATES / kind / f"{name}.txt").read_text(encoding="utf-8")
    context = {v: SAMPLE[v] for v in variables(source)}
    for paragraph in rendered(kind, name, context):
        assert paragraph and paragraph == paragraph.strip(), (name, paragraph)
        for bad in ("{{", "{%", "}}", "None", "  ", "namespace("):
            assert bad not in paragraph, (name, paragraph)
        assert re.search(r"[а-яё]", paragraph, re.I), (name, paragraph)


def test_the_texts_agree_with_the_players_gender_and_are_neutral_when_vk_did_not_say() -> None:
    said = {sex: flash.text("day_closed", number=1, executed=seat(sex)) for sex in (0, 1, 2)}
    assert said[2] == "День 1 закрыт: казнён №3 Мария Ефремова."
    assert said[1] == "День 1 закрыт: казнена №3 Мария Ефремова."
    assert said[0] == "День 1 закрыт: казнь — №3 Мария Ефремова."
    assert flash.text("day_closed", number=1, executed=None) == "День 1 закрыт: никто не казнён."
    removed = {
        sex: flash.text("player_removed", seat=seat(sex), discarded=False) for sex in (0, 1, 2)
    }
    assert removed == {
        2: "Мария Ефремова снят с игры.",
        1: "Мария Ефремова снята с игры.",
        0: "Мария Ефремова больше не в составе игры.",
    }
    page = flash.confirmation("player_remove", seat=seat(0), discards=False)
    assert page == {
        "question": "Снять Марию Ефремову с игры?",
        "details": ["Мария Ефремова получит сообщение, что больше не в составе игры."],
    }


#: A log entry of each kind and its line on «Журнал» (templates/panel/log/<kind>.txt).
LOG_LINES = [
    ("vote", {"voter": 3, "target": 5, "early": True}, "№3 → №5 (досрочно)"),
    ("night_action", {"actor": 2, "act": "check", "target": 7}, "№2: проверка → №7"),
    (
        "night_action",
        {"actor": 2, "act": "role_strike", "target": 7, "guess": "doctor"},
        "№2: ролевой удар → №7 (доктор)",
    ),
    ("day_closed", {"executed": 4}, "казнь: №4"),
    ("day_closed", {"executed": None, "early": True}, "досрочно; никто не казнён"),
    ("night_closed", {"draft": {"deaths": [4, 6]}}, "черновик: погибают №4, №6"),
    ("night_redrafted", {"draft": {"deaths": []}}, "черновик: никто не погибает"),
    ("night_published", {"deaths": [4]}, "погибли: №4"),
    ("night_published", {"deaths": []}, "никто не погиб"),
    ("phase_opened", {"phase_kind": "night", "number": 1}, "Ночь 1"),
    ("signup", {"name": "Анна", "reserve": True}, "Анна (запас)"),
    ("withdraw", {"vk_user_id": 1001}, "Мария Ефремова"),
    ("withdraw", {"vk_user_id": 9}, "игрок"),
    ("replace", {"seat": 4, "old_vk_user_id": 1001, "name": "Юлия"}, "№4: Мария Ефремова → Юлия"),
    ("replace", {"seat": 4, "old_vk_user_id": 9, "name": "Юлия"}, "№4: прежний игрок → Юлия"),
    ("deal", {"deal_round": 1, "draws": [1, 2]}, "раздача №1, попыток: 2"),
    (
        "redeal",
        {"deal_round": 2, "seed_round": 2, "draws": [1]},
        "раздача №2 из зерна раунда 2, попыток: 1",
    ),
    ("deal_round_opened", {"round": 2, "commitment": "ab12"}, "раунд 2, хеш зерна ab12"),
    ("game_finished", {"winner": "town"}, "победа: Мирный город"),
    ("game_finished", {}, "без победителя"),
    ("deadline_extended", {"minutes": 30}, "+30 мин"),
    ("reminder_sent", {"seats": [1, 2]}, "кому: №1, №2"),
    ("flag_resolved", {"status": "acted", "note": "флуд"}, "принято решение: флуд"),
    ("flag_resolved", {"status": "dismissed"}, "отклонён"),
    ("mafia_relay", {"seat": 2, "text": "стреляем в 5"}, "№2: стреляем в 5"),
    ("spectator_chat_linked", {"peer_id": 2000000007}, "беседа №7"),
    (
        "spectator_chat_created",
        {"peer_id": 2000000008, "title": "ЗЗ — Весна"},
        "беседа «ЗЗ — Весна»",
    ),
    ("spectator_chat_create_requested", {"title": "ЗЗ — Весна"}, "«ЗЗ — Весна»"),
    ("spectator_invited", {"vk_user_id": 1001}, "Мария Ефремова"),
    ("spectator_removed", {"vk_user_id": 9, "reason": "мафия"}, "пользователь VK: мафия"),
    (
        "settings_changed",
        {"changed": {"name": "Весна", "day_length": "1 day", "counts": {}}},
        "состав ролей, длина дня, название",
    ),
    ("gms_changed", {"gms": ["анна", "борис"]}, "анна, борис"),
    (
        "modkill",
        {"seat": 3, "name": "Аня", "reason": "флуд"},
        "№3 Аня: модкилл, выбывает из игры. Причина: флуд",
    ),
    # An entry logged before its kind had a line shows the sentence it stored.
    ("modkill", {"seat": 3, "summary": "Модкилл №3 Аня."}, "Модкилл №3 Аня."),
    (
        "strike_manual",
        {"seat": 4, "name": "Борис", "count": 1, "reason": ""},
        "№4 Борис: 1-й штраф.",
    ),
    (
        "strike_forgiven",
        {"seat": 4, "name": "Борис", "reason": "сбой бота"},
        "№4 Борис: штраф прощён. Причина: сбой бота",
    ),
    (
        "night_edited",
        {
            "number": 2,
            "added": [{"seat": 5, "role": "doctor"}, {"seat": 6, "role": "civilian"}],
            "removed": [{"seat": 3, "role": "mafia"}],
            "reason": "ошибка бота",
        },
        "Ночь 2: Ведущий: погибают №5 (Доктор), №6 (Мирный житель); выживает №3 (Мафия)."
        " Причина: ошибка бота",
    ),
    (
        "night_edited",
        {"number": 1, "added": [], "removed": [{"seat": 3, "role": "mafia"}], "reason": "сбой"},
        "Ночь 1: Ведущий: выживает №3 (Мафия). Причина: сбой",
    ),
    (
        "night_edited",
        {"number": 1, "added": [{"seat": 3, "role": "mafia"}], "removed": [], "reason": "x"},
        "Ночь 1: Ведущий: погибает №3 (Мафия). Причина: x",
    ),
    (
        "night_edited",
        {"deaths": [5], "before": [3], "reason": "сбой", "summary": "Ночь 1: Ведущий: …"},
        "Ночь 1: Ведущий: …",
    ),
    (
        "mafia_shot_reopened",
        {"number": 3, "reason": "раскрылись"},
        "Ночь 3: мафии разрешено изменить выстрел. Причина: раскрылись",
    ),
    (
        "game_cancelled",
        {"reason": "мало игроков"},
        "Игра отменена до начала. Причина: мало игроков",
    ),
    ("deal_discarded", {"summary": "Раздача №2 отброшена."}, "Раздача №2 отброшена."),
    ("story_set", {"story": "Город не спал."}, "Абзац ведущего к посту фазы: «Город не спал.»."),
    ("story_set", {"story": ""}, "Абзац ведущего к посту фазы убран."),
    ("theme_text_set", {"slot": "day_story", "text": "…"}, "Свой текст «Начало дня» сохранён."),
    (
        "theme_text_set",
        {"slot": "day_story", "text": ""},
        "Текст «Начало дня» возвращён к тексту темы.",
    ),
    ("game_started", {}, ""),
]


def test_every_log_line_is_a_template_and_reads_as_russian() -> None:
    from gameplay.models import GameEvent
    from panel.labels import describe_event

    for kind, data, line in LOG_LINES:
        assert describe_event(GameEvent(kind=kind, data=data), {1001: "Мария Ефремова"}) == line
    files = {p.stem for p in (TEMPLATES / "log").glob("*.txt")}
    from panel.labels import _SAME_LINE

    assert files == {_SAME_LINE.get(k, k) for k, _, line in LOG_LINES if line} - {"deal_discarded"}


def test_a_game_the_gm_ended_reads_so_in_the_log_as_its_stored_sentence_did() -> None:
    from gameplay.models import GameEvent
    from panel.labels import describe_event

    def line(**data: Any) -> str:
        return describe_event(GameEvent(kind="game_finished", data=data, override=True))

    assert (
        line(winner="mafia", reason="сдались") == "Игра завершена ведущим: Мафия. Причина: сдались"
    )
    assert line(winner=None, reason="") == "Игра завершена ведущим: без победителя."
    # The sentence such an entry stored before: the line reads the same from its facts.
    assert line(winner=None, reason="x", summary="старый текст") == (
        "Игра завершена ведущим: без победителя. Причина: x"
    )
