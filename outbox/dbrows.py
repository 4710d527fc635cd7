"""Plain SQL for the hot writes: new rows inserted, and rows updated one by one, without the
ORM's per-call query compilation.

Django's ``bulk_create`` and ``Model.save`` rebuild and compile their INSERT on every call,
and ``bulk_update`` compiles a CASE of one branch per row and field: in the bot's and the
delivery's busiest paths that compilation cost more than the statements themselves. These
helpers write the same values — each field's ``pre_save`` (``auto_now_add``) and
``get_db_prep_save`` run as the ORM would run them — with SQL built from the model's meta once
per call. They send no model signals (the project registers none) and handle no
``db_default`` fields (the models written here have none).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from django.db import connection
from django.db.models import Field, Model

#: Rows per INSERT statement (PostgreSQL takes at most 65535 parameters in one).
INSERT_CHUNK = 500


def insert(rows: Sequence[Model]) -> None:
    """INSERT new rows of one model and set their primary keys (as ``bulk_create`` does)."""
    if not rows:
        return
    model = type(rows[0])
    if not connection.features.can_return_rows_from_bulk_insert:
        model._default_manager.bulk_create(rows)
        return
    meta = model._meta
    pk = meta.pk
    assert pk is not None
    fields: list[Field] = [f for f in meta.concrete_fields if f is not pk]
    for f in fields:
        if f.has_db_default():
            raise ValueError(f"{meta.label}.{f.name} has a database default: use bulk_create")
    quote = connection.ops.quote_name
    # A concrete field has its column (the stubs also allow None).
    columns = ", ".join(quote(cast(str, f.column)) for f in fields)
    head = f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES "
    one = "(" + ", ".join(["%s"] * len(fields)) + ")"
    with connection.cursor() as cursor:
        for start in range(0, len(rows), INSERT_CHUNK):
            chunk = rows[start : start + INSERT_CHUNK]
            params = [
                f.get_db_prep_save(f.pre_save(row, True), connection)
                for row in chunk
                for f in fields
            ]
            cursor.execute(
                head + ", ".join([one] * len(chunk)) + f" RETURNING {quote(cast(str, pk.column))}",
                params,
            )
            for row, (new_pk,) in zip(chunk, cursor.fetchall(), strict=True):
                setattr(row, pk.attname, new_pk)
                row._state.adding = False
                row._state.db = connection.alias


def update_each(rows: Sequence[Model], fields: Sequence[str]) -> None:
    """UPDATE ``fields`` of each row by its primary key: one statement executed for every row
    (psycopg pipelines them), so each row is updated exactly once."""
    if not rows:
        return
    meta = type(rows[0])._meta
    pk = meta.pk
    assert pk is not None
    columns = [cast(Field, meta.get_field(name)) for name in fields]  # the model's own fields
    quote = connection.ops.quote_name
    assignments = ", ".join(f"{quote(cast(str, c.column))} = %s" for c in columns)
    sql = (
        f"UPDATE {quote(meta.db_table)} SET {assignments} WHERE {quote(cast(str, pk.column))} = %s"
    )
    params = [
        [c.get_db_prep_save(getattr(row, c.attname), connection) for c in columns] + [row.pk]
        for row in rows
    ]
    with connection.cursor() as cursor:
        cursor.executemany(sql, params)


def update_where(model: type[Model], values: dict[str, Any], where: dict[str, Any]) -> int:
    """UPDATE ``values`` of the rows of ``model`` whose columns equal ``where`` (both by field
    attname, no None in ``where``); the number of rows updated, as ``QuerySet.update`` gives
    it."""
    meta = model._meta
    quote = connection.ops.quote_name
    sets = [(cast(Field, meta.get_field(name)), value) for name, value in values.items()]
    tests = [(cast(Field, meta.get_field(name)), value) for name, value in where.items()]
    if any(value is None for _, value in tests):
        raise ValueError("update_where compares with =: no None")
    assignments = ", ".join(f"{quote(cast(str, f.column))} = %s" for f, _ in sets)
    conditions = " AND ".join(f"{quote(cast(str, f.column))} = %s" for f, _ in tests)
    params = [f.get_db_prep_save(v, connection) for f, v in sets]
    params += [f.get_db_prep_value(v, connection) for f, v in tests]
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {quote(meta.db_table)} SET {assignments} WHERE {conditions}", params
        )
        return int(cursor.rowcount)
