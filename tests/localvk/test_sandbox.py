"""The player page of the local VK (``/sandbox/``): what a user sees, and that every action
reaches the bot as the same long-poll update VK would send."""

from __future__ import annotations

import json
import os
from typing import Any

import aiohttp
import pytest
from vkbottle import API

from gameplay import buttons
from gameplay.buttons import Button, Payload
from localvk import Communities, RunningServer, running_server
from tests.browser_support import CHROMIUM, CHROMIUM_ARGS, CHROMIUM_MISSING
from tests.localvk.support import ADMIN_ID, GROUP_ID, make_state
from vkbot.keyboards import button, of_row

PLAYER = 1001
B_ID = 88


async def get(http: aiohttp.ClientSession, srv: RunningServer, path: str) -> tuple[int, Any]:
    async with http.get(f"{srv.url}/sandbox/api/{path}") as response:
        return response.status, await response.json()


async def post(
    http: aiohttp.ClientSession, srv: RunningServer, path: str, body: Any
) -> tuple[int, Any]:
    data = body if isinstance(body, str) else json.dumps(body)
    async with http.post(f"{srv.url}/sandbox/api/{path}", data=data) as response:
        return response.status, await response.json()


async def send(
    api: API, peer_id: int, text: str, board: dict[str, Any] | None = None, random_id: int = 0
) -> int:
    params: dict[str, Any] = {"peer_id": peer_id, "message": text, "random_id": random_id}
    if board is not None:
        params["keyboard"] = json.dumps(board, ensure_ascii=False)
    return int(await api.messages.send(**params))


def callback(text: str, payload: Payload) -> dict[str, Any]:
    return button(Button(text, payload))


def text_button(text: str, payload: Payload | None = None) -> dict[str, Any]:
    return button(Button(text, payload, typed=True))


def keyboard(
    rows: list[list[dict[str, Any]]], *, inline: bool, one_time: bool = False
) -> dict[str, Any]:
    board: dict[str, Any] = {"inline": inline, "buttons": rows}
    if not inline:
        board["one_time"] = one_time
    return board


def menu_keyboard() -> dict[str, Any]:
    return of_row(buttons.menu_keyboard()) or {}


def vote_keyboard() -> dict[str, Any]:
    base = Payload("vote", game=1, phase=7)
    return keyboard(
        [
            [callback("№2 Аня", base.but(target=2)), text_button("№3 Боря", base.but(target=3))],
            [{"action": {"type": "open_link", "label": "Правила", "link": "https://vk.com"}}],
        ],
        inline=True,
    )


async def test_the_page_and_its_files_are_served(
    server: RunningServer, http: aiohttp.ClientSession
) -> None:
    async with http.get(f"{server.url}/sandbox/") as response:
        assert response.status == 200
        html = await response.text()
    assert "Песочница игрока" in html and "static/sandbox.js" in html
    for name, kind in (("sandbox.js", "javascript"), ("sandbox.css", "css")):
        async with http.get(f"{server.url}/sandbox/static/{name}") as response:
            assert response.status == 200
            assert kind in response.headers["Content-Type"]
    async with http.get(f"{server.url}/sandbox", allow_redirects=False) as response:
        assert response.status == 302 and response.headers["Location"] == "/sandbox/"


async def test_users_are_the_known_and_the_active_but_not_the_admin(
    server: RunningServer, api: API, user_api: API, http: aiohttp.ClientSession
) -> None:
    server.state.add_user(PLAYER, "Аня", "Иванова")
    await send(api, 1002, "Привет")
    server.state.inject_message(1003, "помощь")
    topic = server.state.create_topic("Игра")
    server.state.inject_board_post(1004, topic.id, "голос 5")
    await user_api.board.create_comment(group_id=GROUP_ID, topic_id=topic.id, message="x")
    server.state.set_taken_over(1002)
    status, data = await get(http, server, "users")
    assert status == 200
    assert [u["id"] for u in data["users"]] == [PLAYER, 1002, 1003, 1004]
    assert ADMIN_ID not in [u["id"] for u in data["users"]]
    assert data["users"][0]["name"] == "Аня Иванова"
    assert [u["taken_over"] for u in data["users"]] == [False, True, False, False]
    assert data["group"]["id"] == GROUP_ID


