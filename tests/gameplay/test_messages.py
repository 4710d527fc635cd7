"""Every message in every theme, for generated games and real-world names, read as a person
would: no rule codes, no English but names, links and hashes, no holes (``None``, ``{{``, an
unrendered variable), numerals agreeing with their nouns, names declined after «за», verbs in
the player's gender (a neutral wording when VK did not tell it).

The expected accusative of each name is written here by hand (not by the library under test).
``test_every_message_reads_right`` prints its counts: messages × names × themes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any, cast

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gameplay import gmtext, grammar, messages, themes
from gameplay.messages import MessageError, Person, render, when
from gameplay.selectors.vote_count import STRIKE, struck

# (name as VK gives it, VK's sex, the accusative «голосует за …» needs)
NAMES: list[tuple[str, int, str]] = [
    ("Сергей Воробьёв", 2, "Сергея Воробьёва"),
    ("Иван Петров", 2, "Ивана Петрова"),
    ("Никита Михалков", 2, "Никиту Михалкова"),
    ("Лев Толстой", 2, "Льва Толстого"),
    ("Фёдор Достоевский", 2, "Фёдора Достоевского"),
    ("Михаил Булгаков", 2, "Михаила Булгакова"),
    ("Юрий Гагарин", 2, "Юрия Гагарина"),
    ("Илья Репин", 2, "Илью Репина"),
    ("Пётр Чайковский", 2, "Петра Чайковского"),
    ("Эльдар Рязанов", 2, "Эльдара Рязанова"),
    ("Дмитрий Шостакович", 2, "Дмитрия Шостаковича"),
    ("Виктор Цой", 2, "Виктора Цоя"),
    ("Николай Гоголь", 2, "Николая Гоголя"),
    ("Данила Козловский", 2, "Данилу Козловского"),
    ("Армен Джигарханян", 2, "Армена Джигарханяна"),
    ("Мария Ефремова", 1, "Марию Ефремову"),
    ("Анна Ахматова", 1, "Анну Ахматову"),
    ("Марина Цветаева", 1, "Марину Цветаеву"),
    ("Любовь Орлова", 1, "Любовь Орлову"),
    ("Алла Пугачёва", 1, "Аллу Пугачёву"),
    ("Валентина Терешкова", 1, "Валентину Терешкову"),
    ("Майя Плисецкая", 1, "Майю Плисецкую"),
    ("Юлия Анисимова", 1, "Юлию Анисимову"),
    ("Софья Ковалевская", 1, "Софью Ковалевскую"),
    ("Наталья Гончарова", 1, "Наталью Гончарову"),
    ("Фаина Раневская", 1, "Фаину Раневскую"),
    ("Ия Саввина", 1, "Ию Саввину"),
    # double-barrelled
    ("Мария Кюри-Склодовская", 1, "Марию Кюри-Склодовскую"),
    ("Николай Римский-Корсаков", 2, "Николая Римского-Корсакова"),
    ("Анна-Мария Петрова", 1, "Анну-Марию Петрову"),
    # indeclinable surnames (and first names)
    ("Олег Белых", 2, "Олега Белых"),
    ("Ирина Седых", 1, "Ирину Седых"),
    ("Тарас Шевченко", 2, "Тараса Шевченко"),
    ("Гоша Куценко", 2, "Гошу Куценко"),
    ("Зураб Церетели", 2, "Зураба Церетели"),
    ("Александр Дюма", 2, "Александра Дюма"),
    ("Нино Катамадзе", 1, "Нино Катамадзе"),
    ("Ольга Бергольц", 1, "Ольгу Бергольц"),
    ("Ксения Собчак", 1, "Ксению Собчак"),
    ("Ким Ли", 2, "Кима Ли"),
    # VK did not tell the gender
    ("Саша Белых", 0, "Сашу Белых"),
    ("Женя Иванова", 0, "Женю Иванову"),
    ("Вера", 0, "Веру"),
    # nicknames, Latin letters
    ("Nick Johnson", 0, "Nick Johnson"),
    ("xXx_Killer", 0, "xXx_Killer"),
    ("DarkLord", 2, "DarkLord"),
    ("Мафиози_228", 0, "Мафиози_228"),
    ("Кот Matroskin", 2, "Кот Matroskin"),
    ("Sasha", 1, "Sasha"),
]

HASH = "9f2c4be1" * 8
SEED = "5d41402abc4b2a76b9719d911017c592"
LINK = "https://vk.me/join/AJQ1d5eSUQ"
TZ = "Europe/Moscow"
DEADLINE = when(datetime(2026, 12, 1, 18, 30, tzinfo=UTC), TZ)
ROLES = ["mafia", "commissar", "doctor", "civilian", "maniac"]
ITEMS = ["clock", "red_button", "book"]


def people(i: int, n: int = 6) -> list[Person]:
    """A table for name ``i``: seat 1 is that name, the others follow it in the table."""
    out = []
    for k in range(n):
        name, sex, _ = NAMES[(i + k) % len(NAMES)]
        out.append(Person(k * 5 + 1, name, sex))
    return out


def DECISIONS(p: list[Person]) -> list[dict[str, Any]]:  # noqa: N802 - a table, like CASES
    """Each of the GM's decisions the end-of-game post words (board/decision)."""
    return [
        {"kind": "modkill", "person": p[0], "reason": "оскорбления"},
        {"kind": "strike_manual", "person": p[1], "count": 1, "reason": "флуд"},
        {"kind": "strike_manual", "person": p[2], "count": 2, "reason": ""},
        {"kind": "strike_forgiven", "person": p[1], "reason": "ошибка бота"},
        {"kind": "night_edited", "number": 2, "died": p[:1], "saved": p[1:3], "reason": "сбой"},
        {"kind": "night_edited", "number": 3, "died": p[2:5], "saved": [], "reason": "сбой"},
        {"kind": "night_edited", "number": 3, "died": [], "saved": [], "reason": "сбой"},
        {"kind": "mafia_shot_reopened", "number": 1, "reason": ""},
        {"kind": "game_finished", "winner": "Мафия", "reason": "время вышло"},
        {"kind": "game_finished", "winner": "", "reason": ""},
        {"kind": "deal_fixed"},
        {"kind": "text", "text": "Раунд раздачи 2 открыт."},
    ]


def VOTE_COUNT(p: list[Person]) -> dict[str, Any]:  # noqa: N802 - a table, like CASES
    """A day's vote count (board/vote_count): votes with their links, one by private message,
    an early one, changed ones struck through, penalty votes, the missing and the close."""
    link = "https://vk.com/topic-123456789_45?post="
    return {
        "day": 2,
        "at": DEADLINE,
        "deadline": DEADLINE,
        "voted": 4,
        "living": 26,
        "candidates": [
            {
                "person": p[0],
                "votes": 3,
                "penalty": 2,
                "total": 5,
                "voters": [
                    {"person": p[1], "link": f"{link}101", "early": False},
                    {"person": p[2], "link": "", "early": False},
                    {"person": p[3], "link": f"{link}107", "early": True},
                ],
                "left": [{"person": p[4], "struck": struck(str(p[4]))}],
            },
            {
                "person": p[1],
                "votes": 1,
                "penalty": 0,
                "total": 1,
                "voters": [{"person": p[0], "link": "", "early": False}],
                "left": [],
            },
            {
                "person": p[5],
                "votes": 0,
                "penalty": 0,
                "total": 0,
                "voters": [],
                "left": [{"person": x, "struck": struck(str(x))} for x in p[2:4]],
            },
        ],
        "missing": [{"person": x, "penalty": 2, "modkill": False} for x in p[4:6]],
        "leaders": p[:1],
        "leader_votes": 5,
        "executed": p[0],
        "tie": [],
        "close_votes": 5,
        "penalised": p[4:6],
        "penalty_votes": 2,
        "modkilled": [],
    }


