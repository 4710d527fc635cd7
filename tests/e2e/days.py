"""The days of the end-to-end game: votes in the board («голос 5», «голос: Имя», a mention),
by message and by buttons, an edited vote post, a skipped vote and its penalty; the
replacement, the spectator chat, the refused dead, stale and foreign buttons and the modkill of
Day 2; Day 3 closed early, and the end."""

from __future__ import annotations

from typing import cast

from gameplay import services
from gameplay.messages import render
from gameplay.models import FlagKind, Game, ModerationFlag, Seat, SeatStatus
from gameplay.refusals import OutOfGame, StaleButton
from gameplay.rules import Item, Role, RoleCounts, deal_for_roster
from gameplay.rules.errors import NotInGame
from gameplay.services.moderation import flag_resolve
from gameplay.services.spectators import spectator_chat_link, spectator_chat_set_open
from tests.e2e.cast import BASE, PLAYERS, RESERVE
from tests.e2e.harness import db
from tests.e2e.script import INVITE, SEED, Script, first_target, vote_text

DEAD = OutOfGame().reason
NOT_PLAYING = render("player/not_playing")


def executed(s: Script, n: int) -> str:
    """The day result's line for a mafia member executed."""
    who = s.seat(n)
    return f"{who.g('Казнён', 'Казнена')} №{n} {who.name}, роль — мафия."


async def day_1(s: Script) -> None:
    c = s.cast
    assert c is not None
    day_mark = 0  # the prompts came with the start
    voters = [n for n in range(1, PLAYERS + 1) if n not in (c.skipper, c.executed1)]
    by_button = voters[3::5]
    by_pm = voters[4::5]
    to_other = set(voters[:3])
    button_votes: list[int] = []
    posted: dict[int, int] = {}
    for i, n in enumerate(voters):
        target = c.other if n in to_other else c.executed1
        person = s.seat(n)
        if n in by_button:
            button_votes.append(n)
        elif n in by_pm:
            person.say(f"голос за {s.seat(target).first.lower()}")
        else:
            posted[n] = person.post(s.topic.id, vote_text(i, s.seat(target), target))
    s.seat(c.executed1).post(s.topic.id, f"голос {c.other}\nЯ мирный, честно!")
    await s.world.settle()
    # An edited vote post changes nothing but is flagged to the GM.
    editor = next(n for n in posted if n not in to_other)
    s.seat(editor).edit(s.topic.id, posted[editor], f"голос {c.other}")
    for n in button_votes:  # the vote buttons of the day's prompt (paged: 8 a page)
        person = s.seat(n)
        await person.choose(person.last_keyboard("vote", after=day_mark), "vote", c.executed1)
    s.seat(c.skipper).post(s.topic.id, "подсчёт")
    await s.world.settle()

    board = s.board()
    assert "голосует за" not in board  # no vote has a post of its own: the counts show them
    for n in [*voters, c.executed1]:
        target = c.other if n in to_other or n == c.executed1 else c.executed1
        assert s.seat(n).received(f"Ваш голос за №{target} {s.seat(target).accs()} принят"), n
    counts = s.posts("Часы в лаборатории отсчитывают время. Подсчёт голосов, день 1")
    assert [t.splitlines()[1].split(".")[0] for t in counts] == [
        "Проголосовали 10 из 26",
        "Проголосовали 20 из 26",
    ]
    # the player's «подсчёт» came minutes after the last count: refused, saying when
    skipper = s.seat(c.skipper)
    assert f"[id{skipper.vk}|{skipper.name}], подсчёт голосов уже публиковался в " in board
    edited = await db(
        lambda: list(
            ModerationFlag.objects.filter(game_id=s.game_id, kind=FlagKind.EDITED_VOTE).values_list(
                "vk_user_id", flat=True
            )
        )
    )
    assert edited == [s.seat(editor).vk]

    before = s.last_comment_id()
    s.marks["night 1"] = s.mark()
    await s.gm(services.day_close)
    # the day's last count goes out first: every vote, a board vote linked to its comment
    head = "Стрелки часов в лаборатории замерли: итоговый подсчёт голосов, день 1."
    last = s.board(before).split(head, 1)[1].split("Итоги дня 1")[0]
    for n in [*button_votes, *by_pm]:  # named, with no link: they were not cast in the board
        assert f"\n• №{n} {s.seat(n).name}: в ЛС\n" in last, n
    for n in posted:
        assert f"\n• №{n} {s.seat(n).name}: https://vk.com/topic-" in last, n
    assert f"\nНе проголосовали: №{c.skipper} {s.seat(c.skipper).name}.\n" in last
    [result] = s.posts("Итоги дня 1", before)
    assert f"\nШтрафные голоса: №{c.skipper} {s.seat(c.skipper).name} (+2).\n" in result
    assert f"№{c.executed1} {s.seat(c.executed1).name} — 21 голос\n" in result
    assert f"№{c.other} {s.seat(c.other).name} — 4 голоса\n" in result
    assert f"№{c.skipper} {s.seat(c.skipper).name} — 2 голоса\n" in result
    assert executed(s, c.executed1) in result
    s.public_from[c.executed1] = s.mark()
    assert s.seat(c.executed1).received("Вы выбыли из игры")
    assert await s.alive() == set(range(1, PLAYERS + 1)) - {c.executed1}


