"""Event-time temporal joins (``FOR SYSTEM_TIME AS OF``): the version valid at each row's time,
against DuckDB's ASOF join over the same files; emission by watermark and state cleanup at the
operator; Flink's refusals. On main the clause was accepted and run as a plain join (every
order met every version of its rate)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError
from sqlengine.plan.expressions import Call, ColumnRef
from sqlengine.runtime.operators.temporal_join import TemporalJoinOperator
from tests.harness import OperatorHarness

duckdb = pytest.importorskip("duckdb")

ORDERS = """1,10.00,EUR,2024-01-01 09:00:00
2,20.00,USD,2024-01-01 09:05:00
3,30.00,EUR,2024-01-01 09:10:00
4,40.00,EUR,2024-01-01 09:20:00
5,50.00,JPY,2024-01-01 09:21:00
6,60.00,USD,2024-01-01 08:00:00
7,70.00,,2024-01-01 09:40:00
"""
RATES = """EUR,1.10,2024-01-01 08:30:00
USD,1.00,2024-01-01 08:30:00
EUR,1.12,2024-01-01 09:10:00
EUR,1.15,2024-01-01 09:15:00
USD,1.01,2024-01-01 09:30:00
"""


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "orders.csv").write_text(ORDERS)
    (tmp_path / "rates.csv").write_text(RATES)
    return tmp_path


def _session(mode: str, folder: Path, rates_extra: str = "") -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.execute(f"""
        CREATE TABLE orders (id INT, price DECIMAL(10, 2), currency STRING, ts TIMESTAMP(3),
          WATERMARK FOR ts AS ts - INTERVAL '1' SECOND)
          WITH ('connector' = 'filesystem', 'path' = '{folder}/orders.csv', 'format' = 'csv');
        CREATE TABLE rates (currency STRING, rate DECIMAL(10, 2), ts TIMESTAMP(3),
          WATERMARK FOR ts AS ts{rates_extra})
          WITH ('connector' = 'filesystem', 'path' = '{folder}/rates.csv', 'format' = 'csv');
    """)
    return s


def _duck(folder: Path, sql: str) -> list[tuple]:
    con = duckdb.connect()
    con.execute(f"CREATE VIEW orders AS SELECT * FROM read_csv('{folder}/orders.csv', "
                "header = false, names = ['id', 'price', 'currency', 'ts'], "
                "types = ['INT', 'DECIMAL(10,2)', 'VARCHAR', 'TIMESTAMP'])")
    con.execute(f"CREATE VIEW rates AS SELECT * FROM read_csv('{folder}/rates.csv', "
                "header = false, names = ['currency', 'rate', 'ts'], "
                "types = ['VARCHAR', 'DECIMAL(10,2)', 'TIMESTAMP'])")
    return sorted(con.sql(sql).fetchall(), key=repr)


PK = ", PRIMARY KEY (currency) NOT ENFORCED"


@pytest.mark.parametrize("mode", ["streaming", "batch"])
@pytest.mark.parametrize("kind", ["", "LEFT "])
def test_version_at_the_row_time_matches_duckdb_asof(files: Path, mode: str, kind: str) -> None:
    s = _session(mode, files, PK)
    got = s.sql(f"SELECT o.id, o.price * r.rate AS converted, r.ts FROM orders AS o {kind}JOIN "
                "rates FOR SYSTEM_TIME AS OF o.ts AS r ON o.currency = r.currency").collect()
    want = _duck(files, f"SELECT o.id, o.price * r.rate AS converted, r.ts FROM orders o ASOF "
                 f"{kind}JOIN rates r ON o.currency = r.currency AND o.ts >= r.ts")
    assert sorted((tuple(r.values()) for r in got.to_pylist()), key=repr) == want
    # Hand-checked: order 3 at 09:10 meets the 09:10 version (1.12), order 4 at 09:20 the
    # 09:15 one (1.15), order 6 at 08:00 precedes every USD version.
    by_id = {r["id"]: r["converted"] for r in got.to_pylist()}
    assert str(by_id[3]) == "33.6000" and str(by_id[4]) == "46.0000"
    assert (6 in by_id) == (kind == "LEFT ")


VERSIONED = ("CREATE VIEW vr AS SELECT currency, rate * 10 AS r10, ts FROM (SELECT *, "
             "ROW_NUMBER() OVER (PARTITION BY currency ORDER BY ts DESC) AS rn FROM rates "
             "WHERE rate > 1.00) WHERE rn = 1")


@pytest.mark.parametrize("mode", ["streaming", "batch"])
@pytest.mark.parametrize("kind", ["", "LEFT "])
def test_a_versioned_view_is_a_versioned_table(files: Path, mode: str, kind: str) -> None:
    """A view keeping each key's last row by event time is a versioned table keyed by its
    PARTITION BY (Flink's versioned views; refused before: "needs a PRIMARY KEY"): the same
    versions as DuckDB's ASOF join over the rows the view deduplicates. (PyFlink 2.3 runs it
    in streaming mode with the same rows; its batch mode fails to plan it.)"""
    s = _session(mode, files)
    s.execute(VERSIONED)
    got = s.sql(f"SELECT o.id, r.r10, r.ts FROM orders AS o {kind}JOIN vr FOR SYSTEM_TIME AS "
                "OF o.ts AS r ON o.currency = r.currency").collect()
    want = _duck(files, f"SELECT o.id, r.rate * 10, r.ts FROM orders o ASOF {kind}JOIN "
                 "(SELECT * FROM rates WHERE rate > 1.00) r ON o.currency = r.currency AND "
                 "o.ts >= r.ts")
    assert sorted((tuple(r.values()) for r in got.to_pylist()), key=repr) == want


@pytest.mark.parametrize("view", [
    # (the first row, not the last; ordered by a column that is no time attribute; a filter
    # after the deduplication: none is a versioned view)
    "SELECT currency, rate, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY currency "
    "ORDER BY ts ASC) AS rn FROM rates) WHERE rn = 1",
    "SELECT currency, rate, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY currency "
    "ORDER BY rate DESC) AS rn FROM rates) WHERE rn = 1",
    "SELECT currency, rate, ts FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY currency "
    "ORDER BY ts DESC) AS rn FROM rates) WHERE rn = 1 AND rate > 1",
])
def test_other_views_are_refused(files: Path, view: str) -> None:
    s = _session("streaming", files)
    s.execute(f"CREATE VIEW v AS {view}")
    with pytest.raises(SqlEngineError, match="versioned view"):
        s.sql("SELECT o.id FROM orders AS o JOIN v FOR SYSTEM_TIME AS OF o.ts AS r "
              "ON o.currency = r.currency").collect()


def test_residual_condition_is_checked_on_the_version(files: Path) -> None:
    s = _session("streaming", files, PK)
    got = s.sql("SELECT o.id, r.rate FROM orders AS o LEFT JOIN rates FOR SYSTEM_TIME AS OF "
                "o.ts AS r ON o.currency = r.currency AND r.rate > 1.11").collect().to_pylist()
    # Order 1 (09:00) meets EUR 1.10, which fails the check: NULL-padded, not an older one.
    assert {r["id"]: r["rate"] for r in got}[1] is None


@pytest.mark.parametrize(("sql", "extra", "message"), [
    ("SELECT * FROM orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r "
     "ON o.currency = r.currency", "", "PRIMARY KEY"),
    ("SELECT * FROM orders AS o RIGHT JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r "
     "ON o.currency = r.currency", PK, "INNER or LEFT"),
    ("SELECT * FROM orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.ts AS r "
     "ON o.price = r.rate", PK, "primary key"),
    ("SELECT * FROM orders AS o JOIN rates FOR SYSTEM_TIME AS OF o.price AS r "
     "ON o.currency = r.currency", PK, "not a time attribute"),
    ("SELECT * FROM rates FOR SYSTEM_TIME AS OF TIMESTAMP '2024-01-01 00:00:00'", PK,
     "right side of a JOIN"),
])
def test_refused_as_flink_refuses(files: Path, sql: str, extra: str, message: str) -> None:
    with pytest.raises(SqlEngineError, match=message):
        _session("streaming", files, extra).sql(sql).collect()


def test_processing_time_needs_a_lookup_table(files: Path) -> None:
    s = _session("streaming", files, PK)
    s.execute(f"CREATE TABLE o2 (id INT, currency STRING, pt AS PROCTIME()) WITH ("
              f"'connector' = 'filesystem', 'path' = '{files}/orders.csv', 'format' = 'csv')")
    with pytest.raises(SqlEngineError, match="lookup table"):
        s.sql("SELECT * FROM o2 JOIN rates FOR SYSTEM_TIME AS OF o2.pt AS r "
              "ON o2.currency = r.currency").collect()


# -- the operator: watermark-driven emission and cleanup ---------------------------------------
LEFT = pa.schema([("k", pa.string()), ("t", pa.timestamp("ms"))])
RIGHT = pa.schema([("k", pa.string()), ("v", pa.int64()), ("t", pa.timestamp("ms"))])
OUT = pa.schema([*LEFT, ("k_r", pa.string()), ("v", pa.int64()), ("t_r", pa.timestamp("ms"))])


def _t(minute: int) -> dt.datetime:
    return dt.datetime(2024, 1, 1, 9, minute)


def _ms(minute: int) -> int:
    return int((_t(minute) - dt.datetime(1970, 1, 1)).total_seconds() * 1000)


def _op(kind: str = "inner") -> TemporalJoinOperator:
    key = (ColumnRef(0, "k", pa.string()),)
    return TemporalJoinOperator(kind, key, key, None, LEFT, RIGHT, OUT, 1, 2)


def test_rows_wait_for_the_watermark_and_old_versions_are_dropped() -> None:
    op = _op()
    h = OperatorHarness(op)
    h.process(pa.record_batch([["a", "a", "a"], [1, 2, 5], [_t(0), _t(5), _t(5)]],
                              schema=RIGHT), 1)
    h.process(pa.record_batch([["a", "a"], [_t(6), _t(3)]], schema=LEFT), 0)
    assert h.take_rows() == []  # nothing before the watermark
    h.watermark(_ms(4))
    # The 09:03 row meets the 09:00 version; the 09:06 row waits.
    assert [r[1:] for r in h.take_rows()] == [("a", _t(3), "a", 1, _t(0))]
    # Versions at or before 09:04: only the newest (09:00) stays, with the later ones.
    assert op.versions.num_rows == 3
    h.watermark(_ms(10))
    # Two versions at 09:05: the later arrival (5) wins.
    assert [r[1:] for r in h.take_rows()] == [("a", _t(6), "a", 5, _t(5))]
    assert op.versions.num_rows == 1 and op.waiting.num_rows == 0


def test_left_join_pads_a_row_without_version() -> None:
    h = OperatorHarness(_op("left"))
    h.process(pa.record_batch([["b"], [_t(1)]], schema=LEFT), 0)
    h.end(0).end(1)
    assert [r[1:] for r in h.rows()] == [("b", _t(1), None, None, None)]


def test_condition_on_keys_uses_the_call() -> None:
    # (a sanity check that key expressions, not only columns, work: UPPER(k) = k)
    key_l = (Call("upper", (ColumnRef(0, "k", pa.string()),), pa.string()),)
    key_r = (ColumnRef(0, "k", pa.string()),)
    op = TemporalJoinOperator("inner", key_l, key_r, None, LEFT, RIGHT, OUT, 1, 2)
    h = OperatorHarness(op)
    h.process(pa.record_batch([["A"], [7], [_t(0)]], schema=RIGHT), 1)
    h.process(pa.record_batch([["a"], [_t(1)]], schema=LEFT), 0)
    h.end(0).end(1)
    assert [r[4] for r in h.rows()] == [7]


RATE_CHANGES = """\
{"before": null, "after": {"cur": "EUR", "rate": 1.10, "ts": "2024-01-01 10:00:00"}, "op": "c"}
{"before": null, "after": {"cur": "GBP", "rate": 1.30, "ts": "2024-01-01 10:00:00"}, "op": "c"}
{"before": {"cur": "EUR", "rate": 1.10, "ts": "2024-01-01 10:00:00"}, "after": {"cur": "EUR", \
"rate": 1.12, "ts": "2024-01-01 10:05:00"}, "op": "u"}
{"before": {"cur": "GBP", "rate": 1.30, "ts": "2024-01-01 10:00:00"}, "after": null, "op": "d"}
{"before": null, "after": {"cur": "GBP", "rate": 1.25, "ts": "2024-01-01 10:12:00"}, "op": "c"}
{"before": {"cur": "EUR", "rate": 1.12, "ts": "2024-01-01 10:05:00"}, "after": {"cur": "EUR", \
"rate": 1.15, "ts": "2024-01-01 10:10:00"}, "op": "u"}
"""
CDC_ORDERS = """1,EUR,100,2024-01-01 09:59:00
2,EUR,100,2024-01-01 10:01:00
3,GBP,50,2024-01-01 10:02:00
4,EUR,100,2024-01-01 10:06:00
5,GBP,50,2024-01-01 10:08:00
6,EUR,100,2024-01-01 10:11:00
7,GBP,50,2024-01-01 10:13:00
8,USD,10,2024-01-01 10:14:00
"""


@pytest.mark.parametrize("parallelism", [1, 2])
def test_a_versioned_table_from_a_changelog(tmp_path: Path, parallelism: int) -> None:
    """The rates from a debezium-json changelog (Flink's documented case): an update is a new
    version, an update-before is dropped, a delete ends the key at its row's time (GBP's
    delete carries 10:00, the time of the version it deletes, which it replaces). The rows
    are PyFlink 2.3's. Refused on main: "a temporal join needs insert-only inputs"."""
    (tmp_path / "r.json").write_text(RATE_CHANGES)
    (tmp_path / "o.csv").write_text(CDC_ORDERS)
    s = sqlengine.connect({"execution.runtime-mode": "streaming",
                           "parallelism.default": str(parallelism)})
    s.execute(f"""
        CREATE TABLE r (cur STRING, rate DECIMAL(5, 2), ts TIMESTAMP(3),
            PRIMARY KEY (cur) NOT ENFORCED, WATERMARK FOR ts AS ts - INTERVAL '1' HOUR)
            WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'r.json'}',
                  'format' = 'debezium-json');
        CREATE TABLE o (id INT, cur STRING, amount INT, ts TIMESTAMP(3),
            WATERMARK FOR ts AS ts - INTERVAL '1' HOUR)
            WITH ('connector' = 'filesystem', 'path' = '{tmp_path / 'o.csv'}', 'format' = 'csv')
    """)
    rows = s.sql("SELECT o.id, CAST(r.rate AS STRING) AS rate FROM o LEFT JOIN r "
                 "FOR SYSTEM_TIME AS OF o.ts ON o.cur = r.cur").collect().to_pylist()
    assert sorted((r["id"], r["rate"]) for r in rows) == [
        (1, None), (2, "1.10"), (3, None), (4, "1.12"), (5, None), (6, "1.15"), (7, "1.25"),
        (8, None)]
    totals = s.sql("SELECT r.cur, COUNT(*) AS n, CAST(SUM(o.amount * r.rate) AS STRING) AS v "
                   "FROM o JOIN r FOR SYSTEM_TIME AS OF o.ts ON o.cur = r.cur "
                   "GROUP BY r.cur").collect().to_pylist()
    assert sorted(tuple(r.values()) for r in totals) == [("EUR", 3, "337.00"),
                                                         ("GBP", 1, "62.50")]


