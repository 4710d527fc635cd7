"""The local VK server's methods, driven by the real vkbottle client over HTTP."""

from __future__ import annotations

import json
import re
from typing import Any, cast

import aiohttp
import pytest
from vkbottle import API, Keyboard, KeyboardButtonColor, Text, VKAPIError

from localvk import RunningServer, chat_peer_id
from localvk.methods import METHODS
from tests.localvk.support import (
    ADMIN_ID,
    GROUP_ID,
    GROUP_TOKEN,
    USER_TOKEN,
    control,
    raw_call,
)


def keyboard_json(
    rows: int, per_row: int, *, inline: bool = False, last_row: int | None = None
) -> str:
    buttons = [
        [{"action": {"type": "text", "label": f"{r}-{c}"}} for c in range(per_row)]
        for r in range(rows)
    ]
    if last_row is not None:
        buttons.append([{"action": {"type": "text", "label": f"x{c}"}} for c in range(last_row)])
    return json.dumps({"one_time": False, "inline": inline, "buttons": buttons})


# --- messages.send ------------------------------------------------------------------------


async def test_send_to_one_peer_stores_the_message(server: RunningServer, api: API) -> None:
    message_id = await api.messages.send(peer_id=42, message="Привет", random_id=1)
    [message] = server.state.sent_messages(42)
    assert message.id == message_id
    assert (message.text, message.from_id, message.conversation_message_id) == (
        "Привет",
        -GROUP_ID,
        1,
    )
    assert message.token_kind == "group"


async def test_send_to_peer_ids_answers_per_peer(server: RunningServer, api: API) -> None:
    server.state.set_messages_allowed(3, False)
    # With peer_ids VK answers a list (vkbottle's types say int).
    items = cast(
        "list[Any]", await api.messages.send(peer_ids=[1, 2, 3], message="Ночь", random_id=0)
    )
    assert [item.peer_id for item in items] == [1, 2, 3]
    assert items[0].message_id and items[1].message_id and items[0].error is None
    assert items[2].error is not None and items[2].error.code == 901
    assert [m.peer_id for m in server.state.sent_messages()] == [1, 2]


async def test_peer_ids_over_100_is_error_100(api: API) -> None:
    with pytest.raises(VKAPIError[100]) as caught:
        await api.messages.send(peer_ids=list(range(1, 102)), message="x", random_id=0)
    assert "peer_ids" in caught.value.error_msg


async def test_peer_ids_of_exactly_100_is_fine(api: API) -> None:
    items = cast(
        "list[Any]", await api.messages.send(peer_ids=list(range(1, 101)), message="x", random_id=0)
    )
    assert len(items) == 100 and all(item.error is None for item in items)


async def test_random_id_deduplicates_per_token_and_peer(server: RunningServer, api: API) -> None:
    first = await api.messages.send(peer_id=5, message="один", random_id=777)
    again = await api.messages.send(peer_id=5, message="один", random_id=777)
    other_peer = await api.messages.send(peer_id=6, message="один", random_id=777)
    user_api = server.vk_api(USER_TOKEN)
    other_token = await user_api.messages.send(peer_id=5, message="один", random_id=777)
    assert again == first
    assert len({first, other_peer, other_token}) == 3
    assert len(server.state.sent_messages(5)) == 2


async def test_random_id_zero_never_deduplicates(server: RunningServer, api: API) -> None:
    await api.messages.send(peer_id=5, message="a", random_id=0)
    await api.messages.send(peer_id=5, message="a", random_id=0)
    assert len(server.state.sent_messages(5)) == 2


async def test_user_who_denied_messages_gets_901(server: RunningServer, api: API) -> None:
    server.state.set_messages_allowed(9, False)
    with pytest.raises(VKAPIError[901]):
        await api.messages.send(peer_id=9, message="x", random_id=3)
    allowed = await api.messages.is_messages_from_group_allowed(group_id=GROUP_ID, user_id=9)
    assert allowed.is_allowed is False
    server.state.inject_message(9, "привет")  # writing to the community lets it answer
    assert await api.messages.send(peer_id=9, message="x", random_id=3)


