"""Every text of generated games, read by the reader of tests/gameplay/test_messages.py.

test_messages.py renders each message from hand-built contexts; here seeded games are played
through the real services, in every theme, by players named from the same table of real-world
names (with VK's sex), and every Outbox text they produce — private messages, board posts,
the spectator chat's invitations — goes through the same ``problems()``: sign-up (and a
withdrawal and a reserve), the deal, the start, days with votes, early votes, missed votes
and penalties, manual strikes and a forgiven one, nights with several deaths, a GM's edit of
a night and a re-opened mafia shot, modkills with a reason, a replacement, reminders, vote
counts, an extended deadline, the mafia's «!» relay, the spectator chat opened and joined,
and the end (a winner, or the GM's stop).

The gender a text must use is the one the names table gives, not the one stored on the seat:
a seat handed to another player must follow the newcomer. ``test_generated_games_read_right``
prints its counts: games, texts, problems.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from typing import Any

import pytest

from gameplay import services, themes
from gameplay.messages import Person
from gameplay.models import Actor, Game, GameStatus, Outbox, Phase, PhaseStatus, Seat, SeatStatus
from gameplay.rules import Act, Role, RoleCounts, RuleViolation
from gameplay.services.deadlines import phase_extend, phase_remind
from gameplay.services.mafia import mafia_relay
from gameplay.services.spectators import (
    INVITE_LINK,
    spectator_chat_link,
    spectator_chat_set_open,
    spectator_request,
)
from gameplay.services.votes import vote_count_post
from tests.gameplay.factories import community_id, number_of
from tests.gameplay.test_messages import NAMES, problems

pytestmark = pytest.mark.django_db

ACCUSATIVES = {name: accs for name, _, accs in NAMES}
VK_BASE = 7_000
GM = Actor.gm("test")
#: (players, auto-publish) of each game, played once per theme.
GAMES = [(7, False), (9, True), (14, False), (20, True), (26, False)]
#: Lines the games must produce at least once (several deaths in one night, a modkill told
#: with its reason, a struck player told what it means, the GM's decisions in the end post).
MARKS = ["Этой ночью погибли:", "Причина:", "Решения ведущего:", "Ночные действия:"]
REASONS = ["оскорбления в обсуждении", "мультиаккаунт", "слив роли в личных сообщениях"]


class Table:
    """Who is who in one game: the names table's people by VK id."""

    def __init__(self, rng: random.Random, offset: int) -> None:
        self.rng = rng
        self.offset = offset
        self.by_vk: dict[int, tuple[str, int]] = {}
        self.next = 0
        #: (seat, the name and sex of the player who left it, the last Outbox id before)
        self.replaced: list[tuple[int, str, int, int]] = []

    def newcomer(self) -> tuple[int, str, int]:
        name, sex, _ = NAMES[(self.offset + self.next) % len(NAMES)]
        self.next += 1
        vk = VK_BASE + self.offset * 100 + self.next
        self.by_vk[vk] = (name, sex)
        return vk, name, sex


def _phase(game: Game) -> Phase | None:
    return Phase.objects.filter(
        game=game, status__in=[PhaseStatus.OPEN, PhaseStatus.REVIEW]
    ).first()


def _living(game: Game) -> list[Seat]:
    return list(
        Seat.objects.filter(game=game, status=SeatStatus.PLAYER, alive=True).order_by("number")
    )


def _running(game: Game) -> bool:
    return Game.objects.get(pk=game.pk).status == GameStatus.RUNNING


def _try(call: Any, **kw: Any) -> Any:
    try:
        return call(**kw)
    except RuleViolation:
        return None


def _sign_up(game: Game, table: Table, n: int) -> None:
    for i in range(n + 1):
        vk, name, sex = table.newcomer()
        # every other one in the topic (acknowledged in the topic's running list)
        in_topic: dict[str, Any] = {
            "topic_id": game.topic_id,
            "pm_allowed": (True, False, None)[i % 3],
        }
        services.signup_create(
            game_id=game.pk, vk_user_id=vk, name=name, sex=sex, **(in_topic if i % 2 else {})
        )
    # one changes their mind; one more waits in the reserve
    services.signup_withdraw(game_id=game.pk, vk_user_id=VK_BASE + table.offset * 100 + 2)
    vk, name, sex = table.newcomer()
    services.signup_create(game_id=game.pk, vk_user_id=vk, name=name, sex=sex, reserve=True)


