"""Hypothesis feeds ``dispatch`` arbitrary updates, texts, payloads and board posts: nothing
escapes, every private message and every pressed button is answered, every refused vote in
the board is answered in the topic, and a forged payload changes nothing."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gameplay.buttons import ACTIONS, GUESSES
from gameplay.models import Game, GameEvent, NightAction, Outbox, OutboxChannel, Seat, Vote
from tests.module_db import module_rows
from tests.vkbot.bot_support import (
    board_delete,
    board_edit,
    board_post,
    kill,
    make_game,
    phase,
    pm,
    press,
    run,
    to_night,
)
from vkbot import parsing
from vkbot.handlers import dispatch
from vkbot.handlers.base import CHAT_PEER_BASE

pytestmark = [pytest.mark.django_db, pytest.mark.slow]

#: Each example is a database round trip (a savepoint, the handlers, a rollback): at most 200
#: of them per test keeps the suite within CI's time on two cores; the pure parsers and
#: keyboards get the profile's full count (tests/vkbot/test_parsing.py, test_keyboards.py).
FUZZ = settings(
    max_examples=min(settings().max_examples, 200),
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    deadline=None,
)

WORDS = [
    "проверка",
    "выстрел",
    "лечу",
    "удар",
    "часы",
    "кнопка",
    "книга",
    "голос",
    "голос:",
    "статус",
    "помощь",
    "+",
    "запас",
    "снимаюсь",
    "в ЗЗ",
    "!",
    "подсчёт",
    "Действия",
    "досрочно",
    "за",
]
TARGETS = st.one_of(
    st.integers(-3, 40).map(str),
    st.sampled_from(["Аня", "аня петрова", "Фёдор", "федора", "себя", "Зинаида", "№3", "#7"]),
    st.integers(0, 2_000_000_100).map(lambda n: f"[id{n}|x]"),
    st.integers(0, 3000).map(lambda n: f"@id{n}"),
    st.text(max_size=20),
)
TEXTS = st.one_of(
    st.text(max_size=200),
    st.builds(
        lambda w, t, tail: f"{w} {t} {tail}",
        st.sampled_from(WORDS),
        TARGETS,
        st.sampled_from(["", "комиссар", "доктор", "досрочно", "маньяк", "мафия"]),
    ),
)
SENDERS = st.sampled_from([1001, 1002, 1003, 1004, 1005, 1006, 1007, 4242])
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def _world() -> dict[str, int]:
    game = make_game()
    other = make_game(vk_base=5000)
    day1 = phase(game)
    night = to_night(game)
    to_night(other)
    kill(game, 7)
    return {"game": game.pk, "other": other.pk, "day1": day1.pk, "night": night.pk}


#: Built once for the module (every example rolls back what it did: :func:`isolated`).
_world_rows = module_rows(_world)


@pytest.fixture
def world(_world_rows: dict[str, int]) -> dict[str, Any]:
    """A game on night 1 with seat 7 dead, and another game on night 1 (built once per
    module, read afresh for each test)."""
    games = Game.objects.in_bulk([_world_rows["game"], _world_rows["other"]])
    return {
        **_world_rows,
        "game": games[_world_rows["game"]],
        "other": games[_world_rows["other"]],
    }


def snapshot(game: Game) -> tuple:
    return (
        list(NightAction.objects.filter(phase__game=game).values_list("id", "current")),
        list(Vote.objects.filter(phase__game=game).values_list("id", "current")),
        list(
            Seat.objects.filter(game=game).values_list(
                "id", "alive", "strikes", "status", "vk_user_id"
            )
        ),
        Game.objects.filter(pk=game.pk).values_list("status", "role_strike_used")[0],
    )


def isolated(check: Any) -> None:
    """Run one example in a transaction that is rolled back (examples don't see each other)."""
    with transaction.atomic():
        check()
        transaction.set_rollback(True)


def payloads(w: dict[str, Any]) -> st.SearchStrategy[Any]:
    valid_ish = st.fixed_dictionaries(
        {
            "a": st.sampled_from(sorted(ACTIONS)),
            "g": st.sampled_from([w["game"].pk, 0, 10**12]),
            "p": st.sampled_from([w["night"], w["day1"], 0]),
        },
        optional={
            "t": st.integers(-1, 30),
            "r": st.sampled_from(sorted(GUESSES)),
            "e": st.sampled_from([0, 1]),
            "o": st.integers(0, 40),
        },
    )
    return st.one_of(valid_ish, valid_ish.map(json.dumps), JSON, st.text(max_size=60))


@FUZZ
@given(data=st.data())
def test_private_messages_are_always_answered(world: dict[str, Any], data: st.DataObject) -> None:
    sender = data.draw(SENDERS)
    text = data.draw(TEXTS)
    payload = data.draw(st.one_of(st.none(), payloads(world)))

    def check() -> None:
        out = run(pm(sender, text, payload))
        mine = [o for o in out if o.channel == OutboxChannel.MESSAGE and sender in o.peer_ids]
        assert mine, (text, payload)

    isolated(check)


@FUZZ
@given(data=st.data())
def test_buttons_are_always_answered(world: dict[str, Any], data: st.DataObject) -> None:
    sender = data.draw(SENDERS)
    payload = data.draw(payloads(world))

    def check() -> None:
        out = run(press(sender, payload))
        answers = [o for o in out if o.channel == OutboxChannel.EVENT_ANSWER]
        assert len(answers) == 1 and answers[0].payload is not None
        assert answers[0].payload["user_id"] == sender

    isolated(check)


@FUZZ
@given(data=st.data())
def test_forged_payloads_change_nothing(world: dict[str, Any], data: st.DataObject) -> None:
    """Another game, a closed phase, a dead target: refused, nothing changes."""
    game, other = world["game"], world["other"]
    sender = data.draw(st.sampled_from([1001, 1002, 1003, 1004, 1005, 1006]))
    action = data.draw(st.sampled_from(sorted(ACTIONS - {"signup", "status", "help", "menu"})))
    forgery = data.draw(st.sampled_from(["game", "phase", "dead"]))
    payload = {"a": action, "g": game.pk, "p": world["night"], "t": data.draw(st.integers(1, 6))}
    if action == "role_strike":
        payload["r"] = data.draw(st.sampled_from(sorted(GUESSES)))
    if forgery == "game":
        payload["g"] = other.pk
        payload["p"] = phase(other).pk
    elif forgery == "phase":
        payload["p"] = world["day1"]
    else:
        payload["t"] = 7
    via = data.draw(st.sampled_from(["event", "text_button"]))

    def check() -> None:
        before = snapshot(game), snapshot(other)
        update = press(sender, payload) if via == "event" else pm(sender, "x", json.dumps(payload))
        out = run(update)
        assert (snapshot(game), snapshot(other)) == before, payload
        assert [o for o in out if o.kind == "refusal" and sender in o.peer_ids], payload

    isolated(check)


@FUZZ
@given(data=st.data())
def test_board_posts(world: dict[str, Any], data: st.DataObject) -> None:
    game = world["game"]
    topic = data.draw(st.sampled_from([game.topic_id, game.recruit_topic_id, 1, -5]))
    author = data.draw(st.one_of(SENDERS, st.integers(-100, 2_000_000_100)))
    text = data.draw(TEXTS)
    post_id = data.draw(st.integers(1, 10**9))
    kind = data.draw(st.sampled_from(["new", "edit", "delete"]))

    def check() -> None:
        events = GameEvent.objects.filter(game=game).count()
        if kind == "new":
            update = board_post(topic, author, text, post_id)
        elif kind == "edit":
            update = board_edit(topic, author, post_id, text)
        else:
            update = board_delete(topic, post_id)
        out = run(update)
        cmd = parsing.parse_board(text)
        voted = Vote.objects.filter(phase__game=game, vk_post_id=post_id).exists()
        # A VK user's id is under 2000000000 (ids from there on are chats' peer ids): a post
        # "from" one is no person's, and the reader (handlers.base.user_id) drops it unanswered.
        if (
            kind == "new"
            and topic == game.topic_id
            and cmd is not None
            and 0 < author < CHAT_PEER_BASE
            and cmd.kind == parsing.VOTE
            and not voted
        ):
            assert [o for o in out if o.channel == OutboxChannel.BOARD], text
        if kind != "new":
            assert GameEvent.objects.filter(game=game).count() == events

    isolated(check)


@FUZZ
@given(
    update=st.one_of(
        JSON,
        st.fixed_dictionaries(
            {
                "type": st.sampled_from(
                    [
                        "message_new",
                        "message_event",
                        "board_post_new",
                        "board_post_edit",
                        "board_post_delete",
                        "group_join",
                        "message_reply",
                        "",
                    ]
                )
            },
            optional={"object": JSON, "event_id": JSON, "group_id": JSON},
        ),
        st.fixed_dictionaries(
            {
                "type": st.just("message_new"),
                "object": st.fixed_dictionaries(
                    {
                        "message": st.dictionaries(
                            st.sampled_from(
                                ["from_id", "peer_id", "text", "payload", "action", "out"]
                            ),
                            JSON,
                        )
                    }
                ),
            }
        ),
    )
)
def test_any_update_at_all(world: dict[str, Any], update: Any) -> None:
    def check() -> None:
        dispatch(update)
        assert Outbox.objects.filter(kind="internal_error").count() == 0

    isolated(check)
