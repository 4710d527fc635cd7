"""What the GM confirms before it happens: closing a phase (who is executed, struck,
modkilled, who dies at night), starting the game, removing a player after the deal; a modkill
needs a reason the player is told; a struck player is told what the strike means."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from gameplay import services
from gameplay.models import Game, Outbox, Phase, PhaseStatus, Seat, Strike
from gameplay.rules import Role
from tests.gameplay.factories import number_of
from tests.panel.support import (
    close_now,
    living,
    make_game,
    module_gm,
    night_round,
    seats_by_role,
    vote_round,
)

pytestmark = pytest.mark.django_db


def url(name: str, game: Game, **kw: Any) -> str:
    return reverse(f"admin:{name}", kwargs={"game_id": game.pk, **kw})


def texts_to(game: Game, seat: Seat, kind: str) -> list[str]:
    return [
        o.text
        for o in Outbox.objects.filter(game=game, kind=kind).order_by("id")
        if seat.vk_user_id in o.peer_ids
    ]


def open_phase(game: Game) -> Phase:
    return Phase.objects.get(game=game, status__in=[PhaseStatus.OPEN, PhaseStatus.REVIEW])


world, gm = module_gm(lambda gm: {"game": make_game(gm, players=7, seed="confirm-seed").pk})


@pytest.fixture
def game(world: dict[str, int]) -> Game:
    """Seven players, Day 1 open, run by ``gm`` (built once per module)."""
    return Game.objects.get(pk=world["game"])


def test_closing_a_day_shows_the_execution_and_the_strikes_first(
    game: Game, gm_client: Client
) -> None:
    alive = living(game)
    target, lazy = alive[0], alive[-1]
    for s in alive[1:-1]:
        services.vote_submit(game_id=game.pk, voter=s.number, target=number_of(target))
    Seat.objects.filter(pk=target.pk).update(sex=1)  # VK said: a woman
    response = gm_client.get(url("panel_close", game))
    html = response.content.decode()
    assert response.status_code == 200
    assert f"Будет казнена №{target.number} {target.name}" in html
    assert f"№{lazy.number} {lazy.name} — первый штраф: +2 голоса" in html
    assert f"№{target.number} {target.name} — первый штраф" in html  # he did not vote either
    assert open_phase(game).kind == "day"  # a GET changes nothing

    # A vote arrives while the page is open: the confirmation is shown again, nothing closes.
    stale = response.context["preview"].fingerprint
    services.vote_submit(game_id=game.pk, voter=lazy.number, target=number_of(target))
    response = gm_client.post(
        url("panel_close", game),
        {"confirm": "yes", "phase": str(open_phase(game).pk), "expect": stale},
    )
    assert response.status_code == 200
    assert "итог изменился" in response.content.decode()
    assert f"№{lazy.number} {lazy.name} — первый штраф" not in response.content.decode()
    assert open_phase(game).kind == "day"

    response = close_now(gm_client, game)
    said = " ".join(str(m) for m in response.context["messages"])
    assert f"День 1 закрыт: казнена №{target.number} {target.name}." in said
    target.refresh_from_db()
    assert not target.alive


def test_a_second_strike_is_shown_as_a_modkill_and_the_player_is_told(
    game: Game, gm_client: Client
) -> None:
    lazy = living(game)[-1]
    services.day_close(game_id=game.pk)  # nobody voted: everyone struck once
    first = texts_to(game, lazy, "strike")
    assert len(first) == 1
    assert "вы не проголосовали в день 1" in first[0]
    assert "+2 голоса против вас" in first[0] and "Второй штраф — модкилл" in first[0]
    night_round(game)
    services.night_close(game_id=game.pk)
    services.night_publish(game_id=game.pk)
    lazy.refresh_from_db()
    assert lazy.alive
    html = gm_client.get(url("panel_close", game)).content.decode()
    assert f"№{lazy.number} {lazy.name} — <strong>второй штраф: модкилл</strong>" in html
    close_now(gm_client, game)
    lazy.refresh_from_db()
    assert not lazy.alive and lazy.death_cause == "modkill"
    second = texts_to(game, lazy, "strike")[-1]
    assert "Второй штраф: вы не проголосовали в день 2" in second and "модкилл" in second


def test_closing_a_night_shows_its_deaths_and_the_review_or_the_publication(
    gm: Any, gm_client: Client
) -> None:
    for auto in (False, True):
        game = make_game(
            gm,
            players=7,
            seed="night-confirm",
            auto_publish=auto,
            vk_base=800_000 + 100 * auto,
            name=f"Ночь {auto}",
        )
        vote_round(game)
        services.day_close(game_id=game.pk)
        roles = seats_by_role(game)
        alive = [s.number for s in living(game)]
        town = [n for n in alive if n in roles[Role.CIVILIAN]]
        services.night_action_submit(
            game_id=game.pk, actor=roles[Role.MAFIA][0], act="mafia_shot", target=town[0]
        )
        html = gm_client.get(url("panel_close", game)).content.decode()
        victim = Seat.objects.get(game=game, number=town[0])
        assert f"№{victim.number} {victim.name}" in html
        if auto:
            assert "Итоги будут опубликованы сразу" in html and "Погибнет:" in html  # one death
        else:
            assert "черновик итогов придёт вам на проверку" in html
            assert "По присланным действиям погибает:" in html  # one death
        # The commissar, the doctor and the maniac sent nothing: struck at dawn.
        commissar = Seat.objects.get(game=game, number=roles[Role.COMMISSAR][0])
        if commissar.alive:
            assert (
                f"№{commissar.number} {commissar.name} — первый штраф: +2 голоса против "
                "игрока в голосовании дня 2"
            ) in html
        assert open_phase(game).status == PhaseStatus.OPEN
        close_now(gm_client, game)
        assert (open_phase(game).status, open_phase(game).kind) == (
            (PhaseStatus.OPEN, "day") if auto else (PhaseStatus.REVIEW, "night")
        )
        if not auto:
            services.night_publish(game_id=game.pk)
        notice = texts_to(game, commissar, "strike")[-1]
        assert "вы не прислали ночное действие в ночь 1" in notice
        assert "они добавятся в подсчёт дня 2" in notice


def test_closing_without_an_open_phase_is_a_message(game: Game, gm_client: Client) -> None:
    services.day_close(game_id=game.pk)
    services.night_close(game_id=game.pk)  # under review now
    response = gm_client.get(url("panel_close", game), follow=True)
    assert "Фаза уже сменилась" in " ".join(str(m) for m in response.context["messages"])


def test_a_modkill_needs_a_reason_and_the_player_is_told_it(game: Game, gm_client: Client) -> None:
    seat = living(game)[0]
    modkill = url("panel_modkill", game, number=seat.number)
    for reason in ("", "   "):
        response = gm_client.post(modkill, {"confirm": "yes", "reason": reason})
        assert response.status_code == 200
        assert "Укажите причину: игрок получит её в личном сообщении." in (
            response.content.decode()
        )
        seat.refresh_from_db()
        assert seat.alive
    assert not texts_to(game, seat, "modkill")
    gm_client.post(modkill, {"confirm": "yes", "reason": "оскорбления в теме"})
    seat.refresh_from_db()
    assert not seat.alive
    assert texts_to(game, seat, "modkill") == [
        "Ведущий исключил вас из игры. Причина: оскорбления в теме"
    ]


def test_a_manual_strike_needs_a_reason_and_tells_the_player(game: Game, gm_client: Client) -> None:
    seat = living(game)[1]
    penalty = url("panel_penalty", game, number=seat.number)
    response = gm_client.post(penalty, {"confirm": "yes", "reason": ""})
    assert "Укажите причину" in response.content.decode()
    assert not Strike.objects.filter(seat=seat).exists()
    gm_client.post(penalty, {"confirm": "yes", "reason": "флуд в теме"})
    [notice] = texts_to(game, seat, "strike")
    assert "Вам штраф: решение ведущего (флуд в теме)." in notice
    assert "они добавятся в подсчёт дня 1" in notice and "Второй штраф — модкилл" in notice


def test_a_vote_that_lands_between_the_page_and_the_close_is_not_closed_unseen(
    game: Game, gm_client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The outcome is compared under the game's lock, by the service: a vote that arrives after
    the GM's page showed the outcome shows the page again, with the new outcome, and closes
    nothing. The confirmation computes what the close would do once (the service's, under
    the lock), not in the view and again in the service."""
    from gameplay.services import deadlines
    from panel.views import running

    alive = living(game)
    target, lazy = alive[0], alive[-1]
    for s in alive[1:-1]:
        services.vote_submit(game_id=game.pk, voter=s.number, target=number_of(target))
    page = gm_client.get(url("panel_close", game)).context["preview"]
    services.vote_submit(game_id=game.pk, voter=lazy.number, target=number_of(alive[1]))
    computed: list[str] = []

    def counted(real: Any, where: str) -> Any:
        def preview(g: Game) -> Any:
            computed.append(where)
            return real(g)

        return preview

    monkeypatch.setattr(running, "close_preview", counted(running.close_preview, "view"))
    monkeypatch.setattr(deadlines, "close_preview", counted(deadlines.close_preview, "service"))
    response = gm_client.post(
        url("panel_close", game),
        {"confirm": "yes", "phase": str(page.phase.pk), "expect": page.fingerprint},
    )
    assert open_phase(game).kind == "day"  # nothing closed on an outcome the GM never saw
    assert response.status_code == 200
    assert "итог изменился" in response.content.decode()
    shown = response.context["preview"]
    assert shown.fingerprint != page.fingerprint and computed == ["service"]
    computed.clear()
    close = gm_client.post(
        url("panel_close", game),
        {"confirm": "yes", "phase": str(page.phase.pk), "expect": shown.fingerprint},
    )
    assert close.status_code == 302 and open_phase(game).kind == "night"
    assert computed == ["service"]


