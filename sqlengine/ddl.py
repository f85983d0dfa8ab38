"""Catalog statements: CREATE TABLE / VIEW, DROP, DESCRIBE, and binding INSERT INTO."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import replace

import pyarrow as pa

from sqlengine import connectors, hints, safety
from sqlengine import statements as S
from sqlengine import types as T
from sqlengine.bind_expr import ExprBinder, Scope, ScopeColumn, coerce
from sqlengine.catalog import Catalog, TableDef, ViewDef, default_constraint_name
from sqlengine.errors import (
    BindError,
    ConnectorError,
    NotSupportedError,
    PlanError,
    Span,
    SqlEngineError,
)
from sqlengine.parser import parse_expression, parse_query
from sqlengine.plan.expressions import ColumnRef, Expr
from sqlengine.plan.nodes import Field, LogicalPlan, Project, Scan, Schema, Sink, SinkSpec
from sqlengine.plan.tree import walk


def safe_options(catalog: Catalog, table: str, options: dict[str, str], script: str,
                 offsets: dict[str, int] | None = None) -> None:
    """In safe mode: a table's connector and path, checked (sqlengine/safety.py)."""
    allowed = catalog.safe_directories
    if allowed is None:
        return
    connector = options.get("connector", "")
    where = None
    if offsets and "connector" in offsets:
        where = Span.from_offset(script, offsets["connector"])
    if connector in safety.REFUSED_CONNECTORS:
        raise ConnectorError(f"table {table!r}: connector {connector!r} is refused in safe mode "
                             f"({safety.REFUSED_CONNECTORS[connector]})", span=where,
                             sql=script)
    if "path" in options:
        try:
            safety.check_path(table, options["path"], allowed)
        except ConnectorError as e:
            if offsets and "path" in offsets:
                e.span = Span.from_offset(script, offsets["path"])
                e.sql = script
            raise


def create_table(catalog: Catalog, stmt: S.CreateTable, script: str) -> str:
    """Validate and register a table; returns the client message."""
    exists = catalog.exists(stmt.name, stmt.temporary)
    if exists and not stmt.if_not_exists:
        raise BindError(f"table or view {stmt.name!r} already exists")
    # (IF NOT EXISTS of an existing table: the statement is checked all the same, as
    # Flink's, and skipped at the end)
    if stmt.like is None:
        return _create_table(catalog, stmt, script, exists)
    merged, combined = _merged_like(catalog, stmt, script)
    try:
        return _create_table(catalog, merged, combined, exists)
    except SqlEngineError as e:
        if e.span is None:  # (of the merged table as a whole: at its name, as written)
            e.sql = script
            e.span = Span.from_offset(script, stmt.name_offset,
                                      stmt.name_offset + len(stmt.name))
        raise


def _create_table(catalog: Catalog, stmt: S.CreateTable, script: str, exists: bool) -> str:
    fields: list[Field] = []
    declared: dict[str, tuple[str, int]] = {}
    seen: set[str] = set()
    for col in stmt.columns:
        if col.name.lower() in seen:
            raise BindError(f"duplicate column {col.name!r}",
                            span=Span.from_offset(script, col.offset), sql=script)
        seen.add(col.name.lower())
        if col.type_text is None:
            continue
        try:
            t = T.parse_type(col.type_text)
        except BindError as e:
            raise BindError(f"column {col.name!r}: {e.message}",
                            span=Span.from_offset(script, col.offset,
                                                  col.offset + len(col.name)), sql=script) \
                from None
        fields.append(Field(col.name, t, col.nullable))
        length = T.declared_length(col.type_text)
        if length is not None:
            declared[col.name] = length
    scope = Scope(tuple(ScopeColumn(None, f.name, f.type) for f in fields))
    computed = []
    computed_types = []
    for col in stmt.columns:
        if col.expr is not None:
            node = parse_expression(col.expr, script)
            typed = ExprBinder(col.expr, script, None, None).bind(node, scope)  # validate now
            computed.append((col.name, node))
            computed_types.append(ScopeColumn(None, col.name, typed.dtype,
                                              proctime=getattr(typed, "name", "") == "proctime"))
    watermark = None
    if stmt.watermark is not None:
        wm = stmt.watermark
        # (the rowtime may be a computed column: 'ts AS TO_TIMESTAMP_LTZ(ms, 3)')
        wm_scope = Scope(scope.columns + tuple(computed_types))
        idx = wm_scope.resolve(wm.column, None)
        if idx is None:
            raise BindError(f"WATERMARK FOR names unknown column {wm.column!r}",
                            span=Span.from_offset(script, wm.offset), sql=script)
        if wm_scope.columns[idx].proctime:
            raise BindError(f"WATERMARK FOR column {wm.column!r}: a PROCTIME() column is a "
                            "processing-time attribute and cannot be a rowtime attribute",
                            span=Span.from_offset(script, wm.offset), sql=script)
        if not pa.types.is_timestamp(wm_scope.columns[idx].type):
            raise BindError(f"WATERMARK FOR column {wm.column!r} must be a TIMESTAMP or "
                            "TIMESTAMP_LTZ, got "
                            f"{T.type_name(wm_scope.columns[idx].type)}",
                            span=Span.from_offset(script, wm.offset), sql=script)
        if T.UNIT_DIGITS[wm_scope.columns[idx].type.unit] > 3:
            raise BindError(f"WATERMARK FOR column {wm.column!r}: a rowtime is a TIMESTAMP or "
                            "TIMESTAMP_LTZ of precision 0 to 3 (as Flink's), got "
                            f"{T.type_name(wm_scope.columns[idx].type)}; declare it "
                            "TIMESTAMP(3), or a computed column CAST(... AS TIMESTAMP(3))",
                            span=Span.from_offset(script, wm.offset), sql=script)
        node = parse_expression(wm.expr, script)
        bound = ExprBinder(wm.expr, script, None, None).bind(node, wm_scope)
        if not pa.types.is_timestamp(bound.dtype):
            raise BindError(f"the watermark expression must be a TIMESTAMP, got "
                            f"{T.type_name(bound.dtype)}",
                            span=Span.from_offset(script, wm.expr.offset), sql=script)
        if idx < len(fields):
            fields[idx] = Field(fields[idx].name, fields[idx].type, fields[idx].nullable, True)
        watermark = (wm.column, node)
    schema = Schema(tuple(fields))
    options = dict(stmt.options)
    # (an offset of 0: no place in the text, an option a LIKE took from its source)
    offsets = {k: o for (k, _), o in zip(stmt.options, stmt.option_offsets) if o}
    duplicate_options(stmt.name, stmt.options, stmt.option_offsets, script)
    for key in options:
        if key.startswith("$"):
            raise ConnectorError(f"table {stmt.name!r}: option keys starting with '$' are "
                                 "reserved", span=Span.from_offset(script, offsets[key])
                                 if key in offsets else None, sql=script)
    metadata = tuple((c.name, c.metadata, c.virtual) for c in stmt.columns
                     if c.metadata is not None)
    if metadata:
        options[connectors.METADATA_OPTION] = connectors.encode_metadata(metadata)
    if declared and options.get("connector") == "datagen":
        options[connectors.LENGTHS_OPTION] = json.dumps(declared)
    # (the options' checks know the partition keys: a partition time pattern names them)
    if stmt.partitioned_by:
        options[connectors.PARTITION_KEYS_OPTION] = connectors.encode_partition_keys(
            tuple(stmt.partitioned_by))
    connectors.validate(stmt.name, options, schema, offsets, script)
    options.pop(connectors.PARTITION_KEYS_OPTION, None)
    safe_options(catalog, stmt.name, options, script, offsets)
    for key in stmt.primary_key:
        if scope.resolve(key, None) is None:
            if any(c.name.lower() == key.lower() for c in stmt.columns):
                raise BindError(f"PRIMARY KEY column {key!r} is a computed column: a key is "
                                "of physical columns (as in Flink)")
            raise BindError(f"PRIMARY KEY names unknown column {key!r}")
    table_options = stmt.options
    partition_keys = _partition_keys(stmt, fields, options, script)
    if "partition.default-name" in options and not partition_keys:
        raise ConnectorError("option 'partition.default-name' takes effect only on a table with "
                             "PARTITIONED BY; here it would be ignored",
                             span=Span.from_offset(script, offsets["partition.default-name"])
                             if "partition.default-name" in offsets else None, sql=script)
    if stmt.primary_key:
        table_options += ((connectors.PRIMARY_KEY_OPTION, json.dumps(list(stmt.primary_key))),)
    if metadata:
        if partition_keys:
            raise NotSupportedError(f"table {stmt.name!r}: METADATA columns on a PARTITIONED "
                                    "BY table are not supported yet")
        table_options += ((connectors.METADATA_OPTION, options[connectors.METADATA_OPTION]),)
    if partition_keys:
        table_options += ((connectors.PARTITION_KEYS_OPTION,
                           connectors.encode_partition_keys(partition_keys)),)
    if connectors.LENGTHS_OPTION in options:
        table_options += ((connectors.LENGTHS_OPTION, options[connectors.LENGTHS_OPTION]),)
    if catalog.safe_directories is not None:
        table_options += ((safety.DIRS_OPTION, os.pathsep.join(catalog.safe_directories)),)
    if exists:
        return f"[INFO] Table {stmt.name} already exists, skipped"
    catalog.add_table(TableDef(stmt.name, schema, table_options, tuple(computed), watermark,
                               stmt.primary_key, partition_keys=partition_keys,
                               comments=tuple((c.name, c.comment) for c in stmt.columns
                                              if c.comment is not None),
                               comment=stmt.comment,
                               column_order=tuple(c.name for c in stmt.columns),
                               # ('' for Flink's default name: the same table as unnamed)
                               primary_key_name="" if stmt.primary_key_name ==
                               default_constraint_name(stmt.primary_key)
                               else stmt.primary_key_name,
                               declared=tuple((c, f"{k}({n})")
                                              for c, (k, n) in declared.items())),
                      temporary=stmt.temporary)
    return "[INFO] Execute statement succeeded."


