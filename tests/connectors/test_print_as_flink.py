"""The print connector writes values as Flink's does (Java's toString of each value), line for
line as PyFlink 2.3 printed these rows (streaming mode, print-identifier set)."""

from __future__ import annotations

import pytest

import sqlengine

SCALARS = (
    "CREATE TABLE p1 (i INT, bi BIGINT, d DOUBLE, d2 DOUBLE, d3 DOUBLE, d4 DOUBLE, f FLOAT, "
    "dec1 DECIMAL(10,2), dec2 DECIMAL(20,8), s STRING, c CHAR(3), b BOOLEAN, dt DATE, t0 TIME, "
    "t3 TIME(3)) WITH ('connector'='print', 'print-identifier'='p1')",
    "INSERT INTO p1 VALUES (1, 10000000000, 1.0, 1e10, 0.1, 1e-5, CAST(1.5 AS FLOAT), 12.30, "
    "0.00000123, 'a, b', 'x', TRUE, DATE '2020-01-02', TIME '10:00:00', "
    "CAST(TIME '10:00:01.5' AS TIME(3)))",
    "INSERT INTO p1 VALUES (CAST(NULL AS INT), -5, CAST('NaN' AS DOUBLE), 1e7, 123456789.125, "
    "-0.0, CAST(1e10 AS FLOAT), -0.50, 100, '', 'xy', FALSE, DATE '1969-12-31', "
    "TIME '00:00:00', CAST(TIME '23:59:59.999' AS TIME(3)))",
)
TIMES_AND_NESTED = (
    "CREATE TABLE p2 (ts0 TIMESTAMP(0), ts3 TIMESTAMP(3), ts3b TIMESTAMP(3), ts6 TIMESTAMP(6), "
    "ts9 TIMESTAMP(9), l3 TIMESTAMP_LTZ(3), l0 TIMESTAMP_LTZ(0), by1 BYTES, a ARRAY<INT>, "
    "a2 ARRAY<STRING>, m MAP<STRING, INT>, r ROW<x INT, y STRING, z ROW<q DOUBLE>>) "
    "WITH ('connector'='print', 'print-identifier'='p2')",
    "INSERT INTO p2 VALUES (TIMESTAMP '2020-01-01 00:00:00', TIMESTAMP '2020-01-01 10:20:30.500', "
    "TIMESTAMP '2020-01-01 10:20:00', CAST(TIMESTAMP '2020-01-01 10:20:30.123456' AS "
    "TIMESTAMP(6)), CAST(TIMESTAMP '2020-01-01 10:20:30.123456789' AS TIMESTAMP(9)), "
    "TO_TIMESTAMP_LTZ(1500, 3), TO_TIMESTAMP_LTZ(60, 0), X'00ff10', ARRAY[1, 2], "
    "ARRAY['a', CAST(NULL AS STRING)], MAP['k', 1], ROW(1, 'x', ROW(2.5)))",
    "CREATE TABLE q1 (a1 ARRAY<TIMESTAMP(3)>, a2 ARRAY<DOUBLE>, m MAP<STRING, INT>, "
    "ar ARRAY<ROW<x INT, y STRING>>, r ROW<x INT, y STRING>, r2 ROW<x INT, y STRING>, "
    "t6 TIMESTAMP(6), t9 TIMESTAMP(9), tn TIMESTAMP(3), ab ARRAY<BOOLEAN>, abin ARRAY<BYTES>, "
    "d10 DECIMAL(20,10), t6b TIME(3), mm MAP<INT, ARRAY<INT>>) "
    "WITH ('connector'='print', 'print-identifier'='q1')",
    "INSERT INTO q1 VALUES (ARRAY[TIMESTAMP '2020-01-01 00:00:00.100', "
    "TIMESTAMP '2020-01-01 00:00:00'], ARRAY[1.0E0, 2.5E20, 1E-7], "
    "MAP['a', CAST(NULL AS INT), 'b', 2], ARRAY[ROW(1, 'x'), ROW(CAST(NULL AS INT), "
    "CAST(NULL AS STRING))], ROW(CAST(NULL AS INT), 'z'), CAST(NULL AS ROW<x INT, y STRING>), "
    "CAST(TIMESTAMP '2020-01-01 10:20:30.123' AS TIMESTAMP(6)), "
    "CAST(TIMESTAMP '2020-01-01 10:20:30.123456' AS TIMESTAMP(9)), "
    "TIMESTAMP '1969-12-31 23:59:59.500', ARRAY[TRUE, CAST(NULL AS BOOLEAN)], "
    "ARRAY[X'01', X'ff'], CAST(0.0000000001 AS DECIMAL(20,10)), "
    "CAST(TIME '00:00:00.001' AS TIME(3)), MAP[1, ARRAY[1, 2]])",
)
# (PyFlink 2.3's standard output for the statements above)
FLINK = {
    "scalars": [
        "p1> +I[1, 10000000000, 1.0, 1.0E10, 0.1, 1.0E-5, 1.5, 12.30, 0.00000123, a, b, x  , "
        "true, 2020-01-02, 10:00, 10:00:01.500]",
        "p1> +I[null, -5, NaN, 1.0E7, 1.23456789125E8, 0.0, 1.0E10, -0.50, 100.00000000, , xy , "
        "false, 1969-12-31, 00:00, 23:59:59.999]",
    ],
    "times_and_nested": [
        "p2> +I[2020-01-01T00:00, 2020-01-01T10:20:30.500, 2020-01-01T10:20, "
        "2020-01-01T10:20:30.123456, 2020-01-01T10:20:30.123456789, 1970-01-01T00:00:01.500Z, "
        "1970-01-01T00:01:00Z, [0, -1, 16], [1, 2], [a, null], {k=1}, +I[1, x, +I[2.5]]]",
        "q1> +I[[2020-01-01T00:00:00.100, 2020-01-01T00:00], [1.0, 2.5E20, 1.0E-7], "
        "{a=null, b=2}, [+I[1, x], +I[null, null]], +I[null, z], null, 2020-01-01T10:20:30.123, "
        "2020-01-01T10:20:30.123456, 1969-12-31T23:59:59.500, [true, null], [[1], [-1]], 1E-10, "
        "00:00:00.001, {1=[1, 2]}]",
    ],
}


@pytest.mark.parametrize("name, statements", [("scalars", SCALARS),
                                              ("times_and_nested", TIMES_AND_NESTED)])
def test_print_writes_values_as_flink(capsys: pytest.CaptureFixture[str], name: str,
                                      statements: tuple[str, ...]) -> None:
    s = sqlengine.connect({"table.local-time-zone": "UTC"})
    capsys.readouterr()
    for statement in statements:
        s.execute(statement)
    printed = [line for line in capsys.readouterr().out.splitlines() if "> " in line]
    assert printed == FLINK[name]
