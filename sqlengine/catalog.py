"""The catalog: tables (schema, watermark, connector options), views and in-memory data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from sqlengine.errors import BindError, Span

if TYPE_CHECKING:
    import pyarrow as pa
    from sqlglot import exp

    from sqlengine.plan.nodes import Schema
    from sqlengine.statements import QueryText


@dataclass(frozen=True, slots=True)
class TableDef:
    """A table: its physical schema, computed columns, watermark and connector options."""

    name: str
    schema: Schema
    options: tuple[tuple[str, str], ...]
    computed: tuple[tuple[str, exp.Expression], ...] = ()
    watermark: tuple[str, exp.Expression] | None = None
    primary_key: tuple[str, ...] = ()
    data: object | None = field(default=None, compare=False)  # registered in-memory data
    # PARTITIONED BY: the partition columns, in order (the connector also finds them in the
    # options, under connectors.PARTITION_KEYS_OPTION, as the binder hands it only those)
    partition_keys: tuple[str, ...] = ()

    @property
    def connector(self) -> str:
        return dict(self.options).get("connector", "")

    def option(self, key: str, default: str | None = None) -> str | None:
        return dict(self.options).get(key, default)


@dataclass(frozen=True, slots=True)
class ViewDef:
    """A view: its query text (re-bound at each use) and optional column names."""

    name: str
    query: QueryText
    script: str
    columns: tuple[str, ...] = ()


class Catalog:
    """Names -> tables and views, case-insensitive as in Flink's default catalog lookups."""

    def __init__(self, safe_directories: tuple[str, ...] | None = None) -> None:
        self._tables: dict[str, TableDef] = {}
        self._views: dict[str, ViewDef] = {}
        # Safe mode (sqlengine/safety.py): the directories tables may use; None: not safe.
        self.safe_directories = safe_directories

    @staticmethod
    def _key(name: str) -> str:
        # `default_catalog.default_database.t` and `t` name the same table.
        parts = name.split(".")
        return parts[-1].lower()

    def add_table(self, table: TableDef, *, replace: bool = False,
                  span: Span | None = None) -> None:
        key = self._key(table.name)
        if not replace and (key in self._tables or key in self._views):
            raise BindError(f"table or view {table.name!r} already exists", span=span)
        self._tables[key] = table

    def add_view(self, view: ViewDef, *, replace: bool = False, span: Span | None = None) -> None:
        key = self._key(view.name)
        if not replace and (key in self._tables or key in self._views):
            raise BindError(f"table or view {view.name!r} already exists", span=span)
        self._views[key] = view

    def drop(self, kind: str, name: str, *, if_exists: bool, span: Span | None = None) -> bool:
        key = self._key(name)
        store = self._tables if kind == "TABLE" else self._views
        if key not in store:
            if if_exists:
                return False
            raise BindError(f"{kind.lower()} {name!r} does not exist", span=span)
        del store[key]
        return True

    def table(self, name: str) -> TableDef | None:
        return self._tables.get(self._key(name))

    def view(self, name: str) -> ViewDef | None:
        return self._views.get(self._key(name))

    def exists(self, name: str) -> bool:
        key = self._key(name)
        return key in self._tables or key in self._views

    def table_names(self) -> list[str]:
        return sorted(t.name for t in self._tables.values())

    def view_names(self) -> list[str]:
        return sorted(v.name for v in self._views.values())

    def names(self) -> list[str]:
        return sorted(self.table_names() + self.view_names())


def arrow_schema_of(table: TableDef) -> pa.Schema:
    """The physical Arrow schema of a table."""
    return table.schema.to_arrow()