def duplicate_options(table: str, options: tuple[tuple[str, str], ...],
                      offsets: tuple[int, ...], script: str) -> None:
    """Refuse a WITH clause naming a key twice (the last value would win unseen)."""
    seen: set[str] = set()
    for (key, _), at in zip(options, offsets):
        if key in seen:
            raise ConnectorError(f"table {table!r}: option {key!r} is given twice",
                                 span=Span.from_offset(script, at) if at else None,
                                 sql=script if at else None)
        seen.add(key)


def _partition_keys(stmt: S.CreateTable, fields: list[Field], options: dict[str, str],
                    script: str) -> tuple[str, ...]:
    """PARTITIONED BY's columns (as the table spells them), checked: physical columns,
    each once, not all of them, on a connector that partitions (the filesystem's)."""
    if not stmt.partitioned_by:
        return ()
    span = _partitioned_by_span(script, stmt.name)
    found = connectors.find(options.get("connector", ""))
    if found is None or not found.supports_partitioning:
        raise PlanError(f"table {stmt.name!r}: PARTITIONED BY is supported by the filesystem "
                        f"connector only, not {options.get('connector', '')!r}", span=span,
                        sql=script)
    by_name = {f.name.lower(): f.name for f in fields}
    computed = {c.name.lower() for c in stmt.columns if c.expr is not None}
    keys: list[str] = []
    for key in stmt.partitioned_by:
        if key.lower() in computed:
            raise BindError(f"PARTITIONED BY names computed column {key!r}; partition "
                            "columns must be physical columns", span=span, sql=script)
        if key.lower() not in by_name:
            raise BindError(f"PARTITIONED BY names unknown column {key!r}", span=span,
                            sql=script)
        if by_name[key.lower()] in keys:
            raise BindError(f"PARTITIONED BY names column {key!r} twice", span=span, sql=script)
        keys.append(by_name[key.lower()])
    if len(keys) == len(fields):
        raise BindError("PARTITIONED BY names every column; the files would hold none",
                        span=span, sql=script)
    return tuple(keys)


def _partitioned_by_span(script: str, table: str) -> Span | None:
    """Where this table's PARTITIONED BY clause is (the statements keep no offset for it)."""
    import re

    start = re.search(rf"TABLE\s+(IF\s+NOT\s+EXISTS\s+)?`?{re.escape(table)}`?", script, re.I)
    m = re.compile(r"PARTITIONED\s+BY", re.I).search(script, start.end() if start else 0)
    return Span.from_offset(script, m.start(), m.end()) if m else None


def create_view(catalog: Catalog, stmt: S.CreateView, script: str) -> str:
    from sqlengine.binder import bind_query

    if catalog.exists(stmt.name, stmt.temporary):
        if stmt.if_not_exists:
            return f"[INFO] View {stmt.name} already exists, skipped"
        raise BindError(f"table or view {stmt.name!r} already exists")
    tree = parse_query(stmt.query, script)
    plan = bind_query(tree, catalog, stmt.query, script)
    if stmt.columns and len(stmt.columns) != len(plan.schema):
        raise BindError(f"view {stmt.name!r} names {len(stmt.columns)} columns but its query "
                        f"returns {len(plan.schema)}")
    _unique_columns(stmt.name, list(stmt.columns) or _written_names(tree))
    catalog.add_view(ViewDef(stmt.name, stmt.query, script, stmt.columns, stmt.comment,
                             tuple(plan.schema.names())), temporary=stmt.temporary)
    return "[INFO] Execute statement succeeded."


