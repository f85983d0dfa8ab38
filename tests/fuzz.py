"""A grammar-based SQL fuzzer (seeded, reproducible) for the front end's promise: whatever
the statement, sqlengine answers with rows or with a SqlEngineError, never another exception
and never a hang.

Statements are drawn from a small grammar of Flink SQL over two registered tables (SELECT
lists of expressions over every type, functions from the engine's own signature list, CASE,
CAST, subqueries, joins, window TVFs, GROUP BY / HAVING / ORDER BY / LIMIT, set operations,
MATCH_RECOGNIZE, hints, DDL), then a share of them is mutated (a token dropped, doubled or
swapped, the statement cut short, deep nesting, huge literals, control characters), so that
both valid and invalid SQL go through. ``run(seed, n)`` returns the tally; bench/fuzz.py runs
20,000 and tests/test_fuzz.py a seeded slice.
"""

from __future__ import annotations

import datetime as dt
import random
import signal
import time
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal

import pyarrow as pa

import sqlengine
from sqlengine.errors import SqlEngineError

COLUMNS = {"a": "INT", "b": "BIGINT", "c": "DOUBLE", "d": "DECIMAL(10, 2)", "s": "STRING",
           "ts": "TIMESTAMP(3)", "f": "BOOLEAN", "day": "DATE"}
LITERALS = ["1", "0", "-7", "2147483647", "9223372036854775807", "1.5", "1e3", "'x'", "''",
            "'2024-01-01'", "NULL", "TRUE", "FALSE", "DATE '2024-02-29'",
            "TIMESTAMP '2024-01-01 10:00:00'", "INTERVAL '1' HOUR", "CAST(NULL AS INT)",
            "123456789012345678901234567890", "0.000000001", "'é ✓'"]
TYPES = ["INT", "BIGINT", "DOUBLE", "DECIMAL(5, 2)", "DECIMAL(38, 10)", "STRING", "DATE",
         "TIMESTAMP(3)", "BOOLEAN", "TINYINT", "SMALLINT", "FLOAT", "VARCHAR(3)", "BYTES",
         "ARRAY<INT>", "TIME"]
BINARY = ["+", "-", "*", "/", "%", "=", "<>", "<", "<=", ">", ">=", "AND", "OR", "||"]
KEYWORDS = ["SELECT", "FROM", "WHERE", "GROUP BY", "ORDER BY", "(", ")", ",", "JOIN", "ON",
            "UNION", "AS", "NOT", "NULL", "CASE", "END", "OVER", "TABLE", "*", ";", "'", "`",
            "/*", "--", "MATCH_RECOGNIZE", "/*+ OPTIONS('x'='y') */", "\x00", "?", ":p"]


def tables() -> dict[str, pa.Table]:
    base = dt.datetime(2024, 1, 1)
    n = 12
    t = pa.table({
        "a": pa.array([i % 5 - 1 if i % 7 else None for i in range(n)], pa.int32()),
        "b": pa.array([i * 1_000_000_007 for i in range(n)], pa.int64()),
        "c": pa.array([i / 3 if i % 4 else None for i in range(n)], pa.float64()),
        "d": pa.array([Decimal(i) / 4 for i in range(n)], pa.decimal128(10, 2)),
        "s": pa.array([f"s{i % 3}" if i % 5 else None for i in range(n)], pa.string()),
        "ts": pa.array([base + dt.timedelta(minutes=i * 7) for i in range(n)],
                       pa.timestamp("ms")),
        "f": pa.array([i % 2 == 0 for i in range(n)], pa.bool_()),
        "day": pa.array([(base + dt.timedelta(days=i)).date() for i in range(n)], pa.date32()),
    })
    u = pa.table({"a": pa.array([0, 1, 1, 3, None], pa.int32()),
                  "e": pa.array(["x", "y", "z", None, "w"], pa.string())})
    return {"t": t, "u": u}


