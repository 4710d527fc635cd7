"""The routing table covers every input the parsers and the payload decoder can give: every
button action has its handler, every private command kind but «empty» and «unknown» (which get
their refusals) has one."""

from __future__ import annotations

from gameplay.buttons import ACTIONS
from vkbot import parsing
from vkbot.handlers import routes


def test_every_button_action_has_a_handler() -> None:
    assert set(routes.BUTTONS) == set(ACTIONS)


def test_every_text_command_has_a_handler() -> None:
    kinds = {
        v
        for k, v in vars(parsing).items()
        if k.isupper()
        and isinstance(v, str)
        and k
        in {
            "NIGHT",
            "VOTE",
            "COUNT",
            "STATUS",
            "HELP",
            "MENU",
            "SIGNUP",
            "RESERVE",
            "WITHDRAW",
            "SPECTATORS",
            "RELAY",
        }
    }
    assert set(routes.TEXT) == kinds
    assert parsing.EMPTY not in routes.TEXT and parsing.UNKNOWN not in routes.TEXT


def test_board_commands_and_update_types() -> None:
    assert set(routes.BOARD) == {
        parsing.SIGNUP,
        parsing.RESERVE,
        parsing.WITHDRAW,
        parsing.COUNT,
        parsing.VOTE,
    }
    assert set(routes.UPDATES) == {
        "message_new",
        "message_event",
        "board_post_new",
        "board_post_edit",
        "board_post_delete",
    }
