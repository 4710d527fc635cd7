"""The nights of the end-to-end game: every night action and item, by message and by buttons,
a changed mafia shot, the mafia's channel, «статус», «помощь» and the menu, the dead refused,
a reveal flagged and the mafia's shot re-opened by the GM (G2), the GM's edit of a draft, the
publication."""

from __future__ import annotations

import re

from gameplay import services
from gameplay.grammar import join
from gameplay.models import FlagKind, ModerationFlag
from gameplay.refusals import NightUnderReview, OutOfGame
from tests.e2e.cast import PLAYERS
from tests.e2e.harness import db
from tests.e2e.script import Script, first_target, team_shot

DEAD = OutOfGame().reason


async def night_1(s: Script) -> None:
    c = s.cast
    assert c is not None
    night = s.marks["night 1"]
    living_mafia = [m for m in c.mafia if m != c.executed1]
    for m in living_mafia:
        prompts = s.seat(m).texts(night)
        assert any("Выстрел мафии: в кого стреляет мафия?" in t for t in prompts), m
        assert any("Ролевой удар (один раз за игру" in t for t in prompts), m
    assert s.seat(c.clock).received("На кого остановить время?")
    assert s.seat(c.commissar).received("Ночь 1. Выберите одно")
    assert s.seat(c.doctor).received("Кого лечите?")
    assert s.seat(c.maniac).received("Ночь 1.\nВ кого стреляете?")
    assert s.seat(c.red_button).received("На кого нажать кнопку?")
    assert s.seat(c.book).received("Кого спасти книгой?")
    assert not s.seat(c.other).received("Ночь 1.")  # a civilian without an item sleeps
    start = s.mark()

    s.seat(c.executed1).say("выстрел 5")  # the dead cannot act
    s.seat(c.shot1).say(f"выстрел {c.decoy}")  # the mafia's first choice ...
    s.seat(c.maniac).say(f"выстрел @id{s.seat(c.shot1).vk}")
    s.seat(c.doctor).say(f"лечу {s.seat(c.healed1).name.lower().replace('ё', 'е')}")
    s.seat(c.clock).say(f"часы {c.doctor}")  # blocks the doctor's heal
    s.seat(c.striker).say(f"!стреляем в {c.victim}")  # the mafia's channel
    s.seat(c.other).press_menu("Действия")  # the persistent menu that came with the card
    s.seat(c.skipper).press_menu("Помощь")
    # the dead one's old vote button
    old_prompt = s.seat(c.executed1).last_keyboard("vote")
    s.seat(c.executed1).press(old_prompt, action="vote", target=first_target(old_prompt))
    commissar = s.seat(c.commissar)
    commissar.press(commissar.last_keyboard("check", after=night), action="check", target=None)
    await s.world.settle()
    clock = s.seat(c.clock)  # ... changed by another member, with the prompt's buttons
    await clock.choose(clock.last_keyboard("mafia_shot", after=night), "mafia_shot", c.victim)
    await commissar.choose(commissar.last_keyboard("check", after=start), "check", c.checked)
    await s.world.settle()
    commissar.say("статус")
    await s.world.settle()

    assert s.seat(c.executed1).texts(start) == [DEAD, DEAD]
    assert s.seat(c.other).texts(start) == [
        "У вас нет ночных действий: мирные жители ночью спят. Днём голосуйте: «голос N»."
    ]
    [help_text] = s.seat(c.skipper).texts(start)  # help for the player's own role only
    assert f"Вы — №{c.skipper} {s.seat(c.skipper).name}, мирный житель." in help_text
    assert "ночных команд у вас нет" in help_text
    assert not re.search(r"проверка N|лечу N|выстрел N|удар N", help_text), help_text
    for m in living_mafia:
        seen = s.seat(m).texts(start)
        assert team_shot(s, c.decoy, c.shot1) in seen, m
        assert team_shot(s, c.victim, c.clock) in seen, m
        relayed = [t for t in seen if t.startswith(f"Мафия, №{c.striker} ")]
        assert relayed == (
            []
            if m == c.striker
            else [f"Мафия, №{c.striker} {s.seat(c.striker).name}:\nстреляем в {c.victim}"]
        ), m
    assert s.seat(c.striker).received("Сообщение передано живой мафии (4 игрока).", start)
    for n, what in [
        (c.maniac, f"выстрел маньяка — №{c.shot1}"),
        (c.doctor, f"лечение — №{c.healed1}"),
        (c.clock, f"Старинные часы — №{c.doctor}"),
        (c.commissar, f"проверка — №{c.checked}"),
    ]:
        assert s.seat(n).received(f"Принято: {what} ", start), n
    assert f"Вы отправили: проверка — №{c.checked}" in commissar.texts(start)[-1]

    await s.gm(services.night_close)
    late = s.mark()
    s.seat(c.maniac).say(f"выстрел {c.decoy}")  # too late: the night is under review
    s.seat(c.doctor).post(s.topic.id, f"Я лечил №{c.healed1}, а меня кто-то остановил")
    await s.world.settle()
    assert s.seat(c.maniac).texts(late) == [NightUnderReview().reason]
    flags = await db(
        lambda: list(
            ModerationFlag.objects.filter(game_id=s.game_id, kind=FlagKind.REVEAL).values_list(
                "vk_user_id", flat=True
            )
        )
    )
    assert flags == [s.seat(c.doctor).vk]
    # G2: the GM lets the mafia change its shot; the mafia alone may send again.
    mark = s.mark()
    await s.gm(services.night_reopen_mafia, reason="раскрытие хода до итогов ночи")
    for m in living_mafia:
        assert s.seat(m).texts(mark) == [
            "Ведущий вновь открыл выстрел мафии в ночь 1: пришлите выстрел заново («выстрел N»)."
        ]
    commissar.say(f"проверка {c.decoy}")
    s.seat(c.clock).say(f"выстрел {c.victim}")
    await s.world.settle()
    # the re-open is not theirs
    assert commissar.texts(mark) == [NightUnderReview().reason]
    for m in living_mafia:
        assert team_shot(s, c.victim, c.clock) in s.seat(m).texts(mark), m
    await s.gm(services.night_close)

    before = s.last_comment_id()
    await s.gm(services.night_publish)
    [morning] = s.posts("Утро после ночи 1.", before)
    dead = sorted([c.victim, c.shot1])
    assert morning.splitlines()[2:] == [
        "Этой ночью погибли: " + join([f"№{n} {s.seat(n).name}" for n in dead]) + "."
    ]
    assert s.seat(c.commissar).received(
        f"Ночь 1, проверка: №{c.checked} {s.seat(c.checked).name} — мафия."
    )
    for n in dead:
        assert s.seat(n).received("Вы выбыли из игры", late)
    assert await s.alive() == set(range(1, PLAYERS + 1)) - {c.executed1, *dead}
    s.marks["day 2"] = late


