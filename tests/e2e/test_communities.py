"""Two communities on one deployment, end to end: both are connected through
the panel's «Подключить сообщество» against one local VK hosting them (a third, whose token
lacks ``manage``, is refused naming the right), then one ``manage.py runbot`` and the delivery
play a day in each community at the same time. Every request to VK for community A goes with
A's tokens and reaches A's players only; the same for B."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from bench.procs import wait_for
from gameplay.messages import render
from gameplay.models import Actor, Community, Game, Outbox, OutboxStatus, Phase, Vote
from gameplay.rules import RoleCounts
from gameplay.services.day import day_close
from gameplay.services.deal import game_deal
from gameplay.services.settings import game_open
from gameplay.services.setup import game_start
from gameplay.services.signup_batch import SignupEntry, signups_create
from localvk import Communities, LocalVK, ServerThread, token_fingerprint
from tests.gameplay.factories import topic_of
from tests.runbot_support import run_runbot
from vkbot.delivery.drain import Drainer

pytestmark = pytest.mark.django_db(transaction=True)

A, B, C = 401, 402, 403
PLAYERS = 7
TOKENS = {
    A: ("a-group-token", "a-user-token"),
    B: ("b-group-token", "b-user-token"),
    C: ("c-group-token", "c-user-token"),
}
#: Each community's players (VK ids); nobody plays in both.
PEOPLE = {A: list(range(5001, 5001 + PLAYERS)), B: list(range(6001, 6001 + PLAYERS))}


def connect(client: Client, group: int) -> list[str]:
    group_token, user_token = TOKENS[group]
    response = client.post(reverse("panel:community_connect"),
                           {"group_token": group_token, "user_token": user_token},
                           follow=True)  # fmt: skip
    assert response.status_code == 200
    return [str(m) for m in response.context["messages"]]


def open_game(gm: Any, state: LocalVK, group: int) -> Game:
    topic = state.create_topic("Игра", "Здесь идёт игра.")
    game = game_open(name=f"Игра {group}", counts=RoleCounts.default_for(PLAYERS), gm=gm,
                     vk_group_id=group, topic_id=topic.id, recruit_topic_id=topic.id,
                     seed=f"seed-{group}")  # fmt: skip
    for n, vk_id in enumerate(PEOPLE[group], 1):
        state.add_user(vk_id, f"Игрок{n}", f"Община{group}")
    entries = [
        SignupEntry(vk_id, f"Игрок{n} Община{group}", pm_allowed=True)
        for n, vk_id in enumerate(PEOPLE[group], 1)
    ]
    signups_create(game_id=game.pk, entries=entries)
    game_deal(game_id=game.pk)
    game_start(game_id=game.pk)
    return Game.objects.get(pk=game.pk)


def drain_all() -> None:
    drainer = Drainer()
    try:
        while True:
            report = drainer.run(max_seconds=30.0, wait_up_to=2.0)
            if not Outbox.objects.filter(status=OutboxStatus.PENDING).exists():
                return
            assert report.claimed or report.next_due_in is not None, "the Outbox is stuck"
    finally:
        drainer.close()


def test_two_communities_connect_in_the_panel_and_play_a_day_each_through_one_runbot(
    settings: Any,
) -> None:
    settings.VK_GROUP_ID = None  # no community from the environment: all are data
    settings.VK_GROUP_TOKEN = settings.VK_USER_TOKEN = ""
    settings.VK_COMMUNITIES_REFRESH_SECONDS = 1
    settings.OUTBOX_DELIVERY_ENABLED = False  # the test drains the Outbox itself
    first = LocalVK(group_id=A, group_token=TOKENS[A][0], user_tokens=[TOKENS[A][1]],
                    group_name="Мафия А")  # fmt: skip
    communities = Communities.of(first)
    second = communities.create(
        group_id=B, group_token=TOKENS[B][0], user_tokens=[TOKENS[B][1]], group_name="Мафия Б"
    )
    communities.create(group_id=C, group_token=TOKENS[C][0], user_tokens=[TOKENS[C][1]],
                       group_name="Без управления", scopes="messages")  # fmt: skip
    states = {A: first, B: second}
    gm = get_user_model().objects.create_user("ведущий", password="x", is_staff=True)
    client = Client()
    client.force_login(gm)

    with ServerThread(communities) as vk:
        settings.VK_API_URL = vk.api_url
        settings.VK_API_VERSION = "5.199"
        # The panel: two communities connected, the third refused naming the missing right.
        assert "подключено" in " ".join(connect(client, A))
        assert "подключено" in " ".join(connect(client, B))
        assert connect(client, C) == [
            render("refusals/community_right_missing", right="доступ к управлению сообществом")
        ]
        assert set(Community.objects.filter(connected=True).values_list("vk_id", flat=True)) == {
            A,
            B,
        }
        games = {group: open_game(gm, states[group], group) for group in (A, B)}
        drain_all()  # the role cards and the day's announcement

        def play_the_day(out: io.StringIO) -> None:
            wait_for(lambda: all(s.calls("groups.getLongPollServer") for s in states.values()),
                     timeout=30, what="a long poll per community")  # fmt: skip
            # Everyone votes for seat 1 in both communities at once (the same seat numbers
            # and the same topic id in each: only the community tells them apart).
            for group, state in states.items():
                topic = topic_of(games[group])
                with state.lock:
                    for vk_id in PEOPLE[group][1:]:
                        state.inject_board_post(vk_id, topic, "голос 1")
            voters = sum(len(PEOPLE[group]) - 1 for group in states)
            wait_for(lambda: Vote.objects.count() == voters, timeout=60,
                     what="every vote applied")  # fmt: skip
            drain_all()  # the vote echoes, both communities' at once
            for game in games.values():  # the GM closes each day («Закрыть день сейчас»)
                day_close(game_id=game.pk, by=Actor.gm("ведущий"))
            drain_all()

        out = run_runbot(play_the_day)

    assert f"long poll for group {A}" in out and f"long poll for group {B}" in out
    for group, state in states.items():
        group_token, user_token = TOKENS[group]
        sends = state.calls("messages.send")
        assert sends, group
        for call in sends:
            record = call.to_dict()
            assert (record["group_id"], record["token"]) == (group, token_fingerprint(group_token))
            raw = record["params"].get("peer_ids") or record["params"].get("peer_id")
            peers = {int(p) for p in str(raw).split(",")}
            assert peers <= set(PEOPLE[group]), (group, peers)
        comments = state.calls("board.createComment")
        assert comments, group
        for call in comments:
            record = call.to_dict()
            assert (record["group_id"], record["token"]) == (group, token_fingerprint(user_token))
            assert int(record["params"]["group_id"]) == group
        # Each voter heard back from their own community, about their own game's vote.
        for vk_id in PEOPLE[group][1:]:
            texts = [m.text for m in state.sent_messages(vk_id)]
            assert any(t.startswith("Ваш голос за №1") for t in texts), (group, vk_id, texts)
        other = B if group == A else A
        assert not any(state.sent_messages(vk_id) for vk_id in PEOPLE[other]), group
        day = Phase.objects.get(game=games[group], number=1, kind="day")
        assert day.status != "open"
        assert any("№1" in c.to_dict()["params"].get("message", "") for c in comments), group
    assert not Outbox.objects.exclude(status=OutboxStatus.SENT).exists()
