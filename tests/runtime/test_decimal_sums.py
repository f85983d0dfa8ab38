"""SUM / AVG of DECIMAL in a GROUP BY keep exact unscaled integers in int64 state and move to
Python ints when a sum outgrows int64 (on main every sum was a Python Decimal per group and
batch: TPC-H q17 at SF 1 took 6.9 s, 2.2 s after). Expected values from Python's decimal."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, getcontext

import pyarrow as pa
import pytest

import sqlengine

getcontext().prec = 60
BIG = Decimal("92233720368547758.07")  # 2**63 - 1 hundredths: the largest int64 unscaled


def _table() -> pa.Table:
    ks, vs = [], []
    for i in range(3000):
        ks.append("abc"[i % 3])
        vs.append(BIG - Decimal(i) / 100 if i % 3 != 2 else Decimal(i % 7) - Decimal("3.05"))
    return pa.table({"k": ks, "v": pa.array(vs, pa.decimal128(38, 2))})


@pytest.mark.parametrize("mode", ["batch", "streaming"])
@pytest.mark.parametrize("chunk", [1000, 7])
def test_sums_past_int64_stay_exact(mode: str, chunk: int) -> None:
    t = _table()
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.register("t", pa.Table.from_batches(t.to_batches(max_chunksize=chunk)))
    result = s.sql("SELECT k, SUM(v) AS s, AVG(v) AS a, COUNT(v) AS n FROM t GROUP BY k"
                   ).collect()
    assert result.schema.field("a").type == pa.decimal128(38, 6)  # Flink's AVG type
    got = {r["k"]: (r["s"], r["a"], r["n"]) for r in result.to_pylist()}
    want = {}
    for k in "abc":
        vals = [v for kk, v in zip(t["k"].to_pylist(), t["v"].to_pylist()) if kk == k]
        total = sum(vals, Decimal(0))
        avg = (total / len(vals)).quantize(Decimal("0.000001"), rounding=ROUND_HALF_UP)
        want[k] = (total, avg, len(vals))
    assert got == want
    assert got["a"][0] > Decimal(2 ** 63) / 100  # (past int64: the Python-int path ran)


def test_sum_with_retractions_stays_exact() -> None:
    # An updating input: the inner GROUP BY's updates retract old sums from the outer one.
    t = _table()
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.register("t", pa.Table.from_batches(t.to_batches(max_chunksize=100)))
    got = s.sql("SELECT SUM(s) AS total FROM (SELECT k, SUM(v) AS s FROM t GROUP BY k)"
                ).collect().to_pylist()[0]["total"]
    assert got == sum(t["v"].to_pylist(), Decimal(0))


def _priced(nulls: bool | str) -> pa.Table:
    """``nulls``: True, a NULL price in every batch of 700 rows; "some", only in the second
    batch (the others' sums take the int64 path, that one the decimal one)."""
    import random

    r = random.Random(5)
    rows = {"k": [], "p": [], "d": [], "t": []}
    for i in range(4000):
        rows["k"].append("xyz"[i % 3])
        null = i % 97 == 0 if nulls is True else (nulls == "some" and i in (701, 1300))
        rows["p"].append(None if null else Decimal(r.randint(-10**13, 10**13)) / 100)
        rows["d"].append(Decimal(r.randint(0, 10)) / 100)
        rows["t"].append(Decimal(r.randint(0, 8)) / 100)
    return pa.table({"k": rows["k"], "p": pa.array(rows["p"], pa.decimal128(15, 2)),
                     "d": pa.array(rows["d"], pa.decimal128(15, 2)),
                     "t": pa.array(rows["t"], pa.decimal128(15, 2))})


@pytest.mark.parametrize("parallelism", [1, 2])
@pytest.mark.parametrize("nulls", [False, True, "some"])
@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_sums_of_decimal_products_are_exact(mode: str, nulls: bool | str,
                                            parallelism: int) -> None:
    # TPC-H's shapes: SUM(p * (1 - d)), SUM(p * (1 - d) * (1 + t)), AVG of a product, and
    # the same under FILTER; the products are summed as int64 unscaled values where no
    # value is NULL (decimal_int64.unscaled), else through decimal128 arrays. At
    # parallelism 2 in two phases: the local phase's partial sums (partials.py) too.
    t = _priced(nulls)
    s = sqlengine.connect({"execution.runtime-mode": mode,
                           "parallelism.default": str(parallelism),
                           "table.optimizer.agg-phase-strategy": "TWO_PHASE"})
    s.register("t", pa.Table.from_batches(t.to_batches(max_chunksize=700)))
    result = s.sql(
        "SELECT k, SUM(p * (1 - d)) AS a, SUM(p * (1 - d) * (1 + t)) AS b, AVG(p * d) AS c, "
        "SUM(p * (1 - d)) FILTER (WHERE d > 0.05) AS f, SUM(p) AS s FROM t GROUP BY k"
    ).collect()
    got = {r["k"]: r for r in result.to_pylist()}
    cols = {c: t[c].to_pylist() for c in t.column_names}
    for k in "xyz":
        rows = [i for i, kk in enumerate(cols["k"]) if kk == k]
        live = [i for i in rows if cols["p"][i] is not None]

        def col(c: str, i: int) -> Decimal:
            return cols[c][i]

        a = sum((col("p", i) * (1 - col("d", i)) for i in live), Decimal(0))
        b = sum((col("p", i) * (1 - col("d", i)) * (1 + col("t", i)) for i in live),
                Decimal(0))
        c = sum((col("p", i) * col("d", i) for i in live), Decimal(0)) / len(live)
        f = sum((col("p", i) * (1 - col("d", i)) for i in live if col("d", i) > Decimal(
            "0.05")), Decimal(0))
        assert got[k]["a"] == a
        assert got[k]["b"] == b
        scale = result.schema.field("c").type.scale
        assert got[k]["c"] == c.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP)
        assert got[k]["f"] == f
        assert got[k]["s"] == sum((col("p", i) for i in live), Decimal(0))