def _unique_columns(view: str, names: list[str]) -> None:
    """A view's columns are named once each, as Flink refuses 'SELECT 1 AS a, 2 AS a' (a
    query reading the view could not name either)."""
    seen: set[str] = set()
    for n in names:
        if n.lower() in seen:
            raise BindError(f"view {view!r}: a column named {n!r} is defined twice")
        seen.add(n.lower())


def _written_names(tree: object) -> list[str]:
    """The names a query's SELECT list gives its columns (the first SELECT of a set
    operation; a star's columns left out)."""
    from sqlglot import exp

    while isinstance(tree, exp.SetOperation | exp.Subquery):
        tree = tree.this
    if not isinstance(tree, exp.Select):
        return []
    return [e.alias_or_name for e in tree.expressions
            if not isinstance(e, exp.Star) and not (isinstance(e, exp.Column) and
                                                    isinstance(e.this, exp.Star))
            and e.alias_or_name]


def alter_view(catalog: Catalog, stmt: S.AlterView, script: str) -> str:
    """ALTER VIEW v RENAME TO w | AS query, of a permanent view (as Flink's, which refuses a
    temporary one); AS takes the new query's columns and keeps the comment."""
    from sqlengine.binder import bind_query

    view = catalog.find(stmt.name, temporary=False)[1]
    if view is None:
        if catalog.table(stmt.name) is not None and catalog.view(stmt.name) is None:
            raise BindError(f"ALTER VIEW {stmt.name!r}: a table (ALTER TABLE changes tables)")
        raise BindError(f"ALTER VIEW {stmt.name!r}: no such view (temporary views are not "
                        "altered: drop and create them)")
    if stmt.query is not None:
        # (validated now, as CREATE VIEW does)
        tree = parse_query(stmt.query, script)
        plan = bind_query(tree, catalog, stmt.query, script)
        _unique_columns(stmt.name, _written_names(tree))
        new = replace(view, query=stmt.query, script=script, columns=(),
                      query_columns=tuple(plan.schema.names()))
    else:
        if catalog.exists(stmt.new_name, temporary=False):
            raise BindError(f"ALTER VIEW {stmt.name!r} RENAME TO {stmt.new_name!r}: a table "
                            "or view of that name exists")
        new = replace(view, name=stmt.new_name)
    catalog.drop("VIEW", stmt.name, if_exists=False)
    catalog.add_view(new)
    return "[INFO] Execute statement succeeded."


def drop(catalog: Catalog, stmt: S.Drop, script: str) -> str:
    # (as Flink's: a plain DROP removes a permanent object, and not while a temporary one
    # of its kind and name is there; DROP TEMPORARY only a temporary one)
    kind = stmt.kind.lower()
    if not stmt.temporary and catalog.find(stmt.name, True)[stmt.kind == "VIEW"] is not None:
        raise BindError(f"a temporary {kind} {stmt.name!r} exists: drop it first (DROP "
                        f"TEMPORARY {stmt.kind}) before removing the permanent {kind}")
    table, view = catalog.find(stmt.name, stmt.temporary)
    other = table if stmt.kind == "VIEW" else view
    if other is not None and stmt.if_exists:  # (as Flink's: no such object, nothing done)
        return (f"[INFO] No {kind} {stmt.name} to drop ({stmt.name} is a "
                f"{'table' if other is table else 'view'}, kept)")
    if stmt.kind == "VIEW" and table is not None:
        raise BindError(f"{stmt.name!r} is a table; use DROP TABLE")
    if stmt.kind == "TABLE" and view is not None:
        raise BindError(f"{stmt.name!r} is a view; use DROP VIEW")
    catalog.drop(stmt.kind, stmt.name, if_exists=stmt.if_exists, temporary=stmt.temporary)
    return "[INFO] Execute statement succeeded."


def catalog_statement(catalog: Catalog, stmt: S.CatalogStatement) -> str:
    """CREATE / DROP CATALOG and DATABASE, USE [CATALOG] (in-memory catalogs only), USE
    MODULES core."""
    ok = "[INFO] Execute statement succeeded."
    if stmt.action == "create_catalog":
        options = dict(stmt.options)
        kind = options.pop("type", None)
        if kind != "generic_in_memory":
            raise NotSupportedError(f"CREATE CATALOG {stmt.name!r}: only catalogs of 'type' = "
                                    f"'generic_in_memory' are supported, got {kind!r}")
        database = options.pop("default-database", "default")
        if options:
            raise NotSupportedError(f"CREATE CATALOG {stmt.name!r}: option "
                                    f"{sorted(options)[0]!r} is not supported")
        catalog.create_catalog(stmt.name, if_not_exists=stmt.if_exists,
                               default_database=database)
    elif stmt.action == "create_database":
        if stmt.options:
            raise NotSupportedError(f"CREATE DATABASE {stmt.name!r}: database properties "
                                    f"({stmt.options[0][0]!r}) are not supported")
        catalog.create_database(stmt.name, if_not_exists=stmt.if_exists)
    elif stmt.action == "drop_catalog":
        catalog.drop_catalog(stmt.name, if_exists=stmt.if_exists)
    elif stmt.action == "drop_database":
        catalog.drop_database(stmt.name, if_exists=stmt.if_exists, cascade=stmt.cascade)
    elif stmt.action == "use_catalog":
        catalog.use_catalog(stmt.name)
    elif stmt.action == "use_modules":
        # (the built-in functions are the one module, 'core', as Flink's core module)
        unknown = [m for m in stmt.name.split(",") if m != "core"]
        if unknown:
            raise NotSupportedError(f"USE MODULES: module {unknown[0]!r} is not loaded "
                                    "(sqlengine has one module, 'core': its built-in "
                                    "functions)")
    else:
        catalog.use_database(stmt.name)
    return ok


_LIKE_FEATURES = ("CONSTRAINTS", "PARTITIONS", "GENERATED", "OPTIONS", "WATERMARKS",
                  "METADATA")


def _like_strategies(stmt: S.CreateTable) -> dict[str, str]:
    """Each feature's strategy: Flink's defaults (INCLUDING ALL, OVERWRITING OPTIONS), then
    the LIKE options in order."""
    assert stmt.like is not None
    out = dict.fromkeys(_LIKE_FEATURES, "INCLUDING")
    out["OPTIONS"] = "OVERWRITING"
    features = [feature for _, feature in stmt.like[1]]
    twice = sorted({f for f in features if features.count(f) > 1})
    if twice:  # (as Flink: the last would have won without a word)
        raise BindError(f"LIKE: {twice[0]} is given more than once (each feature can be "
                        "declared only once)")
    for strategy, feature in stmt.like[1]:
        if feature == "ALL":
            if strategy == "OVERWRITING":
                raise BindError("LIKE: OVERWRITING ALL is not allowed (INCLUDING ALL or "
                                "EXCLUDING ALL)")
            out = dict.fromkeys(_LIKE_FEATURES, strategy)
            continue
        if strategy == "OVERWRITING" and feature in ("CONSTRAINTS", "PARTITIONS"):
            raise BindError(f"LIKE: OVERWRITING {feature} is not allowed (INCLUDING or "
                            "EXCLUDING)")
        out[feature] = strategy
    return out