Contexts = Callable[[list[Person]], list[dict[str, Any]]]


def one(**ctx: Any) -> Contexts:
    return lambda p: [ctx]


def each_role(make: Callable[[list[Person], str], dict[str, Any]]) -> Contexts:
    return lambda p: [make(p, r) for r in ROLES]


#: Every message with the contexts it is rendered in (a few per message, covering branches).
CASES: dict[str, Contexts] = {
    "player/signed_up": lambda p: [{"game": "Машина времени", "reserve": r} for r in (0, 1)],
    "player/withdrawn": one(game="Машина времени"),
    "player/role_card": lambda p: (
        [
            {
                "game": "Игра",
                "number": p[0].number,
                "role": r,
                "item": i,
                "mafia": p[:3] if r == "mafia" else [],
                "commitment": HASH,
            }
            for r in ROLES
            for i in ("", "clock")
        ]
        + [
            {
                "game": "Игра",
                "number": 1,
                "role": "civilian",
                "item": i,
                "mafia": [],
                "commitment": HASH,
            }
            for i in ITEMS
        ]
    ),
    "player/vote_accepted": lambda p: [
        {"target": p[0], "early": e, "early_ignored": x} for e, x in ((0, 0), (1, 0), (0, 1))
    ],
    "player/vote_voided": lambda p: [{"target": p[0]}],
    "player/action_accepted": lambda p: [
        {"act": "проверка", "target": p[0], "guess": ""},
        {"act": "ролевой удар", "target": p[0], "guess": "doctor"},
    ],
    "player/mafia_shot_update": lambda p: [{"sender": p[0], "target": p[1]}],
    "player/role_strike_update": lambda p: [
        {"sender": p[0], "target": p[1], "guess": g} for g in ("commissar", "doctor", "maniac")
    ],
    "player/check_result": lambda p: [
        {"number": 2, "target": p[0], "is_mafia": m} for m in (True, False)
    ],
    "player/you_died": lambda p: [{"invited": m} for m in (True, False)],
    "player/mafia_reopened": one(number=2),
    "player/modkilled": lambda p: [
        {"reason": "оскорбления в обсуждении", "invited": m} for m in (True, False)
    ],
    "player/replaced": one(game="Игра"),
    "player/game_over": lambda p: [{"game": "Игра", "winner": w} for w in ("Мафия", "")],
    "player/act_prompt": lambda p: [
        {"number": 1, "act": a, "item": a if a in ITEMS else "", "deadline": DEADLINE}
        for a in (
            "mafia_shot",
            "role_strike",
            "check",
            "commissar_shot",
            "heal",
            "maniac_shot",
            *ITEMS,
        )
    ],
    "player/act_question": lambda p: (
        [{"act": a} for a in ("check", "heal", "book")]
        + [{"act": "heal", "no_self": True, "healed": p[1]}]
    ),
    "player/commissar_prompt": one(number=3, deadline=DEADLINE),
    "player/heal_note": lambda p: [{"target": p[0]}],
    "player/pick_guess": lambda p: [{"target": p[0], "number": 2, "deadline": DEADLINE}],
    "player/count_posted": one(),
    "player/button": lambda p: [
        {"button": b}
        for b in (
            "menu",
            "status",
            "help",
            "check",
            "commissar_shot",
            "guess_commissar",
            "guess_doctor",
            "guess_maniac",
            "early",
            "back",
            "forward",
        )
    ],
    "player/day_prompt": lambda p: [
        {"number": n, "deadline": DEADLINE, "early": n >= 3} for n in (1, 3)
    ],
    "player/early_vote_prompt": one(number=3),
    "refusals/spectator_refused": lambda p: [
        {"bar": b} for b in ("outsider", "alive", "closed", "mafia")
    ],
    "player/vote_final": lambda p: [{"target": p[2]}],
    "player/vote_page": lambda p: [{"number": 2, "too_soon": t, "early_day": 3} for t in (0, 1)],
    "player/relay": lambda p: [{"sender": p[0], "text": "стреляем в 5"}],
    # --- typed refusals (gameplay.rules.errors and the services' refusals)
    "refusals/action_not_available": lambda p: [{}],
    "refusals/act_by_day": lambda p: [{}],
    "refusals/already_out": lambda p: [{}],
    "refusals/bad_roster": lambda p: [{}],
    "refusals/dead_cannot_act": lambda p: [{}],
    "refusals/decided_at_start": lambda p: [{}],
    "refusals/early_vote_final": lambda p: [{}],
    "refusals/game_not_running": lambda p: [{}],
    "refusals/heal_repeat": lambda p: [{}],
    "refusals/invalid_command": lambda p: [{}],
    "refusals/invalid_guess": lambda p: [{}],
    "refusals/item_draw_failed": lambda p: [{}],
    "refusals/item_not_held": lambda p: [{}],
    "refusals/item_spent": lambda p: [{}],
    "refusals/items_undealable": lambda p: [{}],
    "refusals/negative_role_count": lambda p: [{}],
    "refusals/night_reopened_for_mafia_shot": lambda p: [{}],
    "refusals/night_under_review": lambda p: [{}],
    "refusals/no_mafia": lambda p: [{}],
    "refusals/no_shot": lambda p: [{}],
    "refusals/not_enough_players": lambda p: [{}],
    "refusals/not_in_game": lambda p: [{}],
    "refusals/out_of_game": lambda p: [{}],
    "refusals/phase_not_open": lambda p: [{}],
    "refusals/replace_only_alive": lambda p: [{}],
    "refusals/role_strike_used": lambda p: [{}],
    "refusals/roster_size_mismatch": lambda p: [{"players": 5, "roles": 6}],
    "refusals/rule_violation": lambda p: [{}],
    "refusals/seed_not_utf8": lambda p: [{}],
    "refusals/self_target_forbidden": lambda p: [{}],
    "refusals/self_vote": lambda p: [{}],
    "refusals/target_missing": lambda p: [{}],
    "refusals/export_not_started": lambda p: [{}],
    "refusals/vote_target_missing": lambda p: [{}],
    "gm/flag_words_found": one(words=["слово", "другое"]),
    "gm/flag_reveal_in_review": one(number=2, words=["комиссар", "проверил"]),
    "gm/flag_vote_post_edited": lambda p: [{}],
    "gm/flag_vote_post_deleted": lambda p: [{}],
    "gm/theme_text_failed": lambda p: [
        {"title": "Начало дня", "line": line, "why": "неизвестная переменная «день»"}
        for line in (0, 3)
    ],
    "gm/text_for_seats": one(seats=26, why="текст получается длиннее 4000 знаков"),
    "gm/text_loop_not_list": lambda p: [{"what": w} for w in ("", "игра")],
    "gm/text_loop_too_deep": one(limit=3),
    "gm/text_render_failed": one(),
    "gm/text_source_too_long": one(limit=4000),
    "gm/text_too_costly": one(limit=10000),
    "gm/text_too_deep": one(limit=8),
    "gm/text_too_long_output": one(limit=1400),
    "gm/text_too_many_tags": one(limit=120),
    "gm/text_unclosed_brace": lambda p: [{"kind": k} for k in ("var", "tag", "comment")],
    "gm/text_unclosed_tag": one(tag="если"),
    "gm/text_unknown_filter": one(what="центр"),
    "gm/text_unknown_tag": one(tag="вставка"),
    "gm/text_unknown_variable": one(what="день"),
    "gm/text_unparsed": lambda p: [{"what": w} for w in ("", "число|")],
    "board/penalty_forgiven": lambda p: [{"seat": x} for x in p[:3]],
    "refusals/setup_error": lambda p: [{}],
    "refusals/special_role_repeated": lambda p: [{}],
    "refusals/target_not_alive": lambda p: [{}],
    "refusals/too_few_outside_mafia": lambda p: [{}],
    "refusals/too_few_players": lambda p: [{}],
    "refusals/unknown_target": lambda p: [{}],
    "refusals/vote_target_not_alive": lambda p: [{}],
    "refusals/wrong_phase": lambda p: [{}],
    "refusals/no_such_delivery": lambda p: [{}],
    "refusals/chat_creation_not_retried": lambda p: [{}],
    "refusals/delivery_still_queued": lambda p: [{}],
    "refusals/already_delivered": lambda p: [{}],
    "refusals/reopen_reason_missing": one(),
    "refusals/modkill_reason_missing": one(),
    "refusals/ambiguous_target": lambda p: [{"players": p[:3]}],
    "refusals/night_not_under_review": one(),
    "refusals/flag_decision_missing": one(),
    "refusals/start_too_late": one(),
    "refusals/stale_button": lambda p: [{}],
    "refusals/not_mafia": lambda p: [{}],
    "refusals/outcome_changed": lambda p: [{}],
    "refusals/discard_not_confirmed": lambda p: [{}],
    "refusals/already_playing": lambda p: [{}],
    "refusals/already_running": lambda p: [{}],
    "refusals/already_signed_up": lambda p: [{"reserve": r} for r in (True, False)],
    "refusals/chat_already_closed": lambda p: [{}],
    "refusals/chat_already_open": lambda p: [{}],
    "refusals/chat_being_created": lambda p: [{}],
    "refusals/chat_not_linked": lambda p: [{}],
    "refusals/chat_number_impossible": lambda p: [{}],
    "refusals/chat_number_missing": lambda p: [{}],
    "refusals/chat_open_no_new_chat": lambda p: [{}],
    "refusals/chat_opens_in_running_game": lambda p: [{}],
    "refusals/counts_locked": lambda p: [{}],
    "refusals/deal_too_late": lambda p: [{}],
    "refusals/early_close_rule_unknown": lambda p: [{}],
    "refusals/edit_reason_missing": lambda p: [{}],
    "refusals/extend_only_open_phase": lambda p: [{}],
    "refusals/extension_not_minutes": lambda p: [{}],
    "refusals/extension_too_long": lambda p: [{}],
    "refusals/flag_already_resolved": lambda p: [{}],
    "refusals/game_already_over": lambda p: [{}],
    "refusals/game_finished": lambda p: [{}],
    "refusals/game_name_missing": lambda p: [{}],
    "refusals/game_not_in_progress": lambda p: [{}],
    "refusals/gm_pages_invalid": lambda p: [{}],
    "refusals/item_twice": lambda p: [{}],
    "refusals/modkill_not_forgivable": lambda p: [{}],
    "refusals/new_round_too_late": lambda p: [{}],
    "refusals/night_death_not_alive": lambda p: [{}],
    "refusals/no_active_phase": lambda p: [{}],
    "refusals/no_gm": lambda p: [{}],
    "refusals/no_such_flag": lambda p: [{}],
    "refusals/no_such_game": lambda p: [{}],
    "refusals/no_such_signup": lambda p: [{}],
    "refusals/no_such_strike": lambda p: [{}],
    "refusals/no_such_theme": lambda p: [{}],
    "refusals/no_such_theme_text": lambda p: [{}],
    "refusals/player_already_listed": lambda p: [
        {"player": p[0].name, "reserve": r} for r in (True, False)
    ],
    "refusals/nobody_added": one(vk_user_id=123, why="Иван Петров уже в составе игры."),
    "refusals/not_a_chat": lambda p: [{}],
    "refusals/not_dealt_yet": lambda p: [{}],
    "refusals/not_signed_up": lambda p: [{}],
    "refusals/not_staff": one(username="Анна"),
    "refusals/not_vk_user": one(raw="2000000005"),
    "refusals/nothing_to_retry": lambda p: [{}],
    "refusals/phase_changed": lambda p: [{}],
    "refusals/phase_length_out_of_range": lambda p: [{}],
    "refusals/player_line_bad": one(line=2, why="Укажите VK id или ссылку на страницу игрока."),
    "refusals/player_line_duplicate": one(line=3, vk_user_id=123, first=1),
    "refusals/player_list_empty": lambda p: [{}],
    "refusals/player_list_too_long": one(most=200),
    "refusals/recruitment_closed": lambda p: [{}],
    "refusals/relay_empty": lambda p: [{}],
    "refusals/reminders_out_of_range": lambda p: [{}],
    "refusals/removal_while_running": lambda p: [{}],
    "refusals/replacement_not_now": lambda p: [{}],
    "refusals/roster_mismatch": one(players=9, roles=10),
    "refusals/screen_name": one(screen="дуров"),
    "refusals/seat_already_out": lambda p: [{}],
    "refusals/seat_numbers_invalid": lambda p: [{}],
    "refusals/settings_frozen": lambda p: [{}],
    "refusals/settings_not_changeable": one(fields="цвет, запах"),
    "refusals/signup_closed": lambda p: [{}],
    "refusals/story_not_now": lambda p: [{}],
    "refusals/story_too_long": one(limit=4000),
    "refusals/strike_already_forgiven": lambda p: [{}],
    "refusals/theme_text_broken": one(where="Строка 3: ", why="неизвестная переменная «имя»"),
    "refusals/theme_text_too_long": one(limit=4000),
    "refusals/unknown_flag_decision": lambda p: [{}],
    "refusals/unknown_time_zone": one(zone="Марс/Олимп"),
    # --- connecting a community and its GMs (gameplay.refusals.communities)
    "refusals/callback_address_unknown": one(),
    "refusals/community_from_environment": one(community="Мафия на Неве"),
    "refusals/community_owned_by_another": one(community="Мафия на Неве"),
    "refusals/community_required": one(),
    "refusals/community_right_missing": lambda p: [
        {"right": r} for r in ("доступ к сообщениям сообщества", "доступ к управлению сообществом")
    ],
    "refusals/community_token_invalid": one(),
    "refusals/community_token_of_another": one(community="Мафия на Неве"),
    "refusals/no_such_panel_user": one(username="Анна"),
    "refusals/not_community_member": one(community="Мафия на Неве"),
    "refusals/gm_not_community_member": one(username="коллега", community="Мафия на Неве"),
    "refusals/not_community_owner": one(),
    "refusals/owner_not_removable": one(),
    "refusals/topic_not_found": one(topic="https://vk.com/topic-1_2"),
    "refusals/topic_of_another_community": one(community="Мафия на Неве"),
    "refusals/user_not_community_admin": one(user="Анна Админова", community="Мафия на Неве"),
    "refusals/user_token_invalid": one(),
    "refusals/user_token_right_missing": lambda p: [{"right": r} for r in ("groups", "offline")],
    "refusals/vk_answer_unreadable": one(step="проверка ключа сообщества"),
    "refusals/vk_refused_setup": lambda p: [
        {"step": "включение Long Poll API", "code": c} for c in (6, 10, 14, 15)
    ],
    "refusals/vk_unreachable": one(),
    "refusals/vk_too_many_requests": one(),
    # --- signing the admin in with VK ID (gameplay.refusals.vkid), and when VK says no
    "refusals/vk_id_cancelled": one(),
    "refusals/vk_id_code_refused": one(),
    "refusals/vk_id_not_configured": one(),
    "refusals/vk_id_right_missing": one(right="groups"),
    "refusals/vk_id_sign_in_lost": one(),
    "gm/admin_key_refused": one(community="Мафия на Неве"),
    "gm/admin_key_restored": one(community="Мафия на Неве"),
    "refusals/vk_user_missing": lambda p: [{}],
    "refusals/vk_user_unreadable": one(raw="что-то"),
    "refusals/vote_at_night": lambda p: [{}],
    "refusals/withdraw_too_late": lambda p: [{}],
    "player/relay_sent": lambda p: [{"count": n} for n in (1, 2, 5, 21)],
    "player/relay_alone": one(),
    "player/pm_hint": lambda p: [{"pm_allowed": a} for a in (False, None)],
    "player/spectator_invite": one(game="Игра", link=LINK),
    "player/spectators_opened": one(),
    "player/button_answered": one(),
    "player/strike_why": lambda p: [
        {"reason": r, "number": 2, "note": n}
        for r, n in (("missed_vote", ""), ("missed_action", ""), ("manual", "флуд"), ("manual", ""))
    ],
    "player/struck": lambda p: [
        {"why": "вы не проголосовали в день 2", "votes": 2, "day": 2, "counted": c}
        for c in (True, False)
    ],
    "player/struck_out": one(why="вы не прислали ночное действие в ночь 3"),
    "player/day_reminder": lambda p: [
        {"number": 2, "deadline": DEADLINE, "left": "через 1 ч 30 мин"},
        {"number": 2, "deadline": "", "left": ""},
    ],
    "player/night_reminder": one(number=2, deadline=DEADLINE, left="через 45 мин"),
    "player/closes": one(deadline=DEADLINE, left="через 3 ч"),
    "player/internal_error": one(),
    "player/unknown_command": one(),
    "player/not_playing": one(),
    "player/not_started": one(),
    "player/several_games": one(),
    "player/no_recruitment": one(),
    "player/no_reserve": one(),
    "player/not_signed_up": one(),
    "player/choose_game": one(),
    "player/signup_choice": one(game="Игра"),
    "player/bad_button": one(),
    "player/no_night_actions": one(),
    "player/nothing_to_do": one(),
    "player/empty_message": one(),
    "player/withdraw_done": one(),
    "player/no_spectator_chat": one(),
    "player/help_outsider": one(title="Машина времени"),
    "player/help_signed_up": lambda p: [{"game": "Игра", "reserve": r} for r in (0, 1)],
    "player/help_dead": lambda p: [{"invited": m, "open": o} for m in (0, 1) for o in (0, 1)],
    "player/help": lambda p: [
        {"game": "Игра", "seat": p[0], "role": r, "item": i, "early_day": 3}
        for r in ROLES
        for i in ("", "book")
    ],
    "player/strike_rule": one(),
    "player/status": lambda p: (
        [
            {
                "game": "Игра",
                "seat": p[0],
                "role": "mafia",
                "item": "clock",
                "item_used": u,
                "strikes": k,
                "alive": True,
                "phase": "night",
                "number": 2,
                "deadline": DEADLINE,
                "vote": None,
                "vote_early": False,
                "actions": [{"act": "Старинные часы", "target": p[1], "guess": "", "actor": p[0]}],
                "expects_action": False,
                "team_shot": {"act": "выстрел мафии", "target": p[2], "guess": "", "actor": p[1]},
                "team_strike": {
                    "act": "ролевой удар",
                    "target": p[3],
                    "guess": "doctor",
                    "actor": p[4],
                },
                "strike_used": False,
                "team": p[1:3],
            }
            for u, k in ((False, 0), (True, 1))
        ]
        + [
            {
                "game": "Игра",
                "seat": p[0],
                "role": "commissar",
                "item": "",
                "item_used": False,
                "strikes": 0,
                "alive": True,
                "spectators": "",
                "phase": ph,
                "number": 1,
                "deadline": DEADLINE,
                "vote": p[1] if ph == "day" else None,
                "vote_early": True,
                "actions": [],
                "expects_action": True,
                "team_shot": None,
                "team_strike": None,
                "strike_used": True,
                "team": [],
            }
            for ph in ("day", "night", "review", "")
        ]
        + [
            {
                "game": "Игра",
                "seat": p[0],
                "role": role,
                "item": "",
                "item_used": False,
                "strikes": 1,
                "alive": False,
                "spectators": watch,
                "phase": "day",
                "number": 3,
                "deadline": DEADLINE,
                "vote": None,
                "vote_early": False,
                "actions": [],
                "expects_action": False,
                "team_shot": None,
                "team_strike": None,
                "strike_used": False,
                "team": [],
            }
            for role, watch in (("civilian", "open"), ("doctor", "closed"), ("mafia", ""))
        ]
        + [
            {
                "game": "Игра",
                "seat": p[0],
                "role": "maniac",
                "item": "",
                "item_used": False,
                "strikes": 0,
                "alive": False,
                "spectators": "closed",
                "phase": ph,
                "number": 2,
                "deadline": DEADLINE,
                "vote": None,
                "vote_early": False,
                "actions": [],
                "expects_action": False,
                "team_shot": None,
                "team_strike": None,
                "strike_used": False,
                "team": [],
            }
            for ph in ("night", "review", "")
        ]
    ),
    "player/outsider_status": one(
        seats=[
            {"game": "Игра", "state": "recruiting", "reserve": False},
            {"game": "Другая", "state": "running", "reserve": True},
            {"game": "Третья", "state": "dealt", "reserve": False},
            {"game": "Старая", "state": "finished", "reserve": False},
        ]
    ),
    # --- the board
    "board/roster": lambda p: [
        {"game": "Игра", "seats": p, "commitment": HASH, "rounds": r}
        for r in ([], [(1, HASH)], [(1, HASH), (2, HASH)])
    ],
    "board/round_hash": one(number=2, commitment=HASH),
    "board/signup_opened": one(game="Игра", commitment=HASH),
    "board/round_opened": one(game="Игра", number=2, commitment=HASH),
    "board/round_opened_summary": one(number=2, commitment=HASH),
    "board/deal_discarded": lambda p: [
        {"deal": 1, "round": 1, "cause": "round", "new_round": 2},
        {"deal": 2, "round": 1, "cause": "player", "vk_user_id": 5001},
        {"deal": 3, "round": 2, "cause": "gm", "vk_user_id": 5002},
    ],
    "board/game_cancelled": lambda p: [
        {"game": "Игра", "reason": r, "rounds": [(1, HASH, SEED), (2, HASH, SEED)]}
        for r in ("", "Не набрали игроков.")
    ],
    "board/day_opened": lambda p: [
        {"number": n, "deadline": DEADLINE, "early": n >= 3} for n in (1, 3)
    ],
    "board/night_opened": one(number=2, deadline=DEADLINE),
    "board/day_result": lambda p: [
        {
            "number": 2,
            "early": e,
            "story": story,
            "modkilled": [{"person": x, "role": "doctor"} for x in p[3 : 3 + m]],
            "penalties": [{"person": x, "votes": 2} for x in p[1:3]],
            "tally": [{"person": x, "votes": v} for x, v in zip(p, (21, 4, 2, 1), strict=False)],
            "executed": p[0] if ex else None,
            "executed_role": "maniac" if ex else "",
        }
        for e, m, ex, story in ((0, 0, 1, ""), (1, 1, 1, "Город шумел."), (0, 2, 0, ""))
    ],
    "board/decision": lambda p: [{"d": d} for d in DECISIONS(p)],
    "board/modkills": lambda p: [
        {"modkilled": [{"person": x, "role": "mafia"} for x in p[:k]]} for k in (0, 1, 3)
    ],
    "board/night_result": lambda p: [
        {
            "number": 1,
            "story": story,
            "deaths": [{"person": x, "role": r} for x in p[:d]],
            "modkilled": [{"person": x, "role": "civilian"} for x in p[d : d + m]],
            "penalties": p[4 : 4 + k],
        }
        for d, m, k, r, story in (
            (0, 0, 0, "", ""),
            (1, 0, 1, "", "Ночь была долгой."),
            (1, 1, 2, "doctor", ""),
            (3, 1, 0, "mafia", ""),
        )
    ],
    "board/modkilled": lambda p: [{"seat": p[0], "role": r} for r in ROLES],
    "board/replaced": lambda p: [{"number": 5, "old": p[0].name, "new": p[1].name}],
    "board/penalty": lambda p: [{"seat": p[0], "votes": v, "day": 2} for v in (1, 2, 5)],
    "board/game_over": lambda p: [
        {
            "game": "Игра",
            "winner": title,
            "winner_key": key,
            "seats": [
                {"person": x, "role": r, "item": i}
                for x, r, i in zip(p, ROLES, ("clock", "", "book", "", ""), strict=False)
            ],
            "night_log": [
                {
                    "number": 1,
                    "actor": p[0],
                    "target": p[1],
                    "act": a,
                    "item": a in ITEMS,
                    "title": t,
                    "guess": g,
                }
                for a, t, g in (
                    ("mafia_shot", "выстрел мафии", ""),
                    ("role_strike", "ролевой удар", "doctor"),
                    ("book", "", ""),
                )
            ]
            if key
            else [],
            "overrides": DECISIONS(p) if key else [],
            "seed": SEED,
            "commitment": HASH,
            "counts": [{"role": r, "n": n} for r, n in zip(ROLES, (6, 1, 1, 17, 0), strict=True)],
            "rounds": rounds,
            "roster_ids": "5001,5002",
            "from_seed": from_seed,
            "players_url": url,
        }
        for key, title in (
            ("town", "Мирный город"),
            ("mafia", "Мафия"),
            ("maniac", "Маньяк"),
            ("draw", "Ничья"),
            ("", ""),
        )
        for url in ("https://mafia.example.org/players/", "")
        for rounds, from_seed in (
            ([], True),
            ([(1, HASH, SEED), (2, HASH, SEED)], True),
            ([(1, HASH, SEED)], False),
        )
    ],
    "board/vote_count": lambda p: [
        {**VOTE_COUNT(p), "final": f, **extra}
        for f in (False, True)
        for extra in cast(
            "tuple[dict[str, Any], ...]",
            (
                {},
                {"leaders": p[:2], "executed": None, "tie": p[:2], "modkilled": p[4:6]},
                {"leaders": [], "executed": None, "tie": [], "penalised": [], "candidates": []},
                {"voted": 1, "candidates": VOTE_COUNT(p)["candidates"][1:2], "missing": []},
            ),
        )
    ],
    "board/signups": lambda p: [
        {
            "game": "Игра",
            "players": [f"[id{5001 + i}|{x.name}]" for i, x in enumerate(p[:k])],
            "reserves": [f"[id5009|{p[5].name}]"] if r else [],
            "blocked": [f"[id5001|{p[0].name}]"] if b else [],
            "unknown": [f"[id5002|{p[1].name}]"] if u else [],
            "total": t,
            "reserve_total": r,
        }
        for k, r, b, u, t in ((1, 0, 0, 0, 1), (3, 1, 1, 0, 22), (2, 2, 1, 1, 25), (0, 1, 0, 1, 5))
    ],
    "board/refusal": lambda p: [
        {"mention": f"[id5001|{p[0].name}]", "reason": "Набор в игру закрыт."}
    ],
    "board/vote_refused": lambda p: [
        {"mention": f"[id5001|{p[0].name}]", "reason": "Голосовать за себя нельзя."}
    ],
    "board/withdrawn": lambda p: [{"mention": f"[id5001|{p[0].name}]"}],
    "board/deadline_extended": lambda p: [
        {"kind": k, "number": 2, "deadline": DEADLINE} for k in ("day", "night")
    ],
    "board/spectators_opened": one(),
    "board/topic_moved": lambda p: [
        {"game": "Машина времени", "group": 123456, "topic": 789},
        {"game": "Машина времени", "group": None, "topic": 789},
    ],
    "board/spectators_closed": one(),
    # --- the spectator chat
    "spectators/chat_title": one(game="Игра"),
    "spectators/chat_number": lambda p: [
        {"number": 8, "game": g, "added": a} for g in ("Игра", "") for a in (True, False)
    ],
    "spectators/intruder_removed": one(
        member="id5001", why="Беседа зрителей — для выбывших игроков."
    ),
    # --- the GM's flags and refusals
    "refusals/no_open_phase": one(),
    "refusals/round_not_needed": one(),
    "refusals/topic_taken": one(),
    "refusals/topic_required_in_play": one(),
    "refusals/community_fixed_in_play": one(),
    "refusals/spectator_chat_taken": one(),
    "refusals/seed_unreadable": one(),
    "refusals/already_dealt": one(),
    "refusals/counts_after_deal": one(),
    "refusals/nobody_to_remind": one(),
    "refusals/reminded_recently": lambda p: [{"seconds": s} for s in (1, 3, 30, 59)],
    "refusals/count_not_day": one(),
    "refusals/count_too_soon": one(last="01.12 14:33 МСК", next="01.12 14:43 МСК"),
    "gm/vk_error": lambda p: (
        [{"code": c, "message": "Flood control"} for c in (5, 9, 901, 914, 925)]
        + [{"code": None, "message": "таймаут"}]
    ),
    "gm/delivery_gave_up": lambda p: [
        {"why": "VK требует капчу", "attempts": a} for a in (1, 3, 5)
    ],
    "gm/message_failed": lambda p: [
        {"id": 4, "what": w, "why": "VK ограничил частоту"}
        for w in ("Игра «Игра». Ваш номер: 5.", "")
    ],
    "gm/board_failed": one(id=4, what="Итоги дня 2.", topic=77, why="тема закрыта"),
    "gm/chat_action_failed": one(id=4, what="", why="нет доступа"),
    "gm/chat_create_failed": one(id=4, title="ЗЗ — Игра", why="нет прав"),
    "gm/chat_create_unknown": one(id=4, title="ЗЗ — Игра", why="VK не ответил"),
    "gm/chat_created_not_linked": lambda p: [
        {"id": 4, "chat": 8, "open_chat": o} for o in (True, False)
    ],
    "gm/export_phase_running": lambda p: [{"day": d, "number": 2} for d in (True, False)],
    "gm/export_night_edited": lambda p: [{"number": n, "reason": "ошибка бота"} for n in (2, None)],
    "gm/export_strike_manual": lambda p: [{"seat": s} for s in p[:3]],
    "gm/export_strike_forgiven": lambda p: [{"seat": s} for s in p[:3]],
    "gm/export_game_ended": one(),
    "gm/export_modkill_votes": lambda p: [
        {"day": True, "number": 2, "seat": s, "voters": v}
        for s, v in ((p[0], p[1:2]), (p[1], p[2:5]), (p[2], p[:2]))
    ],
    "gm/export_modkill_actions": lambda p: [{"day": False, "number": 1, "seat": s} for s in p[:3]],
    "gm/replay_day_differs": lambda p: [
        {"number": 1, "game_held": True, "replay_held": True, "game": p[0], "replay": None},
        {"number": 2, "game_held": True, "replay_held": True, "game": None, "replay": p[1]},
        {"number": 3, "game_held": True, "replay_held": False, "game": p[2], "replay": None},
        {"number": 3, "game_held": False, "replay_held": True, "game": None, "replay": p[3]},
    ],
    "gm/replay_night_differs": lambda p: [
        {"number": 1, "game": p[:1], "replay": p[1:3]},
        {"number": 2, "game": [], "replay": p[2:3]},
        {"number": 3, "game": None, "replay": []},
    ],
    "gm/replay_alive_differs": lambda p: [
        {"game": p[:3], "replay": p[1:3]},
        {"game": p[:1], "replay": []},
    ],
    "gm/replay_winner_differs": lambda p: [
        {"game": "Мирный город", "replay": ""},
        {"game": "", "replay": "Мафия"},
    ],
    "gm/replay_failed": one(why="Ночь 1: №3 не может лечить себя две ночи подряд"),
    "gm/replay_game_name": one(game="Машина времени"),
}

