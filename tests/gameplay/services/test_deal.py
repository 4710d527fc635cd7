"""A deal the GM cannot choose: round 1's seed is committed in the board when sign-up
opens, the deal comes from that seed and the final roster, a new seed only comes with a new
round the GM opens (posted, numbered, an override), discards are overrides, every round's seed
is revealed at the end, and ``manage.py verify`` checks the whole chain."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import call_command

from gameplay import services
from gameplay.models import DealRound, Draw, GameStatus, SeatStatus
from gameplay.rules import (
    Item,
    Role,
    RoleCounts,
    RuleViolation,
    deal_for_roster,
    round_commitment,
)
from gameplay.rules.errors import InvalidCommand, NotEnoughPlayers, SetupError
from gameplay.services.deal import counts_of
from gameplay.services.settings import game_settings_update
from gameplay.services.signup import player_add, player_remove
from tests.gameplay.factories import (
    board,
    community_id,
    events,
    make_game,
    number_of,
    outbox,
    player_name,
    seats,
    snapshot,
    vk_id,
)

pytestmark = pytest.mark.django_db

HEX64 = re.compile(r"^[0-9a-f]{64}$")
CYRILLIC = re.compile(r"[А-Яа-яЁё]")


def deal_of(game) -> list[tuple[int, int, str, str]]:
    return [(number_of(s), s.vk_user_id, s.role, s.item) for s in seats(game)]


def verify(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    try:
        call_command("verify", *args, stdout=out)
    except SystemExit as e:
        return int(e.code or 0), out.getvalue()
    return 0, out.getvalue()


def test_round_one_is_committed_in_the_board_before_anyone_signs_up():
    game = services.game_create(
        name="Машина времени",
        counts=RoleCounts.default_for(9),
        recruit_topic_id=71,
        topic_id=72,
        vk_group_id=community_id(),
    )
    assert not game.seats.exists()
    [rnd] = DealRound.objects.filter(game=game)
    assert rnd.number == 1 and HEX64.match(rnd.seed)  # drawn by the server
    assert rnd.commitment == round_commitment(1, rnd.seed)
    [post] = board(game)
    assert post.kind == "deal_round" and post.topic_id == 71  # where sign-up happens
    assert f"Раунд 1: хеш зерна (SHA-256) {rnd.commitment}" in post.text
    assert "Открыта запись" in post.text
    assert rnd.seed not in post.text
    # Every game gets its own unpredictable seed; the log never holds it before the end.
    other = services.game_create(
        name="Другая", counts=RoleCounts.default_for(9), vk_group_id=community_id()
    )
    assert other.seed != game.seed and HEX64.match(other.seed)
    assert all(rnd.seed not in str(e.data) for e in events(game))


def test_a_game_created_without_a_topic_posts_round_one_when_it_gets_one():
    game = make_game(n=0, topic_id=None)
    assert board(game) == []
    game_settings_update(game_id=game.pk, by="gm:test", topic_id=73)
    [post] = board(game)
    assert post.topic_id == 73 and round_commitment(1, "test-seed") in post.text
    game_settings_update(game_id=game.pk, by="gm:test", recruit_topic_id=74)
    assert len(board(game)) == 1  # posted once


def test_every_round_opened_without_a_topic_is_posted_in_order_when_it_gets_one():
    """Rounds opened before the game had a topic (a deal, then a new round) are all numbered
    in the board once it has one, not only the last: every round is public."""
    game = make_game(n=9, topic_id=None, deal=True)
    services.deal_round_new(game_id=game.pk, by="gm:test", seed="second-seed")
    assert board(game) == []
    game_settings_update(game_id=game.pk, by="gm:test", topic_id=75)
    posts = board(game)
    assert [p.kind for p in posts] == ["deal_round", "deal_round"]
    assert round_commitment(1, "test-seed") in posts[0].text
    assert round_commitment(2, "second-seed") in posts[1].text
    assert all(r.topic_id == 75 for r in DealRound.objects.filter(game=game))


def test_the_same_roster_always_gets_the_same_deal():
    game = make_game(n=9, deal=True, seed="same-roster")
    first = deal_of(game)
    assert [vk for _, vk, _, _ in first] == sorted(vk for _, vk, _, _ in first)

    # The GM removes a player and adds them back: the very same deal.
    removed = seats(game)[3]
    player_remove(game_id=game.pk, by="gm:anna", seat_id=removed.pk)
    player_add(game_id=game.pk, by="gm:anna", vk=removed.vk_user_id, name="Снова")
    services.game_deal(game_id=game.pk, by="gm:anna")
    game.refresh_from_db()
    assert deal_of(game) == first
    # A player withdraws and signs up again: the same deal once more.
    services.signup_withdraw(game_id=game.pk, vk_user_id=vk_id(7))
    services.signup_create(game_id=game.pk, vk_user_id=vk_id(7), name=player_name(7))
    services.game_deal(game_id=game.pk)
    game.refresh_from_db()
    assert deal_of(game) == first
    # Another roster gets another deal, from the same seed.
    services.signup_withdraw(game_id=game.pk, vk_user_id=vk_id(2))
    services.signup_create(game_id=game.pk, vk_user_id=5555, name="Новенький")
    services.game_deal(game_id=game.pk)
    game.refresh_from_db()
    assert deal_of(game) != first and game.seed == "same-roster"
    assert DealRound.objects.filter(game=game).count() == 1

    # Each discard is an override the end-of-game post lists.
    discards = events(game, "deal_discarded")
    assert [e.override for e in discards] == [True, True, True]
    assert [e.data["summary"] for e in discards] == [
        f"Раздача №1 (раунд 1) отброшена: ведущий снял игрока id{removed.vk_user_id}.",
        f"Раздача №2 (раунд 1) отброшена: игрок id{vk_id(7)} снялся сам.",
        f"Раздача №3 (раунд 1) отброшена: игрок id{vk_id(2)} снялся сам.",
    ]
    services.game_start(game_id=game.pk)
    services.game_end(game_id=game.pk, by="gm:anna")
    [final] = board(game, "game_over")
    overrides = final.text.split("Решения ведущего:\n")[1].split("\n\n")[0]
    for e in discards:
        assert e.data["summary"] in overrides


def test_dealing_again_and_changing_counts_need_a_new_round():
    game = make_game(n=9, deal=True)
    with pytest.raises(InvalidCommand, match="новом раунде"):
        services.game_deal(game_id=game.pk)
    services.signup_withdraw(game_id=game.pk, vk_user_id=vk_id(9))
    services.signup_create(game_id=game.pk, vk_user_id=vk_id(9), name="Девятый")
    # Other counts would give the same roster another deal from the same seed: refused.
    other = RoleCounts(mafia=1, commissar=1, doctor=1, maniac=1, civilian=5)
    with pytest.raises(SetupError, match="новым раундом"):
        game_settings_update(game_id=game.pk, by="gm:test", counts=other)
    assert counts_of(game=game) == RoleCounts.default_for(9)
    services.deal_round_new(game_id=game.pk, by="gm:test")  # recruiting: only the new seed
    game.refresh_from_db()
    assert game.status == GameStatus.RECRUITING
    game_settings_update(game_id=game.pk, by="gm:test", counts=other)


def test_a_new_round_before_any_deal_is_refused():
    game = make_game(n=9)
    with pytest.raises(InvalidCommand, match="новый раунд не нужен"):
        services.deal_round_new(game_id=game.pk, by="gm:test")
    assert DealRound.objects.filter(game=game).count() == 1


def test_three_new_rounds_are_numbered_on_the_board_revealed_at_the_end_and_verified(
    capsys, tmp_path
):
    game = make_game(n=9, deal=True, recruit_topic_id=9001)
    dealt = [deal_of(game)]
    for _ in range(3):
        services.deal_round_new(game_id=game.pk, by="gm:anna")
        game.refresh_from_db()
        dealt.append(deal_of(game))
    assert game.status == GameStatus.DEALT
    rounds = list(DealRound.objects.filter(game=game))
    assert [r.number for r in rounds] == [1, 2, 3, 4]
    assert len({r.seed for r in rounds}) == 4 and all(HEX64.match(r.seed) for r in rounds[1:])

    # The board: one numbered commitment per round, in the sign-up topic, no seed.
    posts = board(game, "deal_round")
    assert [p.topic_id for p in posts] == [9001] * 4
    for post, r in zip(posts, rounds, strict=True):
        assert f"Раунд {r.number}: хеш зерна (SHA-256) {r.commitment}" in post.text
        assert all(x.seed not in post.text for x in rounds)
    # The GM's panel log holds the commitments but never a seed before the end.
    assert all(r.seed not in str(e.data) for e in events(game) for r in rounds)

    services.game_start(game_id=game.pk)
    [roster] = board(game, "roster")
    for r in rounds:
        assert f"Раунд {r.number}: хеш зерна (SHA-256) {r.commitment}" in roster.text
    assert "из зерна раунда 4" in roster.text
    services.game_end(game_id=game.pk, by="gm:anna", reason="проверка")

    # The end: every round's seed, the discards and the new rounds as the GM's decisions.
    [final] = board(game, "game_over")
    for r in rounds:
        assert f"Раунд {r.number}: хеш {r.commitment}, зерно {r.seed}" in final.text
    overrides = final.text.split("Решения ведущего:\n")[1].split("\n\n")[0].splitlines()
    assert [line for line in overrides if "отброшена" in line] == [
        f"Раздача №{n} (раунд {n}) отброшена: ведущий начал раунд {n + 1}." for n in (1, 2, 3)
    ]
    assert [line for line in overrides if line.startswith("Ведущий начал раунд")] == [
        f"Ведущий начал раунд {r.number} раздачи (новое зерно, хеш {r.commitment})."
        for r in rounds[1:]
    ]
    [finished] = events(game, "game_finished")
    assert [x["seed"] for x in finished.data["rounds"]] == [r.seed for r in rounds]
    roster_ids = [s.vk_user_id for s in seats(game)]
    assert deal_for_roster(rounds[-1].seed, counts_of(game=game), roster_ids).commitment == (
        game.commitment
    )

    # The post holds facts, not a shell command; it tells in words how to check and where.
    assert "manage.py" not in final.text and "--round" not in final.text
    assert "Раздачу может проверить любой" in final.text
    assert "Как проверить, по шагам, — в памятке игрока" in final.text

    # Anyone saves the post to a file and runs `verify --post`: the chain holds, the deal is
    # recomputed from the post's own lines.
    def check(text: str) -> tuple[int, str]:
        post = tmp_path / "итог.txt"
        post.write_text(text, encoding="utf-8")
        return verify("--post", str(post))

    code, out = check(final.text)
    assert code == 0, out
    assert out.count(", the seed matches its commitment") == 4
    assert "OK: the deal matches the published commitment." in out
    for number, vk, role, _item in dealt[-1]:
        assert re.search(rf"^\s*{number}  {vk}  {role}", out, re.M)

    # A forged round (another seed under round 2's commitment) is refused, exit 2, one line.
    capsys.readouterr()
    assert check(final.text.replace(rounds[1].seed, "0" * 64))[0] == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("verify: round 2 is forged: its seed hashes to ")
    # So is a round left out of the chain (its numbers no longer run 1, 2, 3…).
    line = f"Раунд 2: хеш {rounds[1].commitment}, зерно {rounds[1].seed}\n"
    assert check(final.text.replace(line, ""))[0] == 2
    assert "rounds must be numbered 1, 2, 3... in order, got 1, 3, 4" in capsys.readouterr().err
    # And a deal claimed from an earlier round's seed does not match the hash.
    short = final.text
    for r in rounds[2:]:
        short = short.replace(f"Раунд {r.number}: хеш {r.commitment}, зерно {r.seed}\n", "")
    assert check(short)[0] == 1
    # Changed role counts give another deal; a post without its facts is refused in one line.
    assert check(final.text.replace("мафия — ", "мафия — 1"))[0] in (1, 2)
    assert check("Игра окончена.")[0] == 2
    assert "the post has no «Состав: …» line" in capsys.readouterr().err


def test_cancelling_a_dealt_game_reveals_its_seeds_in_the_board():
    game = make_game(n=9, deal=True, seed="cancelled-seed")
    services.deal_round_new(game_id=game.pk, by="gm:anna")
    services.game_end(game_id=game.pk, by="gm:anna", reason="Не собрались.")
    game.refresh_from_db()
    assert game.status == GameStatus.CANCELLED
    [post] = board(game, "game_cancelled")
    assert "отменена ведущим до начала. Не собрались." in post.text
    for r in DealRound.objects.filter(game=game):
        assert f"Раунд {r.number}: хеш {r.commitment}, зерно {r.seed}" in post.text
    [cancelled] = events(game, "game_cancelled")
    assert [x["seed"] for x in cancelled.data["rounds"]][0] == "cancelled-seed"


def test_a_refused_deal_leaves_the_round_undealt():
    game = make_game(n=8, counts=RoleCounts.default_for(9))
    with pytest.raises(RuleViolation):
        services.game_deal(game_id=game.pk)
    assert DealRound.objects.get(game=game).deals == 0
    assert not outbox(game, "roster")
    assert all(s.status == SeatStatus.PLAYER for s in game.seats.all())


# --- the deal ----------------------------------------------------------------------------------


def test_deal_refuses_when_players_do_not_match_the_role_total():
    game = make_game(n=8, counts=RoleCounts.default_for(9))
    before = snapshot(game)

    with pytest.raises(NotEnoughPlayers) as refused:
        services.game_deal(game_id=game.pk)

    assert isinstance(refused.value, RuleViolation)
    assert "8" in refused.value.reason and "9" in refused.value.reason
    assert CYRILLIC.search(refused.value.reason)
    assert snapshot(game) == before
    assert not Draw.objects.filter(game=game).exists()


def test_deal_numbers_seats_records_every_draw_and_commits_to_the_seed():
    # Seed "gamma-1" needs four item draws for VK ids 1001..1026 (mafia items 2, 0, 0, 1).
    game = make_game(n=26, seed="gamma-1")
    summary = services.game_deal(game_id=game.pk, by="gm:test")

    game.refresh_from_db()
    dealt = seats(game)
    assert [s.number for s in dealt] == list(range(1, 27))
    roles = [s.role for s in dealt]
    assert {r: roles.count(r) for r in set(roles)} == {
        "mafia": 6,
        "commissar": 1,
        "doctor": 1,
        "maniac": 1,
        "civilian": 17,
    }
    draws = list(Draw.objects.filter(game=game).order_by("attempt"))
    assert len(draws) == len(summary.draws) > 1
    assert [d.attempt for d in draws] == list(range(1, len(draws) + 1))
    assert [d.accepted for d in draws] == [False] * (len(draws) - 1) + [True]
    mafia_numbers = {s.number for s in dealt if s.role == Role.MAFIA}
    for d in draws:
        assert d.deal_round == 1
        assert d.mafia_items == sum(1 for n in d.holders.values() if n in mafia_numbers)
        assert (d.mafia_items == 1) is d.accepted
    held = {s.item: s.number for s in dealt if s.item}
    assert held == draws[-1].holders
    assert sorted(held) == sorted(i.value for i in Item)
    assert sum(1 for s in dealt if s.item and s.role == Role.MAFIA) == 1
    assert game.status == GameStatus.DEALT and game.seed == "gamma-1"
    assert game.commitment == summary.commitment and len(game.commitment) == 64
    roster = [s.vk_user_id for s in dealt]
    assert roster == sorted(roster)  # seats by VK id
    assert deal_for_roster("gamma-1", counts_of(game=game), roster).commitment == game.commitment
    assert deal_for_roster("gamma-2", counts_of(game=game), roster).commitment != game.commitment
    [event] = events(game, "deal")
    assert event.override is False and event.data["commitment"] == game.commitment
    assert event.data["roster"] == roster and event.data["seed_round"] == 1


def test_the_same_seed_deals_the_same_seats():
    one = make_game(n=9, deal=True, seed="same")
    two = make_game(n=9, deal=True, seed="same")
    other = make_game(n=9, deal=True, seed="different")

    assert deal_of(one) == deal_of(two)
    assert one.commitment == two.commitment
    assert deal_of(one) != deal_of(other)


def test_a_new_round_before_the_start_is_an_override_and_keeps_earlier_draws():
    game = make_game(n=9, deal=True, seed="first")
    first_round = Draw.objects.filter(game=game).count()
    with pytest.raises(InvalidCommand, match="новом раунде"):
        services.game_deal(game_id=game.pk)  # the same roster and seed: the same deal

    rnd = services.deal_round_new(game_id=game.pk, seed="second", by="gm:anna")

    game.refresh_from_db()
    assert rnd.number == 2
    assert Draw.objects.filter(game=game, deal_round=1).count() == first_round
    assert Draw.objects.filter(game=game, deal_round=2).exists()
    assert Draw.objects.filter(game=game, accepted=True).count() == 2  # one per deal
    [opened] = events(game, "deal_round_opened")[1:]
    assert opened.override is True and opened.actor == "gm:anna"
    assert opened.data["round"] == 2 and "second" not in str(opened.data)  # no seed logged
    [deal2] = events(game, "deal")[1:]
    assert (deal2.data["deal_round"], deal2.data["seed_round"]) == (2, 2)
    roster = [s.vk_user_id for s in seats(game)]
    assert game.seed == "second"
    assert deal_for_roster("second", counts_of(game=game), roster).commitment == game.commitment
    assert [s.number for s in seats(game)] == list(range(1, 10))


def test_deal_after_the_start_is_refused():
    game = make_game(n=9, start=True)
    before = snapshot(game)
    draws = Draw.objects.filter(game=game).count()

    with pytest.raises(InvalidCommand):
        services.game_deal(game_id=game.pk)
    with pytest.raises(InvalidCommand):
        services.deal_round_new(game_id=game.pk, by="gm:test")

    assert snapshot(game) == before
    assert Draw.objects.filter(game=game).count() == draws
