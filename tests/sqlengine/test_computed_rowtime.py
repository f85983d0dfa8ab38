"""A WATERMARK declared for a computed column, Flink's usual DDL for epoch times
('ts AS TO_TIMESTAMP_LTZ(ms, 3), WATERMARK FOR ts AS ts - INTERVAL '5' MINUTE'): the column is
the rowtime attribute, its watermark is generated at the source, late rows are dropped as for
a physical rowtime column. (PyFlink 2.3 gives the same rows as here for TUMBLE, HOP, SESSION
and an OVER RANGE window over such a table with late rows, at parallelism 1 and 2.)"""

from __future__ import annotations

import datetime as dt
import random
from pathlib import Path

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

QUERIES = {
    "tumble": "SELECT window_start, window_end, COUNT(*) AS n, SUM(v) AS s FROM TABLE(TUMBLE("
              "TABLE {t}, DESCRIPTOR(ts), INTERVAL '10' MINUTE)) GROUP BY window_start, "
              "window_end",
    "hop": "SELECT window_start, k, COUNT(*) AS n FROM TABLE(HOP(TABLE {t}, DESCRIPTOR(ts), "
           "INTERVAL '5' MINUTE, INTERVAL '15' MINUTE)) GROUP BY window_start, window_end, k",
    "session": "SELECT k, window_start, window_end, COUNT(*) AS n FROM TABLE(SESSION(TABLE {t} "
               "PARTITION BY k, DESCRIPTOR(ts), INTERVAL '12' MINUTE)) "
               "GROUP BY k, window_start, window_end",
    "over": "SELECT id, SUM(v) OVER (PARTITION BY k ORDER BY ts RANGE BETWEEN "
            "INTERVAL '20' MINUTE PRECEDING AND CURRENT ROW) AS s FROM {t}",
    "group-window": "SELECT TUMBLE_START(ts, INTERVAL '30' MINUTE) AS w, COUNT(*) AS n FROM {t} "
                    "GROUP BY TUMBLE(ts, INTERVAL '30' MINUTE)",
}


def _rows(tmp_path: Path) -> Path:
    """60 rows a few minutes apart, every seventh up to 40 minutes late."""
    rng = random.Random(5)
    start = dt.datetime(2023, 10, 28, 22, 0)
    t, lines = start, []
    for i in range(60):
        t += dt.timedelta(minutes=rng.randint(0, 9))
        row_t = t - dt.timedelta(minutes=rng.randint(5, 40)) if i % 7 == 3 else t
        lines.append(f"{i},{row_t:%Y-%m-%d %H:%M:%S},{i % 9},k{i % 3}")
    path = tmp_path / "events.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def _session(path: Path, parallelism: int) -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": "streaming",
                           "parallelism.default": str(parallelism)})
    opts = f"WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv')"
    s.execute("CREATE TABLE computed (id INT, txt STRING, v INT, k STRING, "
              "ts AS TO_TIMESTAMP(txt), WATERMARK FOR ts AS ts - INTERVAL '5' MINUTE) " + opts)
    s.execute("CREATE TABLE physical (id INT, ts TIMESTAMP(3), v INT, k STRING, "
              "WATERMARK FOR ts AS ts - INTERVAL '5' MINUTE) " + opts)
    return s


@pytest.mark.parametrize("parallelism", [1, 2])
@pytest.mark.parametrize("name", list(QUERIES))
def test_a_computed_rowtime_gives_the_physical_ones_rows(tmp_path: Path, name: str,
                                                         parallelism: int) -> None:
    s = _session(_rows(tmp_path), parallelism)
    got = {}
    for t in ("computed", "physical"):
        rows = s.sql(QUERIES[name].format(t=t)).collect().to_pylist()
        got[t] = sorted(map(repr, rows))
    assert got["computed"] == got["physical"]
    if name == "over":  # (late rows are dropped: the seventh rows that fell behind)
        assert 45 < len(got["computed"]) < 60
    s.close()


