"""A batch INSERT on Spark into a csv, json, raw or avro table writes the files the native
runtime writes, through the same writer, with the table's format options (Spark's own writer
kept none of them: 'csv.null-literal' lost, a NULL read back as ''; 'csv.quote-character' and
the json timestamp standard lost, files the table could not read back; raw and avro failed
with Py4J's and Spark's words); a value's failure on Spark is a DataError in our words.
Found by a probe of the Spark runtime."""

from __future__ import annotations

from pathlib import Path

import pytest

import sqlengine

pytest.importorskip("pyspark")
pytestmark = pytest.mark.spark

SPARK = {"execution.target": "spark", "spark.master": "local[1]",
         "execution.runtime-mode": "batch"}

CASES = [
    ("csv", "k STRING, v INT", ", 'csv.null-literal' = 'NIL'",
     "VALUES (CAST(NULL AS STRING), 1), ('', 2)"),
    ("csv", "k STRING, v INT", ", 'csv.quote-character' = ''''", "VALUES ('a,b', 1)"),
    ("json", "k STRING, ts TIMESTAMP(3)", ", 'json.timestamp-format.standard' = 'ISO-8601'",
     "VALUES ('a', TIMESTAMP '2024-01-01 00:00:01.5')"),
    ("raw", "k STRING", "", "VALUES ('a'), ('b')"),
    ("avro", "k STRING, v INT", "", "VALUES ('a', 1), (CAST(NULL AS STRING), 2)"),
]


def _texts(folder: Path) -> list[bytes]:
    return sorted(line for f in folder.rglob("*") if f.is_file() and
                  not f.name.startswith((".", "_")) for line in f.read_bytes().splitlines())


@pytest.mark.parametrize(("fmt", "cols", "opts", "rows"), CASES,
                         ids=[f"{c[0]}{c[2][:24]}" for c in CASES])
def test_a_text_format_sink_writes_the_native_files(tmp_path: Path, fmt: str, cols: str,
                                                    opts: str, rows: str) -> None:
    read = []
    for name, options in (("native", {"execution.runtime-mode": "batch"}), ("spark", SPARK)):
        folder = tmp_path / name
        s = sqlengine.connect(options)
        ddl = (f"CREATE TABLE o ({cols}) WITH ('connector' = 'filesystem', 'path' = "
               f"'{folder}', 'format' = '{fmt}'{opts})")
        s.execute(ddl)
        s.execute(f"INSERT INTO o {rows}")
        back = sqlengine.connect({"execution.runtime-mode": "batch"})
        back.execute(ddl)
        read.append((_texts(folder) if fmt != "avro" else None,
                     sorted(map(repr, back.sql("SELECT * FROM o").collect().to_pylist()))))
    assert read[1] == read[0]
    assert read[0][1]


def test_a_value_s_failure_on_spark_is_a_data_error_in_our_words() -> None:
    """Division by zero on Spark: PEP 249's DataError, as natively (it was an ExecutionError
    carrying Spark's advice, "Use `try_divide` ... set spark.sql.ansi.enabled to false"); and
    that key, which would make it NULL, is refused by name."""
    import pyarrow as pa

    from sqlengine.errors import DataError, PlanError

    s = sqlengine.connect(SPARK)
    s.register("t", pa.table({"a": [1, 2], "b": [3, 4]}))
    with pytest.raises(DataError, match=r"on Spark: \[DIVIDE_BY_ZERO\] Division by zero\.$"):
        s.sql("SELECT a / (b - b) AS x FROM t").collect()
    with pytest.raises(PlanError, match=r"'spark\.sql\.ansi\.enabled' is not handed to Spark"):
        s.execute("SET 'spark.sql.ansi.enabled' = 'false'")


def test_a_number_past_a_decimal_s_digits_is_null_on_spark_too() -> None:
    """As natively and in Flink (Spark's ANSI CAST failed: NUMERIC_VALUE_OUT_OF_RANGE)."""
    import pyarrow as pa

    data = pa.table({"l": pa.array([2**63 - 1, 1, -(2**63), -1], pa.int64()),
                     "d": pa.array([1e30, 2.5, -1e30, -0.125])})
    sql = ("SELECT CAST(l AS DECIMAL(5, 0)) AS a, CAST(CAST(l AS DECIMAL(20, 0)) / 3 AS "
           "DECIMAL(4, 2)) AS b, CAST(d AS DECIMAL(10, 2)) AS c FROM t")
    got = []
    for options in ({"execution.runtime-mode": "batch"}, SPARK):
        s = sqlengine.connect(options)
        s.register("t", data)
        got.append(sorted(map(repr, s.sql(sql).collect().to_pylist())))
    assert got[1] == got[0]
    assert sum("'a': None" in r for r in got[0]) == 2


def test_an_invalid_regular_expression_gives_flinks_null_on_spark_too() -> None:
    """REGEXP_EXTRACT gives NULL and REGEXP FALSE for a pattern that does not compile, as
    natively and in Flink (Spark's job failed: INVALID_PARAMETER_VALUE.PATTERN)."""
    import pyarrow as pa

    sql = "SELECT REGEXP_EXTRACT(k, '(', 1) AS x, REGEXP(k, '(') AS y FROM t"
    got = []
    for options in ({"execution.runtime-mode": "batch"}, SPARK):
        s = sqlengine.connect(options)
        s.register("t", pa.table({"k": ["a", "(b"]}))
        got.append(s.sql(sql).collect().to_pylist())
    assert got[1] == got[0] == [{"x": None, "y": False}, {"x": None, "y": False}]
