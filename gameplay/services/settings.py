"""A game's settings and its GMs: creating a game from the panel (``game_open``) and changing
its settings, role counts and GM staff (``game_settings_update``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction

from gameplay.messages import known_zone, render
from gameplay.models import Actor, Community, EventKind, Game, GameStatus
from gameplay.refusals import (
    CommunityFixedInPlay,
    CommunityRequired,
    CountsAfterDeal,
    CountsLocked,
    EarlyCloseRuleUnknown,
    GameNameMissing,
    GmNotCommunityMember,
    GmPagesInvalid,
    NoGm,
    NoSuchTheme,
    NotCommunityMember,
    NotStaff,
    PhaseLengthOutOfRange,
    RemindersOutOfRange,
    SettingsFrozen,
    SettingsNotChangeable,
    TopicRequiredInPlay,
    UnknownTimeZone,
)
from gameplay.rules import EarlyClose, RoleCounts
from gameplay.selectors.communities import communities_for, is_member
from gameplay.themes import THEMES

from .common import lock_game, log_event
from .deal import announce_round, round_was_dealt
from .replies import board_reply
from .setup import check_vk_tenancy, game_create, tenancy_refusal
from .vkrefs import CHAT_PEER_BASE

#: The longest phase the settings accept, and the longest extension of a deadline at once.
MAX_EXTENSION = timedelta(days=30)

#: Game fields the panel may change with ``game_settings_update``.
SETTINGS_FIELDS = (
    "name",
    "vk_group_id",
    "recruit_topic_id",
    "topic_id",
    "day_length",
    "night_length",
    "reminders",
    "early_close",
    "reveal_on_night_death",
    "auto_publish",
    "time_zone",
    "gm_vk_ids",
    "theme",
)
COUNT_FIELDS = ("mafia_count", "commissar_count", "doctor_count", "maniac_count", "civilian_count")


def _check_settings(values: dict[str, Any]) -> None:
    if "name" in values and not str(values["name"] or "").strip():
        raise GameNameMissing()
    for key in ("day_length", "night_length"):
        length = values.get(key)
        if length is not None and (length < timedelta(minutes=5) or length > MAX_EXTENSION):
            raise PhaseLengthOutOfRange()
    if "reminders" in values:
        reminders = values["reminders"]
        if not isinstance(reminders, list) or any(
            isinstance(m, bool) or not isinstance(m, int) or m < 1 or m > 7 * 24 * 60
            for m in reminders
        ):
            raise RemindersOutOfRange()
    if "gm_vk_ids" in values:
        ids = values["gm_vk_ids"]
        if not isinstance(ids, list) or any(
            isinstance(i, bool) or not isinstance(i, int) or not 0 < i < CHAT_PEER_BASE for i in ids
        ):
            raise GmPagesInvalid()
    if "early_close" in values and values["early_close"] not in {e.value for e in EarlyClose}:
        raise EarlyCloseRuleUnknown()
    if "theme" in values and values["theme"] not in THEMES:
        raise NoSuchTheme()
    if "time_zone" in values:
        if known_zone(str(values["time_zone"])) is None:
            raise UnknownTimeZone(zone=values["time_zone"])


def check_community(*, user: Any, vk_group_id: int | None) -> None:
    """A game is created in (or moved to) a community ``user`` belongs to (any for an
    operator); never in none, and not by a user of no community."""
    if vk_group_id is None:
        raise CommunityRequired()
    if not communities_for(user).filter(vk_id=vk_group_id).exists():
        raise NotCommunityMember(community=_community_name(vk_group_id))


def _community_name(vk_group_id: int) -> str:
    row = Community.objects.filter(vk_id=vk_group_id).first()
    return str(row) if row else f"club{vk_group_id}"


def _check_change(game: Game, editor: Any, values: dict[str, Any]) -> None:
    """The new values are possible, and a move to another community is into the editor's."""
    _check_settings(values)
    moved = "vk_group_id" in values and values["vk_group_id"] != game.vk_group_id
    if moved and values["vk_group_id"] is None:
        raise CommunityRequired()
    if editor is not None and moved:
        check_community(user=editor, vk_group_id=values["vk_group_id"])


#: Statuses in which the roles are dealt and the game is played in its topic, with its
#: community's bot.
IN_PLAY = (GameStatus.DEALT, GameStatus.RUNNING)


def _check_in_play(game: Game, values: dict[str, Any]) -> None:
    """What a dealt or running game cannot take without breaking: losing its topic (its posts
    would go nowhere, its board votes unanswered) and another community (its players, topics
    and chat are this one's). Every other setting applies from the next phase or post on."""
    if game.status not in IN_PLAY:
        return
    if "topic_id" in values and values["topic_id"] is None and game.topic_id is not None:
        raise TopicRequiredInPlay()
    moved = "vk_group_id" in values and values["vk_group_id"] != game.vk_group_id
    if moved and game.vk_group_id is not None:
        raise CommunityFixedInPlay()


