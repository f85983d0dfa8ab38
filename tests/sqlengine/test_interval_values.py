"""Interval values as Flink 2.3 computes them (PyFlink's answers to the same SQL, quoted):
year-month intervals compared, added and negated at runtime (Arrow has no kernels for its
interval type: they failed with "no kernel matching input types"), the unary minus of an
interval (was refused), MIN / MAX of intervals (Arrow's hash_min_max failed on them). And
CASTs between times and numbers refused as Flink refuses them (ours gave numbers of no one
unit: milliseconds of a TIMESTAMP(3), nanoseconds of a TIMESTAMP(9), seconds of a
TIMESTAMP_LTZ)."""

from __future__ import annotations

import pytest

import sqlengine

VIEW = ("CREATE TEMPORARY VIEW g AS SELECT * FROM (VALUES (1, 3, DATE '2024-01-31'), "
        "(2, -2, DATE '1969-07-20')) AS t(k, n, d)")


@pytest.mark.parametrize(("expr", "expected"), [
    ("INTERVAL '1' MONTH < INTERVAL '1' YEAR", [True, True]),
    ("INTERVAL '1' MONTH * n = INTERVAL '3' MONTH", [True, False]),
    ("INTERVAL '1' MONTH * n > INTERVAL '1' MONTH", [True, False]),
    ("CAST(INTERVAL '1' MONTH * n + INTERVAL '1' YEAR AS STRING)", ["+1-03", "+0-10"]),
    ("CAST(INTERVAL '1' DAY * n - INTERVAL '1' HOUR AS STRING)",
     ["+2 23:00:00.000", "-2 01:00:00.000"]),
    ("CAST(-(INTERVAL '1' DAY * n) AS STRING)", ["-3 00:00:00.000", "+2 00:00:00.000"]),
    ("CAST(-(INTERVAL '1' MONTH * n) AS STRING)", ["-0-03", "+0-02"]),
    ("CAST(- INTERVAL '1' DAY AS STRING)", ["-1 00:00:00.000", "-1 00:00:00.000"]),
    ("CAST(d + (INTERVAL '1' MONTH * n + INTERVAL '1' MONTH) AS STRING)",
     ["2024-05-31", "1969-06-20"]),
])
def test_interval_expressions_as_flinks(expr: str, expected: list[object]) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(VIEW)
    got = s.sql(f"SELECT k, {expr} AS v FROM g").collect().to_pylist()
    assert [r["v"] for r in sorted(got, key=lambda r: r["k"])] == expected


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_min_and_max_of_intervals(mode: str) -> None:
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.execute(VIEW)
    got = s.sql("SELECT k, CAST(MAX(INTERVAL '1' DAY * n) AS STRING) AS a, "
                "CAST(MAX(INTERVAL '1' MONTH * n) AS STRING) AS b, "
                "CAST(MIN(INTERVAL '1' MONTH * n) AS STRING) AS c FROM g GROUP BY k"
                ).collect().to_pylist()
    assert sorted(tuple(r.values()) for r in got) == [
        (1, "+3 00:00:00.000", "+0-03", "+0-03"), (2, "-2 00:00:00.000", "-0-02", "-0-02")]
    whole = s.sql("SELECT CAST(MIN(INTERVAL '1' MONTH * n) AS STRING) AS lo, "
                  "CAST(MAX(INTERVAL '1' HOUR * n) AS STRING) AS hi FROM g").collect()
    assert whole.to_pylist() == [{"lo": "-0-02", "hi": "+0 03:00:00.000"}]


@pytest.mark.parametrize("cast", [
    "CAST(TIMESTAMP '2024-01-01 00:00:00' AS BIGINT)",
    "CAST(TO_TIMESTAMP_LTZ(0, 3) AS BIGINT)",
    "CAST(k AS TIMESTAMP_LTZ(3))",
    "CAST(k AS DATE)",
    "CAST(DATE '2024-01-01' AS INT)",
    "TRY_CAST(k AS TIMESTAMP)",
])
def test_casts_between_times_and_numbers_are_refused(cast: str) -> None:
    s = sqlengine.connect()
    s.execute(VIEW)
    with pytest.raises(sqlengine.SqlEngineError, match="as Flink cannot; use UNIX_TIMESTAMP"):
        s.sql(f"SELECT {cast} FROM g").collect()
