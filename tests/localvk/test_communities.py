"""Several communities in one local VK server: each its own long poll, board, conversations,
token rights, rate limits and record of calls; requests attributed by their token; the
control endpoints and the player page take the community; the command-line options; and the
API methods a community admin's "connect" flow calls, with VK's shapes and refusals."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
from aiohttp import web

from localvk import (
    Communities,
    LocalVK,
    RunningServer,
    persist,
    running_server,
    token_fingerprint,
)
from localvk.__main__ import build_parser, state_from_args
from localvk.community_options import parse_community
from localvk.scopes import parse_scopes, token_permissions
from tests.async_support import wait_until
from tests.localvk.support import (
    ADMIN_ID,
    GROUP_ID,
    GROUP_TOKEN,
    USER_TOKEN,
    control,
    make_state,
    raw_call,
)

B_ID = 88
B_TOKEN = "b-group-token"
B_USER = "b-user-token"
NO_MANAGE = "no-manage-token"
PLAYER = 4242


@pytest_asyncio.fixture
async def two() -> AsyncIterator[RunningServer]:
    """The test community (A, the default) and community B with its own tokens."""
    state = make_state()
    Communities.of(state).create(
        group_id=B_ID, group_token=B_TOKEN, user_tokens=[B_USER], group_name="Мафия Б"
    )
    async with running_server(state) as srv:
        yield srv


async def ok(
    http: aiohttp.ClientSession,
    srv: RunningServer,
    method: str,
    params: dict[str, Any],
    token: str = GROUP_TOKEN,
) -> Any:
    status, body = await raw_call(http, srv, method, params, token=token)
    assert status == 200 and "response" in body, body
    return body["response"]


async def error(
    http: aiohttp.ClientSession,
    srv: RunningServer,
    method: str,
    params: dict[str, Any],
    token: str = GROUP_TOKEN,
) -> dict[str, Any]:
    status, body = await raw_call(http, srv, method, params, token=token)
    assert status == 200 and "error" in body, body
    return dict(body["error"])


async def poll(
    http: aiohttp.ClientSession, server: dict[str, Any], ts: str, wait: int = 0
) -> dict[str, Any]:
    url = f"{server['server']}?act=a_check&key={server['key']}&ts={ts}&wait={wait}"
    async with http.get(url) as response:
        return dict(await response.json())


# --- the registry ------------------------------------------------------------------------------


def test_communities_share_people_and_keep_everything_else_apart() -> None:
    a = make_state()
    registry = Communities.of(a)
    b = registry.create(group_id=B_ID, group_token=B_TOKEN, user_tokens=[USER_TOKEN, B_USER])
    assert Communities.of(b) is registry and registry.get() is a and registry.get(B_ID) is b
    a.add_user(PLAYER, "Ира", "Львова", 1)
    assert b.user(PLAYER).first_name == "Ира"  # people are global
    a.create_topic("Игра")
    assert b.create_topic("Своя").id == 1  # topic ids are per community
    # The same user token is the same person: an admin of both; a new one gets a new id.
    assert b.user_tokens == {USER_TOKEN: ADMIN_ID, B_USER: ADMIN_ID + 1}
    assert b.base_url == a.base_url and b.limits.per_kind == a.limits.per_kind
    for clash in (
        {"group_id": B_ID, "group_token": "x"},
        {"group_id": 99, "group_token": GROUP_TOKEN},
        {"group_id": 99, "group_token": USER_TOKEN},
        {"group_id": 99, "group_token": "y", "user_tokens": [B_TOKEN]},
        {"group_id": 99, "group_token": "y", "user_tokens": {USER_TOKEN: 7}},
        {"group_id": 99, "group_token": "y", "scopes": "messages,walls"},
    ):
        with pytest.raises(ValueError):
            registry.create(**clash)
    assert len(registry) == 2
    with pytest.raises(ValueError, match="no community 5"):
        registry.get(5)


def test_scopes_are_vks_bits() -> None:
    assert parse_scopes(None) == {"messages", "manage", "photos", "docs"}
    assert parse_scopes("") == frozenset()
    assert token_permissions(parse_scopes("messages,manage")) == {
        "mask": 4096 + 262144,
        "permissions": [
            {"setting": 4096, "name": "messages"},
            {"setting": 262144, "name": "manage"},
        ],
    }
    with pytest.raises(ValueError, match="unknown community token scope 'wall'"):
        parse_scopes(["wall"])


# --- long polls, tokens and records ---------------------------------------------------------


async def test_each_community_long_polls_its_own_events_only(
    two: RunningServer, http: aiohttp.ClientSession
) -> None:
    server_a = await ok(http, two, "groups.getLongPollServer", {"group_id": GROUP_ID})
    server_b = await ok(http, two, "groups.getLongPollServer", {"group_id": B_ID}, B_TOKEN)
    assert server_a["server"].endswith(f"/lp/{GROUP_ID}")
    assert server_b["server"].endswith(f"/lp/{B_ID}") and server_b["key"] != server_a["key"]
    # A community token cannot ask for another community's server.
    assert (await error(http, two, "groups.getLongPollServer", {"group_id": B_ID}))[
        "error_code"
    ] == 15
    two.community(B_ID).inject_message(PLAYER, "в Б")
    two.state.inject_message(PLAYER, "в А")
    got_a = await poll(http, server_a, server_a["ts"])
    got_b = await poll(http, server_b, server_b["ts"])
    assert [u["object"]["message"]["text"] for u in got_a["updates"]] == ["в А"]
    assert [u["object"]["message"]["text"] for u in got_b["updates"]] == ["в Б"]
    assert {u["group_id"] for u in got_b["updates"]} == {B_ID}
    # The keys are the community's: A's key at B's server is unknown there.
    assert await poll(http, {**server_b, "key": server_a["key"]}, got_b["ts"]) == {"failed": 2}


async def test_a_reply_goes_with_the_communitys_token_and_is_recorded_so(
    two: RunningServer, http: aiohttp.ClientSession
) -> None:
    b = two.community(B_ID)
    b.inject_message(PLAYER, "привет")
    two.state.inject_message(PLAYER, "привет")
    await ok(
        http, two, "messages.send", {"peer_id": PLAYER, "message": "Б", "random_id": 1}, B_TOKEN
    )
    await ok(http, two, "messages.send", {"peer_id": PLAYER, "message": "А", "random_id": 1})
    # Same peer id, same random_id: two conversations, one per community.
    assert [m.text for m in b.sent_messages(PLAYER)] == ["Б"]
    assert [m.text for m in two.state.sent_messages(PLAYER)] == ["А"]
    [to_b] = b.calls("messages.send")
    assert (to_b.group_id, to_b.token_kind, to_b.token) == (
        B_ID,
        "group",
        token_fingerprint(B_TOKEN),
    )
    assert to_b.to_dict()["group_id"] == B_ID and to_b.to_dict()["token"] != B_TOKEN
    assert all(r.group_id == GROUP_ID for r in two.state.calls("messages.send"))
    # Over HTTP: one community's calls, or all of them in order.
    status, answer = await control(http, two, f"calls?method=messages.send&group_id={B_ID}")
    assert status == 200 and [c["group_id"] for c in answer["calls"]] == [B_ID]
    status, answer = await control(http, two, "calls?method=messages.send&all=1")
    seqs = [c["seq"] for c in answer["calls"]]
    assert [c["group_id"] for c in answer["calls"]] == [B_ID, GROUP_ID] and seqs == sorted(seqs)
    # A call with an unknown token is recorded in the default community, attributed to none.
    await error(http, two, "users.get", {}, token="nobody")
    [unknown] = two.state.calls(token_kind="invalid")
    assert unknown.group_id is None


async def test_a_user_token_goes_to_the_community_it_names(
    http: aiohttp.ClientSession,
) -> None:
    state = make_state()
    registry = Communities.of(state)
    registry.create(group_id=B_ID, group_token=B_TOKEN, user_tokens=[USER_TOKEN])
    async with running_server(state) as srv:
        b = srv.community(B_ID)
        b.create_topic("Голосование Б")
        comment = await ok(
            http, srv, "board.createComment",
            {"group_id": B_ID, "topic_id": 1, "message": "в Б", "from_group": 1}, USER_TOKEN,
        )  # fmt: skip
        assert b.topic(1).comments[-1].id == comment and not state.topics
        [record] = b.calls("board.createComment")
        assert (record.group_id, record.token_kind, record.user_id) == (B_ID, "user", ADMIN_ID)
        # Without a group_id: its first community.
        [me] = await ok(http, srv, "users.get", {}, USER_TOKEN)
        assert me["id"] == ADMIN_ID and state.calls("users.get")


async def test_rate_limits_are_per_token(http: aiohttp.ClientSession) -> None:
    state = make_state(group_rps=2, user_rps=1)
    Communities.of(state).create(group_id=B_ID, group_token=B_TOKEN, user_tokens=[USER_TOKEN])
    async with running_server(state) as srv:
        for token in (GROUP_TOKEN, GROUP_TOKEN, B_TOKEN, B_TOKEN):
            await ok(http, srv, "groups.getById", {}, token)  # 2/s each community token
        assert (await error(http, srv, "groups.getById", {}, B_TOKEN))["error_code"] == 6
        # One user token, admin of both: one limiter, wherever its calls go.
        await ok(http, srv, "users.get", {"group_id": GROUP_ID}, USER_TOKEN)
        refused = await error(http, srv, "users.get", {"group_id": B_ID}, USER_TOKEN)
        assert refused["error_code"] == 6


# --- token rights --------------------------------------------------------------------------


async def test_a_token_without_a_right_is_refused_with_error_15(
    http: aiohttp.ClientSession,
) -> None:
    state = make_state(scopes="messages")
    registry = Communities.of(state)
    registry.create(group_id=B_ID, group_token=B_TOKEN, scopes=[])
    async with running_server(state) as srv:
        assert await ok(http, srv, "groups.getTokenPermissions", {}) == {
            "mask": 4096, "permissions": [{"setting": 4096, "name": "messages"}],
        }  # fmt: skip
        assert await ok(http, srv, "groups.getTokenPermissions", {}, B_TOKEN) == {
            "mask": 0, "permissions": [],
        }  # fmt: skip
        for method in (
            "groups.setLongPollSettings",
            "groups.getLongPollSettings",
            "groups.addCallbackServer",
            "groups.setSettings",
        ):
            refused = await error(http, srv, method, {"group_id": GROUP_ID, "enabled": 1})
            assert (refused["error_code"], refused["error_msg"]) == (
                15,
                "Access denied: no access to call this method",
            ), method
        refused = await error(
            http, srv, "messages.send", {"peer_id": PLAYER, "message": "x", "random_id": 0},
            B_TOKEN,
        )  # fmt: skip
        assert (refused["error_code"], refused["error_msg"]) == (
            15,
            "Access denied: no access to call this method",
        )
        assert not srv.community(B_ID).sent_messages()
        # A user-only method with a community token: 27 (unavailable with group auth).
        assert (await error(http, srv, "board.getTopics", {"group_id": GROUP_ID}))[
            "error_code"
        ] == 27
        # Another token with the right (VK lets an admin create several).
        registry.add_token(GROUP_ID, NO_MANAGE + "-fixed", scopes="messages,manage")
        assert await ok(
            http, srv, "groups.getLongPollSettings", {"group_id": GROUP_ID}, NO_MANAGE + "-fixed"
        )
        assert (await error(http, srv, "groups.getTokenPermissions", {}, USER_TOKEN))[
            "error_code"
        ] == 15


# --- the connect flow's methods --------------------------------------------------------------


async def test_get_by_id_says_who_administers_what(
    two: RunningServer, http: aiohttp.ClientSession
) -> None:
    own = await ok(http, two, "groups.getById", {"fields": "members_count"}, B_TOKEN)
    assert [g["id"] for g in own["groups"]] == [B_ID] and "is_admin" not in own["groups"][0]
    assert own["groups"][0]["name"] == "Мафия Б" and own["profiles"] == []
    answer = await ok(
        http,
        two,
        "groups.getById",
        {"group_ids": f"{GROUP_ID},club{B_ID}", "fields": "description"},
        USER_TOKEN,
    )
    a, b = answer["groups"]
    assert (a["id"], a["is_admin"], a["admin_level"]) == (GROUP_ID, 1, 3)
    assert (b["id"], b["is_admin"]) == (B_ID, 0) and "admin_level" not in b
    [me] = await ok(http, two, "users.get", {}, B_USER)
    assert me["id"] == ADMIN_ID + 1
    only_b = await ok(http, two, "groups.getById", {"group_id": B_ID}, B_USER)
    assert only_b["groups"][0]["is_admin"] == 1
    assert (await error(http, two, "groups.getById", {"group_id": 5}, B_USER))["error_code"] == 100


async def test_long_poll_settings_choose_what_the_long_poll_delivers(
    two: RunningServer, http: aiohttp.ClientSession
) -> None:
    b = two.community(B_ID)
    before = await ok(http, two, "groups.getLongPollSettings", {"group_id": B_ID}, B_TOKEN)
    assert before["is_enabled"] is True and before["events"]["board_post_new"] == 1
    assert (
        await ok(
            http,
            two,
            "groups.setLongPollSettings",
            {
                "group_id": B_ID,
                "enabled": 1,
                "api_version": "5.199",
                "message_new": 1,
                "message_event": 1,
            },
            B_TOKEN,
        )
        == 1
    )
    after = await ok(http, two, "groups.getLongPollSettings", {"group_id": B_ID}, B_TOKEN)
    assert after["is_enabled"] is True and after["api_version"] == "5.199"
    assert {k for k, v in after["events"].items() if v} == {"message_new", "message_event"}
    server = await ok(http, two, "groups.getLongPollServer", {"group_id": B_ID}, B_TOKEN)
    topic = b.create_topic("Тема")
    b.inject_board_post(PLAYER, topic.id, "не дойдёт")
    b.inject_message(PLAYER, "дойдёт")
    got = await poll(http, server, server["ts"])
    assert [u["type"] for u in got["updates"]] == ["message_new"]
    # The other community is untouched: it still gets everything.
    two.state.create_topic("Тема А")
    assert two.state.inject_board_post(PLAYER, 1, "да")["type"] == "board_post_new"
    assert [e["type"] for e in two.state.longpoll.events()] == ["board_post_new"]
    # Flags left out keep their value; disabled: nothing.
    await ok(
        http,
        two,
        "groups.setLongPollSettings",
        {"group_id": B_ID, "board_post_new": 1, "message_event": 0},
        B_TOKEN,
    )
    events = (await ok(http, two, "groups.getLongPollSettings", {"group_id": B_ID}, B_TOKEN))[
        "events"
    ]
    assert {k for k, v in events.items() if v} == {"message_new", "board_post_new"}
    await ok(http, two, "groups.setLongPollSettings", {"group_id": B_ID, "enabled": 0}, B_TOKEN)
    b.inject_message(PLAYER, "тишина")
    assert (await poll(http, server, got["ts"]))["updates"] == []
    assert (
        await error(
            http, two, "groups.setLongPollSettings", {"group_id": B_ID, "message_new": 2}, B_TOKEN
        )
    )["error_code"] == 100


async def test_callback_servers_configure_the_communitys_pusher(
    two: RunningServer, http: aiohttp.ClientSession
) -> None:
    got: list[dict[str, Any]] = []
    b = two.community(B_ID)
    code = (await ok(http, two, "groups.getCallbackConfirmationCode", {"group_id": B_ID}, B_TOKEN))[
        "code"
    ]
    assert code == b.settings.confirmation_code and len(code) == 8

    async def receive(request: web.Request) -> web.Response:
        body = json.loads(await request.text())
        got.append(body)
        return web.Response(text=code if body["type"] == "confirmation" else "ok")

    app = web.Application()
    app.router.add_post("/cb/", receive)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}/cb/"
    try:
        assert (
            await error(
                http,
                two,
                "groups.addCallbackServer",
                {"group_id": B_ID, "url": url, "title": "x" * 15},
                B_TOKEN,
            )
        )["error_code"] == 100  # VK: a title of 14 characters at most
        added = await ok(
            http,
            two,
            "groups.addCallbackServer",
            {"group_id": B_ID, "url": url, "title": "vkmafia", "secret_key": "s"},
            B_TOKEN,
        )
        assert added == {"server_id": 1}
        await wait_until(lambda: b.callbacks.confirmed, what="the confirmation")
        assert got[0] == {"type": "confirmation", "group_id": B_ID}
        servers = await ok(http, two, "groups.getCallbackServers", {"group_id": B_ID}, B_TOKEN)
        assert servers == {"count": 1, "items": [{
            "id": 1, "title": "vkmafia", "creator_id": 0, "url": url, "secret_key": "s",
            "status": "ok",
        }]}  # fmt: skip
        b.inject_message(PLAYER, "до настроек")  # no event types ticked yet: not pushed
        assert (
            await ok(
                http,
                two,
                "groups.setCallbackSettings",
                {"group_id": B_ID, "server_id": 1, "api_version": "5.199", "message_new": 1},
                B_TOKEN,
            )
            == 1
        )
        settings = await ok(
            http, two, "groups.getCallbackSettings", {"group_id": B_ID, "server_id": 1}, B_TOKEN
        )
        assert settings["api_version"] == "5.199" and settings["events"]["message_new"] == 1
        assert settings["events"]["board_post_new"] == 0
        await wait_until(lambda: b.callbacks.confirmed, what="the new confirmation")
        b.create_topic("Т")
        b.inject_board_post(PLAYER, 1, "не пушится")
        b.inject_message(PLAYER, "пушится")
        two.state.inject_message(PLAYER, "другое сообщество")
        await wait_until(
            lambda: any(e.get("type") == "message_new" for e in got), what="the pushed event"
        )
        pushed = [e for e in got if e["type"] != "confirmation"]
        assert [(e["object"]["message"]["text"], e["secret"], e["group_id"]) for e in pushed] == [
            ("пушится", "s", B_ID)
        ]
        assert two.state.callbacks.config is None  # A's pusher was never configured
        assert (
            await error(
                http,
                two,
                "groups.deleteCallbackServer",
                {"group_id": B_ID, "server_id": 7},
                B_TOKEN,
            )
        )["error_code"] == 100
        assert (
            await ok(
                http,
                two,
                "groups.deleteCallbackServer",
                {"group_id": B_ID, "server_id": 1},
                B_TOKEN,
            )
            == 1
        )
        assert b.callbacks.config is None
        assert (await ok(http, two, "groups.getCallbackServers", {"group_id": B_ID}, B_TOKEN))[
            "count"
        ] == 0
    finally:
        await runner.cleanup()


async def test_bot_settings_are_remembered(two: RunningServer, http: aiohttp.ClientSession) -> None:
    assert (
        await ok(
            http,
            two,
            "groups.setSettings",
            {
                "group_id": B_ID,
                "messages": 1,
                "bots_capabilities": 1,
                "bots_start_button": 1,
                "bots_add_to_chat": 1,
            },
            B_TOKEN,
        )
        == 1
    )
    settings = await ok(http, two, "groups.getSettings", {"group_id": B_ID}, B_TOKEN)
    assert {
        k: settings[k]
        for k in ("messages", "bots_capabilities", "bots_start_button", "bots_add_to_chat")
    } == dict.fromkeys(
        ("messages", "bots_capabilities", "bots_start_button", "bots_add_to_chat"), 1
    )
    assert settings["title"] == "Мафия Б"
    untouched = await ok(http, two, "groups.getSettings", {"group_id": GROUP_ID})
    assert untouched["messages"] == 0


async def test_board_get_topics_lists_the_communitys_topics(
    two: RunningServer, http: aiohttp.ClientSession
) -> None:
    b = two.community(B_ID)
    first = b.create_topic("Правила", "Читайте")
    second = b.create_topic("Голосование")
    b.inject_board_post(PLAYER, second.id, "голос 3")
    two.state.create_topic("Тема сообщества А")
    answer = await ok(
        http, two, "board.getTopics", {"group_id": B_ID, "preview": 2, "extended": 1}, B_USER
    )
    assert answer["count"] == 2 and answer["default_order"] == 1
    assert answer["can_add_topics"] == 1
    items = answer["items"]
    assert {i["id"] for i in items} == {first.id, second.id}
    by_id = {i["id"]: i for i in items}
    assert by_id[second.id]["comments"] == 1 and by_id[second.id]["last_comment"] == "голос 3"
    assert by_id[second.id]["updated_by"] == PLAYER and by_id[first.id]["created_by"] == -B_ID
    assert set(items[0]) >= {
        "id",
        "title",
        "created",
        "created_by",
        "updated",
        "updated_by",
        "is_closed",
        "is_fixed",
        "comments",
    }
    assert [p["id"] for p in answer["profiles"]] == [PLAYER]
    assert [g["id"] for g in answer["groups"]] == [B_ID]
    picked = await ok(
        http, two, "board.getTopics", {"group_id": B_ID, "topic_ids": str(first.id)}, B_USER
    )
    assert [i["title"] for i in picked["items"]] == ["Правила"]


# --- control endpoints -----------------------------------------------------------------------


async def test_control_endpoints_take_the_community(
    two: RunningServer, http: aiohttp.ClientSession
) -> None:
    status, update = await control(
        http, two, "message_new", {"from_id": PLAYER, "text": "Б", "group_id": B_ID}
    )
    assert status == 200 and update["group_id"] == B_ID
    status, update = await control(http, two, "message_new", {"from_id": PLAYER, "text": "А"})
    assert update["group_id"] == GROUP_ID
    status, topic = await control(http, two, "topics", {"title": "Т", "group_id": B_ID})
    assert topic["id"] == 1
    status, post = await control(
        http, two, "board_post", {"from_id": PLAYER, "topic_id": 1, "text": "x", "group_id": B_ID}
    )
    assert status == 200 and post["type"] == "board_post_new"
    status, chat = await control(
        http, two, "chats", {"title": "Ночь", "member_ids": [PLAYER], "group_id": B_ID}
    )
    assert chat["owner_id"] == -B_ID
    status, messages = await control(http, two, f"messages?peer_id={PLAYER}&group_id={B_ID}")
    assert [m["text"] for m in messages["messages"]] == ["Б"]
    status, board = await control(http, two, f"board?group_id={B_ID}")
    assert [t["title"] for t in board["topics"]] == ["Т"]
    status, stats = await control(http, two, f"stats?group_id={B_ID}")
    assert status == 200 and stats["longpoll_ts"] == 3  # a message and a board post
    status, snapshot = await control(http, two, f"state?group_id={B_ID}")
    assert snapshot["group_id"] == B_ID and snapshot["scopes"] == [
        ["docs", "manage", "messages", "photos"]
    ]
    status, refused = await control(
        http, two, "message_new", {"from_id": PLAYER, "text": "?", "group_id": 5}
    )
    assert status == 400 and refused == {"error": "no community 5 on this server"}
    status, refused = await control(http, two, "events?group_id=abc")
    assert status == 400
    # Callback and fault settings take it too.
    status, _ = await control(http, two, "faults", {"error_rates": {"10": 1.0}, "group_id": B_ID})
    assert status == 200 and two.community(B_ID).faults.config.error_rates == {10: 1.0}
    assert not two.state.faults.config.active
    # Reset: one community, or all.
    status, _ = await control(http, two, "reset", {"group_id": B_ID})
    assert not two.community(B_ID).messages and two.state.messages
    status, _ = await control(http, two, "reset", {})
    assert not two.state.messages


async def test_communities_are_created_and_listed_at_runtime(
    server: RunningServer, http: aiohttp.ClientSession
) -> None:
    status, created = await control(http, server, "communities", {
        "group_id": B_ID, "group_token": NO_MANAGE, "user_tokens": [B_USER],
        "name": "Без управления", "screen_name": "nomanage", "scopes": ["messages"],
    })  # fmt: skip
    assert status == 200 and created == {
        "group_id": B_ID, "name": "Без управления", "screen_name": "nomanage",
        "default": False,
        "group_tokens": [{"token": token_fingerprint(NO_MANAGE), "scopes": ["messages"]}],
        "admins": [ADMIN_ID + 1],
    }  # fmt: skip
    status, listed = await control(http, server, "communities")
    assert [c["group_id"] for c in listed["communities"]] == [GROUP_ID, B_ID]
    refused = await error(
        http, server, "groups.setLongPollSettings", {"group_id": B_ID, "enabled": 1}, NO_MANAGE
    )
    assert refused["error_code"] == 15
    status, token = await control(
        http,
        server,
        "communities/tokens",
        {"group_id": B_ID, "token": "with-manage", "scopes": "messages,manage"},
    )
    assert status == 200 and token == {
        "group_id": B_ID,
        "kind": "group",
        "scopes": ["manage", "messages"],
    }
    assert (
        await ok(
            http,
            server,
            "groups.setLongPollSettings",
            {"group_id": B_ID, "enabled": 1, "message_new": 1},
            "with-manage",
        )
        == 1
    )
    status, token = await control(
        http, server, "communities/tokens", {"group_id": B_ID, "token": USER_TOKEN, "kind": "user"}
    )
    assert token == {"group_id": B_ID, "kind": "user", "user_id": ADMIN_ID}
    # The new community's long poll and pusher run like the first one's.
    lp = await ok(http, server, "groups.getLongPollServer", {"group_id": B_ID}, NO_MANAGE)
    server.community(B_ID).inject_message(PLAYER, "эй")
    assert len((await poll(http, lp, lp["ts"]))["updates"]) == 1
    assert server.community(B_ID).callbacks._runtime is not None
    for bad in (
        {"group_id": B_ID, "group_token": "other"},
        {"group_id": 90, "group_token": NO_MANAGE},
        {"group_id": 90, "group_token": "z", "scopes": "everything"},
        {"group_id": 90, "group_token": "z", "user_tokens": "one"},
        {"group_id": "x", "group_token": "z"},
        {"group_id": 90},
    ):
        status, refused = await control(http, server, "communities", bad)
        assert status == 400 and refused["error"], bad
    status, _ = await control(
        http, server, "communities/tokens", {"group_id": B_ID, "token": NO_MANAGE}
    )
    assert status == 400
    status, listed = await control(http, server, "communities")
    assert len(listed["communities"]) == 2


# --- the player page -------------------------------------------------------------------------


async def test_the_player_page_switches_community(
    two: RunningServer, http: aiohttp.ClientSession
) -> None:
    two.community(B_ID).inject_message(PLAYER, "в Б")
    async with http.get(f"{two.url}/sandbox/api/users?group_id={B_ID}") as response:
        users = await response.json()
    assert users["group"] == {"id": B_ID, "name": "Мафия Б"}
    assert [c["id"] for c in users["communities"]] == [GROUP_ID, B_ID]
    assert PLAYER in [u["id"] for u in users["users"]]
    async with http.post(
        f"{two.url}/sandbox/api/users/{PLAYER}/send?group_id={B_ID}",
        data=json.dumps({"text": "ещё"}),
    ) as response:
        assert response.status == 200
    assert [m.text for m in two.community(B_ID).conversation(PLAYER)] == ["в Б", "ещё"]
    assert not two.state.messages
    async with http.get(f"{two.url}/sandbox/api/users/{PLAYER}") as response:
        view = await response.json()
    assert view["group"]["id"] == GROUP_ID and view["messages"] == []
    async with http.get(f"{two.url}/sandbox/api/users?group_id=7") as response:
        assert response.status == 400
        assert (await response.json()) == {"error": "Нет такого сообщества."}
    async with http.get(f"{two.url}/sandbox/static/sandbox.js") as response:
        script = await response.text()
    assert "group_id=" in script and "community-select" in script


# --- the command line and the state file ----------------------------------------------------


def test_the_command_line_declares_more_communities() -> None:
    args = build_parser().parse_args([
        "--group-id", "1", "--group-scopes", "messages,manage",
        "--community", "2:g2:u2:Мафия два",
        "--community", "3:g3::Без прав:-",
        "--community", "4:g4:user-token::messages,photos",
    ])  # fmt: skip
    state = state_from_args(args)
    registry = Communities.of(state)
    assert [c.group_id for c in registry] == [1, 2, 3, 4]
    assert state.group_tokens == {"group-token": {"messages", "manage"}}
    two_, three, four = registry.get(2), registry.get(3), registry.get(4)
    assert (two_.group_name, two_.group_tokens["g2"], two_.user_tokens) == (
        "Мафия два",
        parse_scopes(None),
        {"u2": 101},
    )
    assert three.group_tokens["g3"] == frozenset() and three.user_tokens == {}
    assert four.user_tokens == {"user-token": 100} and four.group_name == "Сообщество 4"
    assert four.group_tokens["g4"] == {"messages", "photos"}
    for bad in ("2:g2", "x:g:u", "0:g:u", "2::u", "2:g:u:n:wall", "1:g:u"):
        with pytest.raises(ValueError):
            state_from_args(build_parser().parse_args(["--community", bad]))
    with pytest.raises(ValueError, match="--group-scopes"):
        state_from_args(build_parser().parse_args(["--group-scopes", "walls"]))
    assert parse_community("5:t:u:Имя:").scopes == parse_scopes(None)


def test_the_state_file_keeps_every_community(tmp_path: Path) -> None:
    path = tmp_path / "vk.json"
    state = make_state()
    registry = Communities.of(state)
    b = registry.create(
        group_id=B_ID,
        group_token=B_TOKEN,
        user_tokens=[B_USER],
        group_name="Мафия Б",
        scopes="messages",
    )
    b.add_user(PLAYER, "Ира", "Львова", 1)
    b.inject_message(PLAYER, "в Б")
    b.create_topic("Тема Б")
    b.settings.add_server("srv", "http://127.0.0.1:9/cb/", "s", ADMIN_ID)
    state.inject_message(PLAYER, "в А")
    persist.save(state, path)

    again = make_state()  # a restart without --community: B comes back from the file
    assert persist.load(again, path)
    restored = Communities.of(again).get(B_ID)
    assert [m.text for m in restored.messages] == ["в Б"]
    assert restored.group_name == "Мафия Б" and restored.group_tokens == {B_TOKEN: {"messages"}}
    assert restored.user_tokens == {B_USER: ADMIN_ID + 1}
    assert [t.title for t in restored.topics.values()] == ["Тема Б"]
    assert restored.settings.confirmation_code == b.settings.confirmation_code
    assert restored.callbacks.config is not None  # the API-added server is pushed to again
    assert again.user(PLAYER).first_name == "Ира" and [m.text for m in again.messages] == ["в А"]

    declared = make_state()  # declared again: its tokens as declared, its content back
    Communities.of(declared).create(group_id=B_ID, group_token="new-token")
    persist.load(declared, path)
    assert Communities.of(declared).get(B_ID).group_token == "new-token"
    assert [m.text for m in Communities.of(declared).get(B_ID).messages] == ["в Б"]
    saver = persist.AutoSaver(again, path)
    assert not saver.save_if_changed()
    restored.inject_message(PLAYER, "ещё")  # a change in another community is saved too
    assert saver.save_if_changed()


def test_a_single_community_state_file_is_as_before(tmp_path: Path) -> None:
    state = make_state()
    data = persist.export_state(state)
    assert data["communities"] == [] and data["group_id"] == GROUP_ID
    fresh: LocalVK = make_state()
    persist.import_state(
        fresh, {k: v for k, v in data.items() if k not in ("communities", "settings")}
    )
    assert len(Communities.of(fresh)) == 1