def test_a_versioned_view_drops_a_version_older_than_its_keys_newest(tmp_path: Path) -> None:
    """Flink's deduplication keeping the last row by event time drops a row older than its
    key's current one, so over a versioned view that row is no version. PyFlink 2.3 gives
    (1, 10), (2, 10), (3, 12), (4, 13): 9 at 00:00:04 came after 12 at 00:00:09 (it was
    (2, 9) here before)."""
    (tmp_path / "r.csv").write_text("EUR,10,2024-01-01 00:00:02\nEUR,12,2024-01-01 00:00:09\n"
                                    "EUR,9,2024-01-01 00:00:04\nEUR,13,2024-01-01 00:00:20\n")
    (tmp_path / "o.csv").write_text("1,EUR,2024-01-01 00:00:03\n2,EUR,2024-01-01 00:00:05\n"
                                    "3,EUR,2024-01-01 00:00:10\n4,EUR,2024-01-01 00:00:21\n")
    for parallelism in ("1", "2"):
        s = sqlengine.connect({"parallelism.default": parallelism})
        for name, cols in (("o", "id INT, cur STRING"), ("r", "cur STRING, rate INT")):
            s.execute(f"CREATE TABLE {name} ({cols}, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - "
                      f"INTERVAL '30' SECOND) WITH ('connector' = 'filesystem', 'path' = "
                      f"'{tmp_path / name}.csv', 'format' = 'csv')")
        s.execute("CREATE TEMPORARY VIEW rv AS SELECT cur, rate, ts FROM (SELECT *, "
                  "ROW_NUMBER() OVER (PARTITION BY cur ORDER BY ts DESC) AS rn FROM r) "
                  "WHERE rn = 1")
        for kind in ("", "LEFT "):
            got = s.sql(f"SELECT o.id, v.rate FROM o {kind}JOIN rv FOR SYSTEM_TIME AS OF o.ts "
                        "AS v ON o.cur = v.cur").collect().to_pylist()
            assert sorted(tuple(r.values()) for r in got) == [(1, 10), (2, 10), (3, 12),
                                                             (4, 13)]