async def test_a_user_sees_their_conversation_with_keyboards(
    server: RunningServer, api: API, http: aiohttp.ClientSession
) -> None:
    await send(api, PLAYER, "Роль: доктор", menu_keyboard())
    prompt = await send(api, PLAYER, "День 1: за кого?", vote_keyboard())
    await send(api, 9999, "чужое сообщение")
    server.state.inject_message(PLAYER, "статус")
    status, data = await get(http, server, f"users/{PLAYER}")
    assert status == 200
    texts = [m["text"] for m in data["messages"]]
    assert texts == ["Роль: доктор", "День 1: за кого?", "статус"]
    first, second, mine = data["messages"]
    assert first["from_community"] and not mine["from_community"]
    assert mine["from_id"] == PLAYER
    rows = second["keyboard"]["rows"]
    assert second["id"] == prompt and second["keyboard"]["inline"]
    assert [b["label"] for b in rows[0]] == ["№2 Аня", "№3 Боря"]
    assert [b["pressable"] for b in rows[0] + rows[1]] == [True, True, False]
    assert json.loads(rows[0][0]["payload"])["t"] == 2
    # The regular keyboard (the menu) stays under the input after later messages.
    assert data["keyboard"]["message_id"] == data["messages"][0]["id"]
    assert [b["label"] for b in data["keyboard"]["rows"][0]] == ["Действия", "Статус", "Помощь"]
    # Only what is newer than the cursor comes again.
    status, again = await get(http, server, f"users/{PLAYER}?after_message={mine['id']}")
    assert again["messages"] == [] and again["cursor"]["message"] >= mine["id"]


async def test_one_time_and_empty_keyboards_go_away_as_in_vk(
    server: RunningServer, api: API, http: aiohttp.ClientSession
) -> None:
    once = keyboard([[text_button("Да")]], inline=False, one_time=True)
    await send(api, PLAYER, "Согласны?", once)
    _, data = await get(http, server, f"users/{PLAYER}")
    assert data["keyboard"]["one_time"] is True
    server.state.inject_message(PLAYER, "Да")
    _, data = await get(http, server, f"users/{PLAYER}")
    assert data["keyboard"] is None
    await send(api, PLAYER, "Меню", menu_keyboard())
    await send(api, PLAYER, "Без меню", {"one_time": False, "buttons": []})
    _, data = await get(http, server, f"users/{PLAYER}")
    assert data["keyboard"] is None


async def test_pressing_buttons_sends_what_vk_sends(
    server: RunningServer, api: API, http: aiohttp.ClientSession
) -> None:
    prompt = await send(api, PLAYER, "За кого?", vote_keyboard())
    before = server.state.longpoll.ts
    status, answer = await post(
        http, server, f"users/{PLAYER}/press", {"message_id": prompt, "row": 0, "column": 0}
    )
    assert status == 200 and answer["sent"] == "event"
    event = answer["update"]
    assert event["type"] == "message_event"
    assert event["object"]["user_id"] == PLAYER and event["object"]["peer_id"] == PLAYER
    assert event["object"]["payload"] == {"g": 1, "p": 7, "a": "vote", "t": 2}
    cmid = server.state.conversation(PLAYER)[-1].conversation_message_id
    assert event["object"]["conversation_message_id"] == cmid
    status, answer = await post(
        http, server, f"users/{PLAYER}/press", {"message_id": prompt, "row": 0, "column": 1}
    )
    message = answer["update"]["object"]["message"]
    assert answer["update"]["type"] == "message_new"
    assert message["text"] == "№3 Боря" and json.loads(message["payload"])["t"] == 3
    assert [u["type"] for u in server.state.longpoll.events()[before - 1 :]] == [
        "message_event",
        "message_new",
    ]
    # A link button, a button that is not there, another user's message: refused, nothing sent.
    ts = server.state.longpoll.ts
    for body, user in (
        ({"message_id": prompt, "row": 1, "column": 0}, PLAYER),
        ({"message_id": prompt, "row": 5, "column": 0}, PLAYER),
        ({"message_id": prompt, "row": 0, "column": 0}, 1002),
        ({"message_id": "x", "row": 0, "column": 0}, PLAYER),
        ({"row": 0, "column": 0}, PLAYER),
    ):
        status, answer = await post(http, server, f"users/{user}/press", body)
        assert status == 400 and answer["error"], body
    assert server.state.longpoll.ts == ts