def _merged_like(catalog: Catalog, stmt: S.CreateTable, script: str
                 ) -> tuple[S.CreateTable, str]:
    """CREATE TABLE ... LIKE source: the source's columns first, then this table's, its
    constraints, partitions, computed columns, options and watermark merged by the LIKE
    options (Flink's semantics); returns the merged statement and the text it refers to."""
    from dataclasses import replace as _replace

    from sqlengine.parser import parse_statement

    assert stmt.like is not None
    source_name = stmt.like[0]
    if catalog.table(source_name) is None:
        what = "a view" if catalog.view(source_name) is not None else "an unknown table"
        raise BindError(f"CREATE TABLE {stmt.name!r} LIKE {source_name!r}: {what}")
    # (as Flink's LIKE, which takes the source's declared schema: its key's columns are NOT
    # NULL only if declared so)
    text = show_create(catalog, S.ShowCreate("TABLE", source_name), key_not_null=False)
    source = parse_statement(text)
    assert isinstance(source, S.CreateTable)
    how = _like_strategies(stmt)
    # The source's columns in their order (its computed and metadata columns unless
    # EXCLUDING), each of this table's computed (metadata) columns in place of the source's
    # one of its name under OVERWRITING GENERATED (METADATA), then this table's other
    # columns in their order: Flink's MergeTableLikeUtil.
    kept = [c for c in source.columns
            if (c.expr is None or how["GENERATED"] != "EXCLUDING")
            and (c.metadata is None or how["METADATA"] != "EXCLUDING")]
    at = {c.name.lower(): i for i, c in enumerate(kept)}
    replaced: dict[int, S.ColumnDef] = {}
    added: list[S.ColumnDef] = []
    for c in stmt.columns:
        i = at.get(c.name.lower())
        if i is None:
            added.append(c)
            continue
        old = kept[i]
        kind = "GENERATED" if c.expr is not None and old.expr is not None else \
            "METADATA" if c.metadata is not None and old.metadata is not None else None
        if kind is not None and how[kind] == "OVERWRITING":
            replaced[i] = c
            continue
        what = "computed column" if kind == "GENERATED" else "metadata column" \
            if kind == "METADATA" else "column"
        hint = f" (use OVERWRITING {kind})" if kind is not None else ""
        raise BindError(f"CREATE TABLE {stmt.name!r} LIKE {source_name!r}: the {what} "
                        f"{c.name!r} is in both tables{hint}")
    watermark = stmt.watermark
    if source.watermark is not None and how["WATERMARKS"] != "EXCLUDING":
        if watermark is not None and how["WATERMARKS"] == "INCLUDING":
            raise BindError(f"CREATE TABLE {stmt.name!r} LIKE {source_name!r}: both tables "
                            "define a watermark (use OVERWRITING WATERMARKS)")
        watermark = watermark or source.watermark
    pk = stmt.primary_key
    if source.primary_key and how["CONSTRAINTS"] == "INCLUDING":
        if pk:
            raise BindError(f"CREATE TABLE {stmt.name!r} LIKE {source_name!r}: both tables "
                            "define a primary key")
        pk = source.primary_key
    partitions = stmt.partitioned_by
    if source.partitioned_by and how["PARTITIONS"] == "INCLUDING":
        if partitions:
            raise BindError(f"CREATE TABLE {stmt.name!r} LIKE {source_name!r}: both tables "
                            "are PARTITIONED BY")
        partitions = source.partitioned_by
    options = list(stmt.options)
    if how["OPTIONS"] != "EXCLUDING":
        given = dict(stmt.options)
        if how["OPTIONS"] == "INCLUDING":
            both = sorted(set(given) & set(dict(source.options)))
            if both:
                raise BindError(f"CREATE TABLE {stmt.name!r} LIKE {source_name!r}: option "
                                f"{both[0]!r} is in both tables (use OVERWRITING OPTIONS)")
        options = [(k, given.pop(k, v)) for k, v in source.options] + list(given.items())
    # (this statement's own options keep their places; the source's have none: 0)
    own = {k: o for (k, _), o in zip(stmt.options, stmt.option_offsets)}
    # (one text holds both: the source's parts are re-read from SHOW CREATE TABLE's)
    shift = len(script) + 1
    combined = script + "\n" + text

    def moved(c: S.ColumnDef) -> S.ColumnDef:
        expr = S.QueryText(c.expr.sql, c.expr.offset + shift) if c.expr is not None else None
        return _replace(c, expr=expr, offset=c.offset + shift)

    if watermark is not None and watermark is source.watermark:
        watermark = S.WatermarkDef(watermark.column, S.QueryText(
            watermark.expr.sql, watermark.expr.offset + shift), watermark.offset + shift)
    columns = [replaced[i] if i in replaced else moved(c) for i, c in enumerate(kept)]
    columns += added
    merged = _replace(stmt, columns=tuple(columns), watermark=watermark, primary_key=pk,
                      partitioned_by=partitions, options=tuple(options),
                      option_offsets=tuple(own.get(k, 0) for k, _ in options), like=None)
    return merged, combined


