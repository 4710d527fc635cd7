"""gameplay.services.phases: opening a day or a night (the phase with its deadline, the board's
post, everyone's prompts), finishing a game (everything revealed), and the GM's ``game_end``."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from django.db import transaction

from gameplay.models import Actor, Game, GameStatus, Outbox, Phase, PhaseKind, PhaseStatus
from gameplay.refusals import GameAlreadyOver
from gameplay.rules import Role, Winner
from gameplay.services.common import lock_game, players
from gameplay.services.phases import (
    day_open_locked,
    game_end,
    game_finish_locked,
    night_open_locked,
)
from tests.gameplay.factories import board, current_phase, events, make_game, outbox, pms_to
from tests.module_db import module_rows

pytestmark = pytest.mark.django_db

NOW = datetime(2025, 3, 2, 9, 0, tzinfo=UTC)


def _dealt() -> int:
    return make_game(n=9, deal=True).pk


_dealt_rows = module_rows(_dealt)


@pytest.fixture
def dealt(_dealt_rows: int) -> Game:
    """Nine players dealt, no phase yet (built once per module)."""
    return Game.objects.get(pk=_dealt_rows)


def opened(game: Game, opener: Callable[..., Phase], number: int) -> Phase:
    """``day_open_locked`` or ``night_open_locked`` called as a service calls it: the game
    locked."""
    with transaction.atomic():
        locked = lock_game(game_id=game.pk)
        return opener(game=locked, number=number, now=NOW, seats=players(locked))


def peers(rows: list[Outbox]) -> set[int]:
    return {p for row in rows for p in row.peer_ids}


def test_a_day_opens_with_its_deadline_its_post_and_everyones_vote_buttons(dealt: Game) -> None:
    day = opened(dealt, day_open_locked, 3)
    assert (day.kind, day.number, day.status) == (PhaseKind.DAY, 3, PhaseStatus.OPEN)
    assert day.opened_at == NOW and day.deadline == NOW + dealt.day_length
    event = events(dealt, "phase_opened")[-1]
    assert (event.phase_id, event.data["phase_kind"], event.data["number"]) == (day.pk, "day", 3)
    [post] = board(dealt, "day_opened")
    assert post.text.startswith("День 3.") and "Досрочный голос" in post.text
    prompts = outbox(dealt, "day_prompt")
    assert peers(prompts) == {s.vk_user_id for s in players(dealt)}
    assert all(row.keyboard and row.keyboard["rows"] for row in prompts)


def test_day_one_has_no_early_votes(dealt: Game) -> None:
    opened(dealt, day_open_locked, 1)
    [post] = board(dealt, "day_opened")
    assert post.text.startswith("День 1.") and "Досрочный" not in post.text


def test_a_night_opens_with_prompts_for_those_who_can_act_only(dealt: Game) -> None:
    night = opened(dealt, night_open_locked, 2)
    assert (night.kind, night.number, night.deadline) == (
        PhaseKind.NIGHT,
        2,
        NOW + dealt.night_length,
    )
    [post] = board(dealt, "night_opened")
    assert post.text.startswith("Ночь 2 наступила.")
    seats = players(dealt)
    acting = {s.vk_user_id for s in seats if s.role != Role.CIVILIAN or s.item}
    assert peers(outbox(dealt, "night_prompt")) == acting
    assert acting != {s.vk_user_id for s in seats}  # plain civilians get nothing


def test_finishing_a_game_reveals_everything_and_tells_every_player() -> None:
    game = make_game(n=9, start=True)
    day = current_phase(game)
    with transaction.atomic():
        game_finish_locked(
            game=lock_game(game_id=game.pk), winner=Winner.TOWN, now=NOW, by=Actor.gm("x")
        )
    game.refresh_from_db()
    day.refresh_from_db()
    assert (day.status, day.closed_at) == (PhaseStatus.DONE, NOW)
    assert (game.status, game.winner, game.finished_at) == (GameStatus.FINISHED, "town", NOW)
    [event] = events(game, "game_finished")
    assert event.actor == "gm:x" and not event.override
    assert event.data["seed"] == game.seed and event.data["winner"] == "town"
    assert [r["round"] for r in event.data["rounds"]] == [1]
    [post] = board(game, "game_over")
    assert "Победа: Мирный город!" in post.text and game.seed in post.text
    [told] = outbox(game, "game_over", channel="message")
    assert set(told.peer_ids) == {s.vk_user_id for s in players(game)}
    assert "Победа: Мирный город." in told.text


def test_the_gm_ends_a_running_game_as_an_override_once() -> None:
    game = make_game(n=9, start=True)
    game_end(game_id=game.pk, by=Actor.gm("anna"), reason="разошлись", now=NOW)
    game.refresh_from_db()
    assert (game.status, game.winner, game.finished_at) == (GameStatus.FINISHED, "", NOW)
    [event] = events(game, "game_finished")
    assert event.override and event.data["reason"] == "разошлись"
    told = pms_to(game, players(game)[0].vk_user_id, "game_over")
    assert len(told) == 1 and "Ведущий остановил игру." in told[0].text
    with pytest.raises(GameAlreadyOver):
        game_end(game_id=game.pk, by=Actor.gm("anna"))


def test_a_cancelled_game_cannot_be_ended_again() -> None:
    game = make_game(n=3)
    game_end(game_id=game.pk, by=Actor.gm("anna"), now=NOW)
    game.refresh_from_db()
    assert (game.status, game.finished_at) == (GameStatus.CANCELLED, NOW)
    with pytest.raises(GameAlreadyOver):
        game_end(game_id=game.pk, by=Actor.gm("anna"))
    assert [e.kind for e in events(game)].count("game_cancelled") == 1
