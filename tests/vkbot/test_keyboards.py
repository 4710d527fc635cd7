"""Keyboards stay within VK's limits (checked by the local VK server's own validator) and
payloads survive the round trip; anything else is a BadPayload. The buttons an Outbox row
stores (gameplay.buttons) render as VK's JSON (vkbot.keyboards); a row written by the older
code (VK's JSON already) is delivered as it is."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gameplay.buttons import (
    MAX_PAYLOAD,
    BadPayload,
    Button,
    Keyboard,
    Payload,
    choice_keyboard,
    decode,
    menu_keyboard,
    targets_keyboard,
)
from localvk.keyboard import validate_keyboard
from vkbot.keyboards import labels_of, of_row, payloads_of, render


def valid(board: dict) -> dict:
    """What VK would accept (the local server's validator: limits, labels, payload size) of a
    stored keyboard rendered for VK."""
    return validate_keyboard(json.dumps(of_row(board), ensure_ascii=False))


def test_payload_round_trip_and_size() -> None:
    p = Payload(
        "role_strike", game=2**40, phase=2**40, target=26, guess="commissar", early=True, offset=16
    )
    assert decode(p.encode()) == p
    assert decode(json.loads(p.encode())) == p  # message_event sends an object
    assert len(p.encode()) <= MAX_PAYLOAD


@pytest.mark.parametrize(
    "raw",
    [
        None,
        "",
        "[]",
        "nonsense",
        '{"a": "hack"}',
        '{"command": "start"}',
        '{"a": "vote", "t": 0}',
        '{"a": "vote", "t": -3}',
        '{"a": "vote", "t": true}',
        '{"a": "vote", "g": "5"}',
        '{"a": "vote", "x": 1}',
        '{"a": "role_strike", "r": "mafia"}',
        '{"a": "vote", "e": 2}',
        '{"a": "vote", "t": 1.5}',
        "[" * 5000,
        17,
    ],
)
def test_forged_payloads_are_refused(raw: object) -> None:
    with pytest.raises(BadPayload):
        decode(raw)


@given(
    st.one_of(
        st.text(max_size=400),
        st.dictionaries(st.text(max_size=3), st.integers()),
        st.integers(),
        st.none(),
        st.lists(st.integers()),
    )
)
def test_decode_raises_only_bad_payload(raw: object) -> None:
    try:
        decode(raw)
    except BadPayload:
        pass


def _button(board: dict, label: str) -> Payload | None:
    keyboard = of_row(board)
    assert keyboard is not None
    for row in keyboard["buttons"]:
        for b in row:
            if b["action"]["label"] == label:
                return decode(b["action"]["payload"])
    return None


@given(
    st.integers(min_value=0, max_value=45),
    st.integers(min_value=0, max_value=3),
    st.integers(min_value=0, max_value=60),
)
def test_target_pages_fit_vk_and_cover_every_target_once(n: int, extras: int, offset: int) -> None:
    targets = [(i, f"Игрок с очень длинным именем {i}") for i in range(1, n + 1)]
    base = Payload("mafia_shot", game=1, phase=2)
    extra = [Button(f"Доп {i}", base.but(early=True)) for i in range(extras)]
    seen: list[int] = []
    page = targets_keyboard(targets, base, extra=extra)
    for _ in range(50):
        valid(page)
        seen += [p.target for p in payloads_of(page) if p.target is not None]
        forward = _button(page, "▶")
        if forward is None:
            break
        back = targets_keyboard(targets, base, offset=forward.offset, extra=extra)
        assert _button(back, "◀") is not None
        page = back
    assert seen == list(range(1, n + 1))
    # any offset at all gives a valid page
    valid(targets_keyboard(targets, base, offset=offset, extra=extra))


def test_small_lists_need_no_paging() -> None:
    base = Payload("heal", game=1, phase=1)
    board = targets_keyboard([(i, str(i)) for i in range(1, 11)], base)
    assert [p.target for p in payloads_of(board)] == list(range(1, 11))
    assert "▶" not in labels_of(board)


def test_menu_and_choices_are_valid() -> None:
    menu = valid(menu_keyboard())
    assert menu["inline"] is False and labels_of(menu) == ["Действия", "Статус", "Помощь"]
    valid(choice_keyboard([(f"Вариант {i}", Payload("status")) for i in range(12)]))


def test_keyboard_refuses_too_many_buttons() -> None:
    button = Button("x", Payload("status"))
    with pytest.raises(ValueError):
        render(Keyboard(((button,) * 6,), inline=True))
    with pytest.raises(ValueError):
        render(Keyboard(((button,) * 5,) * 3, inline=True))
    valid(Keyboard(((button,) * 5,) * 8, inline=False).to_json())


def test_stored_buttons_render_as_vk_json() -> None:
    """The VK JSON of a stored keyboard, exactly: callback buttons with their payloads, the
    menu's text buttons, long labels cut at VK's 40 characters."""
    base = Payload("heal", game=4, phase=9)
    board = targets_keyboard(
        [(1, "Аня"), (2, "Очень " * 10 + "длинное имя")], base, color="positive"
    )
    assert of_row(board) == {
        "inline": True,
        "buttons": [
            [
                {
                    "action": {
                        "type": "callback",
                        "label": "№1 Аня",
                        "payload": '{"g":4,"p":9,"a":"heal","t":1}',
                    },
                    "color": "positive",
                },
                {
                    "action": {
                        "type": "callback",
                        "label": "№2 " + ("Очень " * 10)[:36] + "…",
                        "payload": '{"g":4,"p":9,"a":"heal","t":2}',
                    },
                    "color": "positive",
                },
            ]
        ],
    }
    assert of_row(menu_keyboard()) == {
        "inline": False,
        "one_time": False,
        "buttons": [
            [
                {
                    "action": {
                        "type": "text",
                        "label": label,
                        "payload": f'{{"g":0,"p":0,"a":"{a}"}}',
                    },
                    "color": "primary",
                }
                for label, a in (("Действия", "menu"), ("Статус", "status"), ("Помощь", "help"))
            ]
        ],
    }
    assert of_row(None) is None and of_row({}) is None


def test_a_row_holding_vk_json_is_delivered_as_it_is() -> None:
    """Outbox rows written before the buttons were stored without VK (still pending at the
    upgrade) hold VK's keyboard JSON: it goes out unchanged."""
    old = {
        "inline": True,
        "buttons": [
            [
                {
                    "action": {
                        "type": "callback",
                        "label": "№3 Боря",
                        "payload": '{"g":1,"p":2,"a":"vote","t":3}',
                    },
                    "color": "secondary",
                }
            ]
        ],
    }
    assert of_row(old) is old
    assert labels_of(old) == ["№3 Боря"] and [p.target for p in payloads_of(old)] == [3]