async def test_the_answer_to_a_callback_button_shows_as_a_snackbar(
    server: RunningServer, api: API, http: aiohttp.ClientSession
) -> None:
    prompt = await send(api, PLAYER, "За кого?", vote_keyboard())
    _, answer = await post(
        http, server, f"users/{PLAYER}/press", {"message_id": prompt, "row": 0, "column": 0}
    )
    await api.messages.send_message_event_answer(
        event_id=answer["event_id"],
        user_id=PLAYER,
        peer_id=PLAYER,
        event_data=json.dumps({"type": "show_snackbar", "text": "Голос принят"}),
    )
    _, data = await get(http, server, f"users/{PLAYER}")
    assert data["snackbars"] == [{"event_id": answer["event_id"], "text": "Голос принят"}]
    _, other = await get(http, server, "users/1002")
    assert other["snackbars"] == []


async def test_writing_and_posting_as_the_user(
    server: RunningServer, user_api: API, http: aiohttp.ClientSession
) -> None:
    topic = await user_api.board.add_topic(
        group_id=GROUP_ID, title="Игра", text="День 1", from_group=True
    )
    status, answer = await post(http, server, f"users/{PLAYER}/send", {"text": "помощь"})
    assert status == 200 and answer["update"]["object"]["message"]["text"] == "помощь"
    status, answer = await post(
        http, server, f"users/{PLAYER}/board", {"topic_id": topic, "text": "голос 5"}
    )
    assert status == 200
    assert answer["update"]["type"] == "board_post_new"
    assert answer["update"]["object"]["from_id"] == PLAYER
    _, data = await get(http, server, f"users/{PLAYER}")
    (shown,) = data["topics"]
    assert shown["title"] == "Игра" and shown["count"] == 2
    assert [c["text"] for c in shown["comments"]] == ["День 1", "голос 5"]
    assert shown["comments"][0]["from_community"] and shown["comments"][1]["from_name"]
    _, newer = await get(http, server, f"users/{PLAYER}?after_comment={shown['comments'][0]['id']}")
    assert [c["text"] for c in newer["topics"][0]["comments"]] == ["голос 5"]
    for path, body in (
        ("send", {"text": "   "}),
        ("send", {"text": "x" * 5000}),
        ("send", "not json"),
        ("send", [1, 2]),
        ("board", {"topic_id": 999, "text": "голос 5"}),
        ("board", {"topic_id": topic}),
    ):
        status, answer = await post(http, server, f"users/{PLAYER}/{path}", body)
        assert status == 400 and answer["error"], (path, body)
    status, _ = await post(http, server, "users/0/send", {"text": "x"})
    assert status == 400
    status, _ = await post(http, server, "users/2000000001/send", {"text": "x"})
    assert status == 400