async def test_message_length_limit(api: API) -> None:
    assert await api.messages.send(peer_id=1, message="я" * 9000, random_id=0)
    with pytest.raises(VKAPIError[914]):
        await api.messages.send(peer_id=1, message="я" * 9001, random_id=0)


async def test_a_vkbottle_keyboard_is_accepted(server: RunningServer, api: API) -> None:
    keyboard = (
        Keyboard(one_time=True)
        .add(Text("Голосовать", payload={"cmd": "vote", "seat": 3}), KeyboardButtonColor.PRIMARY)
        .row()
        .add(Text("Пропустить"))
    )
    await api.messages.send(peer_id=1, message="Кого?", random_id=0, keyboard=keyboard.get_json())
    [message] = server.state.sent_messages(1)
    assert message.keyboard is not None and len(message.keyboard["buttons"]) == 2


@pytest.mark.parametrize(
    ("keyboard", "code"),
    [
        (keyboard_json(8, 5), None),  # 40 buttons: the regular maximum
        (keyboard_json(1, 6), 911),  # 6 in a row
        (keyboard_json(11, 1), 911),  # 11 rows
        (keyboard_json(8, 5, last_row=1), 911),  # 41 buttons
        (keyboard_json(2, 5, inline=True), None),  # 10 buttons: the inline maximum
        (keyboard_json(7, 1, inline=True), 911),  # 7 inline rows
        (keyboard_json(2, 5, inline=True, last_row=1), 911),  # 11 inline buttons
        ("{not json", 100),
        (json.dumps({"buttons": "none"}), 911),
    ],
)
async def test_keyboard_limits(api: API, keyboard: str, code: int | None) -> None:
    if code is None:
        assert await api.messages.send(peer_id=1, message="k", random_id=0, keyboard=keyboard)
    else:
        with pytest.raises(VKAPIError[code]):
            await api.messages.send(peer_id=1, message="k", random_id=0, keyboard=keyboard)


async def test_button_payload_limit(api: API) -> None:
    def with_payload(payload: str) -> str:
        button = {"action": {"type": "callback", "label": "ok", "payload": payload}}
        return json.dumps({"inline": True, "buttons": [[button]]})

    fits = json.dumps({"p": "x" * 246})  # 255 characters
    assert len(fits) == 255
    assert await api.messages.send(peer_id=1, message="k", random_id=0, keyboard=with_payload(fits))
    too_long = json.dumps({"p": "x" * 247})
    with pytest.raises(VKAPIError[911]):
        await api.messages.send(
            peer_id=1, message="k", random_id=0, keyboard=with_payload(too_long)
        )


async def test_bad_input_is_error_100_never_500(
    server: RunningServer, http: aiohttp.ClientSession
) -> None:
    cases = [
        {"peer_id": "abc", "message": "x", "random_id": "1"},
        {"message": "x", "random_id": "1"},
        {"peer_id": "1", "message": "x"},
        {"peer_id": "1", "random_id": "1"},
        {"peer_id": "1", "message": "x", "random_id": "99999999999"},
        {"peer_ids": "1,,2", "message": "x", "random_id": "1"},
        {"peer_id": "1", "message": "x", "random_id": "1", "keyboard": "[1,"},
    ]
    for params in cases:
        status, answer = await raw_call(http, server, "messages.send", params)
        assert status == 200
        assert answer["error"]["error_code"] == 100, params
        assert answer["error"]["error_msg"].startswith(
            "One of the parameters specified was missing or invalid"
        )
        assert {"key": "method", "value": "messages.send"} in answer["error"]["request_params"]


async def test_garbage_never_breaks_the_server(
    server: RunningServer, http: aiohttp.ClientSession
) -> None:
    """Every method, fed junk in every parameter it reads, answers VK-style JSON."""
    names = [
        "peer_id", "peer_ids", "user_id", "user_ids", "chat_id", "random_id", "message",
        "keyboard", "payload", "group_id", "topic_id", "comment_id", "title", "text", "count",
        "offset", "sort", "event_id", "event_data", "member_id", "reset", "from_group", "code",
        "extended", "start_comment_id", "guid", "fields",
    ]  # fmt: skip
    junk = ["", "x", "-1", "0", "1,,2", "{", "[]", "ё" * 3, "9" * 30, "1.5", "null"]
    server.state.create_topic("t", "first")
    server.state.create_chat("c", [1])
    for method in [*METHODS, "execute"]:
        for index, value in enumerate(junk):
            params = {name: junk[(index + n) % len(junk)] for n, name in enumerate(names)}
            params["message"] = value
            for token in (GROUP_TOKEN, USER_TOKEN, "токен"):
                status, answer = await raw_call(http, server, method, params, token=token)
                assert status == 200, (method, params)
                assert "response" in answer or answer["error"]["error_code"] != 10, (
                    method,
                    params,
                    answer,
                )


