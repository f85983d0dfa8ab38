"""Interval literals: ``INTERVAL '5' SECOND``, ``'3' MONTH``, ``'1-2' YEAR TO MONTH``,
``'1 02:03:04.5' DAY TO SECOND``, as Flink types them (day-time: milliseconds; year-month:
months)."""

from __future__ import annotations

import datetime as dt
import decimal
import re
from typing import TYPE_CHECKING

import pyarrow as pa
from sqlglot import exp

from sqlengine import types as T
from sqlengine.errors import BindError, NotSupportedError
from sqlengine.plan.expressions import Literal

if TYPE_CHECKING:
    from sqlengine.bind_expr import ExprBinder

_INTERVAL_MS = {
    "MILLISECOND": 1, "SECOND": 1000, "MINUTE": 60_000, "HOUR": 3_600_000, "DAY": 86_400_000,
}
_INTERVAL_MONTHS = {"YEAR": 12, "MONTH": 1}
# The fields of a span's string, from its first unit: 'd hh:mm:ss.fff', 'y-m'.
_SPAN_FIELDS = {"DAY": ["DAY", "HOUR", "MINUTE", "SECOND"], "HOUR": ["HOUR", "MINUTE", "SECOND"],
                "MINUTE": ["MINUTE", "SECOND"], "YEAR": ["YEAR", "MONTH"]}


def _unit_name(unit: exp.Expression | None) -> str:
    if unit is None:
        return ""
    if isinstance(unit, exp.Var):
        name = unit.name.upper()
    else:  # `DAY(3)`: a unit with a leading precision
        name = (unit.key if not isinstance(unit, exp.Anonymous) else unit.name).upper()
    return name[:-1] if name.endswith("S") and name != "S" else name


def interval_literal(node: exp.Interval, binder: ExprBinder) -> Literal:
    """``INTERVAL '5' SECOND`` as a millisecond duration, ``INTERVAL '3' MONTH`` or
    ``'1-2' YEAR TO MONTH`` as a count of months, ``'1 02:03:04.5' DAY TO SECOND`` (and the
    other day-time spans) as milliseconds."""
    unit = node.args.get("unit")
    text = str(node.this.this if isinstance(node.this, exp.Literal) else node.this).strip()
    if isinstance(unit, exp.IntervalSpan):
        first, last = _unit_name(unit.this), _unit_name(unit.expression)
        fields = _SPAN_FIELDS.get(first, [])
        if last not in fields[1:]:
            msg = f"unsupported interval span {first} TO {last}"
            raise binder.error(NotSupportedError, msg, node)
        fields = fields[:fields.index(last) + 1]
    else:
        first = _unit_name(unit)
        if first not in _INTERVAL_MS and first not in _INTERVAL_MONTHS:
            raise binder.error(NotSupportedError, f"unsupported interval unit {first!r}", node)
        fields = [first]
    sign = -1 if text.startswith("-") else 1
    parts = [p for p in re.split(r"[\s:-]+" if first == "YEAR" else r"[\s:]+",
                                 text.lstrip("+-")) if p]
    try:
        if len(parts) != len(fields):
            raise decimal.InvalidOperation
        amounts = [decimal.Decimal(p) for p in parts]
        # (a fraction only of seconds, as in Flink: '1.5' HOUR was taken as 90 minutes,
        # where Flink refuses it and PostgreSQL / DuckDB read 1 hour)
        whole = amounts if fields[-1] != "SECOND" else amounts[:-1]
        if any(a < 0 for a in amounts) or any(a != int(a) for a in whole):
            raise decimal.InvalidOperation
    except decimal.InvalidOperation:
        want = " ".join(fields)
        msg = f"invalid interval value {text!r} for {want}"
        raise binder.error(BindError, msg, node) from None
    if first in _INTERVAL_MONTHS:
        months = sign * int(sum(a * _INTERVAL_MONTHS[f] for a, f in zip(amounts, fields)))
        if abs(months) > _MAX_MONTHS:
            raise binder.error(BindError, f"interval value {text!r} {' TO '.join(fields)} is "
                               "out of range (at most 178956970 years)", node)
        return Literal(pa.MonthDayNano([months, 0, 0]), T.INTERVAL_YEAR_MONTH)
    ms = sign * int(sum(a * _INTERVAL_MS[f] for a, f in zip(amounts, fields)))
    if abs(ms) > _MAX_MS:  # (Flink's widest day-time interval: DAY(9), 999,999,999 days)
        raise binder.error(BindError, f"interval value {text!r} {' TO '.join(fields)} is out "
                           "of range (at most 999999999 days)", node)
    return Literal(dt.timedelta(milliseconds=ms), T.INTERVAL_DAY_TIME)


_MAX_MS = 999_999_999 * 86_400_000 + 86_399_999
_MAX_MONTHS = 2**31 - 1