async def test_joining_the_spectator_chat_by_its_invite_link(
    server: RunningServer, api: API, http: aiohttp.ClientSession
) -> None:
    created = await api.request("messages.createChat", {"title": "Зрители"})
    chat_id = created["response"]["chat_id"]
    link = (await api.request("messages.getInviteLink", {"peer_id": 2_000_000_000 + chat_id}))[
        "response"
    ]["link"]
    await send(api, PLAYER, f"Беседа зрителей: {link}")
    _, data = await get(http, server, f"users/{PLAYER}")
    assert data["messages"][0]["invite_links"] == [link]
    assert data["chats"] == []
    status, answer = await post(http, server, f"users/{PLAYER}/join", {"link": link})
    assert status == 200
    assert answer["update"]["object"]["message"]["action"] == {
        "type": "chat_invite_user_by_link",
        "member_id": PLAYER,
    }
    status, _ = await post(http, server, f"users/{PLAYER}/join", {"link": link})
    assert status == 400  # already in it
    status, _ = await post(
        http, server, f"users/{PLAYER}/join", {"link": "https://vk.me/join/nope"}
    )
    assert status == 400
    status, _ = await post(
        http, server, f"users/{PLAYER}/chat", {"chat_id": chat_id, "text": "Всем привет"}
    )
    assert status == 200
    _, data = await get(http, server, f"users/{PLAYER}")
    (chat,) = data["chats"]
    assert chat["title"] == "Зрители" and chat["members"] == 2
    assert [m.get("action") or m["text"] for m in chat["messages"]][-1] == "Всем привет"
    assert chat["messages"][0]["action"].endswith("вступил(а) в беседу по ссылке")
    status, _ = await post(http, server, f"users/{PLAYER}/leave", {"chat_id": chat_id})
    assert status == 200
    status, _ = await post(
        http, server, f"users/{PLAYER}/chat", {"chat_id": chat_id, "text": "Я тут?"}
    )
    assert status == 400
    _, data = await get(http, server, f"users/{PLAYER}")
    assert data["chats"] == []


async def test_takeover_and_the_feed_of_the_simulated_players(
    server: RunningServer, api: API, http: aiohttp.ClientSession
) -> None:
    first = await send(api, PLAYER, "Роль")
    await send(api, 1002, "Роль")
    status, answer = await post(http, server, f"users/{PLAYER}/takeover", {"on": True})
    assert status == 200 and answer == {"user_id": PLAYER, "taken_over": True}
    status, feed = await get(http, server, "feed")
    assert feed["taken_over"] == [PLAYER]
    assert [m["peer_id"] for m in feed["messages"]] == [PLAYER, 1002]
    _, newer = await get(http, server, f"feed?after_message={first}")
    assert [m["peer_id"] for m in newer["messages"]] == [1002]
    assert newer["cursor"]["message"] == feed["cursor"]["message"]
    status, _ = await post(http, server, f"users/{PLAYER}/takeover", {"on": "yes"})
    assert status == 400
    await post(http, server, f"users/{PLAYER}/takeover", {"on": False})
    _, feed = await get(http, server, "feed")
    assert feed["taken_over"] == []
    status, _ = await get(http, server, "feed?after_message=abc")
    assert status == 400


async def test_an_edited_message_is_redrawn_and_refused_edits_say_why(
    server: RunningServer, api: API, http: aiohttp.ClientSession
) -> None:
    prompt = await send(api, PLAYER, "День 1: за кого?", vote_keyboard())
    _, data = await get(http, server, f"users/{PLAYER}")
    cursor = data["cursor"]
    [message] = server.state.conversation(PLAYER)
    page = keyboard(
        [[callback("№4 Вера", Payload("vote", game=1, phase=7, target=4))]], inline=True
    )
    assert (
        await api.messages.edit(
            peer_id=PLAYER,
            conversation_message_id=message.conversation_message_id,
            message="День 1, страница 2",
            keyboard=json.dumps(page, ensure_ascii=False),
        )
        == 1
    )
    _, data = await get(
        http,
        server,
        f"users/{PLAYER}?after_message={cursor['message']}&after_edit={cursor['edit']}",
    )
    assert data["messages"] == []
    [edited] = data["edited"]
    assert edited["id"] == prompt and edited["text"] == "День 1, страница 2"
    assert [b["label"] for b in edited["keyboard"]["rows"][0]] == ["№4 Вера"]
    _, feed = await get(
        http, server, f"feed?after_message={cursor['message']}&after_edit={cursor['edit']}"
    )
    assert [m["text"] for m in feed["messages"]] == ["День 1, страница 2"]
    _, later = await get(
        http,
        server,
        f"users/{PLAYER}?after_message={data['cursor']['message']}"
        f"&after_edit={data['cursor']['edit']}",
    )
    assert later["edited"] == []
    # VK's refusals: too big (910), too old (909), not the community's message (924).
    server.state.inject_message(PLAYER, "мой текст")
    mine = server.state.conversation(PLAYER)[-1]
    edits: tuple[tuple[dict[str, Any], int], ...] = (
        ({"conversation_message_id": message.conversation_message_id, "message": "x" * 9001}, 910),
        ({"conversation_message_id": mine.conversation_message_id, "message": "правка"}, 924),
    )
    for params, code in edits:
        try:
            await api.messages.edit(peer_id=PLAYER, **params)
        except Exception as e:  # noqa: BLE001 (vkbottle's API error classes are generated)
            assert getattr(e, "code", None) == code, e
        else:
            raise AssertionError(f"edit not refused: {code}")
    message.date -= 2 * 24 * 3600
    try:
        await api.messages.edit(peer_id=PLAYER, message_id=prompt, message="поздно")
    except Exception as e:  # noqa: BLE001
        assert getattr(e, "code", None) == 909, e
    else:
        raise AssertionError("an old message was edited")
    assert message.text == "День 1, страница 2"


