"""The hot path's read of a game it has just locked, in one statement: the seated players in
seat order, the current phase, the phase's current votes (a day) or standing actions (a
night), every vote cast in the phase and the event log's last ``seq``.

A vote or a night action needs all of that; read apart it costs five queries
(``gameplay.selectors.table``'s ``players`` and ``current_phase``, the ballots or the standing
slots, the count, the log's ``MAX(seq)``). The statement runs after the game row is locked (a
statement of its own, so that what it reads is what the lock holds: PostgreSQL reads a
statement's other tables as of the statement's start, before it waited for the lock).

The phase and each seat's vote or actions are joined to the seats: every vote and night action
of a phase is a seated player's (only a reserve is ever withdrawn, and a seat keeps its number
for the game), and a game has one current phase at most (``one_current_phase_per_game``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast
from weakref import WeakKeyDictionary

from django.db import connection
from django.db.models import Field, Model
from django.db.models.base import ModelState
from django.db.models.signals import post_init, pre_init
from django.db.transaction import TransactionManagementError

from gameplay.models import (
    Game,
    GameEvent,
    NightAction,
    Phase,
    PhaseStatus,
    Seat,
    SeatStatus,
    Vote,
)
from gameplay.models.secrets import SecretField
from gameplay.rules import Slot

from . import seqs
from .txcache import CastVote, LockedGame

_CURRENT = [PhaseStatus.OPEN.value, PhaseStatus.REVIEW.value]


def standing_key(slot: str, actor_id: int, act: str) -> tuple[str, int | str | None]:
    """What a night submission in ``slot`` replaces: the actor's role act, the item's one use,
    or the team's act of the night (see ``Slot``)."""
    if slot == Slot.ROLE:
        return slot, actor_id
    if slot == Slot.ITEM:
        return slot, act
    return slot, None


@dataclass(frozen=True)
class _Columns:
    """A model's columns in a SELECT, and how to make instances of their values."""

    model: type[Model]
    fields: list[Field]
    sql: str
    #: The columns that have converters: (index, column, converters).
    converters: list[tuple[int, Any, list[Callable[..., Any]]]]
    attnames: list[str]

    @classmethod
    def of(cls, model: type[Model], alias: str) -> _Columns:
        """The columns of ``model`` as ``alias``, made once per connection (the converters are
        its own)."""
        made = _made.setdefault(connection.ops, {})
        columns = made.get((model, alias))
        if columns is None:
            columns = made[model, alias] = cls._make(model, alias)
        return columns

    @classmethod
    def _make(cls, model: type[Model], alias: str) -> _Columns:
        fields = cast(list[Field], list(model._meta.concrete_fields))
        quote = connection.ops.quote_name
        sql = ", ".join(f"{alias}.{quote(cast(str, f.column))}" for f in fields)
        converters = []
        for i, f in enumerate(fields):
            col = f.get_col(alias)
            own = col.get_db_converters(connection)
            if isinstance(f, SecretField):  # decrypted when read (see gameplay.models.secrets)
                own = [f.sealed_from_db]
            if own := connection.ops.get_db_converters(col) + own:
                converters.append((i, col, own))
        return cls(model, fields, sql, converters, [f.attname for f in fields])

    def make(self, values: Sequence[Any]) -> Model:
        """An instance of the row's ``values``, as ``Model.from_db`` makes it; without calling
        ``Model.__init__`` (which sets the attributes one by one) when no ``pre_init`` or
        ``post_init`` receiver wants to see it."""
        if len(values) != len(self.attnames):
            raise ValueError(f"{len(values)} values for {len(self.attnames)} columns")
        converted = list(values)
        for i, col, converters in self.converters:
            value = converted[i]
            for convert in converters:
                value = convert(value, col, connection)
            converted[i] = value
        model = self.model
        if pre_init.has_listeners(model) or post_init.has_listeners(model):
            return model.from_db(connection.alias, self.attnames, converted)
        made = model.__new__(model)
        made._state = ModelState()
        made._state.adding = False
        made._state.db = connection.alias
        made.__dict__.update(zip(self.attnames, converted, strict=True))
        return made


#: ``Seat.game``: the seats read hold their game (what assigning it does for a seat whose
#: ``game_id`` is the game's already).
_SEAT_GAME = Seat._meta.get_field("game")

