"""Flink 2.3's answers for the conformance calls (calls.py) -> flink_expected.json.

    /tmp/flinkvenv/bin/python tests/conformance/generate_flink.py [family ...]

Runs every call through PyFlink 2.3 (batch-mode TableEnvironment, parallelism 1,
'table.local-time-zone' = 'UTC'). Each call is first planned alone (its result type is the
planned column's data type; a validation error is recorded as such); the calls that plan are
then run many per query, and a failing query is split in halves until the failing call is
alone (its runtime error is recorded). Values are read on the Java side (no pickling) and put
in the canonical form described in compare.py. Does not import sqlengine.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from calls import TABLES, Call, all_calls  # noqa: E402
from compare import (  # noqa: E402
    PROPERTIES,
    canon_map,
    fmt_date,
    fmt_decimal,
    fmt_time,
    fraction,
    sort_key,
    unordered,
)
from py4j.java_collections import JavaArray, JavaList, JavaMap  # noqa: E402
from py4j.java_gateway import JavaObject  # noqa: E402
from py4j.protocol import Py4JJavaError  # noqa: E402
from pyflink.table import EnvironmentSettings, TableEnvironment  # noqa: E402
from pyflink.util.exceptions import JavaException  # noqa: E402

CHUNK = 40
OUT = HERE / "flink_expected.json"


def canon(v: Any) -> Any:
    """A Java value (as py4j hands it over) in the canonical form of compare.py."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (bytes, bytearray)):
        return {"bytes": bytes(v).hex()}
    if isinstance(v, Decimal):  # a BigDecimal, as py4j converts it
        return fmt_decimal(v)
    if isinstance(v, JavaMap):
        return canon_map([(canon(k), canon(x)) for k, x in v.items()])
    if isinstance(v, (JavaArray, JavaList)):
        return [canon(x) for x in v]
    if isinstance(v, JavaObject):
        cls = v.getClass().getName()
        if cls in ("java.lang.Byte", "java.lang.Short", "java.lang.Long", "java.lang.Integer"):
            return int(v.toString())
        if cls == "java.lang.Float":
            return float(v.doubleValue())
        if cls == "java.math.BigDecimal":
            return v.toPlainString()
        if cls == "java.time.LocalDate":
            return fmt_date(v.getYear(), v.getMonthValue(), v.getDayOfMonth())
        if cls == "java.time.LocalTime":
            return fmt_time(v.getHour(), v.getMinute(), v.getSecond(), v.getNano())
        if cls == "java.time.LocalDateTime":
            return (fmt_date(v.getYear(), v.getMonthValue(), v.getDayOfMonth()) + " "
                    + fmt_time(v.getHour(), v.getMinute(), v.getSecond(), v.getNano()))
        if cls == "java.time.Instant":
            t = dt.datetime(1970, 1, 1) + dt.timedelta(seconds=v.getEpochSecond())
            return t.strftime("%Y-%m-%d %H:%M:%S") + fraction(v.getNano())
        if cls == "java.time.Duration":
            return v.toMillis()
        if cls == "java.time.Period":
            return v.toTotalMonths()
        if cls == "org.apache.flink.types.Row":
            return [canon(v.getField(i)) for i in range(v.getArity())]
        if cls.startswith("["):  # a Java array py4j did not wrap
            return [canon(x) for x in v]
        return {"java": cls, "str": v.toString()}
    return {"python": type(v).__name__, "str": str(v)}


class EnvironmentFailure(RuntimeError):
    """The JVM itself failed (memory): not an answer for the call, so generation stops."""


def error_line(e: BaseException) -> str:
    """The root cause of a Flink error, one line."""
    if isinstance(e, Py4JJavaError):
        j = e.java_exception
        while j.getCause() is not None and j.getCause() != j:
            j = j.getCause()
        line = f"{j.getClass().getName()}: {j.getMessage()}"
    else:
        text = str(e)
        causes = re.findall(r"^(?:Caused by: |: )?((?:[\w$]+\.)+[\w$]*(?:Exception|Error)\b.*)$",
                            text, re.M)
        line = causes[-1] if causes else (text.strip().splitlines() or [type(e).__name__])[0]
    line = line.strip().splitlines()[0] if line.strip() else line
    if "OutOfMemoryError" in line:
        raise EnvironmentFailure(line)
    return line[:300]


def sql_of(calls: list[Call]) -> str:
    first = calls[0]
    exprs = ", ".join(f"{c.sql} AS c{i}" for i, c in enumerate(calls))
    if first.kind == "scalar":
        return f"SELECT {exprs}"
    if first.kind == "table":
        from_, keys = TABLES[first.table]
        cols = ", ".join([*keys, exprs])
        group = f" GROUP BY {first.group}" if first.group else ""
        return f"SELECT {cols} FROM {from_}{group}"
    return first.sql


def nkeys(call: Call) -> int:
    return len(TABLES[call.table][1]) if call.kind == "table" else 0


FLINK_ERRORS = (Py4JJavaError, JavaException)


class Flink:
    def __init__(self) -> None:
        self.env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
        self.conf = self.env.get_config()
        self.conf.set("parallelism.default", "1")
        self.conf.set("table.local-time-zone", "UTC")
        self.queries = 0

    def types(self, sql: str) -> list[str]:
        t = self.env.sql_query(sql)
        return [str(d) for d in t._j_table.getResolvedSchema().getColumnDataTypes()]

    def rows(self, sql: str) -> list[list[Any]]:
        self.queries += 1
        result = self.env.sql_query(sql).execute()
        it = result._j_table_result.collect()
        try:
            raw = []
            while it.hasNext():
                r = it.next()
                raw.append([r.getField(i) for i in range(r.getArity())])
        finally:
            it.close()
        return [[canon(v) for v in r] for r in raw]