# --- Moscow time, and the community the address names ----------------------------------------

#: 2025-12-01 09:33 UTC: 12:33 in Moscow, 04:33 in New York.
AT = 1764581580


async def test_times_are_moscow_time_as_the_texts_say(
    server: RunningServer, api: API, http: aiohttp.ClientSession
) -> None:
    """The game's texts say «до 21:00 МСК»: the page shows every time in Moscow's, whatever
    the clock of the browser or of the server."""
    await send(api, PLAYER, "Срок — до 01.12 21:00 МСК.")
    topic = server.state.create_topic("Игра")
    server.state.inject_board_post(PLAYER, topic.id, "голос 5")
    server.state.conversation(PLAYER)[-1].date = AT
    topic.comments[-1].date = AT
    _, view = await get(http, server, f"users/{PLAYER}")
    assert view["messages"][-1]["time"] == "01.12 12:33 МСК"
    [shown] = [t for t in view["topics"] if t["id"] == topic.id]
    assert shown["comments"][-1]["time"] == "01.12 12:33 МСК"
    _, feed = await get(http, server, "feed")
    assert {m["time"] for m in feed["messages"]} == {"01.12 12:33 МСК"}
    assert feed["comments"][-1]["time"] == "01.12 12:33 МСК"


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists(CHROMIUM), reason=CHROMIUM_MISSING)
async def test_the_page_opens_the_community_its_address_names() -> None:
    """``?group_id=`` in the page's address wins over the community picked last time on the
    browser; picking another writes it into the address. Times read in Moscow's, on a browser
    whose clock is New York's."""
    from playwright.async_api import async_playwright, expect

    state = make_state()
    Communities.of(state).create(
        group_id=B_ID, group_token="b-group-token", user_tokens=["b-user"], group_name="Мафия Б"
    )
    b = Communities.of(state).get(B_ID)
    b.add_user(PLAYER, "Аня", "Иванова")
    b.inject_message(PLAYER, "статус")
    b.conversation(PLAYER)[-1].date = AT
    state.add_user(PLAYER + 1, "Борис", "Петров")
    async with running_server(state) as srv, async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = await browser.new_context(timezone_id="America/New_York")
        page = await context.new_page()
        await page.goto(f"{srv.url}/sandbox/")
        await expect(page.locator("#group-name")).to_contain_text("локальный VK")
        await page.evaluate(f"localStorage.setItem('sandbox-group', '{GROUP_ID}')")
        await page.goto(f"{srv.url}/sandbox/?group_id={B_ID}")
        await expect(page.locator("#group-name")).to_contain_text("Мафия Б")
        await expect(page.locator("#community-select")).to_have_value(str(B_ID))
        await expect(page.locator("#messages .meta")).to_have_text("01.12 12:33 МСК")
        assert f"group_id={B_ID}" in page.url
        # picking the other community puts it in the address (a reload keeps it)
        await page.select_option("#community-select", str(GROUP_ID))
        await expect(page.locator("#group-name")).not_to_contain_text("Мафия Б")
        assert f"group_id={GROUP_ID}" in page.url
        await page.reload()
        await expect(page.locator("#community-select")).to_have_value(str(GROUP_ID))
        await browser.close()
