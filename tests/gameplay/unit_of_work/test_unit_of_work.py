"""gameplay.unit_of_work: a hot call's guard (a refusal before its writes keeps the kept game, one
after them is a crash that drops it), keeping a game, and reading one afresh."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import transaction

from gameplay import unit_of_work
from gameplay.models import Actor, EventKind, Game, Outbox, OutboxChannel, VkEvent, Vote
from gameplay.rules import RuleViolation
from gameplay.selectors.table import current_phase, players
from gameplay.services.votes import vote_submit
from gameplay.unit_of_work import LockedGame, RefusalAfterWrites, txcache
from tests.gameplay.factories import make_game as make_started_game
from tests.gameplay.factories import topic_of
from tests.vkbot.bot_support import GROUP_ID, board_post, make_game, roles_26
from vkbot import pipeline
from vkbot.pipeline import apply_update

pytestmark = pytest.mark.django_db


class Boom(Exception):
    pass


def vote(game: Game, voter: int, target: int) -> None:
    vote_submit(game_id=game.pk, vk_user_id=1000 + voter, target=target)


def test_a_refusal_after_the_writes_began_is_a_crash_and_rolls_the_update_back(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.VK_GROUP_ID = GROUP_ID
    game = make_game(roles_26())

    def refuse_late(*args: Any, **kwargs: Any) -> None:
        raise RuleViolation("поздно")

    monkeypatch.setattr("gameplay.services.votes.send_message", refuse_late)
    with pytest.raises(RefusalAfterWrites), transaction.atomic(), txcache.kept():
        vote(game, 1, 20)
    update = board_post(topic_of(game), 1002, "голос 20")
    assert apply_update(update, source=pipeline.LONGPOLL)
    assert not Vote.objects.filter(phase__game=game).exists()
    assert VkEvent.objects.get(event_id=update["event_id"]).error.startswith("RefusalAfterWrites")


# --- the guard and the keeping, called directly -----------------------------------------------


def kept_entry(game: Game) -> LockedGame:
    """The game kept as the hot path keeps it (inside ``txcache.kept``)."""
    return unit_of_work.keep(LockedGame(game, current_phase(game), players(game)))


def test_keep_keeps_only_inside_the_pipelines_transaction() -> None:
    game = make_started_game(n=5, start=True)
    entry = kept_entry(game)
    assert unit_of_work.kept_game(game.pk) is None
    with transaction.atomic(), txcache.kept():
        assert unit_of_work.active()
        assert unit_of_work.keep(entry) is entry
        assert unit_of_work.kept_game(game.pk) is entry
        assert entry.is_kept
    assert not entry.is_kept
    assert not unit_of_work.active()


def test_a_refusal_before_the_writes_keeps_the_game_and_is_raised_as_it_is() -> None:
    game = make_started_game(n=5, start=True)
    with transaction.atomic(), txcache.kept():
        entry = kept_entry(game)
        with pytest.raises(RuleViolation) as refused, unit_of_work.hot_call(entry):
            raise RuleViolation("нельзя")
        assert type(refused.value) is RuleViolation
        assert unit_of_work.kept_game(game.pk) is entry


def test_a_refusal_after_the_writes_began_drops_the_game() -> None:
    game = make_started_game(n=5, start=True)
    with transaction.atomic(), txcache.kept():
        entry = kept_entry(game)
        with pytest.raises(RefusalAfterWrites, match="поздно"), unit_of_work.hot_call(entry):
            entry.begin_writes()
            raise RuleViolation("поздно")
        assert unit_of_work.kept_game(game.pk) is None


@pytest.mark.parametrize("wrote", [False, True])
def test_a_crash_drops_the_game_only_once_the_writes_began(wrote: bool) -> None:
    game = make_started_game(n=5, start=True)
    with transaction.atomic(), txcache.kept():
        entry = kept_entry(game)
        with pytest.raises(Boom), unit_of_work.hot_call(entry):
            if wrote:
                entry.begin_writes()
            raise Boom
        assert (unit_of_work.kept_game(game.pk) is None) is wrote


def test_a_call_that_wrote_in_a_savepoint_is_tied_to_it() -> None:
    game = make_started_game(n=5, start=True)
    with transaction.atomic(), txcache.kept():
        entry = kept_entry(game)
        with pytest.raises(Boom), transaction.atomic():
            with unit_of_work.hot_call(entry):
                entry.begin_writes()
            assert unit_of_work.kept_game(game.pk) is entry
            raise Boom
        assert unit_of_work.kept_game(game.pk) is None


def test_read_afresh_drops_the_game_and_writes_the_deferred_rows() -> None:
    game = make_started_game(n=5, start=True)
    with transaction.atomic(), txcache.kept():
        entry = kept_entry(game)
        row = Outbox(game=game, channel=OutboxChannel.MESSAGE, peer_ids=[1001], text="x", kind="t")
        assert unit_of_work.defer([row])
        assert row.pk is None
        unit_of_work.read_afresh(game.pk)
        assert row.pk is not None and Outbox.objects.filter(pk=row.pk).exists()
        assert unit_of_work.kept_game(game.pk) is None
        assert entry.version == 0


@pytest.mark.parametrize("kept", [False, True])
def test_the_handle_logs_only_an_event_kind(kept: bool) -> None:
    game = make_started_game(n=5, start=True)
    with transaction.atomic(), txcache.kept():
        entry = kept_entry(game) if kept else LockedGame(game, current_phase(game), players(game))
        with pytest.raises(ValueError):
            entry.log_event("no_such_kind")  # type: ignore[arg-type]
        event = entry.log_event(EventKind.STORY_SET, by=Actor.gm("anna"), story="x")
    event.refresh_from_db()
    assert (event.kind, event.actor) == ("story_set", "gm:anna")
