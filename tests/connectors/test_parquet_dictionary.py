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


def test_filters_on_a_dictionary_column_drop_rows_before_decoding(tmp_path: Path) -> None:
    """A pushed filter on one dictionary column is judged on its distinct values (NULL
    among them) while reading; filters on several columns are left to the source. The
    answers are Python's over the file's rows."""
    import numpy as np

    from sqlengine.connectors.parquet_format import read_parquet

    path = tmp_path / "t.parquet"
    table = _write(path)
    schema = pa.schema([("id", pa.int64()), ("mode", pa.string()), ("note", pa.string()),
                        ("flag", pa.string())])

    def mail_only(batch: pa.RecordBatch, columns: frozenset[int]) -> np.ndarray:
        assert columns == {1} or columns == {3}
        values = batch.column(1).to_pylist() if columns == {1} else [None] * batch.num_rows
        return np.array([v == "MAIL" for v in values]) if columns == {1} \
            else np.ones(batch.num_rows, dtype=bool)

    read = [b for g in range(5) for b in read_parquet(path, schema, None, g,
                                                       prune=mail_only)]
    assert {m for b in read for m in b.column(1).to_pylist()} == {"MAIL"}
    assert sum(b.num_rows for b in read) == table["mode"].to_pylist().count("MAIL")
    rows = table.to_pylist()
    s = sqlengine.connect()
    s.execute(f"CREATE TABLE t (id BIGINT, mode STRING, note STRING, flag STRING) WITH ("
              f"'connector' = 'filesystem', 'path' = '{path}', 'format' = 'parquet')")
    cases = {
        "(mode IN ('MAIL', 'SHIP') OR mode IS NULL) AND flag = 'a'":
            lambda r: (r["mode"] in ("MAIL", "SHIP") or r["mode"] is None)
            and r["flag"] == "a",
        "mode NOT LIKE '%AIR%' AND id % 3 = 0":
            lambda r: r["mode"] is not None and "AIR" not in r["mode"] and r["id"] % 3 == 0,
        "mode = 'FOB' OR id < 10":
            lambda r: r["mode"] == "FOB" or r["id"] < 10,
        "COALESCE(mode, 'none') = 'none'": lambda r: r["mode"] is None,
    }
    for where, want in cases.items():
        got = s.sql(f"SELECT id FROM t WHERE {where}").collect()["id"].to_pylist()
        assert sorted(got) == [r["id"] for r in rows if want(r)], where


def test_a_column_the_file_lacks_is_null(tmp_path: Path) -> None:
    """Flink's parquet reader fills a column missing from the file with NULL (its
    clipParquetSchema); here the read failed ("parquet file has no column")."""
    pq.write_table(pa.table({"a": [1, 2, 3]}), tmp_path / "f.parquet")
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE t (a INT, missing STRING) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 'f.parquet'}', 'format' = 'parquet')")
    assert s.sql("SELECT a, missing FROM t").collect().to_pylist() == [
        {"a": 1, "missing": None}, {"a": 2, "missing": None}, {"a": 3, "missing": None}]
    assert s.sql("SELECT COUNT(missing) AS n, COUNT(*) AS m FROM t").collect().to_pylist() \
        == [{"n": 0, "m": 3}]