def alter_table(catalog: Catalog, stmt: S.AlterTable, script: str) -> str:
    """ALTER TABLE: the table's CREATE TABLE (as SHOW CREATE TABLE prints it) with the change
    applied is validated as a new CREATE TABLE would be, then replaces the table; a column
    that a computed column, the watermark, the primary key or PARTITIONED BY uses is neither
    dropped nor renamed (as in Flink)."""
    from dataclasses import replace as _replace

    from sqlengine.parser import parse_statement

    table = catalog.table(stmt.name)
    if table is None:
        if stmt.if_exists:
            return f"[INFO] Table {stmt.name} does not exist, skipped"
        if catalog.view(stmt.name) is not None:
            raise BindError(f"ALTER TABLE {stmt.name!r}: a view (ALTER VIEW changes views)")
        raise BindError(f"ALTER TABLE {stmt.name!r}: unknown table")
    text = show_create(catalog, S.ShowCreate("TABLE", stmt.name))
    create = parse_statement(text)
    assert isinstance(create, S.CreateTable)
    physical = [c for c in create.columns if c.expr is None]
    names = [c.name.lower() for c in create.columns]

    def used(column: str) -> str | None:
        low = column.lower()
        for c in create.columns:
            if c.expr is not None and low in _names_in(c.expr.sql):
                return f"the computed column {c.name!r}"
        wm = create.watermark
        if wm is not None and (wm.column.lower() == low or low in _names_in(wm.expr.sql)):
            return "the watermark"
        if low in (k.lower() for k in create.primary_key):
            return "the primary key"
        if low in (k.lower() for k in create.partitioned_by):
            return "PARTITIONED BY"
        return None

    def unused(column: str) -> None:
        why = used(column)
        if why is not None:
            raise BindError(f"ALTER TABLE {stmt.name!r}: column {column!r} is used by {why}")

    def column_named(column: str) -> None:
        if column.lower() not in names:
            raise BindError(f"ALTER TABLE {stmt.name!r}: no column {column!r}")

    options = list(create.options)
    if stmt.action == "rename":
        if catalog.exists(stmt.new_name):
            raise BindError(f"ALTER TABLE {stmt.name!r} RENAME TO {stmt.new_name!r}: a table "
                            "or view of that name exists")
        create = _replace(create, name=stmt.new_name)
    elif stmt.action == "rename_column":
        column_named(stmt.column)
        if stmt.new_name.lower() in names:
            raise BindError(f"ALTER TABLE {stmt.name!r}: column {stmt.new_name!r} exists")
        unused(stmt.column)
        create = _replace(create, columns=tuple(
            _replace(c, name=stmt.new_name) if c.name.lower() == stmt.column.lower() else c
            for c in create.columns))
    elif stmt.action == "set":
        keys = [k for k, _ in stmt.options]
        twice = next((k for i, k in enumerate(keys) if k in keys[:i]), None)
        if twice is not None:
            raise ConnectorError(f"ALTER TABLE {stmt.name!r} SET: option {twice!r} is given "
                                 "twice")
        given = dict(stmt.options)
        options = [(k, given.pop(k, v)) for k, v in options] + list(given.items())
    elif stmt.action == "reset":
        for key in stmt.keys:
            if key == "connector":
                raise BindError(f"ALTER TABLE {stmt.name!r} RESET: 'connector' cannot be reset")
            if key not in dict(options):
                raise BindError(f"ALTER TABLE {stmt.name!r} RESET: the table has no option "
                                f"{key!r}")
        options = [(k, v) for k, v in options if k not in stmt.keys]
    elif stmt.action == "drop":
        for column in stmt.keys:
            column_named(column)
            unused(column)
        gone = {k.lower() for k in stmt.keys}
        if all(c.name.lower() in gone for c in physical):
            raise BindError(f"ALTER TABLE {stmt.name!r}: a table keeps at least one column")
        create = _replace(create, columns=tuple(c for c in create.columns
                                                if c.name.lower() not in gone))
    elif stmt.action == "modify":
        create = _modified(create, stmt)
    elif stmt.action == "drop_key":
        if not create.primary_key:
            raise BindError(f"ALTER TABLE {stmt.name!r} DROP {_dropped_key(stmt)}: the table "
                            "has no primary key")
        if stmt.new_name and stmt.new_name != create.primary_key_name:
            raise BindError(f"ALTER TABLE {stmt.name!r} DROP CONSTRAINT {stmt.new_name!r}: "
                            f"the table's constraint is {create.primary_key_name!r}")
        create = _replace(create, primary_key=(), primary_key_name="")
    elif stmt.action == "drop_watermark":
        if create.watermark is None:
            raise BindError(f"ALTER TABLE {stmt.name!r} DROP WATERMARK: the table has no "
                            "watermark")
        create = _replace(create, watermark=None)
    elif stmt.action == "add":
        columns = list(create.columns)
        for c in stmt.columns:
            if c.name.lower() in names:
                raise BindError(f"ALTER TABLE {stmt.name!r}: column {c.name!r} exists")
        added = [_replace(c, offset=0, expr=None if c.expr is None else
                          S.QueryText(c.expr.sql, 0)) for c in stmt.columns]
        for c, position in zip(added, stmt.positions or [""] * len(added)):
            # (in turn, as Flink: last without a position; AFTER may name one just added)
            at = _place(columns, position, len(columns))
            if at is None:
                column_named(position)
            columns.insert(at, c)
        create = _replace(create, columns=tuple(columns))
        if stmt.watermark is not None:
            if create.watermark is not None:
                raise BindError(f"ALTER TABLE {stmt.name!r} ADD WATERMARK: the table has one "
                                "(MODIFY WATERMARK replaces it)")
            create = _replace(create, watermark=S.WatermarkDef(
                stmt.watermark.column, S.QueryText(stmt.watermark.expr.sql, 0)))
        if stmt.keys:
            if create.primary_key:
                raise BindError(f"ALTER TABLE {stmt.name!r} ADD PRIMARY KEY: the table has "
                                f"one ({', '.join(create.primary_key)}; MODIFY PRIMARY KEY "
                                "replaces it)")
            create = _replace(create, primary_key=stmt.keys, primary_key_name=stmt.new_name)
    create = _replace(create, options=tuple(options), option_offsets=tuple(
        0 for _ in options))
    scratch = Catalog(catalog.safe_directories)
    try:
        create_table(scratch, create, text)
    except SqlEngineError as e:
        raise BindError(f"ALTER TABLE {stmt.name!r}: {e.message}") from None
    new = scratch.table(create.name)
    assert new is not None
    temporary = catalog.is_temporary(stmt.name)
    catalog.drop("TABLE", stmt.name, if_exists=False, temporary=temporary)
    catalog.add_table(new, temporary=temporary)
    return "[INFO] Execute statement succeeded."


def _dropped_key(stmt: S.AlterTable) -> str:
    return f"CONSTRAINT {stmt.new_name}" if stmt.new_name else "PRIMARY KEY"


def _place(columns: list[S.ColumnDef], position: str, default: int) -> int | None:
    """Where a column goes among ``columns``: '' ``default``, 'FIRST' 0, else after the
    column named (None when there is none)."""
    if position == "FIRST":
        return 0
    if not position:
        return default
    after = next((i for i, x in enumerate(columns) if x.name.lower() == position.lower()),
                 None)
    return None if after is None else after + 1


def _modified(create: S.CreateTable, stmt: S.AlterTable) -> S.CreateTable:
    """``create`` with MODIFY's changes, as Flink's: each column (which must exist) takes its
    new definition (its comment stays unless a new one is given) at its position (where it
    was, FIRST or AFTER a column), in turn; the watermark and the primary key (which must
    exist) are replaced."""
    where = f"ALTER TABLE {stmt.name!r} MODIFY"
    columns = list(create.columns)
    seen: set[str] = set()
    for c, position in zip(stmt.columns, stmt.positions or [""] * len(stmt.columns)):
        low = c.name.lower()
        if low in seen:
            raise BindError(f"{where}: column {c.name!r} is named twice")
        seen.add(low)
        at = next((i for i, x in enumerate(columns) if x.name.lower() == low), None)
        if at is None:
            raise BindError(f"{where}: no column {c.name!r} (ADD adds one)")
        old = columns.pop(at)
        new = replace(c, offset=0, comment=c.comment if c.comment is not None else old.comment,
                      expr=None if c.expr is None else S.QueryText(c.expr.sql, 0))
        if position != "FIRST" and position.lower() == low:
            raise BindError(f"{where}: column {c.name!r} cannot follow itself")
        placed = _place(columns, position, at)
        if placed is None:
            raise BindError(f"{where}: no column {position!r} to place {c.name!r} after")
        columns.insert(placed, new)
    create = replace(create, columns=tuple(columns))
    if stmt.watermark is not None:
        if create.watermark is None:
            raise BindError(f"{where} WATERMARK: the table has no watermark (ADD WATERMARK "
                            "adds one)")
        create = replace(create, watermark=S.WatermarkDef(
            stmt.watermark.column, S.QueryText(stmt.watermark.expr.sql, 0)))
    if stmt.keys:
        if not create.primary_key:
            raise BindError(f"{where} PRIMARY KEY: the table has no primary key (ADD PRIMARY "
                            "KEY adds one)")
        create = replace(create, primary_key=stmt.keys, primary_key_name=stmt.new_name)
    return create