async def test_token_version_and_method_errors(
    server: RunningServer, http: aiohttp.ClientSession
) -> None:
    _, no_token = await raw_call(http, server, "users.get", {}, token=None)
    _, bad_token = await raw_call(http, server, "users.get", {}, token="stolen")
    _, no_version = await raw_call(http, server, "users.get", {}, version=None)
    _, old_version = await raw_call(http, server, "users.get", {}, version="5.50")
    _, unknown = await raw_call(http, server, "wall.post", {})
    assert no_token["error"]["error_code"] == 5
    assert bad_token["error"]["error_msg"] == "User authorization failed: invalid access_token (4)."
    assert no_version["error"]["error_code"] == old_version["error"]["error_code"] == 8
    assert unknown["error"] == {
        "error_code": 3,
        "error_msg": "Unknown method passed",
        "request_params": [
            {"key": "method", "value": "wall.post"},
            {"key": "oauth", "value": "1"},
            {"key": "v", "value": "5.199"},
        ],
    }
    async with http.get(
        server.api_url + "users.get", params={"access_token": "test-group-token", "v": "5.199"}
    ) as resp:
        assert (await resp.json())["response"] == []  # GET works too


async def test_unknown_token_in_vkbottle_is_vkapierror_5(server: RunningServer) -> None:
    with pytest.raises(VKAPIError[5]):
        await server.vk_api("nope").users.get(user_ids=[1])


# --- execute ------------------------------------------------------------------------------


def sends(count: int, start: int = 1) -> str:
    calls = ", ".join(
        f'API.messages.send({{"peer_id": {i}, "message": "m{i}", "random_id": {i}}})'
        for i in range(start, start + count)
    )
    return f"return [{calls}];"


async def test_execute_runs_25_calls_as_one_request(server: RunningServer, api: API) -> None:
    answer = (await api.execute(code=sends(25))).response  # the whole VK answer
    ids = answer["response"]
    assert len(ids) == 25 and all(isinstance(i, int) for i in ids)
    assert "execute_errors" not in answer
    assert len(server.state.sent_messages()) == 25
    assert len(server.state.calls(include_inner=False)) == 1
    inner = server.state.calls("messages.send")
    assert len(inner) == 25 and {c.parent for c in inner} == {server.state.calls("execute")[0].seq}


async def test_execute_with_26_calls_is_error_13(server: RunningServer, api: API) -> None:
    with pytest.raises(VKAPIError[13]) as caught:
        await api.execute(code=sends(26))
    assert "Too many API calls" in caught.value.error_msg
    # As in VK, the program ran until the 26th call: the first 25 calls took effect.
    assert len(server.state.sent_messages()) == 25


async def test_execute_failing_call_is_false_with_execute_errors(
    server: RunningServer, api: API
) -> None:
    server.state.set_messages_allowed(2, False)
    code = (
        'API.messages.send({"peer_id": 1, "message": "a", "random_id": 11});\n'
        'return [API.messages.send({"peer_id": 2, "message": "b", "random_id": 12}),'
        ' API.users.get({"user_ids": [7]}),'
        f' API.board.getComments({{"group_id": {GROUP_ID}, "topic_id": 1}}), 5, "text"];'
    )
    answer = (await api.execute(code=code)).response  # the whole VK answer
    response = answer["response"]
    assert response[0] is False and response[1][0]["id"] == 7 and response[2] is False
    assert response[3:] == [5, "text"]
    assert [(e["method"], e["error_code"]) for e in answer["execute_errors"]] == [
        ("messages.send", 901),
        ("board.getComments", 27),
    ]
    assert [m.peer_id for m in server.state.sent_messages()] == [1]