#: The columns made by each connection's operations (:meth:`_Columns.of`).
_made: WeakKeyDictionary[Any, dict[tuple[type[Model], str], _Columns]] = WeakKeyDictionary()


def _table(model: type[Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def lock_game_row(game_id: int) -> Game | None:
    """The game row, locked for the rest of the transaction (``select_for_update``: FOR
    UPDATE, which SQLite leaves out) and read, its secrets decrypted only when read; None when
    there is no such game. The services' lock, the ORM's query built once."""
    if connection.features.has_select_for_update and connection.get_autocommit():
        raise TransactionManagementError(
            "select_for_update cannot be used outside of a transaction."
        )
    cols = _Columns.of(Game, "g")
    sql = f"SELECT {cols.sql} FROM {_table(Game)} g WHERE g.{connection.ops.quote_name('id')} = %s"
    if connection.features.has_select_for_update:
        sql += " FOR UPDATE"
    with connection.cursor() as cursor:
        cursor.execute(sql, [game_id])
        row = cursor.fetchone()
    return cast(Game, cols.make(row)) if row is not None else None


def read_locked(game: Game) -> LockedGame | None:
    """The unit of work of ``game`` (its row locked by the caller), read in one statement;
    None when the game has no seated players (a game not dealt yet: nothing to join to)."""
    seats_cols = _Columns.of(Seat, "s")
    phase_cols = _Columns.of(Phase, "p")
    seat, phase, vote = _table(Seat), _table(Phase), _table(Vote)
    sql = (
        f"SELECT {seats_cols.sql}, {phase_cols.sql}, "
        f"(SELECT MAX(e.seq) FROM {_table(GameEvent)} e WHERE e.game_id = %s), "
        f"(SELECT COUNT(*) FROM {vote} c INNER JOIN {phase} cp ON cp.id = c.phase_id "
        f"WHERE cp.game_id = %s AND cp.status IN (%s, %s)), "
        "v.id, vt.number, v.early, v.void, a.slot, a.act "
        f"FROM {seat} s "
        f"LEFT JOIN {phase} p ON p.game_id = s.game_id AND p.status IN (%s, %s) "
        f"LEFT JOIN {vote} v ON v.phase_id = p.id AND v.voter_id = s.id AND v.current = %s "
        f"LEFT JOIN {seat} vt ON vt.id = v.target_id "
        f"LEFT JOIN {_table(NightAction)} a "
        "ON a.phase_id = p.id AND a.actor_id = s.id AND a.current = %s "
        "WHERE s.game_id = %s AND s.status = %s AND s.number IS NOT NULL "
        "ORDER BY s.number, a.id"
    )
    params: list[int | str | bool] = [
        game.pk,
        game.pk,
        *_CURRENT,
        *_CURRENT,
        True,
        True,
        game.pk,
        SeatStatus.PLAYER.value,
    ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return _entry(game, rows, seats_cols, phase_cols) if rows else None


def _entry(
    game: Game, rows: Sequence[Sequence[Any]], seats_cols: _Columns, phase_cols: _Columns
) -> LockedGame:
    """The unit of work the statement's rows describe (a seat's row once per standing action)."""
    split = len(seats_cols.fields)
    extra = split + len(phase_cols.fields)
    first = rows[0]
    current = cast(Phase, phase_cols.make(first[split:extra])) if first[split] is not None else None
    seats: list[Seat] = []
    ballots: dict[int, CastVote] = {}
    standing: set[tuple[str, Any]] = set()
    for row in rows:
        seat_id = row[0]
        if not seats or seats[-1].pk != seat_id:
            made = cast(Seat, seats_cols.make(row[:split]))
            _SEAT_GAME.set_cached_value(made, game)  # (no query: the seat's game is this one)
            seats.append(made)
        vote_id, target, early, void, slot, act = row[extra + 2 :]
        if vote_id is not None:
            ballots[cast(int, seats[-1].number)] = CastVote(
                vote_id, target, bool(early), bool(void)
            )
        if slot is not None:
            standing.add(standing_key(slot, seat_id, act))
    entry = LockedGame(game, current, seats)
    entry.next_seq = (first[extra] or 0) + 1
    seqs.note(game.pk, entry.next_seq)
    if current is not None:
        entry.votes_cast = first[extra + 1]
        entry.ballots = ballots
        entry.standing = standing
    return entry