async def night_2(s: Script) -> None:
    c = s.cast
    assert c is not None
    night = s.marks["night 2"]
    striker, maniac = s.seat(c.striker), s.seat(c.maniac)
    # The role strike with buttons: the target, then the guessed role (wrong: the sender dies).
    await striker.choose(striker.last_keyboard("role_strike", after=night), "role_strike", c.doctor)
    await s.world.settle()
    guess = striker.last_keyboard("role_strike", after=night, target=c.doctor)
    striker.press(guess, action="role_strike", target=c.doctor, guess="maniac")
    s.seat(c.clock).say(f"выстрел {c.saved}")
    s.seat(c.book).say(f"книга {s.seat(c.saved).first}")
    s.seat(c.commissar).say(f"выстрел {c.maniac}")  # the commissar shoots tonight
    s.seat(c.doctor).say(f"лечу {c.commissar}")
    s.seat(c.red_button).say(f"кнопка {c.buttoned}")
    s.seat(c.victim).say(f"лечу {c.commissar}")  # the dead cannot act
    await maniac.choose(
        maniac.last_keyboard("maniac_shot", after=night), "maniac_shot", c.commissar
    )
    await s.world.settle()

    doctor = s.seat(c.doctor)
    striker_seat = s.seat(c.striker)
    strike = (
        f"Ролевой удар мафии: №{c.striker} {striker_seat.name} "
        f"{striker_seat.g('назвал', 'назвала')} №{c.doctor} {doctor.accs()} маньяком."
    )
    assert s.seat(c.clock).received(strike, night)  # the rest of the living mafia
    assert striker.received(
        f"Принято: ролевой удар — №{c.doctor} {s.seat(c.doctor).name}, роль: маньяк.", night
    )
    for m in (c.clock, c.striker):
        assert s.seat(m).received(team_shot(s, c.saved, c.clock), night), m
    for n, what in [
        (c.book, f"Книга из будущего — №{c.saved}"),
        (c.commissar, f"выстрел комиссара — №{c.maniac}"),
        (c.doctor, f"лечение — №{c.commissar}"),
        (c.red_button, f"Загадочная красная кнопка — №{c.buttoned}"),
        (c.maniac, f"выстрел маньяка — №{c.commissar}"),
    ]:
        assert s.seat(n).received(f"Принято: {what} ", night), n
    assert s.seat(c.victim).texts(night)[-1] == DEAD

    draft = await s.gm(services.night_close)
    assert sorted(draft.deaths) == sorted([c.striker, c.maniac, c.buttoned])
    # G1: the GM edits the draft — the red button's victim survives (an override, published
    # at the end); the button is spent all the same.
    await s.gm(
        services.night_draft_edit, deaths=[c.striker, c.maniac], reason="кнопку нажали после срока"
    )
    before = s.last_comment_id()
    mark = s.mark()
    await s.gm(services.night_publish)
    [morning] = s.posts("Утро после ночи 2.", before)
    dead = sorted([c.striker, c.maniac])  # not the saved one, the healed one, the spared one
    assert morning.splitlines()[2:] == [
        "Этой ночью погибли: " + join([f"№{n} {s.seat(n).name}" for n in dead]) + "."
    ]
    assert not s.seat(c.commissar).received("проверка:", mark)  # he shot, no check tonight
    s.marks["day 3"] = mark