class Grammar:
    def __init__(self, rng: random.Random) -> None:
        self.r = rng
        from sqlengine.functions import SIGNATURES

        self.functions = sorted(SIGNATURES)

    def pick(self, items: list[str]) -> str:
        return self.r.choice(items)

    def expr(self, depth: int = 0) -> str:
        r = self.r
        if depth > 3 or r.random() < 0.3:
            return self.pick([*COLUMNS, *COLUMNS, *LITERALS])
        kind = r.randrange(8)
        if kind == 0:
            return f"({self.expr(depth + 1)} {self.pick(BINARY)} {self.expr(depth + 1)})"
        if kind == 1:
            args = ", ".join(self.expr(depth + 1) for _ in range(r.randint(0, 3)))
            return f"{self.pick(self.functions).upper()}({args})"
        if kind == 2:
            return (f"CASE WHEN {self.expr(depth + 1)} THEN {self.expr(depth + 1)} "
                    f"ELSE {self.expr(depth + 1)} END")
        if kind == 3:
            return f"CAST({self.expr(depth + 1)} AS {self.pick(TYPES)})"
        if kind == 4:
            return f"{self.expr(depth + 1)} IS {self.pick(['NULL', 'NOT NULL', 'TRUE'])}"
        if kind == 5:
            return f"{self.expr(depth + 1)} IN ({self.expr(depth + 1)}, {self.expr(depth + 1)})"
        if kind == 6:
            agg = self.pick(["COUNT", "SUM", "MIN", "MAX", "AVG", "COUNT(DISTINCT"])
            inner = self.expr(depth + 1)
            return f"{agg}({inner}))" if agg.endswith("DISTINCT") else f"{agg}({inner})"
        return f"(SELECT {self.expr(depth + 1)} FROM u LIMIT 1)"

    def from_item(self) -> str:
        r = self.r
        k = r.randrange(7)
        if k == 0:
            return "t"
        if k == 1:
            return "t JOIN u ON t.a = u.a"
        if k == 2:
            return f"t LEFT JOIN u ON t.a = u.a AND {self.expr(2)}"
        if k == 3:
            fn = self.pick([
                "TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' MINUTES)",
                "HOP(TABLE t, DESCRIPTOR(ts), INTERVAL '5' MINUTES, INTERVAL '15' MINUTES)",
                "CUMULATE(TABLE t, DESCRIPTOR(ts), INTERVAL '5' MINUTES, INTERVAL '20' MINUTES)",
                "SESSION(TABLE t PARTITION BY s, DESCRIPTOR(ts), INTERVAL '10' MINUTES)"])
            return f"TABLE({fn})" if r.random() < 0.5 else fn
        if k == 4:
            return f"(SELECT * FROM t WHERE {self.expr(1)}) AS q"
        if k == 5:
            return "t /*+ OPTIONS('scan.watermark.emit.strategy' = 'on-event') */"
        return ("t MATCH_RECOGNIZE (PARTITION BY s ORDER BY ts MEASURES A.a AS x, "
                f"LAST(B.b) AS y PATTERN (A B{self.pick(['', '+?', '{1,2}?', '?'])} C) "
                f"DEFINE B AS {self.expr(2)}, C AS {self.expr(2)})")

    def select(self) -> str:
        r = self.r
        items = ", ".join(f"{self.expr()} AS c{i}" for i in range(r.randint(1, 3)))
        sql = f"SELECT {self.pick(['', 'DISTINCT '])}{items} FROM {self.from_item()}"
        if r.random() < 0.5:
            sql += f" WHERE {self.expr()}"
        if r.random() < 0.3:
            sql += f" GROUP BY {self.pick(list(COLUMNS))}"
            if r.random() < 0.5:
                sql += f" HAVING {self.expr()}"
        if r.random() < 0.3:
            sql += f" ORDER BY {self.pick(['1', 'c0', self.expr()])}"
        if r.random() < 0.3:
            sql += f" LIMIT {self.pick(['0', '1', '5', '-1', '1000000000000'])}"
        return sql

    def statement(self) -> str:
        r = self.r
        k = r.randrange(10)
        if k < 6:
            return self.select()
        if k == 6:
            op = self.pick(["UNION", "UNION ALL", "INTERSECT", "EXCEPT", "INTERSECT ALL"])
            return f"{self.select()} {op} {self.select()}"
        if k == 7:
            return f"EXPLAIN {self.select()}"
        if k == 8:
            cols = ", ".join(f"{n} {self.pick(TYPES)}" for n in ("x", "y"))
            return (f"CREATE TABLE z{r.randrange(10**6)} ({cols}) WITH ('connector' = "
                    f"'{self.pick(['datagen', 'blackhole', 'print', 'nope'])}'"
                    f"{self.pick(['', ', ' + repr('number-of-rows') + ' = ' + repr('3')])})")
        return self.pick(["SET 'parallelism.default' = '2'", "SET 'x.y' = 'z'", "SHOW TABLES",
                          "DESCRIBE t", "RESET", "SHOW FUNCTIONS",
                          "SET 'execution.runtime-mode' = 'batch'"])

    def mutate(self, sql: str) -> str:
        r = self.r
        words = sql.split(" ")
        k = r.randrange(8)
        if k == 0 and len(words) > 1:
            del words[r.randrange(len(words))]
        elif k == 1:
            i = r.randrange(len(words))
            words.insert(i, words[i])
        elif k == 2 and len(words) > 2:
            i, j = r.randrange(len(words)), r.randrange(len(words))
            words[i], words[j] = words[j], words[i]
        elif k == 3:
            words.insert(r.randrange(len(words) + 1), self.pick(KEYWORDS))
        elif k == 4:
            return sql[: r.randrange(len(sql) + 1)]
        elif k == 5:
            n = r.choice([50, 300, 3000])
            return f"SELECT {'(' * n}1{')' * n} FROM t"
        elif k == 6:
            return f"SELECT {r.choice(['9' * 400, '1' + '0' * 40 + 'e999', '0x' + 'f' * 50])}"
        else:
            return " ".join(words) + self.pick(["", ";", " ;;", " --", " /*"])
        return " ".join(words)