@pytest.mark.parametrize("parallelism", [1, 2])
@pytest.mark.parametrize("nulls", [False, "some"])
def test_window_sums_of_decimal_products_are_exact(nulls: bool | str,
                                                   parallelism: int) -> None:
    """A TUMBLE window's SUM / AVG of DECIMAL products (partials.py; at parallelism 2 the
    local window phase's partial sums too), against Python's decimal per window."""
    import datetime as dt

    t = _priced(nulls)
    start = dt.datetime(2024, 1, 1)
    t = t.append_column("ts", pa.array([start + dt.timedelta(seconds=i)
                                        for i in range(t.num_rows)], pa.timestamp("ms")))
    s = sqlengine.connect({"parallelism.default": str(parallelism),
                           "table.optimizer.agg-phase-strategy": "TWO_PHASE"})
    s.register("t", pa.Table.from_batches(t.to_batches(max_chunksize=700)),
               rowtime="ts")
    result = s.sql(
        "SELECT k, window_start AS w, SUM(p * (1 - d)) AS a, AVG(p * d) AS c, SUM(p) AS s "
        "FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' MINUTE)) "
        "GROUP BY k, window_start, window_end").collect()
    got = {(r["k"], r["w"]): r for r in result.to_pylist()}
    cols = {c: t[c].to_pylist() for c in t.column_names}
    groups: dict[tuple[str, dt.datetime], list[int]] = {}
    for i, (k, ts) in enumerate(zip(cols["k"], cols["ts"])):
        w = ts.replace(minute=ts.minute // 10 * 10, second=0)
        groups.setdefault((k, w), []).append(i)
    assert set(got) == set(groups)
    scale = result.schema.field("c").type.scale
    for key, rows in groups.items():
        live = [i for i in rows if cols["p"][i] is not None]
        p, d = cols["p"], cols["d"]
        assert got[key]["a"] == sum((p[i] * (1 - d[i]) for i in live), Decimal(0))
        assert got[key]["s"] == sum((p[i] for i in live), Decimal(0))
        c = sum((p[i] * d[i] for i in live), Decimal(0)) / len(live)
        assert got[key]["c"] == c.quantize(Decimal(1).scaleb(-scale), rounding=ROUND_HALF_UP)


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_literals_in_summed_decimal_expressions(mode: str) -> None:
    # A literal operand is one numpy value broadcast over the rows (decimal_int64's
    # _literal_operand): decimal and integer literals, negative ones, on either side, alone.
    t = _priced(False)
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.register("t", pa.Table.from_batches(t.to_batches(max_chunksize=700)))
    result = s.sql(
        "SELECT k, SUM(p * 1.5) AS a, SUM(2 * p + 0.25) AS b, SUM(p - 3) AS c, "
        "SUM(-1.25 * p) AS d, SUM(CAST(1.5 AS DECIMAL(10, 2))) AS e, "
        "SUM((100 - d) * (t + 0.001)) AS f FROM t GROUP BY k").collect()
    got = {r["k"]: r for r in result.to_pylist()}
    cols = {c: t[c].to_pylist() for c in t.column_names}
    for k in "xyz":
        rows = [i for i, kk in enumerate(cols["k"]) if kk == k]
        p = [cols["p"][i] for i in rows]
        assert got[k]["a"] == sum((x * Decimal("1.5") for x in p), Decimal(0))
        assert got[k]["b"] == sum((2 * x + Decimal("0.25") for x in p), Decimal(0))
        assert got[k]["c"] == sum((x - 3 for x in p), Decimal(0))
        assert got[k]["d"] == sum((Decimal("-1.25") * x for x in p), Decimal(0))
        assert got[k]["e"] == Decimal("1.5") * len(rows)
        assert got[k]["f"] == sum(((100 - cols["d"][i]) * (cols["t"][i] + Decimal("0.001"))
                                   for i in rows), Decimal(0))
