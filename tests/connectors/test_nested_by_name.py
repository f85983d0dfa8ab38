"""A parquet or orc file's ROW fields are matched to the declared ROW's by name at any depth,
as its top-level columns are: a struct written with its fields in another order swapped their
values silently (they were cast by position). A field the file lacks is NULL, one the table
does not declare is left out, names match ignoring case when not exactly."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.orc as po
import pyarrow.parquet as pq
import pytest

import sqlengine

N = 3000
ROW = pa.struct([("y", pa.string()), ("x", pa.int64())])
INNER = pa.struct([("b", pa.int32()), ("a", pa.float64())])


def _file_table() -> pa.Table:
    rows = range(N)
    return pa.table({
        "id": pa.array(rows, pa.int32()),
        "r": pa.array([None if i % 7 == 0 else {"y": f"y{i}", "x": i} for i in rows], ROW),
        "l": pa.array([None if i % 11 == 0 else
                       [{"b": i, "a": i / 2}, None, {"b": -i, "a": None}] for i in rows],
                      pa.list_(INNER)),
        "m": pa.array([[("k", {"b": i, "a": 0.5})] for i in rows], pa.map_(pa.string(), INNER)),
        "n": pa.array([{"Q": i, "extra": "x", "p": {"y": str(i), "x": -i}} for i in rows],
                      pa.struct([("Q", pa.int32()), ("extra", pa.string()), ("p", ROW)])),
    })


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
def test_row_fields_match_by_name_at_any_depth(tmp_path: Path, fmt: str) -> None:
    table = _file_table()
    path = tmp_path / f"f.{fmt}"
    if fmt == "parquet":
        pq.write_table(table, path, row_group_size=700)  # (batches sliced across groups)
    else:
        po.write_table(table, path, stripe_size=4096)
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE t (id INT, r ROW<x BIGINT, y STRING>, "
              f"l ARRAY<ROW<a DOUBLE, b INT>>, m MAP<STRING, ROW<a DOUBLE, b INT>>, "
              f"n ROW<p ROW<x BIGINT, y STRING, z INT>, q INT>) "
              f"WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = '{fmt}')")
    got = s.sql("SELECT id, r, l, m, n, r.x AS rx, n.p.y AS npy FROM t").collect()
    assert got.num_rows == N
    rows = sorted(got.to_pylist(), key=lambda r: r["id"])
    # DuckDB reads the same file by name ("struct_pack" fields in the file's order: dicts
    # compare regardless of order).
    duck = duckdb.connect()
    reader = "read_parquet" if fmt == "parquet" else None
    if reader is None:
        duck.register("f", po.read_table(path))
        source = "f"
    else:
        source = f"{reader}('{path}')"
    want = duck.sql(f"SELECT id, r, l, m, n.p AS p, n.Q AS q FROM {source} ORDER BY id"
                    ).fetchall()
    for row, (i, r, lst, m, p, q) in zip(rows, want, strict=True):
        assert row["id"] == i
        assert row["r"] == r and row["rx"] == (r["x"] if r else None)
        assert row["l"] == lst
        assert dict(row["m"]) == dict(m) if m is not None else row["m"] is None
        assert row["n"] == {"p": {**p, "z": None}, "q": q}  # (z missing: NULL; Q as q)
        assert row["npy"] == p["y"]
