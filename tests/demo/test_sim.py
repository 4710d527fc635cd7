"""The simulated players: what they read (the bot's own texts), what they choose, and that
their moves reach the local VK as users' actions — and never for a taken-over player."""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import aiohttp
import pytest
import pytest_asyncio

from demo.sim import brain
from demo.sim.knowledge import Me, Table, buttons_of, deadline_of, is_confirmation
from demo.sim.runner import Pace, Players, SandboxClient
from gameplay.buttons import Payload, choice_keyboard, targets_keyboard
from gameplay.messages import Person, render, when
from gameplay.rules import Act, Item, Role
from gameplay.services.prompts import guess_choices
from localvk import LocalVK, RunningServer, running_server
from localvk.communities import Communities
from localvk.sandbox.views import keyboard_view
from vkbot.keyboards import of_row

GAME = "Машина времени (демо)"
TZ = "Europe/Moscow"
NAMES = {n: f"Игрок{n} Фамилия" for n in range(1, 27)}
MAFIA = [3, 7, 11, 15, 19, 23]


def as_message(text: str, board: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    """A message as the player page's feed shows it."""
    data = {
        "id": extra.pop("id", 1),
        "peer_id": extra.pop("peer_id", 1001),
        "text": text,
        "from_community": True,
        **extra,
    }
    if board is not None:
        keyboard = of_row(board)
        assert keyboard is not None
        data["keyboard"] = keyboard_view(keyboard)
    return data


def roster_and_day_one() -> str:
    return (
        render(
            "board/roster",
            game=GAME,
            seats=[Person(n, name) for n, name in NAMES.items()],
            commitment="abc",
        )
        + "\n\n"
        + render("board/day_opened", number=1, deadline=when(None, TZ), early=False)
    )


def role_card(number: int, role: Role, item: Item | None, team: list[int]) -> str:
    return render(
        "player/role_card",
        game=GAME,
        number=number,
        role=role,
        item=item.value if item else "",
        mafia=[Person(n, NAMES[n]) for n in team],
        commitment="abc",
    )


def table_after_start() -> Table:
    table = Table()
    table.read_board(5, roster_and_day_one())
    return table


def mafia_me(number: int = 3) -> Me:
    me = Me(1000 + number)
    me.read_private(role_card(number, Role.MAFIA, None, MAFIA))
    return me


# --- knowledge -------------------------------------------------------------------------------


def test_a_role_card_tells_the_number_the_role_and_the_team() -> None:
    me = mafia_me(7)
    assert (me.game, me.number, me.role, me.team) == (GAME, 7, "mafia", set(MAFIA))
    doctor = Me(1001)
    doctor.read_private(role_card(1, Role.DOCTOR, Item.BOOK, []))
    assert (doctor.number, doctor.role, doctor.team, doctor.playing) == (1, "doctor", set(), True)
    doctor.read_private(
        render("player/check_result", number=1, target=Person(3, "X"), is_mafia=True)
    )
    assert doctor.checked == {3: True}
    doctor.read_private(render("player/you_died", invited=True))
    assert not doctor.playing


def test_the_board_tells_the_roster_the_day_and_the_deaths() -> None:
    table = table_after_start()
    assert (table.game, table.topic_id, table.day) == (GAME, 5, 1)
    assert table.living() == list(range(1, 27))
    table.read_board(
        5,
        render(
            "board/day_result",
            number=1,
            early=False,
            modkilled=[],
            penalties=[],
            tally=[
                {"person": Person(4, NAMES[4]), "votes": 9},
                {"person": Person(5, NAMES[5]), "votes": 3},
            ],
            executed=Person(4, NAMES[4], 2),
            executed_role=Role.CIVILIAN,
            story="",
        )
        + "\n\n"
        + render("board/night_opened", number=1, deadline=when(None, TZ)),
    )
    assert table.closed_days == {1} and 4 not in table.living()
    table.read_board(
        5,
        render(
            "board/night_result",
            number=1,
            story="",
            deaths=[{"person": Person(9, NAMES[9]), "role": ""}],
            modkilled=[{"person": Person(10, NAMES[10]), "role": "maniac"}],
            penalties=[Person(12, NAMES[12])],
        ),
    )
    assert {4, 9, 10} <= table.dead and 12 not in table.dead
    table.read_board(
        5,
        render(
            "board/night_result",
            number=1,
            story="",
            modkilled=[],
            deaths=[
                {"person": Person(14, NAMES[14], 1), "role": ""},
                {"person": Person(15, NAMES[15]), "role": "doctor"},
            ],
            penalties=[],
        ),
    )
    assert {14, 15} <= table.dead
    assert table.published_nights == {1}
    assert {4, 9, 10} <= table.dead and 12 not in table.dead
    table.read_board(5, render("board/modkilled", seat=Person(13, NAMES[13]), role="civilian"))
    assert 13 in table.dead
    # another topic: not this game
    table.read_board(6, render("board/day_opened", number=7, deadline=when(None, TZ), early=True))
    assert table.day == 1
    table.read_board(
        5,
        render(
            "board/game_over",
            game=GAME,
            winner="",
            winner_key="",
            seats=[],
            night_log=[],
            overrides=[],
            seed="seed",
            commitment="abc",
            counts=[{"role": "mafia", "n": 6}],
            rounds=[],
            players_url="",
        ),
    )
    assert table.over


def test_deadlines_and_confirmations_are_read_from_the_prompts() -> None:
    now = datetime(2026, 11, 30, 4, 0, tzinfo=UTC)  # 07:00 in Moscow
    text = render(
        "player/day_prompt", number=1, deadline=when(now + timedelta(minutes=5), TZ), early=False
    )
    deadline = deadline_of(text, TZ, now)
    assert deadline is not None and 5 * 60 <= (deadline - now).total_seconds() < 6 * 60
    assert deadline_of("без срока", TZ, now) is None
    assert is_confirmation(
        render("player/action_accepted", act="лечение", target=Person(1, "X"), guess="")
    )
    assert is_confirmation(
        render("player/vote_accepted", target=Person(1, "X"), early=False, early_ignored=False)
    )
    assert not is_confirmation(render("player/you_died", invited=True))


# --- choices ---------------------------------------------------------------------------------


def vote_prompt() -> dict[str, Any]:
    base = Payload("vote", game=1, phase=10)
    pairs = [(n, NAMES[n]) for n in range(1, 27) if n != 3]
    text = render("player/day_prompt", number=1, deadline=when(None, TZ), early=False)
    return as_message(text, targets_keyboard(pairs, base))


def test_votes_never_go_to_oneself_or_a_fellow_mafioso() -> None:
    table = table_after_start()
    me = mafia_me(3)
    buttons = buttons_of(vote_prompt())
    kinds = set()
    for seed in range(300):
        move = brain.vote_move(me, table, buttons, 1, random.Random(seed))
        kinds.add(type(move).__name__)
        if isinstance(move, brain.Press):
            target = next(b for b in buttons if (b.row, b.column) == (move.row, move.column))
            assert target.payload is not None
            number = target.payload.target
        else:
            assert move is not None
            number = int(move.text.split()[-1].lstrip("№"))
        assert number not in MAFIA
    assert kinds == {"Press", "Write", "Post"}


def test_the_town_herds_around_the_days_suspects() -> None:
    table = table_after_start()
    me = Me(1001, number=1, role="civilian")
    suspects = set(brain.suspects(table, 1)) - {1}
    votes = [brain.vote_move(me, table, [], 1, random.Random(seed)) for seed in range(200)]
    chosen = [int(cast(brain.Write, v).text.split()[-1].lstrip("№")) for v in votes]
    assert sum(n in suspects for n in chosen) > 120


def night_prompt(act: Act, me: Me, *, phase: int = 11) -> dict[str, Any]:
    base = Payload(act.value, game=1, phase=phase)
    pairs = [(n, NAMES[n]) for n in range(1, 27) if act is Act.HEAL or n != me.number]
    text = render(
        "player/act_prompt",
        number=1,
        act=act.value,
        item=act.item.value if act.item else "",
        deadline=when(None, TZ),
    )
    return as_message(text, targets_keyboard(pairs, base))


def test_the_mafia_leader_shoots_the_town_and_the_others_mostly_wait() -> None:
    table = table_after_start()
    leader, other = mafia_me(3), mafia_me(7)
    prompt = buttons_of(night_prompt(Act.MAFIA_SHOT, leader))
    shots = [brain.night_move(leader, table, prompt, random.Random(s)) for s in range(100)]
    assert all(shot is not None for shot in shots)
    for shot in shots:
        if isinstance(shot, brain.Write):
            assert int(shot.text.split()[-1]) not in MAFIA
        else:
            shot = cast(brain.Press, shot)
            payload = prompt[shot.row * 2 + shot.column].payload
            assert payload is not None and payload.target not in MAFIA
    waits = [brain.night_move(other, table, prompt, random.Random(s)) for s in range(100)]
    assert sum(move is None for move in waits) > 70
    table.dead.add(3)  # the leader is dead: the next one leads
    assert brain.is_leader(other, table)


def test_the_commissar_chooses_then_shoots_a_known_mafioso() -> None:
    table = table_after_start()
    me = Me(1002, number=2, role="commissar")
    base = Payload("", game=1, phase=11)
    choice = buttons_of(
        as_message(
            render("player/commissar_prompt", number=1, deadline=when(None, TZ)),
            choice_keyboard(
                [
                    ("Проверка", base.but(action="check")),
                    ("Выстрел", base.but(action="commissar_shot")),
                ]
            ),
        )
    )
    moves = [brain.night_move(me, table, choice, random.Random(s)) for s in range(50)]
    presses = [m for m in moves if isinstance(m, brain.Press)]
    assert presses and all(m.what.startswith("выбор") for m in presses)
    assert all(m.text.startswith("проверка") for m in moves if isinstance(m, brain.Write))
    me.checked = {7: True, 8: False}
    page = buttons_of(night_prompt(Act.COMMISSAR_SHOT, me))
    for seed in range(30):
        move = brain.night_move(me, table, page, random.Random(seed), followup=True)
        if isinstance(move, brain.Write):
            target = move.text.split()[-1]
        else:
            press = cast(brain.Press, move)
            payload = page[press.row * 2 + press.column].payload
            assert payload is not None
            target = str(payload.target)
        assert target == "7"


def test_the_doctor_heals_only_whom_the_buttons_allow() -> None:
    table = table_after_start()
    me = Me(1005, number=5, role="doctor")
    base = Payload("heal", game=1, phase=11)
    allowed = [(n, NAMES[n]) for n in (1, 2, 5, 6)]
    buttons = buttons_of(as_message("Ночь 1. Кого лечите?", targets_keyboard(allowed, base)))
    for seed in range(50):
        move = brain.night_move(me, table, buttons, random.Random(seed))
        assert isinstance(move, brain.Press)
        payload = buttons[move.row * 2 + move.column].payload
        assert payload is not None and payload.target in (1, 2, 5, 6)


def test_the_role_strike_guess_page_gets_a_guess() -> None:
    table = table_after_start()
    me = mafia_me(3)
    base = Payload("role_strike", game=1, phase=11, target=9)
    page = buttons_of(
        as_message("Какую роль?", choice_keyboard(guess_choices(base=base), color="negative"))
    )
    move = brain.night_move(me, table, page, random.Random(1), followup=True)
    assert isinstance(move, brain.Press) and move.what.startswith("role_strike")


def test_a_pace_stays_inside_the_phase() -> None:
    pace = Pace(3, 150)
    rng = random.Random(1)
    assert all(3 <= pace.delay(rng, 300) <= 150 for _ in range(100))
    assert all(3 <= pace.delay(rng, 60) <= 26 for _ in range(100))
    assert all(pace.delay(rng, 5) == pytest.approx(3) for _ in range(10))


# --- the loop against a local VK ---------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest_asyncio.fixture
async def local() -> AsyncIterator[tuple[RunningServer, aiohttp.ClientSession]]:
    async with running_server(LocalVK(group_rps=10_000, user_rps=10_000)) as srv:
        async with aiohttp.ClientSession() as http:
            yield srv, http


def community_says(
    state: LocalVK, peer: int, text: str, board: dict[str, Any] | None = None
) -> int:
    return state.send_message(
        token=state.group_token,
        token_kind="group",
        sender_id=state.community_id,
        peer_id=peer,
        text=text,
        random_id=0,
        keyboard=of_row(board),
    ).id


def start_game(state: LocalVK) -> int:
    topic = state.create_topic("Игра", roster_and_day_one())
    for n in range(1, 27):
        role = Role.MAFIA if n in MAFIA else Role.CIVILIAN
        team = [(m, NAMES[m]) for m in MAFIA] if role is Role.MAFIA else []
        community_says(state, 1000 + n, role_card(n, role, None, [t for t, _ in team]))
    return topic.id


def user_moves(state: LocalVK, since: int) -> list[tuple[str, int]]:
    """(update type, user) of what users did since the long-poll ts ``since``."""
    out = []
    for update in state.longpoll.events():
        obj = update["object"]
        sender = (
            (obj.get("message") or {}).get("from_id") or obj.get("user_id") or obj.get("from_id")
        )
        if update["type"] in ("message_new", "message_event", "board_post_new") and sender > 0:
            out.append((update["type"], sender))
    return out[since:]


async def test_players_vote_when_the_time_comes_except_the_taken_over(
    local: tuple[RunningServer, aiohttp.ClientSession],
) -> None:
    srv, http = local
    state = srv.state
    start_game(state)
    clock = Clock()
    players = Players(
        SandboxClient(srv.url, http),
        rng=random.Random(5),
        pace=Pace(3, 10),
        time_zone=TZ,
        clock=clock,
    )
    await players.catch_up()
    assert sum(me.playing for me in players.me.values()) == 26
    assert players.table.day == 1
    state.set_taken_over(1001)
    prompt = vote_prompt()
    for n in range(1, 27):
        community_says(
            state,
            1000 + n,
            prompt["text"],
            json.loads(
                json.dumps(
                    targets_keyboard(
                        [(m, NAMES[m]) for m in range(1, 27) if m != n],
                        Payload("vote", game=1, phase=10),
                    )
                )
            ),
        )
    await players.poll()
    assert await players.run_due() == 0  # nobody moves at once
    clock.now += 11
    assert await players.run_due() >= 25
    movers = {user for _, user in user_moves(state, 0)}
    assert movers == {1000 + n for n in range(2, 27)}  # every player but the taken-over one


async def test_answered_prompts_are_not_played_again_after_a_restart(
    local: tuple[RunningServer, aiohttp.ClientSession],
) -> None:
    srv, http = local
    state = srv.state
    start_game(state)
    board = targets_keyboard(
        [(m, NAMES[m]) for m in range(2, 27)], Payload("vote", game=1, phase=10)
    )
    community_says(state, 1001, vote_prompt()["text"], board)
    community_says(
        state,
        1001,
        render("player/vote_accepted", target=Person(2, "X"), early=False, early_ignored=False),
    )
    community_says(state, 1002, vote_prompt()["text"], board)  # not answered yet
    clock = Clock()
    players = Players(
        SandboxClient(srv.url, http),
        rng=random.Random(2),
        pace=Pace(1, 2),
        time_zone=TZ,
        clock=clock,
    )
    await players.catch_up()
    assert {plan.user_id for plan in players.plans if plan.kind == "vote"} == {1002}


async def test_a_commissar_page_is_followed_up_quickly(
    local: tuple[RunningServer, aiohttp.ClientSession],
) -> None:
    srv, http = local
    state = srv.state
    start_game(state)
    clock = Clock()
    players = Players(
        SandboxClient(srv.url, http),
        rng=random.Random(0),
        pace=Pace(30, 60),
        time_zone=TZ,
        clock=clock,
    )
    await players.catch_up()
    me = players.me[1002]
    me.role = "commissar"
    players.awaiting[1002] = 11
    page = targets_keyboard(
        [(m, NAMES[m]) for m in range(1, 27) if m != 2], Payload("check", game=1, phase=11)
    )
    community_says(state, 1002, render("player/act_question", act="check"), page)
    await players.poll()
    (plan,) = players.plans
    assert plan.followup and plan.due - clock.now <= 3
    clock.now += 3
    assert await players.run_due() == 1
    assert user_moves(state, 0)[-1][1] == 1002


async def test_players_of_another_community_play_there_only(
    local: tuple[RunningServer, aiohttp.ClientSession],
) -> None:
    srv, http = local
    second = Communities.of(srv.state).create(group_id=2, group_token="second-token")
    start_game(second)
    clock = Clock()
    there = Players(
        SandboxClient(srv.url, http, group_id=2),
        rng=random.Random(5),
        pace=Pace(3, 10),
        time_zone=TZ,
        clock=clock,
        label="[group 2] ",
    )
    here = Players(
        SandboxClient(srv.url, http),
        rng=random.Random(5),
        pace=Pace(3, 10),
        time_zone=TZ,
        clock=clock,
    )
    await there.catch_up()
    await here.catch_up()
    assert sum(me.playing for me in there.me.values()) == 26
    assert not any(me.playing for me in here.me.values())
    prompt = vote_prompt()
    for n in range(1, 27):
        community_says(
            second,
            1000 + n,
            prompt["text"],
            json.loads(
                json.dumps(
                    targets_keyboard(
                        [(m, NAMES[m]) for m in range(1, 27) if m != n],
                        Payload("vote", game=1, phase=10),
                    )
                )
            ),
        )
    await there.poll()
    await here.poll()
    clock.now += 11
    assert await here.run_due() == 0
    assert await there.run_due() >= 26
    assert {user for _, user in user_moves(second, 0)} == {1000 + n for n in range(1, 27)}
    assert user_moves(srv.state, 0) == []  # nothing reached the default community