@pytest.mark.parametrize(
    "code",
    [
        "return API.messages.send(peer_id=1);",
        "var x = 1; return x + 1;",
        "var x = 1; if (x) { return x; } else { return 2; }",
        'return [API.messages.send({"peer_id": 1}) API.users.get()];',
        "return API.send({});",
    ],
)
async def test_execute_outside_the_subset_is_error_12(api: API, code: str) -> None:
    with pytest.raises(VKAPIError[12]):
        await api.execute(code=code)


# --- board --------------------------------------------------------------------------------


async def test_board_user_methods_with_community_token_are_error_27(
    server: RunningServer, api: API
) -> None:
    topic = server.state.create_topic("Игра 1", "Правила")
    calls = [
        api.board.add_topic(group_id=GROUP_ID, title="x", text="y", from_group=True),
        api.board.create_comment(
            group_id=GROUP_ID, topic_id=topic.id, message="x", from_group=True
        ),
        api.board.get_comments(group_id=GROUP_ID, topic_id=topic.id),
    ]
    for call in calls:
        with pytest.raises(VKAPIError[27]) as caught:
            await call
        assert caught.value.error_msg == (
            "Group authorization failed: method is unavailable with group auth."
        )
    # deleteComment works with the community token
    first = topic.comments[0].id
    assert await api.board.delete_comment(group_id=GROUP_ID, topic_id=topic.id, comment_id=first)
    assert topic.visible_comments() == []


async def test_board_with_admin_user_token(server: RunningServer, user_api: API) -> None:
    topic_id = await user_api.board.add_topic(
        group_id=GROUP_ID, title="Игра 2", text="Начинаем", from_group=True
    )
    first = await user_api.board.create_comment(
        group_id=GROUP_ID, topic_id=topic_id, message="День 1", from_group=True, guid="day-1"
    )
    repeat = await user_api.board.create_comment(
        group_id=GROUP_ID, topic_id=topic_id, message="День 1", from_group=True, guid="day-1"
    )
    as_user = await user_api.board.create_comment(group_id=GROUP_ID, topic_id=topic_id, message="я")
    assert repeat == first and as_user != first
    page = await user_api.board.get_comments(
        group_id=GROUP_ID, topic_id=topic_id, count=2, offset=1, extended=True
    )
    assert page.count == 3
    assert [(c.text, c.from_id) for c in page.items] == [("День 1", -GROUP_ID), ("я", ADMIN_ID)]
    newest = await user_api.board.get_comments(
        group_id=GROUP_ID, topic_id=topic_id, sort="desc", count=1
    )
    assert newest.items[0].id == as_user
    assert await user_api.board.delete_comment(
        group_id=GROUP_ID, topic_id=topic_id, comment_id=as_user
    )
    after = await user_api.board.get_comments(group_id=GROUP_ID, topic_id=topic_id)
    assert after.count == 2
    with pytest.raises(VKAPIError[100]):
        await user_api.board.get_comments(group_id=GROUP_ID, topic_id=999)
    with pytest.raises(VKAPIError[15]):
        await user_api.board.get_comments(group_id=GROUP_ID + 1, topic_id=topic_id)


async def test_injected_board_post_gets_a_new_comment_id(server: RunningServer) -> None:
    state = server.state
    topic = state.create_topic("Игра 3", "Правила")
    update = state.inject_board_post(1234, topic.id, "Голосую за Петрова")
    assert update["type"] == "board_post_new" and update["group_id"] == GROUP_ID
    obj = update["object"]
    assert obj["id"] == topic.comments[-1].id != topic.comments[0].id
    assert (obj["from_id"], obj["topic_id"], obj["topic_owner_id"]) == (1234, topic.id, -GROUP_ID)


# --- chats, users, groups, callback buttons ------------------------------------------------


