"""Panel views of a running game: phases, the night draft, discipline, flags, spectators,
deliveries, the log, export, a player's history and the end."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from gameplay import services
from gameplay.models import (
    Actor,
    FlagKind,
    FlagStatus,
    Game,
    GameEvent,
    GameStatus,
    ModerationFlag,
    Outbox,
    OutboxStatus,
    Phase,
    PhaseStatus,
    Seat,
    SeatStatus,
    SpectatorMember,
    Strike,
)
from gameplay.rules import Role
from gameplay.services.settle import delivery_settle
from outbox.leases import outbox_claim
from outbox.outcomes import Settlement
from tests.gameplay.factories import deadline_of, number_of
from tests.panel.support import close_now, living, make_game, module_gm, night_round, vote_round

pytestmark = pytest.mark.django_db


def url(name: str, game: Game, **kw: Any) -> str:
    return reverse(f"admin:{name}", kwargs={"game_id": game.pk, **kw})


def msgs(response: Any) -> str:
    return " | ".join(str(m) for m in response.context["messages"])


def current(game: Game) -> Phase:
    return Phase.objects.get(game=game, status__in=[PhaseStatus.OPEN, PhaseStatus.REVIEW])


world, gm = module_gm(lambda gm: {"game": make_game(gm, players=7, seed="views-seed").pk})


@pytest.fixture
def game(world: dict[str, int]) -> Game:
    return Game.objects.get(pk=world["game"])


def test_day_page_shows_tally_penalties_pending_and_history(game: Game, gm_client: Client) -> None:
    alive = living(game)
    vote_round(game, changes=1, skip=2)
    page = gm_client.get(url("panel_game", game))
    data = page.context["page"]
    assert [s.number for s in data.pending.not_voted] == [s.number for s in alive[-2:]]
    assert sum(r.votes for r in data.tally) == 5
    assert data.projection is not None and data.projection.strikes
    html = page.content.decode()
    assert "Не проголосовали: 2" in html and "Если закрыть день сейчас" in html
    # the vote history shows the changed vote struck through
    assert 'class="old"' in html


def test_the_gm_posts_the_vote_count_from_the_day_page(game: Game, gm_client: Client) -> None:
    vote_round(game, changes=1, skip=2)
    page = gm_client.get(url("panel_game", game)).content.decode()
    assert 'id="post-vote-count"' in page and url("panel_vote_count", game) in page
    r = gm_client.post(url("panel_vote_count", game), follow=True)
    assert "Подсчёт голосов опубликован в обсуждении игры." in msgs(r)
    [count] = Outbox.objects.filter(game=game, kind="vote_count")
    assert count.topic_id == game.topic_id and "Не проголосовали: " in count.text
    # again at once: the GM's click is never held back
    gm_client.post(url("panel_vote_count", game))
    assert Outbox.objects.filter(game=game, kind="vote_count").count() == 2
    close_now(gm_client, game)  # the night: no button, and a click is refused
    assert 'id="post-vote-count"' not in gm_client.get(url("panel_game", game)).content.decode()
    r = gm_client.post(url("panel_vote_count", game), follow=True)
    assert "Подсчёт голосов возможен только днём" in msgs(r)


def test_extend_remind_and_close_the_day(game: Game, gm_client: Client) -> None:
    deadline = deadline_of(current(game))
    r = gm_client.post(url("panel_extend", game), {"minutes": "90"}, follow=True)
    assert "Срок продлён" in msgs(r)
    assert current(game).deadline == deadline + timedelta(minutes=90)
    assert Outbox.objects.filter(game=game, kind="deadline_extended").exists()
    r = gm_client.post(url("panel_extend", game), {"minutes": "0"}, follow=True)
    assert "больше либо равно 1" in msgs(r)

    r = gm_client.post(url("panel_remind", game), follow=True)
    assert "Напоминание отправлено (7)" in msgs(r)
    reminder = Outbox.objects.filter(game=game, kind="reminder").get()
    assert len(reminder.peer_ids) == 7

    vote_round(game)
    day = current(game)
    Seat.objects.filter(game=game).update(sex=2)  # VK said: all men
    r = close_now(gm_client, game)
    assert "День 1 закрыт: казнён №" in msgs(r)
    assert current(game).kind == "night"
    # a stale form (the phase changed meanwhile) closes nothing
    r = gm_client.post(
        url("panel_close", game), {"phase": str(day.pk), "confirm": "yes"}, follow=True
    )
    assert "Фаза уже сменилась" in msgs(r)
    assert current(game).status == PhaseStatus.OPEN


def test_night_close_edit_reopen_and_publish(game: Game, gm_client: Client) -> None:
    vote_round(game)
    services.day_close(game_id=game.pk)
    page = gm_client.get(url("panel_game", game))
    assert page.context["page"].pending.mafia_shot_missing
    night_round(game)
    page = gm_client.get(url("panel_game", game)).context["page"]
    assert not page.pending.not_acted and not page.pending.mafia_shot_missing
    assert page.mafia_shot is not None

    r = close_now(gm_client, game)
    assert "Проверьте черновик" in msgs(r)
    html = r.content.decode()
    assert "Ролевой удар" in html and "Выстрелы" in html and "Проверка" in html

    alive = [number_of(s) for s in living(game)]
    r = gm_client.post(url("panel_night_edit", game), {"deaths": [alive[1]], "reason": " "})
    assert r.status_code == 200  # the page again, as the GM left the form
    assert "Укажите причину правки" in msgs(r) and "Обязательное поле" not in msgs(r)
    form = r.content.decode().split('id="draft-edit"')[1].split("</form>")[0]
    ticked = set()
    for box in re.findall(r"<input[^>]*>", form):
        if "checkbox" in box and "checked" in box:
            value = re.search(r'value="(\d+)"', box)
            assert value, box
            ticked.add(int(value.group(1)))
    assert ticked == {alive[1]}
    assert GameEvent.objects.filter(game=game, kind="night_edited").count() == 0
    r = gm_client.post(
        url("panel_night_edit", game),
        {"deaths": [alive[0]], "reason": "решение ведущего"},
        follow=True,
    )
    assert f"погибают №{alive[0]}" in msgs(r)
    edit = GameEvent.objects.get(game=game, kind="night_edited")
    assert edit.override and edit.actor == "gm:ведущий"

    r = gm_client.post(url("panel_night_reopen", game), {"reason": ""}, follow=True)
    assert "Укажите причину" in msgs(r)
    r = gm_client.post(url("panel_night_reopen", game), {"reason": "раскрытие"}, follow=True)
    assert "Выстрел мафии открыт заново" in msgs(r)
    phase = current(game)
    assert phase.status == PhaseStatus.OPEN and phase.reopened_for == "mafia_shot"
    assert "открыт только выстрел мафии" in r.content.decode()
    night_round(game)
    close_now(gm_client, game)
    r = gm_client.post(url("panel_night_publish", game), follow=True)
    assert "Итоги ночи 1 опубликованы" in msgs(r)
    assert current(game).kind == "day"


def test_a_refusal_is_a_message_not_an_error(game: Game, gm_client: Client) -> None:
    r = gm_client.post(url("panel_night_publish", game), follow=True)
    assert r.status_code == 200
    assert "Сейчас день" in msgs(r)


def test_modkill_is_confirmed_first(game: Game, gm_client: Client) -> None:
    seat = living(game)[0]
    page = gm_client.get(url("panel_modkill", game, number=seat.number))
    assert f"Модкилл №{seat.number}" in page.content.decode()
    gm_client.post(url("panel_modkill", game, number=seat.number), {"reason": "мат"})
    seat.refresh_from_db()
    assert seat.alive  # no confirmation field: nothing happened
    r = gm_client.post(
        url("panel_modkill", game, number=seat.number),
        {"reason": "мат", "confirm": "yes"},
        follow=True,
    )
    assert "выбывает (модкилл)" in msgs(r)
    seat.refresh_from_db()
    assert not seat.alive and seat.death_cause == "modkill"
    r = gm_client.post(
        url("panel_modkill", game, number=seat.number),
        {"reason": "ещё", "confirm": "yes"},
        follow=True,
    )
    assert "уже выбыл" in msgs(r)
    assert gm_client.get(url("panel_modkill", game, number=99)).status_code == 404


def test_penalty_forgiveness_and_a_second_penalty(game: Game, gm_client: Client) -> None:
    seat = living(game)[1]
    page = gm_client.get(url("panel_penalty", game, number=seat.number)).content.decode()
    assert "+2 голоса" in page
    gm_client.post(
        url("panel_penalty", game, number=seat.number), {"reason": "оффтоп", "confirm": "yes"}
    )
    strike = Strike.objects.get(seat=seat)
    assert strike.penalty_votes == 2
    r = gm_client.post(
        url("panel_forgive", game, strike_id=strike.pk), {"reason": "сбой бота"}, follow=True
    )
    assert "прощён" in msgs(r)
    strike.refresh_from_db()
    assert strike.forgiven
    gm_client.post(
        url("panel_penalty", game, number=seat.number), {"reason": "1", "confirm": "yes"}
    )
    page = gm_client.get(url("panel_penalty", game, number=seat.number)).content.decode()
    assert "второй штраф" in page
    gm_client.post(
        url("panel_penalty", game, number=seat.number), {"reason": "2", "confirm": "yes"}
    )
    seat.refresh_from_db()
    assert not seat.alive


def test_replacement_by_a_reserve_or_any_vk_user(game: Game, gm_client: Client) -> None:
    reserve = services.signup_create(game_id=game.pk, vk_user_id=424242, name="Запас", reserve=True)
    first, second = living(game)[:2]
    page = gm_client.get(url("panel_replace", game, number=first.number)).content.decode()
    assert "Запас (id424242)" in page
    r = gm_client.post(
        url("panel_replace", game, number=first.number),
        {"reserve": str(reserve.pk), "reason": "пропал"},
        follow=True,
    )
    assert "передано: Запас" in msgs(r)
    first.refresh_from_db()
    reserve.refresh_from_db()
    assert first.vk_user_id == 424242 and reserve.status == SeatStatus.WITHDRAWN
    r = gm_client.post(url("panel_replace", game, number=second.number), {"vk": "vk.com/durov"})
    assert "Короткое имя" in r.content.decode()
    r = gm_client.post(url("panel_replace", game, number=second.number), {})
    assert "одно из двух" in r.content.decode()
    gm_client.post(
        url("panel_replace", game, number=second.number),
        {"vk": "https://vk.com/id5151", "name": "Новенький"},
    )
    second.refresh_from_db()
    assert (second.vk_user_id, second.name, second.strikes) == (5151, "Новенький", 0)
    r = gm_client.post(
        url("panel_replace", game, number=second.number), {"vk": "id424242"}, follow=True
    )
    assert "уже играет" in r.content.decode()


def test_flags_are_dismissed_or_acted_on(game: Game, gm_client: Client) -> None:
    seat = living(game)[2]
    a = ModerationFlag.objects.create(game=game, seat=seat, kind=FlagKind.PROFANITY, text="…")
    b = ModerationFlag.objects.create(game=game, seat=seat, kind=FlagKind.REVEAL, text="…")
    c = ModerationFlag.objects.create(game=game, seat=seat, kind=FlagKind.DEAD_POST, text="…")
    page = gm_client.get(url("panel_discipline", game)).content.decode()
    assert "Мат или оскорбление" in page
    assert '<span class="count">3</span>' in gm_client.get(url("panel_game", game)).content.decode()
    gm_client.post(url("panel_flag", game, flag_id=a.pk), {"decision": "dismiss", "note": "ок"})
    gm_client.post(url("panel_flag", game, flag_id=b.pk), {"decision": "acted", "note": "пред"})
    a.refresh_from_db()
    b.refresh_from_db()
    assert (a.status, b.status) == (FlagStatus.DISMISSED, FlagStatus.ACTED)
    assert b.resolved_by == "gm:ведущий"
    r = gm_client.post(url("panel_flag", game, flag_id=a.pk), {"decision": "acted"}, follow=True)
    assert "уже рассмотрена" in msgs(r)
    # acting with a penalty: the flag and the strike in one step
    gm_client.post(
        url("panel_penalty", game, number=seat.number),
        {"reason": "мат", "confirm": "yes", "flag": str(c.pk)},
    )
    c.refresh_from_db()
    assert c.status == FlagStatus.ACTED and c.note.startswith("Штраф")
    assert Strike.objects.filter(seat=seat, note="мат").exists()


def test_spectator_chat(game: Game, gm_client: Client) -> None:
    r = gm_client.post(url("panel_chat_open", game), follow=True)
    assert "Сначала привяжите беседу" in msgs(r)
    r = gm_client.post(
        url("panel_chat_link", game), {"chat": "https://vk.me/join/AbC"}, follow=True
    )
    assert "без запроса к VK" in msgs(r)
    gm_client.post(url("panel_chat_link", game), {"chat": "2000000012"})
    game.refresh_from_db()
    assert game.spectator_chat_id == 2_000_000_012
    vote_round(game)
    services.day_close(game_id=game.pk)
    dead = Seat.objects.get(game=game, alive=False)
    SpectatorMember.objects.create(
        game=game, vk_user_id=dead.vk_user_id, seat=dead, status="joined"
    )
    SpectatorMember.objects.create(game=game, vk_user_id=1, status="removed", reason="чужой")
    r = gm_client.post(url("panel_chat_open", game), follow=True)
    assert "Беседа зрителей открыта" in msgs(r)
    told = Outbox.objects.get(game=game, kind="spectators", channel="message")
    assert told.peer_ids == [dead.vk_user_id]
    html = r.content.decode()
    assert "в беседе 1, удалено 1" in html and f"№{dead.number}" in html
    gm_client.post(url("panel_chat_close", game))
    game.refresh_from_db()
    assert not game.spectator_chat_open


def test_the_community_creates_the_spectator_chat(game: Game, gm_client: Client) -> None:
    page = gm_client.get(url("panel_spectators", game)).content.decode()
    assert 'id="create-chat"' in page and "Создать беседу" in page
    assert "Укажите свою VK-страницу в настройках игры" in page  # no GM page known yet
    r = gm_client.post(url("panel_chat_create", game), follow=True)
    assert "Сообщество создаёт беседу «ЗЗ — Тестовая игра»" in msgs(r)
    row = Outbox.objects.get(game=game, channel="create_chat")
    assert row.payload is not None
    assert row.status == OutboxStatus.PENDING and row.payload["by"] == "gm:ведущий"
    html = r.content.decode()
    assert 'id="chat-creating"' in html and 'id="create-chat"' not in html
    r = gm_client.post(url("panel_chat_create", game), follow=True)
    assert "уже создаётся" in msgs(r)
    assert Outbox.objects.filter(game=game, channel="create_chat").count() == 1

    # The delivery gets the chat from VK: the game is linked, the GM sees it and can open it.
    lease, rows = outbox_claim(limit=500, lease_seconds=60)
    delivery_settle(
        lease=lease,
        settlements=[
            Settlement(
                r.pk,
                "sent",
                result={"chat_id": 12, "peer_id": 2_000_000_012},
                created_chat=2_000_000_012,
            )
            if r.pk == row.pk
            else Settlement(r.pk, "sent")
            for r in rows
        ],
    )
    game.refresh_from_db()
    assert game.spectator_chat_id == 2_000_000_012
    html = gm_client.get(url("panel_spectators", game)).content.decode()
    assert "беседа «ЗЗ — Тестовая игра»" in html and "Создать новую беседу" in html
    assert "peer_id" not in html and "2000000012" not in html
    assert 'id="chat-creating"' not in html
    log = gm_client.get(url("panel_log", game)).content.decode()
    assert "Беседа ЗЗ создана сообществом" in log and "беседа «ЗЗ — Тестовая игра»" in log
    assert "peer_id" not in log
    vote_round(game)
    services.day_close(game_id=game.pk)
    r = gm_client.post(url("panel_chat_open", game), follow=True)
    assert "Беседа зрителей открыта" in msgs(r)
    assert 'id="create-chat"' not in r.content.decode()
    r = gm_client.post(url("panel_chat_create", game), follow=True)
    assert "Беседа зрителей открыта: игроки уже получили ссылки" in msgs(r)


def test_failed_deliveries_are_retried(game: Game, gm_client: Client) -> None:
    rows = list(Outbox.objects.filter(game=game, channel="message").order_by("id")[:3])
    Outbox.objects.filter(pk__in=[r.pk for r in rows[:2]]).update(
        status=OutboxStatus.FAILED, attempts=5, last_error="901: can't send"
    )
    # the third reached some recipients only
    Outbox.objects.filter(pk=rows[2].pk).update(
        status=OutboxStatus.SENT,
        last_error="not delivered to 1: 901",
        result={"failed": {"1": "901"}},
    )
    page = gm_client.get(url("panel_outbox", game))
    assert [r.pk for r in page.context["page_obj"]] == [rows[2].pk, rows[1].pk, rows[0].pk]
    assert "доставлено не всем" in page.content.decode()
    assert page.context["counts"]["failed_outbox"] == 3
    gm_client.post(url("panel_outbox_retry", game, outbox_id=rows[0].pk))
    rows[0].refresh_from_db()
    assert (rows[0].status, rows[0].attempts) == (OutboxStatus.PENDING, 0)
    r = gm_client.post(url("panel_outbox_retry", game, outbox_id=rows[0].pk), follow=True)
    assert "ещё в очереди" in msgs(r)
    r = gm_client.post(url("panel_outbox_retry_all", game), follow=True)
    assert "Снова в очереди: 2" in msgs(r)
    assert not Outbox.objects.filter(game=game, status=OutboxStatus.FAILED).exists()
    rows[2].refresh_from_db()
    assert rows[2].status == OutboxStatus.PENDING and "failed" not in (rows[2].result or {})
    assert (
        GameEvent.objects.filter(game=game, kind="outbox_retried", actor="gm:ведущий").count() == 3
    )
    r = gm_client.post(url("panel_outbox_retry_all", game), follow=True)
    assert "Недоставленных сообщений нет." in msgs(r)


def test_log_filters(game: Game, gm_client: Client) -> None:
    vote_round(game)
    seat = living(game)[0]
    services.strike_give(game_id=game.pk, seat=number_of(seat), by=Actor.gm("ведущий"), reason="x")
    page = gm_client.get(url("panel_log", game), {"kind": "vote"}).context
    assert {e.kind for e, _, _, _ in page["rows"]} == {"vote"}
    page = gm_client.get(url("panel_log", game), {"overrides": "on"}).context
    assert [e.kind for e, _, _, _ in page["rows"]] == ["strike_manual"]
    query: dict[str, Any] = {"seat": seat.number, "kind": "vote"}
    page = gm_client.get(url("panel_log", game), query).context
    assert page["rows"] and all(
        seat.number in (e.data.get("voter"), e.data.get("target")) for e, _, _, _ in page["rows"]
    )
    html = gm_client.get(url("panel_log", game), {"actor": "gm:"}).content.decode()
    assert "Штраф ведущего" in html


def test_end_game_confirmation_and_export(game: Game, gm_client: Client) -> None:
    vote_round(game)
    services.day_close(game_id=game.pk)
    page = gm_client.get(url("panel_end", game)).content.decode()
    assert "Завершить игру сейчас?" in page
    game.refresh_from_db()
    assert game.status == GameStatus.RUNNING
    r = gm_client.post(url("panel_end", game), {"winner": "mafia", "reason": "тест"}, follow=True)
    assert "Игра завершена." in msgs(r)
    game.refresh_from_db()
    assert (game.status, game.winner) == (GameStatus.FINISHED, "mafia")
    download = gm_client.get(url("panel_export_download", game))
    assert download["Content-Disposition"].startswith("attachment;")
    scenario = json.loads(download.content)
    assert scenario["phases"][0]["phase"] == "day" and len(scenario["players"]) == 7
    checked = gm_client.post(url("panel_export", game)).content.decode()
    assert "Переигровка расходится" in checked  # the GM ended it by hand: the replay does not
    assert "Игру завершил ведущий" in checked


def test_player_history_across_games(gm: Any, other_gm: Any, gm_client: Client) -> None:
    finished = make_game(other_gm, players=7, name="Прошлая", vk_base=10_000)
    services.game_end(game_id=finished.pk, by=Actor.gm("x"), winner=None)
    theirs = make_game(other_gm, players=7, name="Чужая идёт", vk_base=20_000)
    mine = make_game(gm, players=7, name="Моя", vk_base=30_000)
    vk = 555_555
    for g in (finished, theirs, mine):
        seat = Seat.objects.filter(game=g).order_by("number").first()
        assert seat is not None
        Seat.objects.filter(pk=seat.pk).update(vk_user_id=vk)
    Game.objects.filter(pk=finished.pk).update(winner="town")
    page = gm_client.get(url("panel_history", mine, vk_user_id=vk))
    history = page.context["history"]
    names = [r.game.name for r in history.rows]
    assert "Прошлая" in names and "Моя" in names and "Чужая идёт" not in names
    assert not hasattr(history, "hidden")
    html = page.content.decode()
    assert "Чужая идёт" not in html
    role = Seat.objects.get(game=finished, vk_user_id=vk).role
    won = history.wins == 1
    assert won == (Role(role).faction.value == "town")
    lookup = gm_client.get(url("panel_history_lookup", mine), {"vk": "vk.com/id555555"})
    assert lookup.context["history"].vk_user_id == vk