def results_of(calls: list[Call], rows: list[list[Any]]) -> list[Any]:
    """Each call's value from the rows of its (batched) query."""
    first = calls[0]
    if first.kind == "scalar":
        assert len(rows) == 1, rows
        return rows[0]
    if first.kind == "query":
        return [sorted(rows, key=sort_key)]
    k = nkeys(first)
    rows = sorted(rows, key=lambda r: sort_key(r[:k]))
    return [[r[k + i] for r in rows] for i in range(len(calls))]


NOT_NULL_VIOLATION = "is NOT NULL, however, a null value is being written"


def run_single_null(flink: Flink, call: Call, entry: dict) -> bool:
    """A scalar whose planned type is NOT NULL but whose value is NULL: Flink's collect sink
    refuses the row by default; with the enforcer set to DROP the row goes, so the value was
    NULL. Records it as NULL (with a note) and says whether that was the case."""
    if call.kind != "scalar":
        return False
    flink.conf.set("table.exec.sink.not-null-enforcer", "DROP")
    try:
        rows = flink.rows(sql_of([call]))
    finally:
        flink.conf.set("table.exec.sink.not-null-enforcer", "ERROR")
    if rows:
        return False
    entry.update(value=None, note="NULL although Flink types it NOT NULL (its collect sink "
                 "refuses the row unless 'table.exec.sink.not-null-enforcer' = 'DROP')")
    return True


def run_batch(flink: Flink, calls: list[Call], out: dict[str, dict]) -> None:
    try:
        values = results_of(calls, flink.rows(sql_of(calls)))
    except FLINK_ERRORS as e:
        if len(calls) == 1:
            line = error_line(e)
            entry = out[calls[0].id]
            if NOT_NULL_VIOLATION in line and run_single_null(flink, calls[0], entry):
                return
            entry.update(error=line, phase="execute")
            entry.pop("type", None)
            return
        half = len(calls) // 2
        run_batch(flink, calls[:half], out)
        run_batch(flink, calls[half:], out)
        return
    for c, v in zip(calls, values):
        entry = out[c.id]
        if c.prop:
            entry.update(property=c.prop, sample=v, property_holds=PROPERTIES[c.prop](v))
        elif c.unordered:  # (an order Flink leaves undefined: see calls.Call.unordered)
            entry["value"] = [[unordered(x, c.unordered) for x in row] for row in v] \
                if c.kind == "query" else [unordered(x, c.unordered) for x in v]
        else:
            entry["value"] = v


def run_family(family: str) -> dict[str, dict]:
    """Flink's answers for one family's calls (in this process's own JVM)."""
    t0 = time.time()
    flink = Flink()
    calls = [c for c in all_calls() if c.family == family]
    out: dict[str, dict] = {}
    runnable: dict[tuple, list[Call]] = {}
    for c in calls:
        entry: dict[str, Any] = {"family": c.family}
        out[c.id] = entry
        try:
            types = flink.types(sql_of([c]))
        except FLINK_ERRORS as e:
            entry.update(error=error_line(e), phase="validate")
            continue
        entry["type"] = types if c.kind == "query" else types[nkeys(c)]
        # Scalars run many per query; an aggregate or window call runs alone: batched, Flink
        # 2.3 mixes up LEAD/LAG results across the calls and orders LISTAGG differently.
        key = (c.kind, c.table, "" if c.kind == "scalar" else c.id)
        runnable.setdefault(key, []).append(c)
    for group in runnable.values():
        for i in range(0, len(group), CHUNK):
            run_batch(flink, group[i:i + CHUNK], out)
    errors = sum("error" in e for e in out.values())
    print(f"  {family}: {len(calls)} calls, {errors} Flink errors, {flink.queries} queries, "
          f"{time.time() - t0:.0f} s", file=sys.stderr, flush=True)
    return out


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--family":
        print(json.dumps(run_family(sys.argv[2])))
        return
    t0 = time.time()
    # Every job loads and compiles classes of its own: one JVM per family (and a roomy code
    # cache) keeps the JVM from running out of class space or switching its JIT off.
    env = dict(os.environ)
    env.setdefault("JVM_ARGS", "-XX:ReservedCodeCacheSize=512m -XX:MaxMetaspaceSize=2g")
    out: dict[str, dict] = {}
    families = sorted({c.family for c in all_calls()})
    if len(sys.argv) > 1:  # only these families; the others' answers are kept
        wanted = set(sys.argv[1:])
        assert wanted <= set(families), f"no such family: {wanted - set(families)}"
        ids = {c.id for c in all_calls()}
        out = {k: v for k, v in json.loads(OUT.read_text())["calls"].items()
               if k in ids and v["family"] not in wanted}
        families = sorted(wanted)
    for family in families:
        with tempfile.TemporaryFile("w+") as f:
            subprocess.run([sys.executable, __file__, "--family", family], stdout=f,
                           env=env, check=True)
            f.seek(0)
            out.update(json.load(f))
    doc = {"generator": "tests/conformance/generate_flink.py",
           "flink": "PyFlink 2.3, batch mode, parallelism 1, table.local-time-zone=UTC",
           "calls": out}
    OUT.write_text(json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    errors = sum("error" in e for e in out.values())
    print(f"{len(out)} calls ({errors} Flink errors), {time.time() - t0:.0f} s "
          f"-> {OUT.relative_to(HERE.parents[1])}")


if __name__ == "__main__":
    main()