async def test_chat_lifecycle(server: RunningServer, api: API) -> None:
    created = await api.messages.create_chat(group_id=GROUP_ID, title="Мафия", user_ids=[11, 12])
    peer_id = chat_peer_id(created.chat_id)
    assert created.peer_ids == [11, 12]
    link = await api.messages.get_invite_link(peer_id=peer_id, group_id=GROUP_ID)
    assert link.link and link.link.startswith("https://vk.me/join/")
    again = await api.messages.get_invite_link(peer_id=peer_id, group_id=GROUP_ID)
    fresh = await api.messages.get_invite_link(peer_id=peer_id, group_id=GROUP_ID, reset=True)
    assert again.link == link.link != fresh.link
    server.state.inject_chat_join(created.chat_id, 13)
    members = await api.messages.get_conversation_members(peer_id=peer_id, group_id=GROUP_ID)
    assert sorted(m.member_id for m in members.items) == [-GROUP_ID, 11, 12, 13]
    assert {p.id for p in members.profiles or []} == {11, 12, 13}
    assert await api.messages.send(peer_id=peer_id, message="Добро пожаловать", random_id=0)
    assert await api.messages.remove_chat_user(chat_id=created.chat_id, member_id=12)
    with pytest.raises(VKAPIError[935]):
        await api.messages.remove_chat_user(chat_id=created.chat_id, member_id=12)
    kick = server.state.longpoll.events()[-1]["object"]["message"]
    assert kick["action"] == {"type": "chat_kick_user", "member_id": 12}
    with pytest.raises(VKAPIError[917]):
        await api.messages.send(peer_id=chat_peer_id(99), message="x", random_id=0)


async def test_users_get_names(server: RunningServer, api: API) -> None:
    server.state.add_user(1, "Павел", "Дуров")
    first = await api.users.get(user_ids=[1, 100500])
    second = await api.users.get(user_ids=[100500])
    assert (first[0].first_name, first[0].last_name) == ("Павел", "Дуров")
    assert first[1].first_name == second[0].first_name and first[1].last_name
    name = first[1].first_name
    assert name is not None and re.fullmatch(r"[А-ЯЁ][а-яё]+", name)
    with pytest.raises(VKAPIError[113]):
        await api.request("users.get", {"user_ids": "durov"})
    me = await server.vk_api(USER_TOKEN).users.get()
    assert me[0].id == ADMIN_ID


async def test_groups_get_by_id_and_long_poll_server(server: RunningServer, api: API) -> None:
    group = await api.groups.get_by_id()
    assert group.groups and group.groups[0].id == GROUP_ID
    lp = await api.groups.get_long_poll_server(group_id=GROUP_ID)
    assert lp.server == f"{server.url}/lp/{GROUP_ID}" and lp.key and lp.ts.isdigit()


async def test_message_event_answer(server: RunningServer, api: API) -> None:
    update = server.state.inject_message_event(21, {"cmd": "check", "seat": 2})
    obj = update["object"]
    assert update["type"] == "message_event" and obj["payload"] == {"cmd": "check", "seat": 2}
    snackbar = json.dumps({"type": "show_snackbar", "text": "Принято"})
    args = {"event_id": obj["event_id"], "user_id": 21, "peer_id": 21, "event_data": snackbar}
    assert await api.messages.send_message_event_answer(**args)
    assert server.state.callback_events[obj["event_id"]].answer == json.loads(snackbar)
    with pytest.raises(VKAPIError[100]):  # only once
        await api.messages.send_message_event_answer(**args)
    with pytest.raises(VKAPIError[100]):
        await api.messages.send_message_event_answer(event_id="nope", user_id=21, peer_id=21)


# --- recording ----------------------------------------------------------------------------


async def test_calls_are_recorded_and_served(
    server: RunningServer, api: API, http: aiohttp.ClientSession
) -> None:
    await api.messages.send(peer_id=31, message="запись", random_id=5)
    with pytest.raises(VKAPIError[27]):
        await api.board.add_topic(group_id=GROUP_ID, title="x")
    [sent] = server.state.calls("messages.send")
    assert sent.token_kind == "group" and sent.params["message"] == "запись"
    assert sent.response == server.state.sent_messages(31)[0].id and sent.error is None
    [refused] = server.state.calls("board.addTopic")
    assert refused.error_code == 27
    status, body = await control(http, server, "calls?method=messages.send")
    assert status == 200 and [c["params"]["peer_id"] for c in body["calls"]] == ["31"]
    status, stats = await control(http, server, "stats")
    assert stats["per_token_kind"]["group"]["requests"] == 2
    assert stats["per_token_kind"]["group"]["errors"] == {"27": 1}
    assert stats["max_per_second"] >= 1