def test_the_epoch_form_flink_documents(tmp_path: Path) -> None:
    path = tmp_path / "ms.csv"
    base = int(dt.datetime(2024, 1, 1, tzinfo=dt.UTC).timestamp() * 1000)
    path.write_text("".join(f"{i},{base + i * 7 * 60_000}\n" for i in range(30)))
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.execute(f"CREATE TABLE e (id INT, ms BIGINT, ts AS TO_TIMESTAMP_LTZ(ms, 3), "
              f"WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ('connector' = "
              f"'filesystem', 'path' = '{path}', 'format' = 'csv')")
    rows = s.sql("SELECT window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE e, "
                 "DESCRIPTOR(ts), INTERVAL '1' HOUR)) GROUP BY window_start, window_end"
                 ).collect().to_pylist()
    # (rows every 7 minutes from midnight UTC: row i falls in hour i * 7 // 60)
    counts = {r["window_start"].hour: r["n"] for r in rows}
    want: dict[int, int] = {}
    for i in range(30):
        want[i * 7 // 60] = want.get(i * 7 // 60, 0) + 1
    assert counts == want
    described = {r["name"]: r for r in s.execute("DESCRIBE e")[0].table.to_pylist()}
    assert described["ts"]["watermark"] == "`ts` - INTERVAL '1' SECOND"
    text = s.execute("SHOW CREATE TABLE e")[0].table.column(0)[0].as_py()
    s.execute("DROP TABLE e")
    s.execute(text)  # (the DDL it shows creates the same table)
    assert s.sql("SELECT COUNT(*) AS n FROM e").collect().to_pylist() == [{"n": 30}]
    s.close()


@pytest.mark.parametrize(("ddl", "message"), [
    ("pt AS PROCTIME(), WATERMARK FOR pt AS pt",
     r"1:\d+: WATERMARK FOR column 'pt': a PROCTIME\(\) column is a processing-time"),
    ("x AS ms + 1, WATERMARK FOR x AS x", r"WATERMARK FOR column 'x' must be a TIMESTAMP or "
                                          r"TIMESTAMP_LTZ, got BIGINT"),
    ("x AS TO_TIMESTAMP_LTZ(ms, 3), WATERMARK FOR y AS x",
     r"WATERMARK FOR names unknown column 'y'"),
])
def test_a_wrong_watermark_is_refused_with_its_place(ddl: str, message: str) -> None:
    s = sqlengine.connect()
    with pytest.raises(SqlEngineError, match=message):
        s.execute(f"CREATE TABLE t (ms BIGINT, {ddl}) WITH ('connector' = 'datagen')")


def test_a_computed_rowtime_from_a_nested_field(tmp_path: Path) -> None:
    path = tmp_path / "n.json"
    path.write_text('{"p": {"ms": 1672653600000, "v": 1}}\n'
                    '{"p": {"ms": 1672659000000, "v": 2}}\n')
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.execute(f"CREATE TABLE t (p ROW<ms BIGINT, v INT>, ts AS TO_TIMESTAMP_LTZ(p.ms, 3), "
              f"v AS `p`.v + 1, WATERMARK FOR ts AS ts - INTERVAL '1' SECOND) WITH ("
              f"'connector' = 'filesystem', 'path' = '{path}', 'format' = 'json')")
    rows = s.sql("SELECT window_start, SUM(v) AS v FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), "
                 "INTERVAL '1' HOUR)) GROUP BY window_start, window_end").collect().to_pylist()
    assert rows == [{"window_start": dt.datetime(2023, 1, 2, 10), "v": 2},
                    {"window_start": dt.datetime(2023, 1, 2, 11), "v": 3}]


def test_a_columns_own_primary_key_constraint() -> None:
    s = sqlengine.connect()
    s.execute("CREATE TABLE k (id INT NOT NULL CONSTRAINT pk PRIMARY KEY NOT ENFORCED "
              "COMMENT 'the key', b STRING) WITH ('connector' = 'datagen')")
    assert "PRIMARY KEY (`id`) NOT ENFORCED" in \
        s.execute("SHOW CREATE TABLE k")[0].table.column(0)[0].as_py()
    for extra in ("c STRING PRIMARY KEY NOT ENFORCED", "PRIMARY KEY (b) NOT ENFORCED"):
        with pytest.raises(SqlEngineError, match="a table has one PRIMARY KEY"):
            s.execute(f"CREATE TABLE k2 (id INT PRIMARY KEY NOT ENFORCED, b STRING, {extra}) "
                      "WITH ('connector' = 'datagen')")
