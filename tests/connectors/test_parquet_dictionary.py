"""Parquet string columns stored with a small dictionary are read as Arrow dictionary indices
and decoded after (sqlengine/connectors/parquet_format.py); columns whose dictionary is large
or fell back to plain pages are read as strings. Either way the rows are the file's."""

from __future__ import annotations

import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

import sqlengine
from sqlengine.connectors.parquet_format import _dictionary_columns


def _write(path: Path) -> pa.Table:
    r = random.Random(3)
    n = 30_000
    modes = ["MAIL", "SHIP", "AIR", "RAIL", "TRUCK", "FOB", "REG AIR", None]
    table = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "mode": pa.array([r.choice(modes) for _ in range(n)], pa.string()),
        # (every value distinct and long: its dictionary passes the page limit and the
        # writer falls back to plain pages part way through each row group)
        "note": pa.array([f"note {i} " + "x" * r.randint(0, 40) for i in range(n)]),
        "flag": pa.array(["ab"[i % 2] for i in range(n)], pa.string()),
    })
    pq.write_table(table, path, row_group_size=7000, dictionary_pagesize_limit=16 * 1024)
    return table


def test_low_cardinality_strings_read_as_dictionaries_give_the_files_rows(
        tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    table = _write(path)
    pf = pq.ParquetFile(path)
    schema = pa.schema([("id", pa.int64()), ("mode", pa.string()), ("note", pa.string()),
                        ("flag", pa.string())])
    assert pf.metadata.num_row_groups == 5
    for g in range(pf.metadata.num_row_groups):
        assert _dictionary_columns(pf, schema.names, g, schema) == ("mode", "flag")
    s = sqlengine.connect({"parallelism.default": "2"})
    s.execute(f"CREATE TABLE t (id BIGINT, mode STRING, note STRING, flag STRING) WITH ("
              f"'connector' = 'filesystem', 'path' = '{path}', 'format' = 'parquet')")
    got = s.sql("SELECT * FROM t").collect().sort_by("id")
    assert got.schema.field("mode").type == pa.string()
    assert got.to_pylist() == table.to_pylist()
    counts = s.sql("SELECT mode, COUNT(*) AS n FROM t WHERE mode IN ('MAIL', 'SHIP') "
                   "OR mode IS NULL GROUP BY mode").collect().to_pylist()
    want: dict[str | None, int] = {}
    for m in table["mode"].to_pylist():
        if m in ("MAIL", "SHIP", None):
            want[m] = want.get(m, 0) + 1
    assert {c["mode"]: c["n"] for c in counts} == want
