"""A seeded generator of (Flink SQL, DuckDB SQL) query pairs over generated data with NULLs.

Where Flink and DuckDB disagree, the DuckDB side spells out Flink's semantics explicitly:
integer ``/`` truncates (DuckDB ``//``), ``CAST(DOUBLE AS BIGINT)`` truncates (DuckDB rounds),
``AVG`` of an integer column is an integer (truncated), ``SUM`` of INT stays INT.
"""

from __future__ import annotations

import decimal
import random
from dataclasses import dataclass

import numpy as np
import pyarrow as pa


def make_tables(seed: int = 7, rows: int = 240) -> dict[str, pa.Table]:
    """Two tables with NULLs in every column, split into small batches."""
    rng = np.random.default_rng(seed)

    def nulls(values: list, rate: float = 0.15) -> list:
        return [None if rng.random() < rate else v for v in values]

    words = ["apple", "banana", "cherry", "date", "elder", "fig", "Grape", "kiwi", " lime ", ""]
    t1 = pa.table({
        "k": pa.array(nulls([int(v) for v in rng.integers(0, 30, rows)]), pa.int32()),
        "g": pa.array(nulls([str(rng.choice(["a", "b", "c", "d"])) for _ in range(rows)]),
                      pa.string()),
        "x": pa.array(nulls([int(v) for v in rng.integers(-50, 50, rows)]), pa.int32()),
        "y": pa.array(nulls([float(round(v, 3)) for v in rng.normal(0, 100, rows)]),
                      pa.float64()),
        "d": pa.array(nulls([decimal.Decimal(int(v)).scaleb(-2) for v in
                             rng.integers(-10000, 10000, rows)]), pa.decimal128(10, 2)),
        "s": pa.array(nulls([str(rng.choice(words)) for _ in range(rows)]), pa.string()),
        "b": pa.array(nulls([bool(v) for v in rng.integers(0, 2, rows)]), pa.bool_()),
        "n": pa.array(nulls([int(v) for v in rng.integers(0, 10**12, rows)]), pa.int64()),
    })
    r2 = rows // 3
    t2 = pa.table({
        "k": pa.array(nulls([int(v) for v in rng.integers(0, 40, r2)]), pa.int32()),
        "v": pa.array(nulls([int(v) for v in rng.integers(-1000, 1000, r2)]), pa.int64()),
        "name": pa.array(nulls([str(rng.choice(words)) for _ in range(r2)]), pa.string()),
    })
    return {
        "t1": pa.Table.from_batches(t1.to_batches(max_chunksize=37)),
        "t2": pa.Table.from_batches(t2.to_batches(max_chunksize=11)),
    }


@dataclass(frozen=True)
class Pair:
    flink: str
    duck: str
    ordered: bool = False  # compare in order (ORDER BY over all columns)
    # DuckDB's query for Flink's streaming answer where it differs from batch (a global
    # aggregate over no rows: no row at all in streaming mode, PyFlink 2.3 checked).
    duck_streaming: str | None = None


INT_COLS = ["x", "k"]
BIG_COLS = ["n"]
DBL_COLS = ["y"]
DEC_COLS = ["d"]
STR_COLS = ["s", "g"]