def _announce_move(game: Game, old_topic: int | None) -> None:
    """A dealt or running game's topic moved: the old topic says where it went, since the bot
    answers there no more."""
    if game.status in IN_PLAY and old_topic is not None and old_topic != game.topic_id:
        text = render(
            "board/topic_moved", game=game.name, group=game.vk_group_id, topic=game.topic_id
        )
        board_reply(game_id=game.pk, topic_id=old_topic, text=text, kind="topic_moved")


def _gm_users(users: Iterable[Any], *, game: Game, keep: Iterable[int] = ()) -> list[Any]:
    """Accounts to be ``game``'s GMs: active staff, and each one not among ``keep`` (user ids
    already on the game) a member of the game's community."""
    users = list(users)
    kept = set(keep)
    for user in users:
        if not (user.is_active and user.is_staff):
            raise NotStaff(username=user.get_username())
        if user.pk not in kept and not is_member(user=user, vk_group_id=game.vk_group_id):
            raise GmNotCommunityMember(
                username=user.get_username(), community=_community_name(game.vk_group_id)
            )
    return users


@transaction.atomic
def game_open(
    *,
    name: str,
    counts: RoleCounts,
    gm: Any,
    co_gms: Sequence[Any] = (),
    **settings: Any,
) -> Game:
    """Create a game from the panel, in one of ``gm``'s communities: ``gm`` and ``co_gms``
    become its GMs."""
    _check_settings({"name": name, **settings})
    check_community(user=gm, vk_group_id=settings.get("vk_group_id"))
    game = game_create(name=name, counts=counts, gm=gm, by=Actor.gm(gm), **settings)
    extra = _gm_users([u for u in co_gms if u.pk != gm.pk], game=game)
    if extra:
        game.gms.add(*extra)
        log_event(
            game,
            EventKind.GMS_CHANGED,
            by=Actor.gm(gm),
            gms=sorted(u.get_username() for u in [gm, *extra]),
        )
    return game


def _apply_counts(game: Game, counts: RoleCounts | None) -> dict[str, int] | None:
    """Set ``counts`` on ``game`` if they differ from its own (only in recruitment, before any
    deal): the new counts, or None when nothing changes."""
    if counts is None:
        return None
    current = RoleCounts(
        game.mafia_count,
        game.commissar_count,
        game.doctor_count,
        game.maniac_count,
        game.civilian_count,
    )
    if counts == current:
        return None
    if game.status != GameStatus.RECRUITING:
        raise CountsLocked()
    if round_was_dealt(game=game):
        # Other counts would give the same roster another deal from the same seed.
        raise CountsAfterDeal()
    counts.validate()
    for role, value in counts.as_dict().items():
        setattr(game, f"{role}_count", value)
    return counts.as_dict()


@transaction.atomic
def game_settings_update(
    *,
    game_id: int,
    by: Actor,
    counts: RoleCounts | None = None,
    gms: Sequence[Any] | None = None,
    editor: Any = None,
    **values: Any,
) -> Game:
    """Change a game's settings: counts only in recruitment, none once finished, neither the
    topic cleared nor the community changed once dealt (``_check_in_play``); ``editor``, the
    panel's user, moves the game only into their communities."""
    game = lock_game(game_id=game_id)
    if game.status in (GameStatus.FINISHED, GameStatus.CANCELLED):
        raise SettingsFrozen()
    unknown = set(values) - set(SETTINGS_FIELDS)
    if unknown:
        raise SettingsNotChangeable(fields=", ".join(sorted(unknown)))
    _check_change(game, editor, values)
    _check_in_play(game, values)
    old_topic = game.topic_id
    changed: dict[str, Any] = {}
    new_counts = _apply_counts(game, counts)
    if new_counts is not None:
        changed["counts"] = new_counts
    for key, value in values.items():
        if key == "name":
            value = str(value).strip()[:200]
        if getattr(game, key) != value:
            setattr(game, key, value)
            changed[key] = str(value) if isinstance(value, timedelta) else value
    if changed:
        check_vk_tenancy(game=game)
        try:
            with transaction.atomic():
                game.save()
        except IntegrityError as error:
            raise tenancy_refusal(error=error) from None
        log_event(game, EventKind.SETTINGS_CHANGED, by=by, changed=changed)
        if {"topic_id", "recruit_topic_id"} & set(changed):
            announce_round(game=game)
        _announce_move(game, old_topic)
    if gms is not None:
        before = {u.pk for u in game.gms.all()}
        users = _gm_users(gms, game=game, keep=before)
        if not users:
            raise NoGm()
        if before != {u.pk for u in users}:
            game.gms.set(users)
            log_event(
                game, EventKind.GMS_CHANGED, by=by, gms=sorted(u.get_username() for u in users)
            )
    return game
