"""gameplay.services.prompts: the buttons a player gets: at night one prompt per thing they can
do (the targets the rules accept), the follow-up pages (targets, the role strike's guess), by
day the vote (an «early» switch from Day 3); identical prompts go out as one message."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import transaction

from gameplay import services
from gameplay.buttons import NEGATIVE, VOTE, Keyboard, Payload
from gameplay.models import Actor, Game, Outbox, Phase, Seat
from gameplay.rules import Act, Role
from gameplay.services.common import lock_game, players
from gameplay.services.prompts import (
    GUESSES,
    act_page,
    guess_page,
    night_prompts,
    phase_prompts,
    queue_day_prompts,
    queue_night_prompts,
    vote_page,
)
from tests.gameplay.factories import (
    act,
    advance_to_day,
    civilians,
    current_phase,
    duty_actions,
    label,
    last_outbox_id,
    make_game,
    number_of,
    outbox,
    seat,
    to_night,
    vote,
)
from tests.module_db import module_rows

pytestmark = pytest.mark.django_db


def _night_one() -> int:
    g = make_game(n=9, start=True)
    to_night(g)
    return g.pk


_night_one_rows = module_rows(_night_one)


@pytest.fixture
def game(_night_one_rows: int) -> Game:
    """Nine players, Night 1 open (built once per module)."""
    return Game.objects.get(pk=_night_one_rows)


def payloads(keyboard: dict[str, Any]) -> list[Payload]:
    return [
        b.payload for row in Keyboard.from_json(keyboard).rows for b in row if b.payload is not None
    ]


def targets(keyboard: dict[str, Any]) -> list[int]:
    return [p.target for p in payloads(keyboard) if p.target is not None]


def others(game: Game, s: Seat) -> list[int]:
    return [number_of(x) for x in players(game) if x.alive and x.pk != s.pk]


def test_an_acts_page_offers_the_targets_the_rules_accept(game: Game) -> None:
    night, seats = current_phase(game), players(game)
    commissar = seat(game, Role.COMMISSAR)
    text, keyboard = act_page(game=game, phase=night, seats=seats, seat=commissar, act=Act.CHECK)
    assert "Кого проверяете?" in text
    assert targets(keyboard) == others(game, commissar)  # never oneself
    assert {(p.action, p.game, p.phase) for p in payloads(keyboard)} == {
        ("check", game.pk, night.pk)
    }


def test_the_doctor_is_reminded_of_last_nights_heal_and_cannot_repeat_it(game: Game) -> None:
    doctor = seat(game, Role.DOCTOR)
    healed = civilians(game)[0]
    act(game, doctor, Act.HEAL, healed)
    duty_actions(game, skip=[Role.DOCTOR], avoid=[healed])  # no strikes to break the tie
    services.night_close(game_id=game.pk, by=Actor.gm("test"))
    services.night_publish(game_id=game.pk, by=Actor.gm("test"))
    to_night(game)
    night, seats = current_phase(game), players(game)
    doctor = next(s for s in seats if s.role == Role.DOCTOR)
    text, keyboard = act_page(game=game, phase=night, seats=seats, seat=doctor, act=Act.HEAL)
    assert "Можно себя." in text and label(healed, "accs") in text
    assert doctor.number in targets(keyboard) and healed.number not in targets(keyboard)


def test_the_role_strikes_second_step_asks_for_the_role(game: Game) -> None:
    night, target = current_phase(game), civilians(game)[0]
    text, keyboard = guess_page(game=game, phase=night, target=target)
    assert f"Ролевой удар по {label(target, 'datv')}: какую роль вы называете?" in text
    assert [(p.action, p.target, p.guess) for p in payloads(keyboard)] == [
        ("role_strike", target.number, role.value) for role in GUESSES
    ]
    assert {b["color"] for row in keyboard["rows"] for b in row} == {NEGATIVE}


def test_each_seat_gets_a_prompt_per_act_and_a_plain_civilian_none(game: Game) -> None:
    night, seats = current_phase(game), players(game)

    def prompts_of(role: Role) -> list[tuple[str, dict[str, Any]]]:
        return night_prompts(game=game, phase=night, seats=seats, seat=seat(game, role))

    mafia = prompts_of(Role.MAFIA)
    assert [{p.action for p in payloads(kb)} for _, kb in mafia][:2] == [
        {"mafia_shot"},
        {"role_strike"},
    ]
    commissar = prompts_of(Role.COMMISSAR)[0]  # check or shoot: one choice, then its page
    assert commissar[0].startswith("Ночь 1. Выберите одно")
    assert [p.action for p in payloads(commissar[1])] == [Act.CHECK.value, Act.COMMISSAR_SHOT.value]
    plain = next(s for s in seats if s.role == Role.CIVILIAN and not s.item)
    assert night_prompts(game=game, phase=night, seats=seats, seat=plain) == []


def test_a_night_reopened_for_the_mafia_prompts_its_shot_only(game: Game) -> None:
    services.night_close(game_id=game.pk, by=Actor.gm("test"))
    services.night_reopen_mafia(game_id=game.pk, by=Actor.gm("test"))
    night, seats = current_phase(game), players(game)
    [shot] = night_prompts(game=game, phase=night, seats=seats, seat=seat(game, Role.MAFIA))
    assert {p.action for p in payloads(shot[1])} == {"mafia_shot"}
    assert night_prompts(game=game, phase=night, seats=seats, seat=seat(game, Role.DOCTOR)) == []


def test_an_early_page_before_day_three_is_the_ordinary_one_saying_why() -> None:
    game = make_game(n=9, start=True)
    day, seats = current_phase(game), players(game)
    voter = seats[0]
    text, keyboard = vote_page(game=game, phase=day, seats=seats, seat=voter, early=True)
    assert text.startswith("Досрочный голос действует с 3-го дня, а сейчас день 1")
    assert {(p.action, p.early) for p in payloads(keyboard)} == {(VOTE, False)}
    assert sorted(targets(keyboard)) == others(game, voter)


def test_from_day_three_the_vote_page_has_the_early_switch_and_a_final_vote_ends_it() -> None:
    game = make_game(n=9, start=True)
    advance_to_day(game, 3)
    day, seats = current_phase(game), players(game)
    voter, target = seats[0], seats[1]
    _, ordinary = vote_page(game=game, phase=day, seats=seats, seat=voter)
    assert any(p.early and p.target is None for p in payloads(ordinary))
    _, early = vote_page(game=game, phase=day, seats=seats, seat=voter, early=True)
    assert all(p.early for p in payloads(early))
    buttons = [b for row in Keyboard.from_json(early).rows for b in row]
    assert {b.color for b in buttons if b.payload and b.payload.target} == {NEGATIVE}
    [(text, kb)] = phase_prompts(game=game, phase=day, seats=seats, seat=voter)
    assert text.startswith("День 3.") and targets(kb)
    vote(game, voter, target, early=True)
    [(final, none)] = phase_prompts(game=game, phase=day, seats=seats, seat=voter)
    assert final.startswith(f"Ваш досрочный голос за {label(target, 'accs')}") and none == {}


def queued(game: Game, queue: Callable[..., None], phase: Phase) -> list[Outbox]:
    mark = last_outbox_id()
    with transaction.atomic():
        queue(game=lock_game(game_id=game.pk), phase=phase, seats=players(game))
    return outbox(game, after=mark)


def test_identical_prompts_go_out_as_one_message_to_many() -> None:
    game = make_game(n=12, start=True)
    rows = queued(game, queue_day_prompts, current_phase(game))
    assert {r.kind for r in rows} == {"day_prompt"}
    peers = [p for r in rows for p in r.peer_ids]
    assert sorted(peers) == sorted(s.vk_user_id for s in players(game))
    assert len(rows) < len(peers)  # the first page is the same for seats 9 to 12
    assert len({(r.text, str(r.keyboard)) for r in rows}) == len(rows)


def test_the_night_prompts_reach_those_who_can_act() -> None:
    game = make_game(n=9, start=True)
    night = to_night(game)
    rows = queued(game, queue_night_prompts, night)
    seats = players(game)
    assert {r.kind for r in rows} == {"night_prompt"}
    assert {p for r in rows for p in r.peer_ids} == {
        s.vk_user_id for s in seats if s.role != Role.CIVILIAN or s.item
    }