# --- what a person must never read ---------------------------------------------------------------

RULE_CODE = re.compile(r"(?<![\w/])(?:[GVP]\d{1,2}|§\s?\d+)(?!\w)|правил[оау]\s+[A-Z]")
URL = re.compile(r"https?://\S+|\b[\w/]+\.md\b")
MENTION = re.compile(r"\[id\d+\|[^\]]*\]|\bid\d+\b")
HEX = re.compile(r"\b[0-9a-f]{16,}\b")
LATIN = re.compile(r"[A-Za-z][A-Za-z_'-]*")
#: VK, the hash's algorithm, the seed's encoding (UTF-8), and the placeholder of a seat number
#: in commands («выстрел N»).
ALLOWED_LATIN = {"VK", "SHA", "UTF", "N"}
#: The GM's refusals about what they type in the panel name VK's own terms: a chat's peer_id, a
#: user's id, a page's address (vk.com/id123).
GM_TERMS = re.compile(r"\bpeer_id\b|\bvk\.com/\S*|\bid\b")
GM_TERM_TEXTS = {
    f"refusals/{name}"
    for name in (
        "chat_not_linked",
        "chat_number_missing",
        "gm_pages_invalid",
        "not_vk_user",
        "player_list_empty",
        "screen_name",
        "vk_user_unreadable",
    )
}
#: VK's own names a community admin finds in VK's menus and links («Работа с API», «Callback
#: API», the rights of a user token); never a server setting's name (the server's
#: administrator sets those, not the GM who reads these texts).
VK_ADMIN_TERMS = re.compile(r"\b(?:API|Long Poll|Callback|access_token|groups|offline|VK ID)\b")
VK_ADMIN_TEXTS = {
    f"refusals/{name}"
    for name in (
        "callback_address_unknown",
        "community_from_environment",
        "community_right_missing",
        "community_token_invalid",
        "user_token_invalid",
        "user_token_right_missing",
        "vk_refused_setup",
        "vk_id_cancelled",
        "vk_id_code_refused",
        "vk_id_not_configured",
        "vk_id_right_missing",
        "vk_id_sign_in_lost",
    )
} | {"gm/admin_key_refused", "gm/admin_key_restored"}
NUMERAL = re.compile(r"(?<![\w№.:,])(\d+) ([а-яё]+)(?: ([а-яё]+))?")
#: A command quoted as an example («удар 5 доктор»): its number is a seat, not a count.
COMMAND_EXAMPLE = re.compile(r"«[а-яё]+ \d+ [а-яё]+»")
PAST_GENDER = {"masc": grammar.MALE, "femn": grammar.FEMALE}
#: A date's month («5 декабря 2026»): the day before it is an ordinal, not a count, and takes
#: the month in the genitive singular whatever its number.
MONTHS_GENITIVE = frozenset(
    "января февраля марта апреля мая июня июля августа сентября октября ноября декабря".split()
)