def test_with_auto_publish_a_second_missed_night_is_shown_as_a_modkill_before_the_close(
    gm: Any, gm_client: Client
) -> None:
    """The demo's early click: with auto-publish, closing a night modkills whoever misses a
    second action — the confirmation says so, by name, before anything happens."""
    game = make_game(gm, players=12, seed="night-confirm", auto_publish=True, vk_base=870_000)
    roles = seats_by_role(game)
    commissar = Seat.objects.get(game=game, number=roles[Role.COMMISSAR][0])
    for night in (1, 2):
        vote_round(game)
        services.day_close(game_id=game.pk)
        commissar.refresh_from_db()
        if not commissar.alive:
            pytest.skip("the seed executed the commissar")
        mafia = [n for n in roles[Role.MAFIA] if n in {s.number for s in living(game)}]
        town = [
            number_of(s)
            for s in living(game)
            if s.number not in roles[Role.MAFIA] and s.number != commissar.number
        ]
        if not mafia or not town:
            pytest.skip("the seed ended the game early")
        services.night_action_submit(
            game_id=game.pk, actor=mafia[0], act="mafia_shot", target=town[0]
        )
        html = gm_client.get(url("panel_close", game)).content.decode()
        line = f"№{commissar.number} {commissar.name} — "
        if night == 1:
            assert line + "первый штраф" in html
        else:
            assert line + "<strong>второй штраф: модкилл</strong>" in html
            assert open_phase(game).status == PhaseStatus.OPEN  # nothing happened yet
        close_now(gm_client, game)
    commissar.refresh_from_db()
    assert not commissar.alive and commissar.death_cause == "modkill"