async def day_2(s: Script) -> None:
    c = s.cast
    assert c is not None
    start = s.mark()
    # A replacement: the reserve takes a civilian's seat, with its role card.
    old, new = s.seat(c.replaced), s.people[RESERVE]
    await s.gm(
        services.seat_replace,
        seat=c.replaced,
        vk_user_id=new.vk,
        name=new.name,
        reason="уехал на дачу",
    )
    s.marks["replaced"] = s.mark()
    s.seat_holder[c.replaced] = new
    [card] = new.received("Ваш номер:")
    assert f"Ваш номер: {c.replaced}." in card.text and "Мирный житель" in card.text
    assert old.received("Ваше место в игре «Машина времени» передано другому игроку", start)
    assert f"Замена: место №{c.replaced} ({old.name}) занимает {new.name}." in s.board()

    # The spectator chat: the GM links the community's chat and opens it.
    chat = s.state.create_chat("ЗЗ «Машина времени»")
    await s.gm(spectator_chat_link, chat=chat.chat_id)
    await s.gm(spectator_chat_set_open, open=True)
    victim, dead_mafia, intruder = s.seat(c.victim), s.seat(c.executed1), s.seat(c.intruder)
    assert victim.received("Ведущий открыл беседу зрителей", start)
    assert not dead_mafia.received("Ведущий открыл беседу зрителей")
    victim.say("в ЗЗ")
    dead_mafia.say("хочу в ЗЗ")
    await s.world.settle()
    [invite] = victim.received("Беседа зрителей игры «Машина времени»:", start)
    link = INVITE.search(invite.text)
    assert link is not None and s.state.calls("messages.getInviteLink")
    assert dead_mafia.texts(start)[-1].startswith("Выбывшая мафия в беседу зрителей не допускается")
    victim.join_chat(link.group(0))
    dead_mafia.join_chat(link.group(0))  # the link was passed on: both are intruders
    intruder.join_chat(link.group(0))
    await s.world.settle()
    removed = [
        int(call.params["member_id"])
        for call in s.state.calls("messages.removeChatUser")
        if call.ok
    ]
    assert sorted(removed) == sorted([dead_mafia.vk, intruder.vk])
    assert set(s.state.chat(chat.chat_id).members) == {s.state.community_id, victim.vk}
    intruders = await db(
        lambda: sorted(
            cast(
                "list[int]",  # an intruder's flag names them
                list(
                    ModerationFlag.objects.filter(
                        game_id=s.game_id, kind=FlagKind.INTRUDER
                    ).values_list("vk_user_id", flat=True)
                ),
            )
        )
    )
    assert intruders == sorted([dead_mafia.vk, intruder.vk])  # the GM is told

    # The dead and the replaced cannot vote, not even with the buttons they still have; a
    # button of a closed day is stale.
    mark = s.mark()
    victim.post(s.topic.id, f"голос {c.checked}")
    victim.say(f"голос {c.checked}")
    old.say(f"голос {c.checked}")
    old.press(
        old.last_keyboard("vote", after=s.marks["day 2"]), action="vote", target=None, offset=8
    )
    [day_1_button] = s.seat(c.other).received("День 1. Голосуйте")
    s.seat(c.other).press(day_1_button, action="vote", target=first_target(day_1_button))
    # Two votes for a player the GM then removes.
    early_voters = [c.decoy, c.healed1]
    for n in early_voters:
        s.seat(n).post(s.topic.id, f"голос {c.modkilled}")
    await s.world.settle()
    assert f"[id{victim.vk}|{victim.name}], голос не принят: в{DEAD[1:]}" in s.board()
    assert victim.texts(mark) == [DEAD]
    assert old.texts(mark) == [NOT_PLAYING, NotInGame().reason]
    assert s.seat(c.other).texts(mark) == [StaleButton().reason]
    dead_posts = await db(
        lambda: list(
            ModerationFlag.objects.filter(game_id=s.game_id, kind=FlagKind.DEAD_POST).values_list(
                "vk_user_id", flat=True
            )
        )
    )
    assert dead_posts == [victim.vk]

    # An insult, flagged; the GM acts on the flag with a modkill (from the flags page).
    s.seat(c.modkilled).post(s.topic.id, f"{victim.first}, ты д е б и л")
    await s.world.settle()
    flag = await db(lambda: ModerationFlag.objects.get(game_id=s.game_id, kind=FlagKind.PROFANITY))
    assert flag.vk_user_id == s.seat(c.modkilled).vk
    mark = s.mark()
    await s.gm(
        flag_resolve,
        flag_id=flag.pk,
        acted=True,
        punish="modkill",
        seat=c.modkilled,
        note="оскорбления в обсуждении",
    )
    s.public_from[c.modkilled] = s.mark()
    label = f"№{c.modkilled} {s.seat(c.modkilled).name}"
    who = s.seat(c.modkilled)
    assert (
        f"{label} {who.g('исключён', 'исключена')} из игры ведущим (модкилл), роль — мафия."
        in s.board()
    )
    assert s.seat(c.modkilled).texts(mark) == [
        "Ведущий исключил вас из игры. Причина: оскорбления в обсуждении"
    ]
    for n in early_voters:
        assert s.seat(n).texts(mark) == [
            f"{label} {who.g('выбыл', 'выбыла')} из игры, и ваш голос отменён. "
            "Вы можете проголосовать заново."
        ]

    living = sorted(await s.alive())
    mafia = [m for m in living if m in c.mafia]
    for i, n in enumerate(living):
        if n == c.replaced:
            continue
        target = c.other if n in mafia or n == c.checked else c.checked
        early = " досрочно" if n == living[0] else ""  # before Day 3: an ordinary vote
        s.seat(n).post(s.topic.id, vote_text(i, s.seat(target), target) + early)
    # the new player votes with the buttons the menu brings
    mark = s.mark()
    new.press_menu("Действия")
    await s.world.settle()
    await new.choose(new.last_keyboard("vote", after=mark), "vote", c.checked)
    await s.world.settle()
    assert s.seat(living[0]).received(
        "принят как обычный: досрочные голоса действуют с третьего дня"
    )

    before = s.last_comment_id()
    s.marks["night 2"] = s.mark()
    await s.gm(services.day_close)
    [result] = s.posts("Итоги дня 2", before)
    assert "штрафных" not in result  # everyone voted
    assert executed(s, c.checked) in result
    s.public_from[c.checked] = s.mark()