def _category(n: int) -> set[tuple[str, str]]:
    """(number, case) a noun takes after ``n`` in the nominative («1 голос», «3 голоса»,
    «5 голосов»), written out from the grammar, not asked from the library."""
    if n % 10 == 1 and n % 100 != 11:
        return {("sing", "nomn"), ("sing", "accs")}
    if n % 10 in (2, 3, 4) and n % 100 not in (12, 13, 14):
        return {("sing", "gent")}
    return {("plur", "gent")}


@cache
def _parses(word: str) -> list[Any]:
    return grammar.morph().parse(word)


def _numeral_problems(text: str) -> list[str]:
    out = []
    for m in NUMERAL.finditer(text):
        n = int(m.group(1))
        if 1 <= n <= 31 and m.group(2) in MONTHS_GENITIVE:
            continue
        for word in (m.group(2), m.group(3)):
            if word is None or len(word) < 3:
                break
            parses = _parses(word)
            nouns = [p for p in parses if p.tag.POS == "NOUN" and p.score >= 0.05]
            adjectives = [p for p in parses if p.tag.POS == "ADJF"]
            if nouns and not adjectives:
                want = _category(n)
                if not any((p.tag.number, p.tag.case) in want for p in nouns):
                    out.append(f"«{m.group(0)}»")
                break
            if adjectives and not nouns:
                want = (
                    {("sing", "nomn"), ("sing", "accs")}
                    if ("sing", "nomn") in _category(n)
                    else {("plur", "gent"), ("plur", "nomn")}
                )
                if not any((p.tag.number, p.tag.case) in want for p in adjectives):
                    out.append(f"«{m.group(0)}»")
                continue
            break
    return out