class Gen:
    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)

    def pick(self, xs: list):  # type: ignore[no-untyped-def]
        return self.r.choice(xs)

    # -- expressions: each returns (flink, duck) -----------------------------------------
    def int_expr(self, q: str = "", depth: int = 0) -> tuple[str, str]:
        c = f"{q}{self.pick(INT_COLS)}"
        roll = self.r.random()
        if depth > 1 or roll < 0.35:
            return c, c
        a_f, a_d = self.int_expr(q, depth + 1)
        lit = self.r.randint(1, 9)
        op = self.pick(["+", "-", "*", "/", "%", "abs", "case", "coalesce", "cast"])
        if op in "+-*":
            return f"({a_f} {op} {lit})", f"({a_d} {op} {lit})"
        if op == "/":
            return f"({a_f} / {lit})", f"({a_d} // {lit})"
        if op == "%":
            return f"MOD({a_f}, {lit})", f"({a_d} % {lit})"
        if op == "abs":
            return f"ABS({a_f})", f"ABS({a_d})"
        if op == "case":
            p_f, p_d = self.pred(q, depth + 1)
            return (f"CASE WHEN {p_f} THEN {a_f} ELSE {lit} END",
                    f"CASE WHEN {p_d} THEN {a_d} ELSE {lit} END")
        if op == "coalesce":
            return f"COALESCE({a_f}, {lit})", f"COALESCE({a_d}, {lit})"
        y = f"{q}y"
        return f"CAST({y} AS INT)", f"CAST(TRUNC({y}) AS INT)"

    def dbl_expr(self, q: str = "") -> tuple[str, str]:
        y = f"{q}y"
        op = self.pick(["plain", "mul", "round", "floor", "ceil", "abs", "add_int"])
        if op == "plain":
            return y, y
        if op == "mul":
            return f"{y} * 2.5", f"{y} * 2.5"
        if op == "round":
            return f"ROUND({y}, 1)", f"ROUND({y}, 1)"
        if op == "floor":
            return f"FLOOR({y})", f"FLOOR({y})"
        if op == "ceil":
            return f"CEIL({y})", f"CEIL({y})"
        if op == "abs":
            return f"ABS({y})", f"ABS({y})"
        return f"{y} + {q}x", f"{y} + {q}x"

    def str_expr(self, q: str = "") -> tuple[str, str]:
        c = f"{q}{self.pick(STR_COLS)}"
        op = self.pick(["plain", "upper", "lower", "substr", "trim", "concat", "len_cast",
                        "coalesce"])
        if op == "plain":
            return c, c
        if op == "upper":
            return f"UPPER({c})", f"UPPER({c})"
        if op == "lower":
            return f"LOWER({c})", f"LOWER({c})"
        if op == "substr":
            a, b = self.r.randint(1, 3), self.r.randint(0, 3)
            return f"SUBSTRING({c}, {a}, {b})", f"SUBSTRING({c}, {a}, {b})"
        if op == "trim":
            return f"TRIM({c})", f"TRIM({c})"
        if op == "concat":
            return f"{c} || '-' || {q}g", f"{c} || '-' || {q}g"
        if op == "len_cast":
            return (f"CAST(CHAR_LENGTH({c}) AS STRING)", f"CAST(LENGTH({c}) AS VARCHAR)")
        return f"COALESCE({c}, 'none')", f"COALESCE({c}, 'none')"

    def pred(self, q: str = "", depth: int = 0) -> tuple[str, str]:
        kind = self.pick(["cmp", "cmp", "null", "in", "between", "like", "bool", "and", "or",
                          "not", "dcmp", "strcmp"])
        if depth > 1 and kind in ("and", "or", "not"):
            kind = "cmp"
        if kind == "cmp":
            a_f, a_d = self.int_expr(q, depth + 1)
            op = self.pick(["=", "<>", "<", "<=", ">", ">="])
            lit = self.r.randint(-20, 20)
            return f"{a_f} {op} {lit}", f"{a_d} {op} {lit}"
        if kind == "dcmp":
            op = self.pick(["<", ">"])
            return f"{q}d {op} 12.5", f"{q}d {op} 12.5"
        if kind == "strcmp":
            return f"{q}g > 'b'", f"{q}g > 'b'"
        if kind == "null":
            c = self.pick(["x", "y", "s", "d", "b"])
            neg = self.pick(["", " NOT"])
            return f"{q}{c} IS{neg} NULL", f"{q}{c} IS{neg} NULL"
        if kind == "in":
            vals = ", ".join(str(self.r.randint(-10, 10)) for _ in range(3))
            neg = self.pick(["", "NOT "])
            return f"{q}x {neg}IN ({vals})", f"{q}x {neg}IN ({vals})"
        if kind == "between":
            lo = self.r.randint(-30, 10)
            return f"{q}x BETWEEN {lo} AND {lo + 20}", f"{q}x BETWEEN {lo} AND {lo + 20}"
        if kind == "like":
            pat = self.pick(["a%", "%e%", "_i%", "%"])
            return f"{q}s LIKE '{pat}'", f"{q}s LIKE '{pat}'"
        if kind == "bool":
            return f"{q}b", f"{q}b"
        a_f, a_d = self.pred(q, depth + 1)
        if kind == "not":
            return f"NOT ({a_f})", f"NOT ({a_d})"
        b_f, b_d = self.pred(q, depth + 1)
        word = kind.upper()
        return f"({a_f} {word} {b_f})", f"({a_d} {word} {b_d})"

    def agg(self) -> tuple[str, str]:
        kind = self.pick(["count", "countc", "sumi", "sumd", "sumdec", "min", "max", "avgi",
                          "avgd", "cdist", "minstr", "maxdec", "avgdec", "countf"])
        return {
            "count": ("COUNT(*)", "COUNT(*)"),
            "countc": ("COUNT(y)", "COUNT(y)"),
            "sumi": ("SUM(x)", "SUM(x)"),
            "sumd": ("SUM(y)", "SUM(y)"),
            "sumdec": ("SUM(d)", "SUM(d)"),
            "min": ("MIN(x)", "MIN(x)"),
            "max": ("MAX(y)", "MAX(y)"),
            "avgi": ("AVG(x)", "CAST(TRUNC(SUM(x)::DOUBLE / COUNT(x)) AS INT)"),
            "avgd": ("AVG(y)", "AVG(y)"),
            "cdist": ("COUNT(DISTINCT s)", "COUNT(DISTINCT s)"),
            "minstr": ("MIN(s)", "MIN(s)"),
            "maxdec": ("MAX(d)", "MAX(d)"),
            "avgdec": ("AVG(d)", "ROUND(AVG(d), 6)"),
            "countf": ("COUNT(*) FILTER (WHERE x > 0)", "COUNT(*) FILTER (WHERE x > 0)"),
        }[kind]

    def scalar(self, q: str = "") -> tuple[str, str]:
        return self.pick([self.int_expr, self.dbl_expr, self.str_expr])(q)

    # -- queries -------------------------------------------------------------------------
    def query(self) -> Pair:
        shape = self.pick(["select", "select", "group", "group", "global", "join", "left_join",
                           "union", "subquery", "order_limit", "cte", "distinct", "having",
                           "join_group", *SUBQUERY_SHAPES, *JOIN_SHAPES, *SET_SHAPES])
        return getattr(self, f"q_{shape}")()

    def _items(self, n: int, q: str = "") -> tuple[list[str], list[str]]:
        fl, dk = [], []
        for i in range(n):
            f, d = self.scalar(q)
            fl.append(f"{f} AS c{i}")
            dk.append(f"{d} AS c{i}")
        return fl, dk

    def _where(self, q: str = "") -> tuple[str, str]:
        if self.r.random() < 0.3:
            return "", ""
        f, d = self.pred(q)
        return f" WHERE {f}", f" WHERE {d}"

    def q_select(self) -> Pair:
        fl, dk = self._items(self.r.randint(1, 4))
        wf, wd = self._where()
        return Pair(f"SELECT {', '.join(fl)} FROM t1{wf}", f"SELECT {', '.join(dk)} FROM t1{wd}")

    def _aggs(self, n: int) -> tuple[list[str], list[str]]:
        fl, dk = [], []
        for i in range(n):
            f, d = self.agg()
            fl.append(f"{f} AS a{i}")
            dk.append(f"{d} AS a{i}")
        return fl, dk

    def q_group(self) -> Pair:
        key_f, key_d = self.pick([("g", "g"), ("k", "k"), ("b", "b"),
                                  ("MOD(x, 3)", "(x % 3)")])
        fl, dk = self._aggs(self.r.randint(1, 4))
        wf, wd = self._where()
        return Pair(f"SELECT {key_f} AS key, {', '.join(fl)} FROM t1{wf} GROUP BY {key_f}",
                    f"SELECT {key_d} AS key, {', '.join(dk)} FROM t1{wd} GROUP BY {key_d}")

    def q_global(self) -> Pair:
        fl, dk = self._aggs(self.r.randint(1, 3))
        wf, wd = self._where()
        duck = f"SELECT {', '.join(dk)} FROM t1{wd}"
        return Pair(f"SELECT {', '.join(fl)} FROM t1{wf}", duck,
                    duck_streaming=f"{duck} HAVING COUNT(*) > 0")

    def q_having(self) -> Pair:
        fl, dk = self._aggs(2)
        n = self.r.randint(1, 15)
        return Pair(f"SELECT g, {', '.join(fl)} FROM t1 GROUP BY g HAVING COUNT(*) > {n}",
                    f"SELECT g, {', '.join(dk)} FROM t1 GROUP BY g HAVING COUNT(*) > {n}")

    def q_join(self, kind: str = "JOIN") -> Pair:
        fl, dk = self._items(2, "a.")
        wf, wd = self._where("a.")
        extra = self.pick(["", " AND b.v > 0", " AND a.x < b.v"])
        cols_f = ", ".join([*fl, "b.v", "b.name"])
        cols_d = ", ".join([*dk, "b.v", "b.name"])
        return Pair(f"SELECT {cols_f} FROM t1 AS a {kind} t2 AS b ON a.k = b.k{extra}{wf}",
                    f"SELECT {cols_d} FROM t1 AS a {kind} t2 AS b ON a.k = b.k{extra}{wd}")

    def q_left_join(self) -> Pair:
        return self.q_join("LEFT JOIN")

    def q_join_group(self) -> Pair:
        return Pair("SELECT a.g, COUNT(*) AS c, SUM(b.v) AS sv, MAX(b.name) AS mn FROM t1 AS a "
                    "JOIN t2 AS b ON a.k = b.k GROUP BY a.g",
                    "SELECT a.g, COUNT(*) AS c, SUM(b.v) AS sv, MAX(b.name) AS mn FROM t1 AS a "
                    "JOIN t2 AS b ON a.k = b.k GROUP BY a.g")

    def q_union(self) -> Pair:
        a_f, a_d = self.int_expr()
        wf1, wd1 = self._where()
        wf2, wd2 = self._where()
        return Pair(f"SELECT {a_f} AS v, g FROM t1{wf1} UNION ALL SELECT CAST(v AS INT) AS v, "
                    f"name AS g FROM t2",
                    f"SELECT {a_d} AS v, g FROM t1{wd1} UNION ALL SELECT CAST(v AS INT) AS v, "
                    f"name AS g FROM t2") if self.r.random() < 0.5 else \
            Pair(f"SELECT x, s FROM t1{wf1} UNION ALL SELECT x, s FROM t1{wf2}",
                 f"SELECT x, s FROM t1{wd1} UNION ALL SELECT x, s FROM t1{wd2}")

    def q_subquery(self) -> Pair:
        fl, dk = self._aggs(2)
        return Pair(f"SELECT key, a0, a1 FROM (SELECT g AS key, {', '.join(fl)} FROM t1 "
                    f"GROUP BY g) AS sub WHERE key IS NOT NULL",
                    f"SELECT key, a0, a1 FROM (SELECT g AS key, {', '.join(dk)} FROM t1 "
                    f"GROUP BY g) AS sub WHERE key IS NOT NULL")

    def q_order_limit(self) -> Pair:
        fl, dk = self._items(2)
        n = self.r.randint(1, 30)
        direction = self.pick(["ASC", "DESC"])
        # Order by every output column so that the order is total.
        return Pair(f"SELECT {', '.join(fl)} FROM t1 ORDER BY c0 {direction}, c1 LIMIT {n}",
                    f"SELECT {', '.join(dk)} FROM t1 ORDER BY c0 {direction} "
                    f"NULLS {'FIRST' if direction == 'ASC' else 'LAST'}, c1 NULLS FIRST "
                    f"LIMIT {n}", ordered=True)

    def q_cte(self) -> Pair:
        pf, pd = self.pred()
        return Pair(f"WITH f AS (SELECT g, x, y FROM t1 WHERE {pf}) SELECT g, COUNT(*) AS c, "
                    "SUM(x) AS sx FROM f GROUP BY g",
                    f"WITH f AS (SELECT g, x, y FROM t1 WHERE {pd}) SELECT g, COUNT(*) AS c, "
                    "SUM(x) AS sx FROM f GROUP BY g")

    def q_distinct(self) -> Pair:
        f, d = self.pick([("g, b", "g, b"), ("MOD(x, 4) AS m", "(x % 4) AS m"),
                          ("UPPER(s) AS u", "UPPER(s) AS u")])
        return Pair(f"SELECT DISTINCT {f} FROM t1", f"SELECT DISTINCT {d} FROM t1")


    # -- subqueries (t2.k and t2.v hold NULLs: IN / NOT IN / ALL meet SQL's three values) ----
    def _inner_where(self) -> str:
        return self.pick(["", " AND b.v > 0", " AND b.v > a.x", " AND b.name <> a.s",
                          " AND b.v IS NOT NULL"])

    def q_exists(self) -> Pair:
        neg = self.pick(["", "NOT "])
        wf, wd = self._where("a.")
        extra = self._inner_where()
        where_f = f"{wf} AND " if wf else " WHERE "
        where_d = f"{wd} AND " if wd else " WHERE "
        sub = f"EXISTS (SELECT 1 FROM t2 AS b WHERE b.k = a.k{extra})"
        return Pair(f"SELECT a.k, a.x, a.g FROM t1 AS a{where_f}{neg}{sub}",
                    f"SELECT a.k, a.x, a.g FROM t1 AS a{where_d}{neg}{sub}")

    def q_in_subquery(self) -> Pair:
        neg = self.pick(["", "NOT "])
        inner = self.pick([
            f"SELECT b.k FROM t2 AS b WHERE b.v > {self.r.randint(-500, 500)}",
            "SELECT b.k FROM t2 AS b WHERE b.k IS NOT NULL",
            "SELECT CAST(b.v AS INT) FROM t2 AS b WHERE b.k = a.k",
            "SELECT b.k FROM t2 AS b WHERE b.name = a.s",
        ])
        col = "a.x" if "CAST(b.v" in inner else "a.k"
        if self.r.random() < 0.4:  # in the SELECT list: a BOOLEAN with NULLs
            sql = f"SELECT a.k, a.x, {col} {neg}IN ({inner}) AS m FROM t1 AS a"
        else:
            sql = f"SELECT a.k, a.x, a.s FROM t1 AS a WHERE {col} {neg}IN ({inner})"
        return Pair(sql, sql)

    def q_scalar_subquery(self) -> Pair:
        agg_f, agg_d = self.pick([("COUNT(*)", "COUNT(*)"), ("SUM(b.v)", "SUM(b.v)"),
                                  ("MAX(b.v)", "MAX(b.v)"), ("MIN(b.name)", "MIN(b.name)"),
                                  ("COUNT(b.name)", "COUNT(b.name)"),
                                  ("AVG(b.v)", "CAST(TRUNC(SUM(b.v)::DOUBLE / COUNT(b.v)) "
                                               "AS BIGINT)")])
        corr = self.pick(["b.k = a.k", "b.k = a.k AND b.v > 0", "b.v > 100"])
        sub_f = f"(SELECT {agg_f} FROM t2 AS b WHERE {corr})"
        sub_d = f"(SELECT {agg_d} FROM t2 AS b WHERE {corr})"
        if self.r.random() < 0.5:
            return Pair(f"SELECT a.k, a.g, {sub_f} AS sv FROM t1 AS a",
                        f"SELECT a.k, a.g, {sub_d} AS sv FROM t1 AS a")
        if agg_f.startswith("MIN(b.name"):
            return Pair(f"SELECT a.k, a.s FROM t1 AS a WHERE a.s < {sub_f}",
                        f"SELECT a.k, a.s FROM t1 AS a WHERE a.s < {sub_d}")
        op = self.pick(["<", ">", "="])
        return Pair(f"SELECT a.k, a.x FROM t1 AS a WHERE a.x * 20 {op} {sub_f}",
                    f"SELECT a.k, a.x FROM t1 AS a WHERE a.x * 20 {op} {sub_d}")

    def q_quantified(self) -> Pair:
        op = self.pick(["=", "<>", "<", "<=", ">", ">="])
        q = self.pick(["ANY", "ALL", "SOME"])
        inner = self.pick([f"SELECT b.v FROM t2 AS b WHERE b.k < {self.r.randint(0, 40)}",
                           "SELECT b.v FROM t2 AS b WHERE b.k = a.k",
                           "SELECT b.v FROM t2 AS b WHERE b.v IS NOT NULL AND b.k < 10"])
        sql = f"SELECT a.k, a.x FROM t1 AS a WHERE a.x * 20 {op} {q} ({inner})"
        return Pair(sql, sql)

    # -- join forms ---------------------------------------------------------------------------
    def q_comma_join(self) -> Pair:
        pf, pd = self.pred("a.")
        return Pair(f"SELECT a.x, a.g, b.v FROM t1 AS a, t2 AS b WHERE a.k = b.k AND {pf}",
                    f"SELECT a.x, a.g, b.v FROM t1 AS a, t2 AS b WHERE a.k = b.k AND {pd}")

    def q_cross_join(self) -> Pair:
        sql = ("SELECT a.g, b.name FROM (SELECT DISTINCT g FROM t1) AS a CROSS JOIN "
               f"(SELECT DISTINCT name FROM t2 WHERE k < {self.r.randint(5, 40)}) AS b")
        return Pair(sql, sql)

    def q_non_equi_join(self) -> Pair:
        kind = self.pick(["JOIN", "LEFT JOIN", "RIGHT JOIN", "FULL JOIN"])
        cond = self.pick(["a.x * 20 > b.v AND a.k < 5", "a.k < b.k AND b.v > 900",
                          "a.k = b.k OR a.x = b.v"])
        sql = f"SELECT a.k, a.x, b.k AS bk, b.v FROM t1 AS a {kind} t2 AS b ON {cond}"
        return Pair(sql, sql)

    def q_full_join(self) -> Pair:
        extra = self.pick(["", " AND b.v > 0", " AND a.x < b.v"])
        sql = (f"SELECT a.k, a.x, b.k AS bk, b.v FROM t1 AS a FULL OUTER JOIN t2 AS b "
               f"ON a.k = b.k{extra}")
        return Pair(sql, sql)


    # -- set operations (NULLs are equal; ALL keeps multiplicities) ------------------------------
    def q_setop(self) -> Pair:
        op = self.pick(["INTERSECT", "INTERSECT ALL", "INTERSECT DISTINCT", "EXCEPT",
                        "EXCEPT ALL", "EXCEPT DISTINCT", "UNION", "UNION ALL"])
        lf, ld = self.pred()
        left_f = self.pick(["SELECT k, g FROM t1", f"SELECT k, g FROM t1 WHERE {lf}",
                            "SELECT MOD(x, 5) AS k, s AS g FROM t1"])
        left_d = left_f.replace(lf, ld).replace("MOD(x, 5)", "(x % 5)")
        right = self.pick(["SELECT k, name FROM t2", "SELECT k, s FROM t1 WHERE x < 10",
                           "SELECT k, name FROM t2 WHERE v > 0", "SELECT k, g FROM t1"])
        return Pair(f"{left_f} {op} {right}", f"{left_d} {op} {right}")


    # -- grouping sets -------------------------------------------------------------------------
    def q_grouping_sets(self) -> Pair:
        form = self.pick(["GROUPING SETS ((g, b), (g), ())", "ROLLUP (g, b)", "CUBE (g, b)",
                          "g, ROLLUP (b)", "GROUPING SETS (g, b)", "CUBE (g, MOD(x, 2))",
                          "GROUPING SETS ((g), (g), ())"])
        fl, dk = self._aggs(self.r.randint(1, 3))
        wf, wd = self._where()
        cols = "g, MOD(x, 2) AS m" if "MOD" in form else "g, b" if "b" in form else "g"
        grouping = self.pick(["", ", GROUPING(g) AS gg", ", GROUPING(g, b) AS gb"]) \
            if cols == "g, b" else ", GROUPING(g) AS gg"
        sql = f"SELECT {cols}, {', '.join(fl)}{grouping} FROM t1{wf} GROUP BY {form}"
        # Flink (PyFlink 2.3, both modes): the empty grouping set over no rows gives no row.
        duck = (f"SELECT {cols}, {', '.join(dk)}{grouping} FROM t1{wd} GROUP BY {form} "
                "HAVING COUNT(*) > 0")
        return Pair(sql, duck.replace("MOD(x, 2)", "(x % 2)"))


    # -- window functions (ordered by n, unique among non-NULL rows, so the order is total) --
    def q_window(self) -> Pair:
        part = self.pick(["", "PARTITION BY g ", "PARTITION BY b ", "PARTITION BY g, b "])
        direction = self.pick(["", " DESC"])
        over = f"OVER ({part}ORDER BY n{direction} NULLS FIRST"
        frame = self.pick(["", " ROWS BETWEEN 2 PRECEDING AND CURRENT ROW",
                           " ROWS BETWEEN 1 PRECEDING AND 2 FOLLOWING",
                           " ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING",
                           " ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING",
                           " RANGE BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW"])
        fl, dk = [], []
        for i in range(self.r.randint(1, 3)):
            f, d = self.pick([
                ("ROW_NUMBER()", "ROW_NUMBER()"), ("RANK()", "RANK()"),
                ("DENSE_RANK()", "DENSE_RANK()"), ("PERCENT_RANK()", "PERCENT_RANK()"),
                ("CUME_DIST()", "CUME_DIST()"), ("NTILE(3)", "NTILE(3)"),
                ("LAG(x)", "LAG(x)"), ("LEAD(s, 2, 'none')", "LEAD(s, 2, 'none')"),
                ("SUM(x)", "SUM(x)"), ("COUNT(y)", "COUNT(y)"), ("MIN(s)", "MIN(s)"),
                ("MAX(d)", "MAX(d)"), ("AVG(y)", "AVG(y)"),
                ("FIRST_VALUE(x)", "FIRST_VALUE(x IGNORE NULLS)"),
                ("LAST_VALUE(s)", "LAST_VALUE(s IGNORE NULLS)")])
            framed = not any(f.startswith(r) for r in ("ROW_NUMBER", "RANK", "DENSE", "PERC",
                                                        "CUME", "NTILE", "LAG", "LEAD"))
            tail = (frame if framed else "") + ")"
            fl.append(f"{f} {over}{tail} AS w{i}")
            dk.append(f"{d} {over}{tail} AS w{i}")
        return Pair(f"SELECT n, g, {', '.join(fl)} FROM t1 WHERE n IS NOT NULL",
                    f"SELECT n, g, {', '.join(dk)} FROM t1 WHERE n IS NOT NULL")


    def q_window_group(self) -> Pair:
        """Window functions over grouped rows (evaluated after GROUP BY)."""
        agg_f, agg_d = self.pick([("SUM(x)", "SUM(x)"), ("COUNT(*)", "COUNT(*)"),
                                  ("MAX(y)", "MAX(y)"), ("MIN(s)", "MIN(s)")])
        fn = self.pick(["RANK()", "DENSE_RANK()", "ROW_NUMBER()", "SUM(COUNT(*))",
                        f"LAG({agg_f})", "CUME_DIST()"])
        keys = self.pick(["g", "g, b"])
        part = "PARTITION BY b " if keys == "g, b" and self.r.random() < 0.5 else ""
        tie = keys.replace(", ", " NULLS FIRST, ")
        over = f"OVER ({part}ORDER BY {agg_f} NULLS FIRST, {tie} NULLS FIRST)"
        having = self.pick(["", " HAVING COUNT(*) > 2"])
        sql = f"SELECT {keys}, {agg_f} AS a, {fn} {over} AS w FROM t1 GROUP BY {keys}{having}"
        return Pair(sql, sql.replace(agg_f, agg_d))


SET_SHAPES = ["setop", "grouping_sets", "window", "window_group"]
SUBQUERY_SHAPES = ["exists", "in_subquery", "scalar_subquery", "quantified"]
JOIN_SHAPES = ["comma_join", "cross_join", "non_equi_join", "full_join"]


def pairs(n: int, seed: int = 2026) -> list[Pair]:
    g = Gen(seed)
    return [g.query() for _ in range(n)]
