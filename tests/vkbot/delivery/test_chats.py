"""The spectator chat created by the community (``create_chat`` rows): the GM's request, the
``messages.createChat`` call against the local VK server, the chat linked to the game — and
never a second chat when an answer is lost."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.db import transaction
from django.utils import timezone

from gameplay.models import (
    Actor,
    FlagKind,
    Game,
    GameEvent,
    ModerationFlag,
    Outbox,
    OutboxChannel,
    OutboxStatus,
)
from gameplay.rules.errors import InvalidCommand
from gameplay.services.retries import outbox_retry
from gameplay.services.spectators import spectator_chat_create, spectator_chat_link
from localvk import RunningServer
from outbox.leases import outbox_claim, outbox_record
from outbox.outcomes import Failure
from outbox.results import CREATE_CHAT_ASKED
from tests.vkbot.delivery_support import (
    deliver,
    make_game,
    vk_fixture,  # noqa: F401 (the ``vk`` fixture)
)
from vkbot.delivery.batch import CallResult, pack
from vkbot.delivery.outcome import settle_round
from vkbot.delivery.plan import plan_round
from vkbot.delivery.transport import Transport
from vkbot.handlers import dispatch

pytestmark = pytest.mark.django_db

GMS = [9100, 9101]


def request_chat(**fields: Any) -> tuple[Game, Outbox]:
    game = make_game(gm_vk_ids=GMS, **fields)
    row = spectator_chat_create(game_id=game.pk, by=Actor.gm("anna"))
    return game, row


def events(game: Game, kind: str) -> list[GameEvent]:
    return list(GameEvent.objects.filter(game=game, kind=kind).order_by("seq"))


def delivery_flags(game: Game) -> str:
    return "\n".join(
        ModerationFlag.objects.filter(game=game, kind=FlagKind.DELIVERY).values_list(
            "text", flat=True
        )
    )


def test_the_community_creates_the_chat_and_it_is_linked(vk: RunningServer) -> None:
    vk.state.set_messages_allowed(9101, False)  # this GM did not allow the community's messages
    game, row = request_chat()
    assert row.channel == OutboxChannel.CREATE_CHAT and row.text == "ЗЗ — Машина времени"
    assert row.payload == {"title": "ЗЗ — Машина времени", "user_ids": GMS, "by": "gm:anna"}
    assert events(game, "spectator_chat_create_requested")[0].actor == "gm:anna"

    deliver()

    row.refresh_from_db()
    assert row.status == OutboxStatus.SENT, row.last_error
    (chat,) = vk.state.chats.values()
    assert chat.title == "ЗЗ — Машина времени"
    community = chat.members[vk.state.community_id]
    assert community.is_owner and community.is_admin
    assert set(chat.members) == {vk.state.community_id, 9100}
    assert row.result is not None
    assert row.result["chat_id"] == chat.chat_id and row.result["peer_id"] == chat.peer_id
    assert row.result["added"] == [9100] and CREATE_CHAT_ASKED not in row.result
    game.refresh_from_db()
    assert game.spectator_chat_id == chat.peer_id
    created = events(game, "spectator_chat_created")[0]
    assert created.data["peer_id"] == chat.peer_id and created.data["added"] == [9100]
    linked = events(game, "spectator_chat_linked")[0]
    assert linked.actor == "gm:anna" and linked.data["peer_id"] == chat.peer_id
    assert not ModerationFlag.objects.filter(game=game).exists()

    # The community is the chat's admin: an invite to it gets its link.
    invite = Outbox.objects.create(
        game=game,
        channel=OutboxChannel.INVITE,
        peer_ids=[9200],
        text="Вход: {link}",
        payload={"chat_peer_id": chat.peer_id},
        kind="spectator_invite",
    )
    deliver()
    invite.refresh_from_db()
    assert invite.result is not None
    assert invite.status == OutboxStatus.SENT and invite.result["link"] == chat.invite_link
    assert len(vk.state.calls("messages.createChat")) == 1


def test_a_request_whose_answer_was_lost_is_never_sent_again(vk: RunningServer) -> None:
    game, row = request_chat()
    # A worker records the request, VK creates the chat — and the worker dies before the outcome.
    lease, rows = outbox_claim(limit=10, lease_seconds=60)
    plan = plan_round(rows, group_id=vk.state.group_id)
    assert plan.results[row.pk][CREATE_CHAT_ASKED] is True
    outbox_record(lease=lease, results=plan.results)
    with Transport() as transport:
        transport.send(pack(plan.calls), timeout=10)
    assert len(vk.state.chats) == 1
    Outbox.objects.update(locked_until=timezone.now() - timedelta(seconds=1))

    deliver()  # another worker takes the row over

    row.refresh_from_db()
    assert row.status == OutboxStatus.FAILED and row.attempts == 2
    assert len(vk.state.chats) == 1 and len(vk.state.calls("messages.createChat")) == 1
    game.refresh_from_db()
    assert game.spectator_chat_id is None
    assert "Неизвестно, создана ли беседа зрителей «ЗЗ — Машина времени»" in delivery_flags(game)
    assert "«номер беседы»" in delivery_flags(game)
    # Not from the deliveries page: the GM asks for a new chat, knowingly.
    with pytest.raises(InvalidCommand, match="Создать беседу"):
        outbox_retry(outbox_id=row.pk, by=Actor.gm("anna"))
    again = spectator_chat_create(game_id=game.pk, by=Actor.gm("anna"))
    deliver()
    again.refresh_from_db()
    game.refresh_from_db()
    assert again.status == OutboxStatus.SENT and len(vk.state.chats) == 2
    assert again.result is not None
    assert game.spectator_chat_id == again.result["peer_id"]


def test_an_answer_lost_on_the_wire_fails_at_once(vk: RunningServer) -> None:
    vk.state.faults.configure(drop_after_rate=1.0, methods=frozenset({"messages.createChat"}))
    game, row = request_chat()
    deliver()
    row.refresh_from_db()
    assert row.status == OutboxStatus.FAILED and row.attempts == 1
    assert row.result is not None
    assert row.result[CREATE_CHAT_ASKED] is True
    assert len(vk.state.chats) == 1  # VK did create it: only the answer was lost
    assert "Неизвестно, создана ли беседа" in delivery_flags(game)


def test_a_refusal_flags_the_gm_and_nothing_is_linked(vk: RunningServer) -> None:
    vk.state.faults.configure(error_rates={100: 1.0}, methods=frozenset({"messages.createChat"}))
    game, row = request_chat()
    deliver()
    row.refresh_from_db()
    assert row.result is not None
    assert row.status == OutboxStatus.FAILED and CREATE_CHAT_ASKED not in row.result
    assert not vk.state.chats
    game.refresh_from_db()
    assert game.spectator_chat_id is None
    assert delivery_flags(game) == (
        f"Беседа зрителей «ЗЗ — Машина времени» (запрос №{row.pk}) не создана: VK отклонил "
        "параметры запроса. Создать заново — кнопка «Создать беседу» на "
        "вкладке «Беседа ЗЗ»."
    )


def test_a_chat_created_after_the_spectator_chat_opened_is_not_linked(vk: RunningServer) -> None:
    game, row = request_chat()
    Game.objects.filter(pk=game.pk).update(
        spectator_chat_id=2_000_000_042, spectator_chat_open=True
    )
    deliver()
    row.refresh_from_db()
    game.refresh_from_db()
    assert row.status == OutboxStatus.SENT
    assert game.spectator_chat_id == 2_000_000_042
    assert not events(game, "spectator_chat_linked") and events(game, "spectator_chat_created")
    assert row.result is not None
    number = row.result["chat_id"]
    assert f"номер беседы {number}), но не привязана: беседа зрителей уже открыта" in (
        delivery_flags(game)
    )


def test_added_to_a_users_chat_the_bot_says_its_number_there(vk: RunningServer) -> None:
    chat = vk.state.create_chat("Наша беседа", [4243], owner_id=4242)
    update = vk.state.inject_chat_join(
        chat.chat_id, vk.state.community_id, by_link=False, invited_by=4242
    )
    with transaction.atomic():
        dispatch(update)
    deliver()
    (message,) = [m for m in vk.state.sent_messages() if m.peer_id == chat.peer_id]
    assert f"Номер этой беседы для панели ведущего: {chat.chat_id}." in message.text
    assert "администратором беседы" in message.text
    # That number is what the panel takes.
    game = make_game()
    spectator_chat_link(game_id=game.pk, by=Actor.gm("anna"), chat=chat.chat_id)
    game.refresh_from_db()
    assert game.spectator_chat_id == chat.peer_id


# --- the outcome of one call, pure --------------------------------------------------------------


def _settle(row: Outbox, answer: CallResult) -> Any:
    plan = plan_round([row], group_id=1)
    (call,) = plan.calls
    return settle_round([row], plan, [(call, answer)])[0]


def test_answers_to_create_chat() -> None:
    row = Outbox(
        pk=5,
        game_id=1,
        channel=OutboxChannel.CREATE_CHAT,
        text="ЗЗ",
        payload={"title": "ЗЗ", "user_ids": [3]},
    )
    plan = plan_round([row], group_id=1)
    assert plan.calls[0].method == "messages.createChat"
    assert plan.calls[0].params == {"title": "ЗЗ", "user_ids": "3"}

    done = _settle(row, CallResult(value={"chat_id": 7, "peer_ids": [3]}))
    assert (done.outcome, done.created_chat) == ("sent", 2_000_000_007)
    older = _settle(row, CallResult(value=7))  # a bare id, as older API versions answer
    assert (older.outcome, older.created_chat) == ("sent", 2_000_000_007)

    # VK said it did not act: the mark goes (a rate limit is retried, a refusal fails).
    limited = _settle(row, CallResult(failure=Failure(6, "Too many requests per second")))
    assert limited.outcome == "retry" and CREATE_CHAT_ASKED not in limited.result
    refused = _settle(row, CallResult(failure=Failure(15, "Access denied")))
    assert refused.outcome == "failed" and CREATE_CHAT_ASKED not in refused.result
    # VK may have acted: the mark stays, and the row fails.
    for failure in (Failure(None, "timeout"), Failure(10, "Internal server error")):
        unknown = _settle(row, CallResult(failure=failure))
        assert unknown.outcome == "failed" and unknown.result[CREATE_CHAT_ASKED] is True
        assert unknown.created_chat is None
    odd = _settle(row, CallResult(value={"ok": 1}))
    assert odd.outcome == "failed" and odd.result[CREATE_CHAT_ASKED] is True

    marked = Outbox(
        pk=6,
        game_id=1,
        channel=OutboxChannel.CREATE_CHAT,
        text="ЗЗ",
        payload={"title": "ЗЗ", "user_ids": []},
        result={CREATE_CHAT_ASKED: True},
    )
    plan = plan_round([marked], group_id=1)
    assert plan.calls == [] and plan.settled[0].outcome == "failed"
    bad = Outbox(
        pk=7, game_id=1, channel=OutboxChannel.CREATE_CHAT, text="ЗЗ", payload={"user_ids": ["x"]}
    )
    assert plan_round([bad], group_id=1).settled[0].outcome == "failed"
