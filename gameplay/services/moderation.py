"""Moderation flags (RULES.md G2–G4): the bot flags what the GM should look at (never a
punishment); the GM dismisses a flag or acts on it (a strike or a modkill in the same
transaction)."""

from __future__ import annotations

from datetime import datetime

from django.db import transaction

from gameplay import themes
from gameplay.messages import MessageError, render
from gameplay.models import (
    Actor,
    EventKind,
    FlagKind,
    FlagStatus,
    ModerationFlag,
    Seat,
    SeatStatus,
)
from gameplay.refusals import FlagAlreadyResolved, NoSuchFlag, UnknownFlagDecision

from .common import current_phase, lock_game, log_event, now_or
from .discipline import seat_modkill, strike_give


@transaction.atomic
def flag(
    *,
    game_id: int,
    kind: str,
    vk_user_id: int | None,
    text: str = "",
    topic_id: int | None = None,
    vk_post_id: int | None = None,
    note: str = "",
) -> ModerationFlag | None:
    """Flag something for the GM (never a punishment). A post flagged once for a reason is not
    flagged again for it: a later edit or deletion updates the open flag's text and note."""
    kind = FlagKind(kind).value
    seat = (
        Seat.objects.filter(
            game_id=game_id, vk_user_id=vk_user_id, status=SeatStatus.PLAYER
        ).first()
        if vk_user_id is not None
        else None
    )
    if vk_post_id is not None:
        existing = ModerationFlag.objects.filter(
            game_id=game_id, kind=kind, topic_id=topic_id, vk_post_id=vk_post_id
        ).first()
        if existing is not None:
            changed = []
            if text and existing.text != text:
                existing.text = text[:5000]
                changed.append("text")
            if note and note not in existing.note:
                existing.note = f"{existing.note}\n{note}".strip()
                changed.append("note")
            if changed and existing.status == FlagStatus.OPEN:
                existing.save(update_fields=changed)
            return None
    return ModerationFlag.objects.create(
        game_id=game_id,
        seat=seat,
        vk_user_id=vk_user_id,
        kind=kind,
        text=text[:5000],
        topic_id=topic_id,
        vk_post_id=vk_post_id,
        phase=current_phase(game_id),
        note=note,
    )


@transaction.atomic
def theme_text_flag(*, game_id: int, slot: str, error: MessageError) -> ModerationFlag | None:
    """Tell the GM that the game's own text of ``slot`` did not render when a message needed
    it (the theme's own text went out instead): one open flag per slot and reason, however
    many messages met it. Called while the message renders (``gameplay.themes``)."""
    text = render(
        "gm/theme_text_failed",
        title=themes.SLOTS.get(slot, slot),
        line=error.line,
        why=error.reason,
    )
    kind = FlagKind.THEME_TEXT
    open_flags = ModerationFlag.objects.filter(game_id=game_id, kind=kind, status=FlagStatus.OPEN)
    if open_flags.filter(text=text).exists():
        return None
    return ModerationFlag.objects.create(
        game_id=game_id, kind=kind, text=text, phase=current_phase(game_id)
    )


@transaction.atomic
def flag_resolve(
    *,
    game_id: int,
    flag_id: int,
    by: Actor,
    acted: bool,
    note: str = "",
    punish: str = "",
    seat: int | None = None,
    now: datetime | None = None,
) -> ModerationFlag:
    """Dismiss a moderation flag, or mark it acted on (the GM's decision, with a note).

    ``punish`` acts on it in the same transaction: ``"penalty"`` gives seat ``seat`` a strike
    (``strike_give``), ``"modkill"`` removes the player (``seat_modkill``)."""
    game = lock_game(game_id=game_id)
    flag = ModerationFlag.objects.filter(pk=flag_id, game=game).first()
    if flag is None:
        raise NoSuchFlag()
    if flag.status != FlagStatus.OPEN:
        raise FlagAlreadyResolved()
    if punish:
        if punish not in ("penalty", "modkill") or seat is None:
            raise UnknownFlagDecision()
        acted = True
        if punish == "penalty":
            strike_give(game_id=game_id, seat=seat, by=by, reason=note, now=now)
        else:
            seat_modkill(game_id=game_id, seat=seat, by=by, reason=note, now=now)
        game.refresh_from_db()
    flag.status = FlagStatus.ACTED if acted else FlagStatus.DISMISSED
    flag.note = (f"{_PUNISH_NOTES[punish]}. " if punish else "") + (note or "").strip()
    flag.resolved_by = by
    flag.resolved_at = now_or(now=now)
    flag.save(update_fields=["status", "note", "resolved_by", "resolved_at"])
    log_event(
        game,
        EventKind.FLAG_RESOLVED,
        by=by,
        flag=flag.pk,
        flag_kind=flag.kind,
        status=flag.status,
        note=flag.note,
        seat=seat,
    )
    return flag


_PUNISH_NOTES = {"penalty": "Штраф", "modkill": "Модкилл"}