def _names_in(expr_text: str) -> set[str]:
    """The (lower-case) column names an expression reads."""
    from sqlglot import exp, parse_one

    from sqlengine.dialect import Flink

    tree = parse_one(expr_text, read=Flink)
    return {c.name.lower() for c in tree.find_all(exp.Column)}


def table_of_query(catalog: Catalog, stmt: S.CreateTableAs, script: str
                   ) -> tuple[S.CreateTable, tuple[str, ...]]:
    """The CREATE TABLE of a CREATE TABLE ... AS query (the query's columns and types, with
    the columns the statement declares) and the query's column names."""
    from dataclasses import replace as _replace

    from sqlengine.binder import bind_query
    from sqlengine.plan.nullability import not_null

    plan = bind_query(parse_query(stmt.query, script), catalog, stmt.query, script)
    # (a column no row can leave NULL is NOT NULL, as in Flink's CTAS)
    queried = {f.name.lower(): S.ColumnDef(f.name, T.type_name(f.type), not kept,
                                           offset=stmt.query.offset)
               for f, kept in zip(plan.schema.fields, not_null(plan, _primary_key(catalog)))}
    where = f"CREATE TABLE {stmt.table.name!r} ... AS"
    names = tuple(f.name for f in plan.schema.fields)
    if stmt.order:
        named = [n.lower() for n in stmt.order]
        for n in stmt.order:
            if n.lower() not in queried:
                raise BindError(f"{where}: the query has no column {n!r} (it has "
                                f"{', '.join(c.name for c in queried.values())})")
            if named.count(n.lower()) > 1:
                raise BindError(f"{where}: column {n!r} is named twice")
        missing = [c.name for k, c in queried.items() if k not in named]
        if missing:
            raise BindError(f"{where}: the column list reorders the query's columns and "
                            f"names each; it leaves out {', '.join(missing)}")
        return _replace(stmt.table, columns=tuple(queried[n] for n in named)), names
    # Flink's CTAS with a schema: the columns only the list declares first (filled with
    # NULL), then the query's, each with the type the list gives it (cast on insert).
    declared = {c.name.lower(): c for c in stmt.table.columns}
    for c in stmt.table.columns:
        if c.name.lower() in queried and (c.expr is not None or c.metadata is not None):
            kind = "computed" if c.expr is not None else "a METADATA column"
            raise BindError(f"{where}: column {c.name!r} comes from the query; it cannot be "
                            f"{kind}")
    columns = [c for c in stmt.table.columns if c.name.lower() not in queried]
    columns += [declared.get(k, q) for k, q in queried.items()]
    return _replace(stmt.table, columns=tuple(columns)), names


def _primary_key(catalog: Catalog) -> Callable[[str], tuple[str, ...]]:
    """A table's PRIMARY KEY columns by its name (none for a table gone or unknown)."""
    def keys(name: str) -> tuple[str, ...]:
        table = catalog.table(name)
        return tuple(table.primary_key) if table is not None else ()

    return keys


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def show_columns(catalog: Catalog, stmt: S.ShowColumns) -> pa.Table:
    """SHOW COLUMNS FROM t [[NOT] LIKE / ILIKE 'pattern']: DESCRIBE's rows whose name
    matches."""
    if catalog.table(stmt.name) is None and catalog.view(stmt.name) is None:
        raise BindError(f"SHOW COLUMNS: unknown table or view {stmt.name!r}")
    rows = describe(catalog, S.Describe(stmt.name), stmt.name)
    if stmt.like is None:
        return rows
    keep = [stmt.like.keeps(n) for n in rows.column("name").to_pylist()]
    return rows.filter(pa.array(keep, pa.bool_()))


def show_create(catalog: Catalog, stmt: S.ShowCreate, key_not_null: bool = True) -> str:
    """The CREATE statement that makes the table or view again (SHOW CREATE TABLE / VIEW);
    ``key_not_null``: the primary key's columns NOT NULL, as Flink prints them."""
    from sqlengine.dialect import Flink

    if stmt.kind == "VIEW":
        view = catalog.view(stmt.name)
        if view is None:
            what = "a table, use SHOW CREATE TABLE" if catalog.table(stmt.name) is not None \
                else "unknown view"
            raise BindError(f"SHOW CREATE VIEW {stmt.name!r}: {what}")
        cols = f" ({', '.join(_quote(c) for c in view.columns)})" if view.columns else ""
        comment = f"\nCOMMENT {_string(view.comment)}" if view.comment is not None else ""
        temporary = "TEMPORARY " if catalog.is_temporary(stmt.name) else ""
        return f"CREATE {temporary}VIEW {_quote(view.name.split('.')[-1])}{cols}{comment} " \
            f"AS\n{view.query.sql.strip()}"
    table = catalog.table(stmt.name)
    if table is None:
        what = "a view, use SHOW CREATE VIEW" if catalog.view(stmt.name) is not None \
            else "unknown table"
        raise BindError(f"SHOW CREATE TABLE {stmt.name!r}: {what}")
    if table.data is not None and table.connector == "memory":
        raise NotSupportedError(f"SHOW CREATE TABLE {stmt.name!r}: the table holds data "
                                "registered through the API, which no CREATE TABLE makes")
    meta = {c: (k, v) for c, k, v in connectors.decode_metadata(dict(table.options))}

    def metadata_text(name: str) -> str:
        if name not in meta:
            return ""
        key, virtual = meta[name]
        return f" METADATA FROM {_string(key)}" + (" VIRTUAL" if virtual else "")

    comments = dict(table.comments)

    def comment_text(name: str) -> str:
        return f" COMMENT {_string(comments[name])}" if name in comments else ""

    # (a PRIMARY KEY column is NOT NULL, as Flink prints it)
    declared = dict(table.declared)
    lines = [f"  {_quote(f.name)} {declared.get(f.name) or T.type_name(f.type)}"
             + ("" if f.nullable and not (key_not_null and f.name in table.primary_key)
                else " NOT NULL")
             + metadata_text(f.name) + comment_text(f.name) for f in table.schema.fields]
    lines += [f"  {_quote(name)} AS {node.sql(dialect=Flink)}{comment_text(name)}"
              for name, node in table.computed]
    lines = [lines[i] for i in table.in_order([*(f.name for f in table.schema.fields),
                                               *(name for name, _ in table.computed)])]
    if table.watermark is not None:
        col, node = table.watermark
        lines.append(f"  WATERMARK FOR {_quote(col)} AS {node.sql(dialect=Flink)}")
    if table.primary_key:
        keys = ", ".join(_quote(k) for k in table.primary_key)
        lines.append(f"  CONSTRAINT {_quote(table.constraint_name)} PRIMARY KEY ({keys}) "
                     "NOT ENFORCED")
    # (a temporary table's is CREATE TEMPORARY TABLE, as Flink prints it: run again, the
    # text makes a temporary table again)
    temporary = "TEMPORARY " if catalog.is_temporary(stmt.name) else ""
    text = f"CREATE {temporary}TABLE {_quote(table.name.split('.')[-1])} (\n" + \
        ",\n".join(lines) + "\n)"
    sep = " "
    if table.comment is not None:  # (on lines of their own then, as Flink prints them)
        text += f"\nCOMMENT {_string(table.comment)}"
        sep = "\n"
    if table.partition_keys:
        text += f"{sep}PARTITIONED BY ({', '.join(_quote(k) for k in table.partition_keys)})"
    options = [(k, v) for k, v in table.options if not k.startswith("$")]
    text += f"{sep}WITH (\n" + ",\n".join(f"  {_string(k)} = {_string(v)}" for k, v in options) \
        + "\n)"
    return text


