"""LISTAGG, ARRAY_AGG, JSON_ARRAYAGG and JSON_OBJECTAGG in window aggregations (TUMBLE, HOP,
CUMULATE, SESSION and the group windows): each window's values in arrival order, as Flink's
window aggregates gather them (PyFlink 2.3 gives the same rows in streaming mode for a file
with late rows, at parallelism 1 and 2). The expected values here come from the rows in
Python."""

from __future__ import annotations

import collections
import datetime as dt
import json
from pathlib import Path

import pytest

import sqlengine

START = dt.datetime(2024, 1, 1)


def _session(tmp_path: Path, parallelism: int) -> tuple[sqlengine.Session, list[tuple]]:
    rows = [(i, START + dt.timedelta(minutes=7 * i), None if i % 5 == 2 else i % 4,
             f"k{i % 3}") for i in range(40)]
    path = tmp_path / "e.csv"
    path.write_text("".join(f"{i},{t:%Y-%m-%d %H:%M:%S},{'' if v is None else v},{k}\n"
                            for i, t, v, k in rows))
    s = sqlengine.connect({"execution.runtime-mode": "streaming",
                           "parallelism.default": str(parallelism)})
    s.execute(f"CREATE TABLE e (id INT, ts TIMESTAMP(3), v INT, k STRING, WATERMARK FOR ts "
              f"AS ts - INTERVAL '1' SECOND) WITH ('connector' = 'filesystem', "
              f"'path' = '{path}', 'format' = 'csv')")
    return s, rows


@pytest.mark.parametrize("parallelism", [1, 2])
def test_tumble_windows_gather_their_values_in_arrival_order(tmp_path: Path,
                                                             parallelism: int) -> None:
    s, rows = _session(tmp_path, parallelism)
    got = s.sql("SELECT window_start AS w, k, LISTAGG(CAST(id AS STRING)) AS ids, "
                "LISTAGG(CAST(v AS STRING), '|') AS vs, ARRAY_AGG(v) AS arr, "
                "JSON_ARRAYAGG(v) AS ja, JSON_OBJECTAGG(KEY CAST(id AS STRING) VALUE v) AS jo "
                "FROM TABLE(TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '1' HOUR)) "
                "GROUP BY window_start, window_end, k").collect().to_pylist()
    groups: dict[tuple, list[tuple]] = collections.defaultdict(list)
    for i, t, v, k in rows:
        groups[(t.replace(minute=0), k)].append((i, v))
    assert len(got) == len(groups)
    for r in got:
        members = groups[(r["w"], r["k"])]
        values = [v for _, v in members]
        assert r["ids"] == ",".join(str(i) for i, _ in members)
        present = [str(v) for v in values if v is not None]
        assert r["vs"] == ("|".join(present) if present else None)
        assert r["arr"] == values  # (ARRAY_AGG keeps NULLs)
        assert json.loads(r["ja"]) == [v for v in values if v is not None]  # (ABSENT ON NULL)
        assert json.loads(r["jo"]) == {str(i): v for i, v in members}


def test_filter_hop_cumulate_session_and_group_windows(tmp_path: Path) -> None:
    s, rows = _session(tmp_path, 1)
    hop = s.sql("SELECT window_start AS w, LISTAGG(CAST(id AS STRING)) FILTER (WHERE k = 'k1') "
                "AS ids FROM TABLE(HOP(TABLE e, DESCRIPTOR(ts), INTERVAL '30' MINUTE, "
                "INTERVAL '1' HOUR)) GROUP BY window_start, window_end").collect().to_pylist()
    for r in hop:
        members = [str(i) for i, t, _, k in rows if r["w"] <= t < r["w"] + dt.timedelta(hours=1)
                   and k == "k1"]
        assert r["ids"] == (",".join(members) if members else None)
    cumulated = s.sql("SELECT window_end AS e, ARRAY_AGG(id) AS ids FROM TABLE(CUMULATE("
                      "TABLE e, DESCRIPTOR(ts), INTERVAL '20' MINUTE, INTERVAL '1' HOUR)) "
                      "GROUP BY window_start, window_end").collect().to_pylist()
    for r in cumulated:
        day = r["e"] - dt.timedelta(microseconds=1)
        start = day.replace(minute=0, second=0, microsecond=0)
        assert r["ids"] == [i for i, t, _, _ in rows if start <= t < r["e"]]
    sessions = s.sql("SELECT k, LISTAGG(CAST(id AS STRING)) AS ids FROM TABLE(SESSION(TABLE e "
                     "PARTITION BY k, DESCRIPTOR(ts), INTERVAL '25' MINUTE)) GROUP BY k, "
                     "window_start, window_end").collect().to_pylist()
    # (rows of one key are 21 minutes apart: one session per key holding all of them)
    assert sorted((r["k"], r["ids"]) for r in sessions) == sorted(
        (k, ",".join(str(i) for i, _, _, kk in rows if kk == k)) for k in ("k0", "k1", "k2"))
    legacy = s.sql("SELECT TUMBLE_START(ts, INTERVAL '2' HOUR) AS w, LISTAGG(k) AS ks FROM e "
                   "GROUP BY TUMBLE(ts, INTERVAL '2' HOUR)").collect().to_pylist()
    for r in legacy:
        assert r["ks"] == ",".join(k for _, t, _, k in rows
                                   if r["w"] <= t < r["w"] + dt.timedelta(hours=2))