def test_monotonic_versions_match_a_row_by_row_reference() -> None:
    """Random keys, times and batches (NULL keys too): the versions kept are those at or
    after their key's newest earlier arrival, checked against a loop over the rows."""
    import random

    rng = random.Random(5)
    key = (ColumnRef(0, "k", pa.string()),)
    for _ in range(30):
        op = TemporalJoinOperator("left", key, key, None, LEFT, RIGHT, OUT, 1, 2,
                                  monotonic=True)
        rows = [(rng.choice(["a", "b", "c", None]), i, _t(rng.randint(0, 20)))
                for i in range(rng.randint(1, 40))]
        newest: dict[object, dt.datetime] = {}
        kept = []
        for k, v, t in rows:
            if k not in newest or t >= newest[k]:
                kept.append((k, v, t))
                newest[k] = max(t, newest.get(k, t))
        cut = 0
        while cut < len(rows):
            step = rng.randint(1, 7)
            part = rows[cut:cut + step]
            op.process_batch(pa.record_batch([list(c) for c in zip(*part, strict=True)],
                                              schema=RIGHT), 1)
            cut += step
        got = sorted(zip(op.versions["k"].to_pylist(), op.versions["v"].to_pylist(),
                         strict=True), key=repr)
        assert got == sorted(((k, v) for k, v, _ in kept), key=repr)