def _typed_nulls(plan: LogicalPlan, wanted: dict[int, pa.DataType]) -> LogicalPlan:
    """INSERT ... VALUES: a VALUES column of NULLs only takes its target column's type, as
    the SQL standard, DuckDB and PostgreSQL type it (VALUES alone makes it INT, which a DATE
    or BYTES column refused; Flink 2.3 refuses an untyped NULL in VALUES altogether)."""
    from sqlengine.plan.expressions import Literal
    from sqlengine.plan.nodes import Values

    if not isinstance(plan, Values):
        return plan
    nulls = [i for i in wanted if all(isinstance(r[i], Literal) and r[i].value is None
                                      for r in plan.rows)]
    if not nulls:
        return plan
    fields = list(plan.schema.fields)
    rows = [list(r) for r in plan.rows]
    for i in nulls:
        fields[i] = replace(fields[i], type=wanted[i])
        for r in rows:
            r[i] = Literal(None, wanted[i])
    return Values(tuple(tuple(r) for r in rows), Schema(tuple(fields)))


def _fit_length(e: Expr, length: tuple[str, int] | None) -> Expr:
    """A value written to a VARCHAR(n) column cut to n characters, to a CHAR(n) one padded or
    cut to n, as Flink's INSERT casts it ('abcde' into VARCHAR(2) is 'ab')."""
    if length is None or length[0] not in ("CHAR", "VARCHAR") or not T.is_string(e.dtype):
        return e
    from sqlengine.plan.expressions import Call, Literal

    name = "char_fit" if length[0] == "CHAR" else "varchar_fit"
    return Call(name, (e, Literal(length[1], T.INT)), e.dtype)


def _computed_types(catalog: Catalog, name: str) -> dict[str, pa.DataType]:
    """The types of a table's computed columns, as a scan of the table binds them (also of a
    table that cannot be read, a sink's: a query reading it failed)."""
    from sqlengine.bind_computed import computed_columns
    from sqlengine.binder import Binder
    from sqlengine.plan.nodes import Scan, SourceSpec

    table = catalog.table(name)
    assert table is not None
    text = f"DESCRIBE `{name}`"
    binder = Binder(catalog, S.QueryText(text, 0), text, None, None, 0)
    scan = Scan(SourceSpec(table.name, table.connector, table.options, True), table.schema)
    plan = computed_columns(table, scan, binder.exprs, False)
    return {f.name: f.type for f in plan.schema.fields}


def describe(catalog: Catalog, stmt: S.Describe, script: str) -> pa.Table:
    from sqlengine.dialect import Flink

    span = Span.from_offset(script, stmt.offset, stmt.offset + len(stmt.name))
    table = catalog.table(stmt.name)
    if table is not None:
        names = [f.name for f in table.schema.fields]
        declared = dict(table.declared)
        types = [declared.get(f.name) or T.type_name(f.type) for f in table.schema.fields]
        nulls = [f.nullable for f in table.schema.fields]
        meta = {c: (k, v) for c, k, v in connectors.decode_metadata(dict(table.options))}
        # (as Flink's DESCRIBE: an empty cell is NULL, names in expressions are quoted, the
        # time attributes marked *ROWTIME* / *PROCTIME*, a watermark shown by its expression)
        extras: list[str | None] = [
            f"METADATA FROM '{meta[n][0]}'" + (" VIRTUAL" if meta[n][1] else "")
            if n in meta else None for n in names]
        computed_types = _computed_types(catalog, stmt.name) if table.computed else {}
        for name, node in table.computed:
            names.append(name)
            proctime = node.sql(dialect=Flink).upper() == "PROCTIME()"
            types.append(T.type_name(computed_types[name]) + (" *PROCTIME*" if proctime
                                                               else ""))
            nulls.append(not proctime)  # (PROCTIME() is never NULL, as Flink shows it)
            extras.append(f"AS {node.sql(dialect=Flink, identify=True)}")
        order = table.in_order(names)  # (as declared)
        names, types, nulls, extras = ([xs[i] for i in order]
                                       for xs in (names, types, nulls, extras))
        # (a PRIMARY KEY column is NOT NULL, as Flink shows it)
        nulls = [v and n not in table.primary_key for n, v in zip(names, nulls)]
        wm: list[str | None] = [None for _ in names]
        if table.watermark is not None:
            at = names.index(table.watermark[0])
            wm[at] = table.watermark[1].sql(dialect=Flink, identify=True)
            types[at] += " *ROWTIME*"
        pri = f"PRI({', '.join(table.primary_key)})"  # (as Flink prints it)
        keys = [pri if n in table.primary_key else None for n in names]
        columns = {"name": names, "type": types, "null": nulls,
                   "key": pa.array(keys, pa.string()), "extras": pa.array(extras, pa.string()),
                   "watermark": pa.array(wm, pa.string())}
        if table.comments:  # (as Flink: a comment column when a column has a comment)
            comments = dict(table.comments)
            columns["comment"] = pa.array([comments.get(n) for n in names], pa.string())
        return pa.table(columns)
    view = catalog.view(stmt.name)
    if view is not None:
        from sqlengine.bind_views import as_created
        from sqlengine.binder import bind_query

        plan = as_created(view, bind_query(parse_query(view.query, view.script), catalog,
                                           view.query, view.script))
        from sqlengine.plan.nullability import not_null

        names = list(view.columns) or plan.schema.names()
        fields = plan.schema.fields
        none = pa.nulls(len(fields), pa.string())
        return pa.table({"name": names,
                         "type": [T.type_name(f.type) + (" *ROWTIME*" if f.rowtime else
                                                         " *PROCTIME*" if f.proctime else "")
                                  for f in fields],
                         "null": [not (f.proctime or kept) for f, kept in
                                  zip(fields, not_null(plan, _primary_key(catalog)))], "key": none,
                         "extras": none,
                         "watermark": none})
    raise BindError(f"unknown table or view {stmt.name!r}", span=span, sql=script)


