"""What other dialects write that Flink SQL does not, named as the SQL wrote it (sqlglot
reads it into its own nodes: DIV was shown as CAST(7 / 2 AS BIGINT), PostgreSQL's JSONB ?
as J_S_O_N_B_CONTAINS_TOP_KEY)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlglot import exp

from sqlengine import functions
from sqlengine.errors import NotSupportedError, SqlEngineError

if TYPE_CHECKING:
    from sqlengine.bind_expr import ExprBinder


def unsupported(binder: ExprBinder, node: exp.Expression) -> SqlEngineError:
    """An expression bound nowhere, named (DIV was shown as sqlglot wrote it: CAST(7 / 2 AS
    BIGINT))."""
    if isinstance(node, exp.IntDiv):
        return binder.error(NotSupportedError, "the operator DIV is not Flink SQL: / of two "
                            "integers divides as integers already (7 / 2 is 3)", node)
    return binder.error(NotSupportedError, f"unsupported expression {node.sql()!r}", node)


def no_foreign_operator(binder: ExprBinder, node: exp.Func, name: str) -> None:
    """Refuse an operator of another dialect (PostgreSQL's JSONB ?), quoting the SQL: it was
    named by sqlglot's class, 'unknown function J_S_O_N_B_CONTAINS_TOP_KEY'."""
    if isinstance(node, exp.Binary) and functions.lookup(name) is None:
        raise binder.error(NotSupportedError, f"the operator of {node.sql()!r} is not Flink "
                           "SQL", node)
