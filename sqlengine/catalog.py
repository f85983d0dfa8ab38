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
    # COMMENT '...' of the columns (name, text) and of the table: shown by SHOW CREATE TABLE
    # and DESCRIBE, as Flink shows them
    comments: tuple[tuple[str, str], ...] = ()
    comment: str | None = None
    # The columns' names in the order CREATE TABLE declares them (computed ones among the
    # physical ones): what SELECT *, DESCRIBE and SHOW CREATE TABLE show
    column_order: tuple[str, ...] = ()
    primary_key_name: str = ""  # (the PRIMARY KEY constraint's name, '' when not named)
    # Declared types the Arrow type does not keep (column, 'VARCHAR(3)' / 'CHAR(1)' / ...),
    # for DESCRIBE and SHOW CREATE TABLE
    declared: tuple[tuple[str, str], ...] = ()

    @property
    def constraint_name(self) -> str:
        """The primary key constraint's name: as declared, else Flink's PK_<columns>."""
        return self.primary_key_name or default_constraint_name(self.primary_key)

    def in_order(self, names: list[str]) -> list[int]:
        """Positions of ``names`` (the physical then the computed columns' names) in the
        declared order."""
        if sorted(n.lower() for n in self.column_order) != sorted(n.lower() for n in names):
            return list(range(len(names)))
        at = {n.lower(): i for i, n in enumerate(names)}
        return [at[n.lower()] for n in self.column_order]

    @property
    def connector(self) -> str:
        return dict(self.options).get("connector", "")

    def option(self, key: str, default: str | None = None) -> str | None:
        return dict(self.options).get(key, default)


def default_constraint_name(keys: tuple[str, ...]) -> str:
    """Flink's name of an unnamed PRIMARY KEY constraint: PK_<columns joined by _>."""
    return "PK_" + "_".join(keys)


@dataclass(frozen=True, slots=True)
class ViewDef:
    """A view: its query text (re-bound at each use) and optional column names."""

    name: str
    query: QueryText
    script: str
    columns: tuple[str, ...] = ()
    comment: str | None = None  # (COMMENT '...': shown by SHOW CREATE VIEW)
    # The query's column names when the view was made: a star in it stays the columns it
    # stood for then, as in Flink (which stores the query expanded), though a table it
    # reads gains columns later.
    query_columns: tuple[str, ...] = ()


DEFAULT_CATALOG = "default_catalog"
DEFAULT_DATABASE = "default_database"

Key = tuple[str, str, str]