def _day(game: Game, table: Table, number: int) -> None:
    rng = table.rng
    living = _living(game)
    suspects = rng.sample(living, min(3, len(living)))
    for s in living:
        if rng.random() < 0.12:
            continue  # a missed vote: a penalty at the close
        target = rng.choice([x for x in suspects if x.number != s.number] or living)
        if target.number == s.number:
            continue
        _try(
            services.vote_submit,
            game_id=game.pk,
            voter=s.number,
            target=target.number,
            early=number >= 3 and rng.random() < 0.3,
        )
    if rng.random() < 0.4:
        _try(phase_remind, game_id=game.pk, by=GM)
    if rng.random() < 0.4:
        _try(vote_count_post, game_id=game.pk)
    if rng.random() < 0.2:
        _try(phase_extend, game_id=game.pk, by=GM, minutes=rng.choice([1, 30, 90]))
    if number == 2:
        _spectators(game, table)
    if rng.random() < 0.4 and _running(game):
        who = rng.choice(_living(game))
        strike = _try(services.strike_give, game_id=game.pk, seat=who.number, by=GM, reason="флуд")
        if strike is not None and rng.random() < 0.5:
            _try(
                services.strike_forgive,
                game_id=game.pk,
                strike_id=strike.pk,
                by=GM,
                reason="ошибка ведущего",
            )
    if rng.random() < 0.25 and _running(game):
        who = rng.choice(_living(game))
        _try(
            services.seat_modkill,
            game_id=game.pk,
            seat=who.number,
            by=GM,
            reason=rng.choice(REASONS),
        )
    if rng.random() < 0.2 and _running(game):
        who = rng.choice(_living(game))
        vk, name, sex = table.newcomer()
        mark = Outbox.objects.order_by("-id").values_list("id", flat=True).first() or 0
        done = _try(
            services.seat_replace,
            game_id=game.pk,
            seat=who.number,
            vk_user_id=vk,
            name=name,
            sex=sex,
            by=GM,
            reason="игрок уехал",
        )
        if done is not None:
            table.replaced.append((number_of(who), *table.by_vk[who.vk_user_id], mark))
    if _running(game) and (day := _phase(game)) is not None and day.kind == "day":
        services.day_close(game_id=game.pk, by=GM)


def _spectators(game: Game, table: Table) -> None:
    """The GM links and opens the spectator chat; every player who is out asks to join."""
    _try(spectator_chat_link, game_id=game.pk, by=GM, chat=1 + table.offset)
    _try(spectator_chat_set_open, game_id=game.pk, by=GM, open=True)
    for s in Seat.objects.filter(game=game, status=SeatStatus.PLAYER, alive=False):
        _try(spectator_request, game_id=game.pk, vk_user_id=s.vk_user_id)


ROLE_ACTS = {
    Role.MAFIA: [Act.MAFIA_SHOT, Act.ROLE_STRIKE],
    Role.COMMISSAR: [Act.CHECK, Act.COMMISSAR_SHOT],
    Role.DOCTOR: [Act.HEAL],
    Role.MANIAC: [Act.MANIAC_SHOT],
    Role.CIVILIAN: [],
}


def _night(game: Game, table: Table) -> None:
    rng = table.rng
    living = _living(game)
    mafia_target = rng.choice([s for s in living if s.role != Role.MAFIA] or living)
    for s in living:
        acts = list(ROLE_ACTS[Role(s.role)])
        if s.item and not s.item_used:
            acts.append(Act(s.item))
        for act in acts:
            if rng.random() < 0.1:
                continue  # a missed action: a penalty at dawn
            target = mafia_target if act is Act.MAFIA_SHOT else rng.choice(living)
            guess = rng.choice([Role.COMMISSAR, Role.DOCTOR, Role.MANIAC])
            _try(
                services.night_action_submit,
                game_id=game.pk,
                actor=s.number,
                act=act,
                target=target.number,
                guess=guess if act is Act.ROLE_STRIKE else None,
            )
    mafia = [s for s in living if s.role == Role.MAFIA]
    if mafia and rng.random() < 0.5:
        _try(
            mafia_relay,
            game_id=game.pk,
            vk_user_id=mafia[0].vk_user_id,
            text=f"стреляем в {mafia_target.number}",
        )
    services.night_close(game_id=game.pk, by=GM)
    phase = _phase(game)
    if phase is None or phase.status != PhaseStatus.REVIEW:
        return
    if rng.random() < 0.3:
        _try(services.night_reopen_mafia, game_id=game.pk, by=GM, reason="сбой бота")
        reopened = _phase(game)
        assert reopened is not None
        if reopened.status == PhaseStatus.OPEN:
            services.night_close(game_id=game.pk, by=GM)
    if rng.random() < 0.3:
        deaths = [s.number for s in rng.sample(_living(game), 2)]
        _try(
            services.night_draft_edit,
            game_id=game.pk,
            by=GM,
            deaths=deaths,
            reason="действие пришло до дедлайна",
        )
    services.night_publish(game_id=game.pk, by=GM)