@dataclass
class Tally:
    statements: int = 0
    rows: int = 0
    errors: Counter = field(default_factory=Counter)  # SqlEngineError subclasses
    crashes: list[tuple[str, str]] = field(default_factory=list)  # (sql, exception)
    bugs: list[tuple[str, str]] = field(default_factory=list)  # InternalError: "a bug"
    hangs: list[str] = field(default_factory=list)
    slowest: float = 0.0


class _Hang(BaseException):
    pass


def run(seed: int, n: int, timeout_s: int = 10, mutate: float = 0.4) -> Tally:
    """Run ``n`` statements drawn with ``seed``: every one must give rows or a SqlEngineError,
    within ``timeout_s`` seconds."""
    rng = random.Random(seed)
    g = Grammar(rng)
    data = tables()
    tally = Tally()

    def alarm(signum: int, frame: object) -> None:
        raise _Hang

    previous = signal.signal(signal.SIGALRM, alarm)
    try:
        for i in range(n):
            if i % 50 == 0:
                s = sqlengine.connect({"execution.runtime-mode": rng.choice(
                    ["batch", "batch", "streaming"])})
                s.register("t", data["t"], rowtime="ts", watermark="ts - INTERVAL '1' MINUTE")
                s.register("u", data["u"])
            sql = g.statement()
            if rng.random() < mutate:
                sql = g.mutate(sql)
            tally.statements += 1
            start = time.perf_counter()
            signal.alarm(timeout_s)
            try:
                for result in s.execute(sql):
                    if result.table is not None:
                        tally.rows += result.table.num_rows
            except SqlEngineError as e:
                tally.errors[type(e).__name__] += 1
                if type(e).__name__ == "InternalError":
                    tally.bugs.append((sql, str(e).splitlines()[0][:300]))
            except _Hang:
                tally.hangs.append(sql)
            except Exception as e:  # the defect this fuzzer looks for
                tally.crashes.append((sql, f"{type(e).__name__}: {e}"[:300]))
            finally:
                signal.alarm(0)
            tally.slowest = max(tally.slowest, time.perf_counter() - start)
    finally:
        signal.signal(signal.SIGALRM, previous)
    return tally