@cache
def _gendered_word(word: str) -> int | None:
    """The gender a past-tense verb or short participle shows («назвала», «исключён»), None
    for any other word."""
    parses = grammar.morph().parse(word)
    best = parses[0] if parses else None
    if best is None or best.tag.POS not in ("VERB", "PRTS") or best.tag.number != "sing":
        return None
    if best.tag.POS == "VERB" and best.tag.tense != "past":
        return None
    return PAST_GENDER.get(best.tag.gender)


@cache
def _person_patterns(p: Person, accs: str) -> tuple[Any, Any, Any, Any]:
    """Each pattern opens with its literal text, so that ``re`` scans a text for it, and checks
    what comes before that text afterwards (a fixed-width lookbehind over the literal): the
    same matches as ``\\bза …`` and ``(?<!за )(?<!по )…`` in a fraction of the time.
    ``line_start`` is matched at the start of each line of a text (as ``(?m)^…`` would)."""
    label = re.escape(str(p))
    za_number = re.escape(f"за №{p.number} ")
    declinable = accs != p.name
    return (
        # «\bза» before «з», a word character: no word character before it
        re.compile(rf"за {label}(?<!\wза {label})(?!\w)") if declinable else None,
        re.compile(rf"{za_number}(?<!\w{za_number})(?!{re.escape(accs)})") if declinable else None,
        # the word after the player as the subject (not «за …», «по …»: there, an object)
        re.compile(rf"{label}(?<!за {label})(?<!по {label}) ([а-яё]+)"),
        re.compile(rf"([А-Яа-яЁё]+) {label}"),
    )


