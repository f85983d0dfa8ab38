"""Runs the conformance calls through sqlengine and compares each with Flink's answer."""

from __future__ import annotations

import json
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import pyarrow as pa

import sqlengine
from sqlengine.errors import ParseError, SqlEngineError
from sqlengine.types import type_name

from .calls import TABLES, Call, all_calls
from .compare import (
    PROPERTIES,
    canon_map,
    fmt_date,
    fmt_decimal,
    fmt_time,
    normalise_type,
    sort_key,
    unordered,
    values_equal,
)

HERE = Path(__file__).resolve().parent
EXPECTED = HERE / "flink_expected.json"
QUERY_TIMEOUT_S = 20


@dataclass
class Outcome:
    call: Call
    expected: dict
    got: dict  # {"type", "value"} or {"error", "error_class", "engine_error"}
    passed: bool
    reason: str  # a short category when not passed
    detail: str  # what differs, one line


def load_expected() -> dict[str, dict]:
    return json.loads(EXPECTED.read_text())["calls"]


_UNITS = {"s": 1_000_000_000, "ms": 1_000_000, "us": 1_000, "ns": 1}


def canon(s: pa.Scalar) -> Any:
    """An Arrow value in the canonical form of compare.py."""
    t = s.type
    if not s.is_valid:
        return None
    if pa.types.is_dictionary(t):
        return canon(s.value)
    if pa.types.is_boolean(t) or pa.types.is_integer(t):
        return s.as_py()
    if pa.types.is_floating(t):
        return float(s.as_py())
    if pa.types.is_decimal(t):
        return fmt_decimal(s.as_py())
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return s.as_py()
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return {"bytes": s.as_py().hex()}
    if pa.types.is_date(t):
        d = s.as_py()
        return fmt_date(d.year, d.month, d.day)
    if pa.types.is_time(t):
        raw = s.cast(pa.int32() if pa.types.is_time32(t) else pa.int64()).as_py()
        nanos = raw * _UNITS[t.unit]
        secs, frac = divmod(nanos, 1_000_000_000)
        return fmt_time(secs // 3600, secs // 60 % 60, secs % 60, frac)
    if pa.types.is_timestamp(t):
        nanos = s.cast(pa.int64()).as_py() * _UNITS[t.unit]
        secs, frac = divmod(nanos, 1_000_000_000)
        days, rem = divmod(secs, 86400)
        import datetime as dt
        d = dt.date(1970, 1, 1) + dt.timedelta(days=days)
        return fmt_date(d.year, d.month, d.day) + " " + fmt_time(
            rem // 3600, rem // 60 % 60, rem % 60, frac)
    if pa.types.is_duration(t):
        return s.cast(pa.int64()).as_py() * _UNITS[t.unit] // 1_000_000
    if t == pa.month_day_nano_interval():
        v = s.as_py()
        return v.months if not (v.days or v.nanoseconds) else \
            v.days * 86_400_000 + v.nanoseconds // 1_000_000
    if pa.types.is_map(t):
        # (by position: a MULTISET's entries are named element / count)
        return canon_map([tuple(canon(x) for x in kv.values()) for kv in s.values])
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return [canon(x) for x in s.values]
    if pa.types.is_struct(t):
        return [canon(s[i]) for i in range(t.num_fields)]
    if pa.types.is_null(t):
        return None
    return {"arrow": str(t), "str": str(s.as_py())}


def _sql_of(calls: list[Call]) -> str:
    first = calls[0]
    exprs = ", ".join(f"{c.sql} AS c{i}" for i, c in enumerate(calls))
    if first.kind == "scalar":
        return f"SELECT {exprs}"
    if first.kind == "table":
        from_, keys = TABLES[first.table]
        group = f" GROUP BY {first.group}" if first.group else ""
        return f"SELECT {', '.join([*keys, exprs])} FROM {from_}{group}"
    return first.sql


@contextmanager
def _timeout(seconds: int) -> Iterator[None]:
    def fire(signum: int, frame: Any) -> None:
        raise TimeoutError(f"no answer within {seconds} s")
    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


class Engine:
    def __init__(self) -> None:
        self.session = sqlengine.connect({"execution.runtime-mode": "batch"})
        self.queries = 0

    def run(self, calls: list[Call]) -> list[dict]:
        """Each call's {"type", "value"} (or raises: the query failed)."""
        self.queries += 1
        with _timeout(QUERY_TIMEOUT_S):
            table = self.session.sql(_sql_of(calls)).collect()
        first = calls[0]
        rows = [[canon(col[r]) for col in table.columns] for r in range(table.num_rows)]
        types = [type_name(f.type) for f in table.schema]
        if first.kind == "query":
            return [{"type": types, "value": sorted(rows, key=sort_key)}]
        k = len(TABLES[first.table][1]) if first.kind == "table" else 0
        if len(types) != k + len(calls):
            raise AssertionError(f"{len(types)} columns for {k} keys and {len(calls)} calls")
        if first.kind == "scalar":
            if len(rows) != 1:
                raise AssertionError(f"{len(rows)} rows for a scalar SELECT")
            return [{"type": types[i], "value": rows[0][i]} for i in range(len(calls))]
        rows = sorted(rows, key=lambda r: sort_key(r[:k]))
        return [{"type": types[k + i], "value": [r[k + i] for r in rows]}
                for i in range(len(calls))]

    def run_all(self, calls: list[Call], out: dict[str, dict]) -> None:
        try:
            got = self.run(calls)
        except Exception as e:
            if len(calls) == 1:
                first = (str(e).strip().splitlines() or [""])[0][:200]
                out[calls[0].id] = {"error": first, "error_class": type(e).__name__,
                                    "engine_error": isinstance(e, SqlEngineError),
                                    "parse_error": isinstance(e, ParseError)}
                return
            half = len(calls) // 2
            self.run_all(calls[:half], out)
            self.run_all(calls[half:], out)
            return
        for c, g in zip(calls, got):
            out[c.id] = g


def _short(v: Any) -> str:
    s = json.dumps(v, ensure_ascii=False, default=str)
    return s if len(s) <= 60 else s[:57] + "..."


def judge(call: Call, exp: dict, got: dict) -> tuple[bool, str, str]:
    """(passed, reason category, detail)."""
    if "error" in exp:
        if "error" in got:
            if got["engine_error"]:
                return True, "", ""
            return False, "internal error (not a SqlEngineError)", \
                f"{got['error_class']}: {got['error']}"
        return False, "returns a value where Flink raises an error", \
            f"got {_short(got['value'])}; Flink: {exp['error'][:80]}"
    if "error" in got:
        msg = got["error"]
        low = msg.lower()
        if not got["engine_error"]:
            reason = "internal error (not a SqlEngineError)"
        elif "unknown function" in low or "no function" in low:
            reason = "function not implemented"
        elif "unknown type" in low:
            reason = "type not supported"
        elif got["parse_error"]:
            reason = "syntax not supported (parse error)"
        else:
            reason = "error where Flink returns a value"
        return False, reason, f"{got['error_class']}: {msg}"
    want_t, got_t = normalise_type(exp["type"]), normalise_type(got["type"])
    type_ok = want_t == got_t
    if call.prop:
        holds = PROPERTIES[call.prop](got["value"])
        if type_ok and holds:
            return True, "", ""
        if not type_ok:
            return False, "different result type", f"got {got_t}; Flink {want_t}"
        return False, "different value", f"{_short(got['value'])} fails {call.prop}"
    ev, gv = exp["value"], got["value"]
    if call.unordered and isinstance(ev, list) and isinstance(gv, list):
        if call.kind == "query":
            ev = [[unordered(x, call.unordered) for x in row] for row in ev]
            gv = [[unordered(x, call.unordered) for x in row] for row in gv]
        else:
            ev = [unordered(x, call.unordered) for x in ev]
            gv = [unordered(x, call.unordered) for x in gv]
    value_ok = values_equal(ev, gv)
    if type_ok and value_ok:
        return True, "", ""
    if not value_ok:
        if call.kind == "scalar" and (ev is None) != (gv is None):
            reason = "different NULL handling"
        else:
            reason = "different value"
        detail = f"got {_short(gv)}; Flink {_short(ev)}"
        if not type_ok:
            detail += f" (type {got_t}; Flink {want_t})"
        return False, reason, detail
    return False, "different result type", f"got {got_t}; Flink {want_t}"


@lru_cache(maxsize=1)
def outcomes() -> tuple[Outcome, ...]:
    """Every call's outcome (computed once per process)."""
    expected = load_expected()
    calls = all_calls()
    engine = Engine()
    got: dict[str, dict] = {}
    groups: dict[tuple, list[Call]] = {}
    for c in calls:
        # As generate_flink.py batches them: scalars many per query, the others alone.
        key = (c.family, c.kind, c.table, "" if c.kind == "scalar" else c.id)
        groups.setdefault(key, []).append(c)
    for group in groups.values():
        engine.run_all(group, got)
    out = []
    for c in calls:
        exp = expected[c.id]
        ok, reason, detail = judge(c, exp, got[c.id])
        out.append(Outcome(c, exp, got[c.id], ok, reason, detail))
    return tuple(out)
