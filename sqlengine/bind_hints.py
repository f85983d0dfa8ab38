"""A table's OPTIONS hint where the FROM clause names it: refused on what is not a table (a
WITH query, a view), merged over the table's WITH options otherwise."""

from __future__ import annotations

from dataclasses import replace

from sqlglot import exp

from sqlengine import connectors, hints
from sqlengine.catalog import Catalog, TableDef
from sqlengine.errors import NotSupportedError, Span


def no_hint(node: exp.Expression, what: str, script: str) -> None:
    """Refuse an OPTIONS hint on ``node``, which is ``what`` (not a table)."""
    hint = node.meta.get(hints.META_KEY) if isinstance(node, exp.Table) else None
    if hint is not None:
        raise NotSupportedError(f"{node.name!r} is {what}: an OPTIONS hint applies to a "
                                "table", span=Span.from_offset(script, hint.start, hint.end),
                                sql=script)


def with_hint(table: TableDef, hint: hints.TableOptions, catalog: Catalog,
              script: str) -> TableDef:
    """The table with an OPTIONS hint's dynamic options over its WITH options, checked as
    WITH options are (errors point into the hint)."""
    if table.data is not None and table.connector == "memory":
        raise NotSupportedError(
            f"table {table.name!r} is registered data: an OPTIONS hint applies to a "
            "table declared with CREATE TABLE ... WITH", span=Span.from_offset(
                script, hint.start, hint.end), sql=script)
    options = hints.merged(table.name, table.options, hint, script)
    connectors.validate(table.name, dict(options), table.schema, dict(hint.key_offsets),
                        script)
    from sqlengine.ddl import safe_options

    safe_options(catalog, table.name, dict(options), script, dict(hint.key_offsets))
    return replace(table, options=options)
