"""TPC-H helpers (not tests): data, the standard query texts and DuckDB's answers.

DuckDB 1.5.5's ``tpch`` extension, shipped as a file by the ``duckdb-extension-tpch`` package
and loaded by path (no download), generates the tables (``dbgen``) at a scale factor. They are
written once as parquet under a cache folder; sqlengine reads them through the filesystem
connector and DuckDB answers the same query texts over the same files.

The query texts are ours (``queries/tpch/qNN.sql``): the specification's, with its validation
parameters, comma joins, correlated subqueries and ``interval 'n' month``; q15's view is a
``CREATE VIEW``.
"""

from __future__ import annotations

import decimal
import os
from pathlib import Path

import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "queries" / "tpch"

TABLES = ("region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem")


def _extension() -> str:
    import duckdb_extension_tpch  # test-only dependency

    folder = Path(duckdb_extension_tpch.__file__).parent / "extensions"
    found = sorted(folder.glob("*/tpch.duckdb_extension"))
    if not found:
        raise FileNotFoundError(f"no tpch.duckdb_extension under {folder}")
    return str(found[-1])


def duckdb_connection():  # type: ignore[no-untyped-def]
    import duckdb

    con = duckdb.connect()
    con.execute(f"LOAD '{_extension()}'")
    return con


def data(sf: float, folder: Path) -> Path:
    """Generate the eight tables at scale factor ``sf`` as ``folder/<table>.parquet`` (once)."""
    folder.mkdir(parents=True, exist_ok=True)
    done = folder / ".complete"
    if done.exists():
        return folder
    con = duckdb_connection()
    con.execute(f"CALL dbgen(sf = {sf})")
    for t in TABLES:
        tmp = folder / f"{t}.parquet.tmp"
        con.execute(f"COPY {t} TO '{tmp}' (FORMAT parquet)")
        os.replace(tmp, folder / f"{t}.parquet")
    done.write_text(str(sf))
    return folder


def ddl(folder: Path) -> str:
    """CREATE TABLE statements reading the parquet files (schemas taken from the files)."""
    import pyarrow.parquet as pq

    from sqlengine.types import type_name

    out = []
    for t in TABLES:
        path = folder / f"{t}.parquet"
        schema = pq.read_schema(path)
        cols = ",\n  ".join(f"{f.name} {type_name(f.type)}" for f in schema)
        out.append(f"CREATE TABLE {t} (\n  {cols}\n) WITH ('connector' = 'filesystem', "
                   f"'path' = '{path}', 'format' = 'parquet')")
    return ";\n".join(out) + ";\n"


def queries() -> dict[str, str]:
    """qNN -> script (q15: CREATE VIEW, then the query)."""
    return {p.stem: p.read_text() for p in sorted(SUITE.glob("q*.sql"))}


def duckdb_answer(con, script: str) -> pa.Table:  # type: ignore[no-untyped-def]
    """DuckDB's answer to one of our scripts (statements before the last run first)."""
    from sqlengine.parser import split_script

    parts = [text for _, text in split_script(script)]
    for text in parts[:-1]:
        con.execute(text)
    table = con.execute(parts[-1]).to_arrow_table()
    for text in parts[:-1]:  # drop the views again
        if text.lstrip().upper().startswith("CREATE VIEW"):
            name = text.split()[2]
            con.execute(f"DROP VIEW IF EXISTS {name}")
    return table


def duckdb_views(con, folder: Path) -> None:  # type: ignore[no-untyped-def]
    for t in TABLES:
        con.execute(f"CREATE OR REPLACE VIEW {t} AS SELECT * FROM '{folder / t}.parquet'")


def normalise(value: object) -> object:
    """A cell, comparable across engines: decimals and floats to 2 places (TPC-H's answers
    are checked to 0.01), everything else as it is."""
    if isinstance(value, (float, decimal.Decimal)):
        return round(float(value), 2)
    return value


def rows(table: pa.Table) -> list[tuple[object, ...]]:
    return [tuple(normalise(v) for v in r.values()) for r in table.to_pylist()]


def same(ours: list[tuple[object, ...]], theirs: list[tuple[object, ...]],
         ordered: bool) -> str | None:
    """None when the answers agree (floats within 0.01 relative 1e-9), else a description."""
    if len(ours) != len(theirs):
        return f"{len(ours)} rows, DuckDB has {len(theirs)}"
    if not ordered:
        ours, theirs = sorted(ours, key=repr), sorted(theirs, key=repr)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if len(a) != len(b):
            return f"row {i}: {len(a)} columns, DuckDB has {len(b)}"
        for x, y in zip(a, b):
            if isinstance(x, float) and isinstance(y, float):
                if abs(x - y) > max(0.011, 1e-9 * abs(y)):
                    return f"row {i}: {a} != DuckDB's {b}"
            elif x != y:
                return f"row {i}: {a} != DuckDB's {b}"
    return None
