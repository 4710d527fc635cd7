"""After the end-to-end game: what every player received, and the leak scan over everything
the local VK holds (tests/e2e/leaks.py)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, cast

from gameplay.models import (
    Game,
    NightAction,
    Outbox,
    OutboxChannel,
    OutboxStatus,
    Replacement,
    Seat,
    SeatStatus,
)
from tests.e2e.cast import PLAYERS, QUITTER
from tests.e2e.harness import db
from tests.e2e.leaks import Knowledge, SeatInfo, board_leaks, private_leaks
from tests.e2e.script import INVITE, Script
from vkbot.keyboards import of_row


async def what_everyone_received(s: Script) -> None:
    c = s.cast
    assert c is not None
    game = await db(Game.objects.get, pk=s.game_id)
    for i, person in s.people.items():
        cards = person.received("Ваш номер:")
        assert len(cards) == (0 if i == QUITTER else 1), (person, [m.text for m in cards])
        assert all(f"Хеш раздачи: {game.commitment}" in m.text for m in cards)
    holders = {n: p.vk for n, p in s.seat_holder.items()}
    mafia_vk = {holders[m] for m in c.mafia}
    everyone = [p for p in s.people.values()]

    def got(needle: str) -> set[int]:
        return {p.vk for p in everyone if p.received(needle)}

    # Night prompts went to those who act at night, and to nobody else.
    acting_1 = {*c.mafia, c.commissar, c.doctor, c.maniac, c.red_button, c.book} - {c.executed1}
    assert got("Ночь 1.") == {holders[n] for n in acting_1}
    acting_2 = acting_1 - {c.shot1, c.victim, c.checked, c.modkilled}  # the clock was used
    assert got("Ночь 2.") == {holders[n] for n in acting_2}
    # The commissar alone heard a check result; the mafia alone who sent a team action.
    assert got("проверка: №") == {holders[c.commissar]}
    assert got("Выстрел мафии: №") <= mafia_vk and got("Ролевой удар мафии:") <= mafia_vk
    assert got("(отправил") | got("(отправитель") <= mafia_vk
    # Every death was told to the dead.
    dead = {c.executed1, c.victim, c.shot1, c.checked, c.striker, c.maniac, c.clock}
    assert got("Вы выбыли из игры. Спасибо за игру!") == {holders[n] for n in dead}
    assert got("Ведущий исключил вас из игры.") == {holders[c.modkilled]}
    # Day prompts: to every living player at each day's start (Day 2's to the player who then
    # left; the one who came got it with the menu's «Действия»).
    first = {n: s.people[n].vk for n in range(1, PLAYERS + 1)}
    assert got("День 1. Голосуйте") == set(first.values())
    day_2 = set(range(1, PLAYERS + 1)) - {c.executed1, c.victim, c.shot1}
    assert got("День 2. Голосуйте") == {first[n] for n in day_2} | {holders[c.replaced]}
    day_3 = day_2 - {c.modkilled, c.checked, c.striker, c.maniac}
    assert got("День 3. Голосуйте") == {holders[n] for n in day_3}
    # Exactly once: each recipient of each Outbox row got it once, and nothing else came.
    assert Counter(received(s)) == Counter(await db(queued)), "VK holds other messages"
    # Every callback button pressed was answered (VK wants it within a minute).
    pressed = list(s.state.callback_events.values())
    assert len(pressed) > 10, len(pressed)
    assert [e.event_id for e in pressed if e.answer is None] == []
    print(
        f"{s.world.settles} steps, runbot applied {s.world.bot_batches} batches; "
        f"{len(s.state.messages)} messages, {s.last_comment_id()} board comments, "
        f"at most {s.state.max_requests_per_second('group')}/s (group) and "
        f"{s.state.max_requests_per_second('user')}/s (user) requests"
    )
    assert s.state.max_requests_per_second("group") <= 20
    assert s.state.max_requests_per_second("user") <= 3


Sent = tuple[int, str, str]


def _board(keyboard: dict[str, Any] | None) -> str:
    return json.dumps(keyboard, sort_keys=True, ensure_ascii=False) if keyboard else ""


def queued() -> list[Sent]:
    """(recipient, text, keyboard) of every private message the Outbox delivered."""
    rows = Outbox.objects.filter(
        channel__in=[OutboxChannel.MESSAGE, OutboxChannel.INVITE], status=OutboxStatus.SENT
    )
    return [
        (peer, row.text.replace("{link}", "<link>"), _board(of_row(row.keyboard)))
        for row in rows
        for peer in row.peer_ids
    ]


def received(s: Script) -> list[Sent]:
    """(recipient, text, keyboard) of every message the local VK got from the community, each
    version of an edited one (a page turned) counted as what was delivered then."""
    return [
        (m.peer_id, INVITE.sub("<link>", text), _board(keyboard))
        for m in s.state.sent_messages()
        if m.from_id == s.state.community_id
        for text, keyboard in [
            *((h["text"], h["keyboard"]) for h in m.history),
            (m.text, m.keyboard),
        ]
    ]


async def nothing_leaked(s: Script) -> None:
    c = s.cast
    assert c is not None

    def table() -> tuple[list[Seat], list[Replacement], list[tuple[int, str, int]]]:
        seats = list(Seat.objects.filter(game_id=s.game_id, status=SeatStatus.PLAYER))
        swaps = list(Replacement.objects.filter(seat__game_id=s.game_id))
        acts = [
            (cast(int, a.actor.number), a.act, cast(int, a.target.number))  # the players' seats
            for a in NightAction.objects.filter(phase__game_id=s.game_id).select_related(
                "actor", "target"
            )
        ]
        return seats, swaps, acts

    seats, swaps, actions = await db(table)
    assert len(swaps) == 1
    swap = swaps[0]
    forever = 10**12
    holders: dict[int, list[tuple[int, int, int]]] = {
        x.vk_user_id: [(cast(int, x.number), 0, forever)] for x in seats
    }
    holders[swap.new_vk_user_id] = [(c.replaced, s.marks["replaced"], forever)]
    holders[swap.old_vk_user_id] = [(c.replaced, 0, s.marks["replaced"])]
    knowledge = Knowledge(
        seats={
            cast(int, x.number): SeatInfo(
                cast(int, x.number),
                x.role,
                tuple({x.name} | ({swap.old_name} if x.number == c.replaced else set())),
            )
            for x in seats
        },
        holders=holders,
        public_from=s.public_from,
        actions=actions,
    )
    inboxes = {p.vk: p.inbox() for p in s.people.values()}
    assert sum(len(m) for m in inboxes.values()) > 250  # the scan sees the whole game
    found = private_leaks(knowledge, inboxes)
    assert not found, "\n".join(found)
    comments = [m for t in s.state.topics.values() for m in t.comments]
    final = max(m.id for m in comments if "окончена. Победа" in m.text)
    revealed = {c.executed1, c.checked, c.modkilled, c.clock}
    found = board_leaks(knowledge, comments, revealed=revealed, final_id=final)
    assert not found, "\n".join(found)