async def day_3(s: Script) -> None:
    c = s.cast
    assert c is not None
    day = s.marks["day 3"]
    living = sorted(await s.alive())
    assert len(living) == 19  # 10 early votes close the day (more than half)
    voters = [n for n in living if n != c.clock]
    ordinary, by_button, by_pm, board = voters[:3], voters[3:5], voters[5], voters[6:14]
    for n in ordinary:  # changeable votes
        s.seat(n).post(s.topic.id, f"голос {c.other}")
    for n in by_button:  # «Досрочно…», then the target on the early page
        person = s.seat(n)
        prompt = person.last_keyboard("vote", after=day)
        mark = s.mark()
        person.press(prompt, action="vote", target=None, early=True)
        await s.world.settle()
        await person.choose(
            person.last_keyboard("vote", after=mark, early=True), "vote", c.clock, early=True
        )
    s.seat(by_pm).say(f"голос {s.seat(c.clock).mention} досрочно")
    await s.world.settle()
    assert s.seat(by_pm).received(
        f"Ваш досрочный голос за №{c.clock} {s.seat(c.clock).accs()} принят. Изменить его нельзя."
    )
    before = s.last_comment_id()
    # The seventh of these is the tenth early vote: the day closes at once, the game ends,
    # and the eighth comes too late.
    for n in board:
        s.seat(n).post(s.topic.id, f"голос {c.clock} досрочно")
    late = board[-1]
    await s.world.settle()
    s.seat(late).say(f"голос {c.clock}")
    await s.world.settle()

    [result] = s.posts("Итоги дня 3 (закрыт досрочно).", before)
    # the day's last count, before the result: the early votes by buttons among the votes
    last = s.board(before).split("итоговый подсчёт голосов, день 3.", 1)[1]
    for n in by_button:
        assert f"\n• №{n} {s.seat(n).name}: в ЛС, досрочно\n" in last.split("Итоги дня 3")[0], n
    # Early close is a close (V4): who had not voted is struck, +2 (the scenario
    # early_close_day3 says so too); the eighth early vote did not count.
    missing = [c.clock, *voters[13:]]
    for n in missing:
        assert f"№{n} {s.seat(n).name} (+2)" in result.split("Штрафные голоса: ")[1], result
    assert f"№{c.clock} {s.seat(c.clock).name} — 12 голосов\n" in result, result
    assert executed(s, c.clock) in result
    assert s.seat(late).texts()[-1] == NOT_PLAYING
    head = "Игра «Машина времени» окончена. Победа: Мирный город!"
    final = head + s.board(before).split(head, 1)[1]  # the last post (with blank lines)
    seats = await db(
        lambda: list(
            Seat.objects.filter(game_id=s.game_id, status=SeatStatus.PLAYER).order_by("number")
        )
    )
    for x in seats:
        item = f", «{Item(x.item).title}»" if x.item else ""
        assert f"№{x.number} {x.name} — {Role(x.role).title.lower()}{item}\n" in final
    assert f"Зерно раздачи: {SEED}" in final
    game = await db(Game.objects.get, pk=s.game_id)
    assert (game.status, game.winner) == ("finished", "town")
    roster = [BASE + i for i in range(1, PLAYERS + 1)]  # as dealt: the replacement came later
    assert f"VK id по местам: {','.join(str(v) for v in roster)}" in final
    assert deal_for_roster(SEED, RoleCounts(), roster).commitment == game.commitment
    assert f"Хеш, опубликованный на старте: {game.commitment}" in final

    def who(n: int) -> str:
        return f"№{n} {s.seat(n).name}"

    log = final.split("Ночные действия:\n")[1].split("\n\n")[0].splitlines()
    assert sorted(log) == sorted(
        [  # every action that stood, items included
            f"Ночь 1: {who(c.clock)} — выстрел мафии, цель — {who(c.victim)}",
            f"Ночь 1: {who(c.maniac)} — выстрел маньяка, цель — {who(c.shot1)}",
            f"Ночь 1: {who(c.commissar)} — проверка, цель — {who(c.checked)}",
            f"Ночь 1: {who(c.doctor)} — лечение, цель — {who(c.healed1)}",
            f"Ночь 1: {who(c.clock)} — «Старинные часы», цель — {who(c.doctor)}",
            f"Ночь 2: {who(c.striker)} — ролевой удар, цель — {who(c.doctor)}"
            " (названа роль: маньяк)",
            f"Ночь 2: {who(c.clock)} — выстрел мафии, цель — {who(c.saved)}",
            f"Ночь 2: {who(c.commissar)} — выстрел комиссара, цель — {who(c.maniac)}",
            f"Ночь 2: {who(c.doctor)} — лечение, цель — {who(c.commissar)}",
            f"Ночь 2: {who(c.maniac)} — выстрел маньяка, цель — {who(c.commissar)}",
            f"Ночь 2: {who(c.red_button)} — «Загадочная красная кнопка», цель — {who(c.buttoned)}",
            f"Ночь 2: {who(c.book)} — «Книга из будущего», цель — {who(c.saved)}",
        ]
    )
    overrides = final.split("Решения ведущего:\n")[1].split("\n\n")[0].splitlines()
    # The GM's reasons stay out of the board (the modkill's reached the player privately).
    assert overrides == [
        "Ночь 1: мафии разрешено заново выбрать выстрел.",
        f"Модкилл: {who(c.modkilled)}.",
        f"Ночь 2, исход изменён ведущим: выживает {who(c.buttoned)}.",
    ]
    for x in seats:
        assert s.seat(cast(int, x.number)).received(
            "Игра «Машина времени» окончена. Победа: Мирный город."
        ), x.number
