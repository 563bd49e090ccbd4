"""Model instances from the rows of a hand-written SELECT, converted as the ORM converts its own.

For the few hot paths where building and compiling an ORM query costs more than running it (token
authentication, loading a search's best items): the SELECT lists :func:`select_columns` first, any
extra columns after, and :func:`instances` turns each row into an instance and the extra values.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from django.db import connection
from django.db.models import Model
from django.db.models.sql import Query


def select_columns(model: type[Model], alias: str) -> str:
    """``alias.col, …`` of the model's concrete fields, in field order."""
    return _select_columns(model, alias, connection.vendor)


@lru_cache(maxsize=64)
def _select_columns(model: type[Model], alias: str, vendor: str) -> str:
    qn = connection.ops.quote_name
    return ", ".join(f"{alias}.{qn(field.column)}" for field in model._meta.concrete_fields)


def _converters(model: type[Model]):
    """The ORM's converters for the model's fields on this connection, made once per connection."""
    made = getattr(connection, "_memoryboard_row_converters", None)
    if made is None:
        made = {}
        connection._memoryboard_row_converters = made
    if model not in made:
        compiler = Query(model).get_compiler(connection=connection)
        table = model._meta.db_table
        made[model] = (compiler, compiler.get_converters([f.get_col(table) for f in model._meta.concrete_fields]))
    return made[model]


def instances(model: type[Model], rows: Iterable[tuple]) -> list[tuple[Model, tuple]]:
    """``(instance, extra values)`` of each row whose first columns are :func:`select_columns`."""
    fields = model._meta.concrete_fields
    names = [field.attname for field in fields]
    compiler, converters = _converters(model)
    width = len(fields)
    return [
        (model.from_db(connection.alias, names, row[:width]), tuple(row[width:]))
        for row in compiler.apply_converters(rows, converters)
    ]