def problems(text: str, persons: list[Person], accusatives: dict[str, str]) -> list[str]:
    text = text.replace(STRIKE, "")  # a struck-through name (a changed vote) reads as the name
    out = []
    if code := RULE_CODE.search(text):
        out.append(f"a rule code: {code.group(0)}")
    for hole in ("None", "{{", "}}", "{%", messages.MISSING_MARK, "\ue0ff"):
        if hole in text:
            out.append(f"a hole: {hole!r}")
    plain = text
    if "http" in plain or ".md" in plain:  # what URL can match at all
        plain = URL.sub(" ", plain)
    if "id" in plain:  # what MENTION can match at all
        plain = MENTION.sub(" ", plain)
    plain = HEX.sub(" ", plain)
    for p in persons:
        plain = plain.replace(p.name, " ")
    for word in LATIN.findall(plain.replace("VK id", "VK")):  # «VK id»: VK's own term
        if word.strip("-_'") not in ALLOWED_LATIN:
            out.append(f"an English word: {word}")
    out += [f"numeral disagrees: {x}" for x in _numeral_problems(COMMAND_EXAMPLE.sub(" ", text))]
    lines: list[str] | None = None
    for p in persons:
        if f"№{p.number} " not in text:
            continue
        nominative_after_za, za_without_accs, subject, line_start = _person_patterns(
            p, accusatives[p.name]
        )
        if nominative_after_za is not None and nominative_after_za.search(text):
            out.append(f"nominative after «за»: {p}")
        if za_without_accs is not None and za_without_accs.search(text):
            out.append(f"«за» without «{accusatives[p.name]}»")
        if str(p) not in text:  # what ``subject`` and ``line_start`` both hold
            continue
        words = [m.group(1) for m in subject.finditer(text)]
        lines = text.split("\n") if lines is None else lines
        words += [m.group(1) for line in lines if (m := line_start.match(line))]
        for word in words:
            shown = _gendered_word(word)
            if shown is not None and shown != p.sex:
                out.append(f"«{word}» for {p} (VK sex {p.sex})")
    return out


