"""Untrusted bytes: every parser of outside input takes anything and either
returns a value or refuses with its own error; nothing else escapes.

The bot's parsers of DM texts, board posts and button payloads are fuzzed in
tests/vkbot/test_parsing.py, test_keyboards.py and test_handlers_fuzz.py; here: the Callback
endpoint's body, the panel's forms and the GM's own parsers, the scenario file and the
environment variables. Bounded examples: the whole file takes seconds.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from django import forms
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from config import env
from config.env import EnvError
from gameplay.models import InboundEvent
from gameplay.replay import ScenarioError, parse_scenario
from gameplay.rules import RuleViolation
from gameplay.services.signup import parse_player_lines
from gameplay.services.vkrefs import chat_peer_id, parse_vk_user
from panel import forms as panel_forms
from tests.localvk.support import GROUP_ID
from tests.vkbot.ingest_support import SECRET, configure
from vkbot.inbox import apply_inbox

PURE = settings(max_examples=min(settings().max_examples, 150), deadline=None)
#: A database round trip per example.
WITH_DB = settings(
    max_examples=min(settings().max_examples, 60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _json_values(floats: st.SearchStrategy[float]) -> st.SearchStrategy[Any]:
    return st.recursive(
        st.none() | st.booleans() | st.integers() | floats | st.text(max_size=30),
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=20,
    )


JSON = _json_values(st.floats(allow_nan=False))
#: Also what ``json.dumps`` writes beyond standard JSON (NaN, Infinity): the Callback's 400.
LAX_JSON = _json_values(st.floats())
#: Text with the characters parsers trip on: digits, separators, quotes, brackets, NUL.
TEXT = st.text(
    st.characters(codec="utf-8") | st.sampled_from("0123456789 ,;:\t\n-+_.[]{}|\"'\\/@#№idvk\x00"),
    max_size=80,
)


# --- the Callback endpoint -----------------------------------------------------------------


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


BODIES = st.one_of(
    st.binary(max_size=300),
    TEXT,
    LAX_JSON.map(json.dumps),
    st.integers(1, 100_000).map(nested),
    st.builds(
        lambda obj, kind, secret, group: json.dumps(
            {"type": kind, "secret": secret, "group_id": group, "object": obj, "event_id": "fuzz"}
        ),
        LAX_JSON,
        st.sampled_from(
            [
                "message_new",
                "message_event",
                "board_post_new",
                "board_post_edit",
                "board_post_delete",
                "message_allow",
                "confirmation",
                "x",
            ]
        ),
        st.sampled_from([SECRET, "wrong", None]),
        st.sampled_from(
            [GROUP_ID, str(GROUP_ID), -GROUP_ID, None, float("inf"), float("nan"), 10**30]
        ),
    ),
    st.builds(
        lambda kind, number: f'{{"type": "{kind}", "group_id": {number}, "secret": "{SECRET}"}}',
        st.sampled_from(["confirmation", "message_new"]),
        st.sampled_from(["1e400", "-1e400", "Infinity", "-Infinity", "NaN", "1.5", "1e-400"]),
    ),
)


@pytest.mark.django_db
@WITH_DB
@given(body=BODIES)
def test_the_callback_answers_any_body_with_a_status(body: Any, settings: Any) -> None:
    configure(settings)
    client = Client(raise_request_exception=True)

    response = client.post("/vk/callback/", data=body, content_type="application/json")

    assert response.status_code in {200, 400, 403, 413, 503}
    apply_inbox()  # what was recorded is applied (or its handler's crash isolated), no raise
    assert not InboundEvent.objects.exists()


# --- the panel's forms and the GM's parsers ------------------------------------------------


def _form_data(form_class: type[forms.Form], values: list[str]) -> dict[str, str]:
    names = list(form_class.base_fields)
    return {name: values[i % len(values)] for i, name in enumerate(names)} if values else {}


FORMS: list[tuple[type[forms.Form], dict[str, Any]]] = [
    (panel_forms.GameSettingsForm, {}),
    (panel_forms.GameSettingsForm, {"counts_locked": True}),
    (panel_forms.PlayerAddForm, {}),
    (panel_forms.PlayerBulkForm, {}),
    (panel_forms.ExtendForm, {}),
    (panel_forms.ReasonForm, {}),
    (panel_forms.RequiredReasonForm, {}),
    (panel_forms.NightEditForm, {"living": [(1, "1. Аня"), (2, "2. Боря")]}),
    (panel_forms.ReplaceForm, {}),
    (panel_forms.EndGameForm, {}),
    (panel_forms.ChatLinkForm, {}),
    (panel_forms.FlagForm, {}),
    (panel_forms.LogFilterForm, {"kinds": [("vote", "Голос")]}),
    (panel_forms.HistoryLookupForm, {}),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("form_class", "kwargs"), FORMS, ids=lambda v: getattr(v, "__name__", ""))
@WITH_DB
@given(values=st.lists(TEXT, max_size=6))
def test_panel_forms_take_any_input(
    form_class: type[forms.Form], kwargs: dict[str, Any], values: list[str]
) -> None:
    form = form_class(data=_form_data(form_class, values), **kwargs)

    if form.is_valid():
        assert isinstance(form.cleaned_data, dict)
    else:
        assert form.errors


@PURE
@given(TEXT)
def test_gm_parsers_take_any_text(text: str) -> None:
    for parse in (parse_vk_user, parse_player_lines):
        try:
            parse(text=text)
        except RuleViolation as e:
            assert e.reason


@PURE
@given(st.one_of(st.integers(), st.booleans(), st.none(), TEXT))
def test_chat_numbers_take_any_value(value: Any) -> None:
    try:
        peer = chat_peer_id(value=value)
    except RuleViolation as e:
        assert e.reason
    else:
        assert peer > 2_000_000_000


# --- the scenario file ---------------------------------------------------------------------

PLAYER = st.fixed_dictionaries(
    {"seat": JSON | st.integers(-2, 30), "role": JSON | st.sampled_from(["mafia", "doctor"])},
    optional={"item": JSON, "name": JSON},
)
SCENARIOS = st.one_of(
    TEXT,
    st.integers(1, 50_000).map(nested),
    JSON.map(json.dumps),
    st.fixed_dictionaries(
        {"players": st.lists(PLAYER, max_size=4) | JSON, "phases": st.lists(JSON, max_size=4)},
        optional={"settings": JSON},
    ).map(json.dumps),
)


@PURE
@given(SCENARIOS)
def test_the_scenario_parser_takes_any_file(text: str) -> None:
    try:
        parse_scenario(text)
    except ScenarioError as e:
        assert str(e)


# --- environment variables -----------------------------------------------------------------

ENV_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=60) | (
    st.sampled_from(
        [
            "postgres://",
            "sqlite://",
            "redis://",
            "rediss://h:x/0",
            "unix://",
            "postgres://u:p@h:99999/db",
            "sqlite:///",
            "0",
            "-1",
            "1e9",
            " on ",
        ]
    ).flatmap(lambda prefix: st.text(max_size=20).map(lambda tail: prefix + tail))
)
GETTERS = [
    lambda e: env.get_str("V", environ=e),
    lambda e: env.get_bool("V", False, environ=e),
    lambda e: env.get_int("V", 3, minimum=1, environ=e),
    lambda e: env.get_list("V", environ=e),
    lambda e: env.get_choice("V", ("DEBUG", "INFO"), "INFO", environ=e),
    lambda e: env.get_database("V", "/tmp/x.sqlite3", environ=e),
    lambda e: env.get_redis_url("V", environ=e),
    lambda e: env.get_time_zone("V", "UTC", environ=e),
    lambda e: env.get_proxy_ssl_header("V", "off", environ=e),
]


@PURE
@given(ENV_TEXT)
def test_every_env_getter_takes_any_value(raw: str) -> None:
    for getter in GETTERS:
        try:
            getter({"V": raw})
        except EnvError as e:
            assert "V" in str(e) and "\n" not in str(e).strip()