class Catalog:
    """Catalogs -> databases -> tables and views (Flink's generic in-memory catalogs; names
    are case-insensitive as in Flink's default catalog lookups). A name is ``t``, ``db.t`` or
    ``catalog.db.t``; the parts left out are the current catalog and database (USE)."""

    def __init__(self, safe_directories: tuple[str, ...] | None = None) -> None:
        self._tables: dict[Key, TableDef] = {}
        self._views: dict[Key, ViewDef] = {}
        # catalog (lower case) -> (its name as created, {database (lower): its name})
        self._catalogs: dict[str, tuple[str, dict[str, str]]] = {
            DEFAULT_CATALOG: (DEFAULT_CATALOG, {DEFAULT_DATABASE: DEFAULT_DATABASE})}
        self.current: tuple[str, str] = (DEFAULT_CATALOG, DEFAULT_DATABASE)
        self._temp_tables: dict[Key, TableDef] = {}  # (CREATE TEMPORARY: see _layer)
        self._temp_views: dict[Key, ViewDef] = {}
        # Python functions: name (lower case) -> their registry key (functions_python)
        self.functions: dict[str, str] = {}
        # ... and how each was created: 'temporary system', 'temporary' or 'catalog' (one
        # function a name; the API's create_function makes temporary system ones)
        self.function_kinds: dict[str, str] = {}
        # Safe mode (sqlengine/safety.py): the directories tables may use; None: not safe.
        self.safe_directories = safe_directories

    # -- names -------------------------------------------------------------------------------
    def _key(self, name: str) -> Key:
        """(catalog, database, object) of a name, lower case; an unknown catalog or database
        is an error naming it."""
        parts = name.split(".")
        if len(parts) > 3:
            raise BindError(f"{name!r}: a name has at most three parts (catalog.database.name)")
        cat, db = self.current
        if len(parts) == 3:
            cat, db = parts[0].lower(), parts[1].lower()
        elif len(parts) == 2:
            db = parts[0].lower()
        self._database(cat, db)
        return cat, db, parts[-1].lower()

    def _database(self, cat: str, db: str) -> None:
        if cat not in self._catalogs:
            raise BindError(f"unknown catalog {cat!r} (catalogs: "
                            f"{', '.join(self.catalog_names())})")
        if db not in self._catalogs[cat][1]:
            raise BindError(f"unknown database {db!r} in catalog {cat!r} (databases: "
                            f"{', '.join(self.database_names(cat))})")

    def _split_database(self, name: str) -> tuple[str, str]:
        parts = name.split(".")
        if len(parts) > 2:
            raise BindError(f"{name!r}: a database is named db or catalog.db")
        return (parts[0].lower(), parts[1]) if len(parts) == 2 else (self.current[0], parts[0])

    # -- catalogs and databases ----------------------------------------------------------
    def create_catalog(self, name: str, *, if_not_exists: bool = False,
                       default_database: str = "default") -> bool:
        """A new in-memory catalog, holding one database: 'default' (Flink's
        GenericInMemoryCatalog's 'default-database'; the session's own catalog holds
        'default_database')."""
        if name.lower() in self._catalogs:
            if if_not_exists:
                return False
            raise BindError(f"catalog {name!r} already exists")
        self._catalogs[name.lower()] = (name, {default_database.lower(): default_database})
        return True

    def drop_catalog(self, name: str, *, if_exists: bool = False) -> bool:
        key = name.lower()
        if key not in self._catalogs:
            if if_exists:
                return False
            raise BindError(f"catalog {name!r} does not exist")
        if key == self.current[0]:
            raise BindError(f"catalog {name!r} is the current catalog; USE another first")
        del self._catalogs[key]
        for layer in (self._tables, self._views, self._temp_tables, self._temp_views):
            for k in [k for k in layer if k[0] == key]:
                del layer[k]
        return True

    def create_database(self, name: str, *, if_not_exists: bool = False) -> bool:
        cat, db = self._split_database(name)
        if cat not in self._catalogs:
            raise BindError(f"unknown catalog {cat!r}")
        if db.lower() in self._catalogs[cat][1]:
            if if_not_exists:
                return False
            raise BindError(f"database {db!r} already exists in catalog {cat!r}")
        self._catalogs[cat][1][db.lower()] = db
        return True

    def drop_database(self, name: str, *, if_exists: bool = False,
                      cascade: bool = False) -> bool:
        cat, db = self._split_database(name)
        db = db.lower()
        if cat not in self._catalogs or db not in self._catalogs[cat][1]:
            if if_exists:
                return False
            raise BindError(f"database {name!r} does not exist")
        if (cat, db) == self.current:
            raise BindError(f"database {name!r} is the current database; USE another first")
        inside = [k for k in (*self._tables, *self._views, *self._temp_tables,
                              *self._temp_views) if k[:2] == (cat, db)]
        if inside and not cascade:
            raise BindError(f"database {name!r} is not empty ({len(inside)} tables and "
                            "views); DROP DATABASE ... CASCADE drops them too")
        for layer in (self._tables, self._views, self._temp_tables, self._temp_views):
            for k in [k for k in layer if k[:2] == (cat, db)]:
                del layer[k]
        del self._catalogs[cat][1][db]
        return True

    def use_catalog(self, name: str) -> None:
        key = name.lower()
        if key not in self._catalogs:
            raise BindError(f"unknown catalog {name!r}")
        databases = self._catalogs[key][1]
        db = DEFAULT_DATABASE if DEFAULT_DATABASE in databases else next(iter(databases), "")
        self.current = (key, db)

    def use_database(self, name: str) -> None:
        cat, db = self._split_database(name)
        self._database(cat, db.lower())
        self.current = (cat, db.lower())

    def catalog_names(self) -> list[str]:
        return sorted(shown for shown, _ in self._catalogs.values())

    def database_names(self, catalog: str | None = None) -> list[str]:
        cat = (catalog or self.current[0]).lower()
        return sorted(self._catalogs[cat][1].values()) if cat in self._catalogs else []

    def current_names(self) -> tuple[str, str]:
        cat, db = self.current
        shown, databases = self._catalogs[cat]
        return shown, databases[db]

    # -- tables and views ------------------------------------------------------------------
    # Temporary tables and views (CREATE TEMPORARY ...) are a layer of their own over the
    # permanent ones, as Flink's: one shadows a permanent object of its name, DROP TEMPORARY
    # removes only it, and a permanent one is not dropped while a temporary one hides it.
    def _layer(self, temporary: bool) -> tuple[dict[Key, TableDef], dict[Key, ViewDef]]:
        return (self._temp_tables, self._temp_views) if temporary else \
            (self._tables, self._views)

    def _add(self, key: Key, name: str, obj: TableDef | ViewDef, replace: bool,
             span: Span | None, temporary: bool) -> None:
        tables, views = self._layer(temporary)
        if not replace and (key in tables or key in views):
            what = "temporary table or view" if temporary else "table or view"
            raise BindError(f"{what} {name!r} already exists", span=span)
        if isinstance(obj, ViewDef):
            tables.pop(key, None)
            views[key] = obj
        else:
            views.pop(key, None)
            tables[key] = obj

    def add_table(self, table: TableDef, *, replace: bool = False,
                  span: Span | None = None, temporary: bool = False) -> None:
        self._add(self._key(table.name), table.name, table, replace, span, temporary)

    def add_view(self, view: ViewDef, *, replace: bool = False, span: Span | None = None,
                 temporary: bool = False) -> None:
        self._add(self._key(view.name), view.name, view, replace, span, temporary)

    def drop(self, kind: str, name: str, *, if_exists: bool, span: Span | None = None,
             temporary: bool = False) -> bool:
        """DROP [TEMPORARY] TABLE | VIEW (TEMPORARY: the temporary one only)."""
        try:
            key = self._key(name)
        except BindError:
            if if_exists:
                return False
            raise
        tables, views = self._layer(temporary)
        store = tables if kind == "TABLE" else views
        if key not in store:
            if if_exists:
                return False
            what = f"temporary {kind.lower()}" if temporary else kind.lower()
            raise BindError(f"{what} {name!r} does not exist", span=span)
        del store[key]
        return True

    def find(self, name: str, temporary: bool) -> tuple[TableDef | None, ViewDef | None]:
        """The table or view ``name`` of one layer (temporary or permanent)."""
        key = self._key(name)
        tables, views = self._layer(temporary)
        return tables.get(key), views.get(key)

    def is_temporary(self, name: str) -> bool:
        key = self._key(name)
        return key in self._temp_tables or key in self._temp_views

    def _visible(self, key: Key) -> tuple[TableDef | None, ViewDef | None]:
        for tables, views in (self._layer(True), self._layer(False)):
            if key in tables or key in views:
                return tables.get(key), views.get(key)
        return None, None

    def table(self, name: str) -> TableDef | None:
        return self._visible(self._key(name))[0]

    def view(self, name: str) -> ViewDef | None:
        return self._visible(self._key(name))[1]

    def exists(self, name: str, temporary: bool | None = None) -> bool:
        """Whether ``name`` is a table or view (``temporary``: of that layer only)."""
        if temporary is None:
            return self._visible(self._key(name)) != (None, None)
        key = self._key(name)
        return any(key in layer for layer in self._layer(temporary))

    def database_key(self, name: str) -> tuple[str, str]:
        """A database named ``db`` or ``catalog.db`` (which must exist), as a key."""
        cat, db = self._split_database(name)
        self._database(cat, db.lower())
        return cat, db.lower()

    def catalog_key(self, name: str) -> str:
        if name.lower() not in self._catalogs:
            raise BindError(f"unknown catalog {name!r} (catalogs: "
                            f"{', '.join(self.catalog_names())})")
        return name.lower()

    def _shown(self, database: tuple[str, str] | None, want_views: bool) -> list[str]:
        keys = {k for k in (*self._tables, *self._views, *self._temp_tables,
                            *self._temp_views) if k[:2] == (database or self.current)}
        found = (self._visible(k) for k in keys)
        return sorted({(v if want_views else t).name.split(".")[-1]  # type: ignore[union-attr]
                       for t, v in found if (v if want_views else t) is not None})

    def table_names(self, database: tuple[str, str] | None = None) -> list[str]:
        """The tables of the current database (or of ``database``, a key)."""
        return self._shown(database, want_views=False)

    def view_names(self, database: tuple[str, str] | None = None) -> list[str]:
        """The views of the current database (or of ``database``, a key)."""
        return self._shown(database, want_views=True)

    def names(self, database: tuple[str, str] | None = None) -> list[str]:
        return sorted(self.table_names(database) + self.view_names(database))

    def all_tables(self) -> list[TableDef]:
        """Every table of every catalog and database."""
        return [*self._tables.values(), *self._temp_tables.values()]


def arrow_schema_of(table: TableDef) -> pa.Schema:
    """The physical Arrow schema of a table."""
    return table.schema.to_arrow()