def all_renders() -> list[tuple[str, str, str, list[Person], str]]:
    """(theme, message, name, persons, text) for every case."""
    accusatives = {name: accs for name, _, accs in NAMES}
    assert len(accusatives) >= 40
    out = []
    tables = [people(i) for i in range(len(NAMES))]
    for key in themes.THEMES:
        theme = themes.Theme(key)
        for name in messages.names():
            # A context that does not change with the names (a refusal's, say) renders one
            # text: rendered once per theme, still read with each table's names.
            texts: dict[str, str] = {}
            for (person_name, _, _), ps in zip(NAMES, tables, strict=True):
                for ctx in CASES[name](ps):
                    same = repr(sorted(ctx.items()))
                    if same not in texts or " at 0x" in same:  # an object's id is no value
                        texts[same] = render(name, theme=theme, **ctx)
                    out.append((key, name, person_name, ps, texts[same]))
    return out


def test_every_message_has_cases() -> None:
    assert set(CASES) == set(messages.names())


def test_every_message_reads_right(capsys: pytest.CaptureFixture[str]) -> None:
    accusatives = {name: accs for name, _, accs in NAMES}
    renders = all_renders()
    bad = []
    # A text reads the same with any table whose names it does not show: the persons it
    # neither names nor numbers change nothing in problems().
    found: dict[tuple[str, tuple[Person, ...]], list[str]] = {}
    for theme, name, person, ps, text in renders:
        checked = GM_TERMS.sub(" ", text) if name in GM_TERM_TEXTS else text
        checked = VK_ADMIN_TERMS.sub(" ", checked) if name in VK_ADMIN_TEXTS else checked
        plain = checked.replace(STRIKE, "")  # as problems() reads it
        shown = tuple(p for p in ps if p.name in plain or f"№{p.number} " in plain)
        if (checked, shown) not in found:
            found[checked, shown] = problems(checked, list(shown), accusatives)
        for problem in found[checked, shown]:
            bad.append(f"{theme} {name} [{person}]: {problem}\n{text}")
    n_messages, n_themes = len(messages.names()), len(themes.THEMES)
    with capsys.disabled():
        print(
            f"\nmessages: {n_messages} × names: {len(NAMES)} × themes: {n_themes}; "
            f"{len(renders)} texts rendered, {len(bad)} problems"
        )
    kinds = sorted({re.sub(r" \[.*?\]", "", b.split("\n")[0]) for b in bad})
    assert not bad, "\n".join(kinds[:60]) + "\n\n" + "\n\n".join(bad[:3])


def test_the_checks_catch_what_they_are_for() -> None:
    """The reader above is not blind: each kind of mistake is caught."""
    sergey, masha, nick = (
        Person(22, "Сергей Воробьёв", 2),
        Person(3, "Мария Ефремова", 1),
        Person(5, "Nick", 0),
    )
    accs = {
        p.name: a
        for p, a in ((sergey, "Сергея Воробьёва"), (masha, "Марию Ефремову"), (nick, "Nick"))
    }
    ps = [sergey, masha, nick]

    def caught(text: str) -> bool:
        return bool(problems(text, ps, accs))

    assert not caught("№3 Мария Ефремова голосует за №22 Сергея Воробьёва. 3 голоса, 5 голосов.")
    assert caught("Голосует за №22 Сергей Воробьёв.")
    assert caught("(правило G6)") and caught("см. §5")
    assert caught("Игрок skipped the vote") and not caught("Nick голосует")
    assert caught("Роль: None") and caught("{{ x }}")
    assert caught("3 голосов") and caught("5 голоса") and caught("21 голоса")
    assert not caught("до 5 декабря 2026, 14:33 МСК") and not caught("с 21 мая")
    assert caught("5 декабрь") and caught("40 декабря")
    assert not caught("21 живой игрок из 26, +2 штрафных голоса")
    assert not caught("Например: «удар 5 доктор».") and caught("Например: 5 доктор.")
    assert caught("№3 Мария Ефремова назвал №22 Сергея Воробьёва комиссаром.")
    assert caught("Казнена №22 Сергей Воробьёв, роль — мафия.")
    assert caught("№5 Nick выбыл из игры")  # VK told no gender: a neutral wording
    assert not caught("№5 Nick выбывает из игры")