def bind_insert(catalog: Catalog, stmt: S.Insert, script: str,
                query: LogicalPlan | None = None) -> LogicalPlan:
    """``INSERT INTO t [(cols)] query`` as a Sink over the query, cast to the table's types
    (``query``: the query's plan, bound already)."""
    from sqlengine.binder import bind_query

    span = Span.from_offset(script, stmt.table_offset, stmt.table_offset + len(stmt.table))
    table = catalog.table(stmt.table)
    if table is None:
        what = "a view" if catalog.view(stmt.table) is not None else "unknown"
        raise BindError(f"cannot INSERT INTO {stmt.table!r}: {what} table", span=span,
                        sql=script)
    connector = connectors.find(table.connector)
    if connector is None or not connector.is_sink:
        raise PlanError(f"cannot INSERT INTO {stmt.table!r}: connector "
                        f"{table.connector!r} is not a sink", span=span, sql=script)
    # (a table with computed columns takes its physical ones, as Flink's sinks: the computed
    # ones are computed again when it is read)
    if connectors.decode_metadata(dict(table.options)):
        raise NotSupportedError(f"cannot INSERT INTO {stmt.table!r}: writing a table with "
                                "METADATA columns is not supported yet", span=span, sql=script)
    if stmt.hint is not None:
        text, start = stmt.hint.sql, stmt.hint.offset + len(hints.START)
        hint = hints.table_options(text[len(hints.START):-len(hints.END)], start, script)
        options = hints.merged(table.name, table.options, hint, script)
        connectors.validate(table.name, dict(options), table.schema, dict(hint.key_offsets),
                            script)
        safe_options(catalog, table.name, dict(options), script, dict(hint.key_offsets))
        table = replace(table, options=options)
    if stmt.overwrite and not connector.supports_overwrite:
        raise PlanError("INSERT OVERWRITE needs a filesystem table", span=span, sql=script)
    plan = query if query is not None else \
        bind_query(parse_query(stmt.query, script), catalog, stmt.query, script)
    if stmt.overwrite:
        endless = next((p.source.table for p in walk(plan)
                        if isinstance(p, Scan) and not p.source.bounded), None)
        if endless is not None:
            raise PlanError(f"INSERT OVERWRITE {stmt.table!r} reads the unbounded table "
                            f"{endless!r}: the files it replaces go when the job ends, which "
                            "an unbounded job never does (write INSERT INTO, or read bounded "
                            "tables)", span=span, sql=script)
    target = table.schema.fields
    static = {k.lower(): v for k, v in stmt.partition}
    for key, _ in stmt.partition:
        if key.lower() not in {p.lower() for p in table.partition_keys}:
            raise BindError(f"INSERT INTO {stmt.table!r} PARTITION ({key} = ...): {key!r} is "
                            "not a partition column of the table", span=span, sql=script)
        if key.lower() in {c.lower() for c in stmt.columns}:
            raise BindError(f"INSERT INTO {stmt.table!r}: column {key!r} has a static value "
                            "in PARTITION (...) and is in the column list", span=span,
                            sql=script)
    columns = list(stmt.columns) or [f.name for f in target if f.name.lower() not in static]
    if len(columns) != len(plan.schema):
        raise BindError(f"INSERT INTO {stmt.table!r} lists {len(columns)} columns but the query "
                        f"returns {len(plan.schema)}", span=span, sql=script)
    by_name = {f.name.lower(): i for i, f in enumerate(target)}
    source_of: dict[int, int] = {}
    computed = {n.lower() for n, _ in table.computed}
    for pos, name in enumerate(columns):
        if name.lower() in computed:
            raise BindError(f"column {name!r} of {stmt.table!r} is a computed column: it is "
                            "not written (list the physical columns)", span=span, sql=script)
        if name.lower() not in by_name:
            raise BindError(f"table {stmt.table!r} has no column {name!r}", span=span,
                            sql=script)
        if by_name[name.lower()] in source_of:  # (as Flink: "assigned more than once")
            raise BindError(f"INSERT INTO {stmt.table!r}: column {name!r} is listed twice",
                            span=span, sql=script)
        source_of[by_name[name.lower()]] = pos
    plan = _typed_nulls(plan, {pos: target[i].type for i, pos in source_of.items()})
    exprs: list[Expr] = []
    declared = {c: T.declared_length(text) for c, text in table.declared}
    for i, f in enumerate(target):
        if f.name.lower() in static:  # (PARTITION (k = 'v'): the value, as the column's type)
            from sqlengine.bind_scalar import make_cast
            from sqlengine.plan.expressions import Literal

            exprs.append(make_cast(Literal(static[f.name.lower()], pa.string()), f.type))
            continue
        if i not in source_of:
            from sqlengine.plan.expressions import Literal

            if not f.nullable:  # (as Flink: NULL would fail the job at its first row)
                raise BindError(f"INSERT INTO {stmt.table!r}: column {f.name!r} is not in the "
                                "column list; it has no default value and does not allow "
                                "NULLs", span=span, sql=script)
            exprs.append(Literal(None, f.type))
            continue
        src = plan.schema.fields[source_of[i]]
        if not T.can_store(src.type, f.type):
            raise BindError(f"column {f.name!r} of {stmt.table!r} is {T.type_name(f.type)}, but "
                            f"the query gives {T.type_name(src.type)} (use CAST)", span=span,
                            sql=script)
        exprs.append(_fit_length(coerce(ColumnRef(source_of[i], src.name, src.type), f.type),
                                 declared.get(f.name)))
    projected = Project(plan, tuple(exprs), tuple(f.name for f in target))
    # (OVERWRITE: the parts older than this statement go; the sink's parallel subtasks
    # open at different times, and none may take a part another wrote for a replaced one)
    options = table.options + ((("$overwrite", "true"),
                                ("$overwrite-before", str(time.time_ns()))) if stmt.overwrite
                               else ())
    connector.check_sink(dict(table.options))
    return Sink(projected, SinkSpec(table.name, table.connector, options, Schema(target)))