def play(index: int, theme: str, n: int, auto_publish: bool) -> tuple[Game, Table]:
    table = Table(random.Random(f"{theme}-{index}"), offset=index * 7)
    game = services.game_create(
        name=f"Партия {index + 1}",
        counts=RoleCounts.default_for(n),
        by=GM,
        seed=hashlib.sha256(f"{theme}-{index}".encode()).hexdigest()[:32],
        theme=theme,
        auto_publish=auto_publish,
        vk_group_id=community_id(),
        topic_id=990_000 + index,
    )
    _sign_up(game, table, n)
    services.game_deal(game_id=game.pk, by=GM)
    services.game_start(game_id=game.pk, by=GM)
    for _ in range(40):
        phase = _phase(game)
        if phase is None or not _running(game):
            break
        if phase.kind == "day":
            _day(game, table, phase.number)
        else:
            _night(game, table)
    if _running(game):
        services.game_end(game_id=game.pk, by=GM, reason="время вышло")
    return game, table


def test_generated_games_read_right(capsys: pytest.CaptureFixture[str]) -> None:
    bad: list[str] = []
    texts = 0
    kinds: Counter[str] = Counter()
    channels: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    games = 0
    for theme in themes.THEMES:
        for index, (n, auto) in enumerate(GAMES):
            game, table = play(index, theme, n, auto)
            games += 1
            assert Game.objects.get(pk=game.pk).status == GameStatus.FINISHED
            seats = list(Seat.objects.filter(game=game))  # read once: the game is over
            for row in Outbox.objects.filter(game=game).order_by("id"):
                if not row.text:
                    continue
                texts += 1
                kinds[row.kind] += 1
                channels[row.channel] += 1
                seen.update(mark for mark in MARKS if mark in row.text)
                # the delivery puts the chat's invite link in place of its marker
                text = row.text.replace(INVITE_LINK, "https://vk.me/join/AJQ1d5eSUQ")
                for problem in problems(text, persons_at(seats, table, row.pk), ACCUSATIVES):
                    bad.append(f"{theme} {row.kind}: {problem}\n{row.text}")
    with capsys.disabled():
        print(f"\ngames: {games}; texts: {texts} of {len(kinds)} kinds; problems: {len(bad)}")
        print("kinds: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    assert games == len(GAMES) * len(themes.THEMES)
    # the games reach what they are for
    for kind in (
        "signup",
        "signup_list",
        "withdraw",
        "role_card",
        "vote_echo",
        "day_result",
        "night_result",
        "modkill",
        "strike",
        "penalty",
        "replace",
        "mafia_reopened",
        "game_over",
        "reminder",
        "vote_count",
        "deadline_extended",
        "mafia_relay",
        "spectator_invite",
        "spectators",
    ):
        assert kinds[kind], f"no {kind} text in the generated games: {sorted(kinds)}"
    # private messages, board posts and the spectator chat's invitations; the bot's replies
    # inside a chat (spectators/*) answer a chat message, not a game's step, and are read from
    # hand-built contexts in test_messages.py
    assert {"message", "board", "invite"} <= set(channels), channels
    missing = [mark for mark in MARKS if not seen[mark]]
    assert not missing, f"the generated games never produced: {missing}"
    heads = sorted({b.split("\n")[0] for b in bad})
    assert not bad, "\n".join(heads[:60]) + "\n\n" + "\n\n".join(bad[:4])


def persons_at(seats: list[Seat], table: Table, outbox_id: int) -> list[Person]:
    """Everyone a text written at ``outbox_id`` can name: the holder of each of the game's
    ``seats`` at that moment, with the sex the names table gives them, and the reserve; a
    player who has left a seat by then is named without a number (no seat-number check
    applies to them)."""
    out = []
    for s in seats:
        name, sex = table.by_vk[s.vk_user_id]
        for number, old_name, old_sex, mark in table.replaced:
            if number == s.number and outbox_id <= mark:
                name, sex = old_name, old_sex
                break
        out.append(Person(s.number, name, sex))
    # the players who left a seat are named after it too («место №16 (…) занимает …»)
    out += [Person(None, old, sex) for _, old, sex, mark in table.replaced if outbox_id > mark]
    return out