def test_a_theme_text_that_does_not_render_is_refused_with_its_line() -> None:
    with pytest.raises(MessageError) as e:
        gmtext.compile_text("Первая строка.\n{% if deaths %}\nНочь.")
    assert e.value.line == 2 and "незакрыт" in e.value.reason
    with pytest.raises(MessageError) as e:
        gmtext.compile_text("Раз.\nДва {{ deaths|nope }}.")
    assert e.value.line == 2 and "nope" in e.value.reason
    with pytest.raises(MessageError, match="неизвестная переменная «nobody»"):
        gmtext.render(gmtext.compile_text("{{ nobody }}"), {}, output=100)


def test_a_broken_game_override_falls_back_to_the_themes_own_text() -> None:
    broken = themes.Theme("classic", {"night_story": "{% if %}"})
    text = render("board/night_opened", theme=broken, number=2, deadline=DEADLINE)
    assert text == (
        "Ночь 2 наступила. Город засыпает.\n"
        f"Действия принимаются в личных сообщениях до {DEADLINE}."
    )
    own = themes.Theme("classic", {"night_story": "Луна над {{ number }}-й ночью."})
    assert "Луна над 2-й ночью." in render(
        "board/night_opened", theme=own, number=2, deadline=DEADLINE
    )


@settings(max_examples=150, deadline=None)
@given(
    name=st.text(
        st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=40
    ),
    sex=st.sampled_from([0, 1, 2]),
    case=st.sampled_from(grammar.CASES),
)
def test_no_name_crashes_the_grammar(name: str, sex: int, case: str) -> None:
    declined = grammar.decline_name(name, case, sex)
    assert isinstance(declined, str) and declined
    person = Person(7, name, sex)
    text = render("player/vote_accepted", target=person, early=False, early_ignored=False)
    assert text.startswith("Ваш голос за №7 ")


def test_numerals_agree() -> None:
    assert [grammar.count(n, "голос") for n in (1, 3, 5, 11, 21, 22, 25)] == [
        "1 голос",
        "3 голоса",
        "5 голосов",
        "11 голосов",
        "21 голос",
        "22 голоса",
        "25 голосов",
    ]
    assert grammar.count(21, "живой игрок") == "21 живой игрок"
    assert grammar.count(5, "штрафной голос") == "5 штрафных голосов"


@pytest.mark.parametrize("phrase", ["голос", "живой игрок", "штрафной голос", "ночь", "часы"])
def test_a_count_agrees_like_its_agreement(phrase: str) -> None:
    """The templates' filters cache the grammar's answer per agreement, not per number: the
    two must be one for every count."""
    source = f"{{{{ n|count:'{phrase}' }}}}|{{{{ n|plural:'{phrase}' }}}}"
    template = messages.engine().from_string(source)
    for n in [*range(0, 26), *range(100, 126), 211, 1001, 1011, 1012, 1021, -1, -3, -11]:
        assert grammar.plural(n, phrase) == grammar.plural(grammar.agreement(n), phrase), n
        rendered = messages.render_template(template, {"n": n})
        assert rendered == f"{grammar.count(n, phrase)}|{grammar.plural(n, phrase)}", n


def test_deadlines_read_as_times() -> None:
    now = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    assert messages.closes_in(timedelta(minutes=90)) == "через 1 ч 30 мин"
    assert when(now, TZ) == "01.12 15:00 МСК" and when(None, TZ) == "решения ведущего"
    assert when(now, "Asia/Yekaterinburg") == "01.12 17:00 МСК+2"


def test_every_refusal_of_the_services_has_its_own_text() -> None:
    """The non-rule refusals (gameplay.refusals) each read their own file under
    templates/messages/refusals/, like the rules' (tests/rules/test_errors.py)."""
    import gameplay.refusals as refusals
    from gameplay.rules.errors import RuleViolation

    classes = [
        getattr(refusals, name)
        for name in refusals.__all__
        if isinstance(getattr(refusals, name), type)
        and issubclass(getattr(refusals, name), RuleViolation)
    ]
    assert len(classes) > 90
    missing = [c.__name__ for c in classes if c.text_name() not in messages.names()]
    assert not missing, missing


def test_a_used_item_agrees_with_its_name() -> None:
    base = {
        "game": "Игра",
        "seat": Person(1, "Вера", 1),
        "role": "civilian",
        "strikes": 0,
        "alive": True,
        "phase": "",
        "item_used": True,
    }
    said = [render("player/status", item=i, **base).splitlines()[1] for i in ITEMS]
    assert said == [
        "Предмет: «Старинные часы» (использованы).",
        "Предмет: «Загадочная красная кнопка» (использована).",
        "Предмет: «Книга из будущего» (использована).",
    ]


def test_the_strike_rule_is_worded_once_for_players() -> None:
    """One template words the rule (player/strike_rule); the texts that tell it include it."""
    rule = render("player/strike_rule")
    assert "модкилл" in rule
    sources = [p for p in messages.ROOT.glob("*/*.txt") if "Второй штраф —" in p.read_text()]
    assert [p.name for p in sources] == ["strike_rule.txt"]
    for name in ("player/struck", "player/struck_out", "player/status"):
        assert all(
            rule in render(name, **ctx) for ctx in CASES[name](people(0)) if ctx.get("strikes", 1)
        ), name


@pytest.mark.parametrize("name", ["", "America", "Марс/Олимп", "../etc", "Europe\x00"])
def test_a_zone_that_is_no_zone_reads_as_moscow(name: str) -> None:
    """A bad stored zone never breaks a text: «America» (a folder of the zone database) raises
    an OSError, not ZoneInfoNotFoundError."""
    from datetime import UTC, datetime

    from gameplay.messages import known_zone, moment, zone_label

    assert zone_label(name) == "МСК"
    assert moment(datetime(2026, 12, 1, 11, 33, tzinfo=UTC), name) == "01.12 14:33 МСК"
    assert name == "" or known_zone(name) is None


def test_clear_caches_forgets_the_refusals_texts_and_the_templates_unless_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gameplay.rules.errors import InvalidCommand

    monkeypatch.setattr(messages, "_REFUSAL_NAMES", {})
    text = messages.refusal(InvalidCommand())
    assert InvalidCommand in messages._REFUSAL_NAMES
    compiled = messages.engine()
    messages.clear_caches(templates=False)
    assert messages._REFUSAL_NAMES == {}
    assert messages.engine() is compiled
    messages.clear_caches()
    assert messages.engine() is not compiled
    assert messages.refusal(InvalidCommand()) == text  # read again, the same