async def test_control_endpoints_reject_bad_input(
    server: RunningServer, http: aiohttp.ClientSession
) -> None:
    status, body = await control(http, server, "message_new", {"text": "no sender"})
    assert status == 400 and "from_id" in body["error"]
    async with http.post(f"{server.url}/_test/faults", data="{oops") as response:
        assert response.status == 400
    status, body = await control(http, server, "faults", {"error_rates": {"6": 2}})
    assert status == 400
    status, body = await control(
        http, server, "board_post", {"from_id": 1, "topic_id": 5, "text": "x"}
    )
    assert status == 400 and "topic" in body["error"]


async def test_reset_forgets_content_but_not_configuration(
    server: RunningServer, api: API, http: aiohttp.ClientSession
) -> None:
    await api.messages.send(peer_id=1, message="x", random_id=1)
    status, _ = await control(http, server, "reset", {})
    assert status == 200
    assert server.state.sent_messages() == [] and server.state.calls() == []
    assert await api.messages.send(peer_id=1, message="x", random_id=1)  # dedup forgotten too


# --- messages.edit: cmid and its older name ------------------------------------------------


async def test_edit_by_cmid_the_schemas_name(server: RunningServer, api: API) -> None:
    """VK's method schema for 5.199 names the parameter ``cmid``; vkbottle's generated
    ``messages.edit`` sends it so."""
    await api.messages.send(peer_id=42, message="Было", random_id=11)
    [message] = server.state.sent_messages(42)
    assert await api.messages.edit(
        peer_id=42, cmid=message.conversation_message_id, message="Стало"
    )
    assert server.state.sent_messages(42)[0].text == "Стало"


@pytest.mark.parametrize(
    "names", [("conversation_message_id",), ("cmid", "conversation_message_id")]
)
async def test_edit_by_the_older_name_too(
    server: RunningServer, http: aiohttp.ClientSession, names: tuple[str, ...]
) -> None:
    """dev.vk.com still shows ``conversation_message_id`` and vkbottle's
    ``MessageEvent.edit_message`` sends it; both at once must agree."""
    await raw_call(http, server, "messages.send", {"peer_id": 42, "message": "1", "random_id": 5})
    [message] = server.state.sent_messages(42)
    params = {name: message.conversation_message_id for name in names}
    _, answer = await raw_call(
        http, server, "messages.edit", {"peer_id": 42, "message": "2", **params}
    )
    assert answer == {"response": 1}
    assert server.state.sent_messages(42)[0].text == "2"


async def test_edit_with_disagreeing_cmids_is_error_100(
    server: RunningServer, http: aiohttp.ClientSession
) -> None:
    await raw_call(http, server, "messages.send", {"peer_id": 42, "message": "1", "random_id": 5})
    _, answer = await raw_call(
        http,
        server,
        "messages.edit",
        {"peer_id": 42, "message": "2", "cmid": 1, "conversation_message_id": 2},
    )
    assert answer["error"]["error_code"] == 100
    _, answer = await raw_call(http, server, "messages.edit", {"peer_id": 42, "message": "2"})
    assert answer["error"]["error_code"] == 100
    assert "cmid" in answer["error"]["error_msg"]


# --- account.getAppPermissions ---------------------------------------------------------------


async def test_app_permissions_of_a_declared_user_token_are_every_right(
    http: aiohttp.ClientSession, server: RunningServer
) -> None:
    status, answer = await raw_call(http, server, "account.getAppPermissions", {}, token=USER_TOKEN)
    assert status == 200 and answer["response"] & 262144 and answer["response"] & 65536


async def test_app_permissions_answer_a_community_token_with_27(
    http: aiohttp.ClientSession, server: RunningServer
) -> None:
    _, answer = await raw_call(http, server, "account.getAppPermissions", {})
    assert answer["error"]["error_code"] == 27


async def test_app_permissions_of_another_user_are_none(
    http: aiohttp.ClientSession, server: RunningServer
) -> None:
    params = {"user_id": ADMIN_ID + 1000}
    _, answer = await raw_call(http, server, "account.getAppPermissions", params, token=USER_TOKEN)
    assert answer["response"] == 0
