"""The conformance calls whose sqlengine answer does not match Flink 2.3's yet, and why.

Keyed by call id (calls.Call.id). test_flink_conformance fails when a call not listed here
mismatches (a regression) and when a listed call now matches (remove it: the list stays exact).
Regenerate with ``python -m tests.conformance.report --write-known-failures``; the comment
after each entry says what differs (or sqlengine's error).
"""
# ruff: noqa: E501

from __future__ import annotations

KNOWN_FAILURES: dict[str, str] = {
    # --- arithmetic ---
    'CAST(1.5 AS FLOAT) + 1.5E0':
        "Flink types FLOAT + DOUBLE as FLOAT (Calcite's rule); sqlengine as DOUBLE, as DuckDB",  # got DOUBLE; Flink FLOAT
    '1.0E0 / 0':
        'Flink raises on DOUBLE division by zero (sqlengine: IEEE Infinity / NaN)',  # got Infinity; Flink: java.lang.ArithmeticException: Division by zero
    '-1.0E0 / 0':
        'Flink raises on DOUBLE division by zero (sqlengine: IEEE Infinity / NaN)',  # got -Infinity; Flink: java.lang.ArithmeticException: Division by zero
    '0.0E0 / 0':
        'Flink raises on DOUBLE division by zero (sqlengine: IEEE Infinity / NaN)',  # got NaN; Flink: java.lang.ArithmeticException: Division by zero
    'MOD(7.5E0, 2)':
        "Flink refuses MOD of a DOUBLE; sqlengine computes it (as DuckDB's fmod)",  # got 1.5; Flink: org.apache.calcite.sql.validate.SqlValidatorException: Cannot apply 'MOD' to arg
    # --- string ---
    "UPPER('straße')":
        "Flink 2.3 quirk: the result keeps the argument's CHAR(6) and cuts 'STRASSE'; sqlengine upper-cases as Arrow ('STRAẞE')",  # got "STRAẞE"; Flink "STRASS"
    # --- temporal ---
    "CEIL(TIMESTAMP '2020-05-17 12:44:31.5' TO SECOND)":
        "TIMESTAMP(1), (2), (4), (5), (7), (8) are held with the next Arrow unit's precision (3, 6 or 9 digits)",  # got TIMESTAMP(3); Flink TIMESTAMP(1)
    # --- conversion ---
    "CAST(TIMESTAMP '2020-01-02 10:11:12.5' AS STRING)":
        "TIMESTAMP(1), (2), (4), (5), (7), (8) are held with the next Arrow unit's precision (3, 6 or 9 digits)",  # got "2020-01-02 10:11:12.500"; Flink "2020-01-02 10:11:12.5"
    'TYPEOF(1)':
        "TYPEOF not implemented: sqlengine's types carry no NOT NULL and no CHAR(n), so its text could not be Flink's",  # BindError: 1:8: unknown function TYPEOF
    "TYPEOF('abc')":
        "TYPEOF not implemented: sqlengine's types carry no NOT NULL and no CHAR(n), so its text could not be Flink's",  # BindError: 1:8: unknown function TYPEOF
    'TYPEOF(1.5)':
        "TYPEOF not implemented: sqlengine's types carry no NOT NULL and no CHAR(n), so its text could not be Flink's",  # BindError: 1:8: unknown function TYPEOF
    'TYPEOF(1.5E0)':
        "TYPEOF not implemented: sqlengine's types carry no NOT NULL and no CHAR(n), so its text could not be Flink's",  # BindError: 1:8: unknown function TYPEOF
    'TYPEOF(CAST(NULL AS STRING))':
        "TYPEOF not implemented: sqlengine's types carry no NOT NULL and no CHAR(n), so its text could not be Flink's",  # BindError: 1:8: unknown function TYPEOF
    'TYPEOF(ARRAY[1])':
        "TYPEOF not implemented: sqlengine's types carry no NOT NULL and no CHAR(n), so its text could not be Flink's",  # BindError: 1:8: unknown function TYPEOF
    "TYPEOF(DATE '2020-01-01')":
        "TYPEOF not implemented: sqlengine's types carry no NOT NULL and no CHAR(n), so its text could not be Flink's",  # BindError: 1:8: unknown function TYPEOF
    "TYPEOF(TIMESTAMP '2020-01-01 00:00:00')":
        "TYPEOF not implemented: sqlengine's types carry no NOT NULL and no CHAR(n), so its text could not be Flink's",  # BindError: 1:8: unknown function TYPEOF
    'TYPEOF(CAST(1 AS BIGINT), TRUE)':
        "TYPEOF not implemented: sqlengine's types carry no NOT NULL and no CHAR(n), so its text could not be Flink's",  # ParseError: 1:38: The number of provided arguments (2) is greater than the maximum number of supported arguments (1)
    # --- collection ---
    'ARRAY[10, 20][5]':
        'Flink 2.3 quirk: a missing element of a constant ARRAY/MAP reads as -1 (sqlengine: NULL)',  # got null; Flink -1
    "MAP['a', 1]['z']":
        'Flink 2.3 quirk: a missing element of a constant ARRAY/MAP reads as -1 (sqlengine: NULL)',  # got null; Flink -1
    # --- json ---
    'JSON_VALUE(\'{"a": "x"}\', \'$.a\' RETURNING INT)':
        'Flink 2.3 quirk: ClassCastException instead of the default NULL ON ERROR',  # got null; Flink: java.lang.ClassCastException: class java.lang.String cannot be cast to class jav
    'JSON_VALUE(\'{"a": 12345678901}\', \'$.a\' RETURNING BIGINT)':
        'Flink 2.3 refuses JSON_VALUE ... RETURNING BIGINT / DATE (sqlengine accepts)',  # got 12345678901; Flink: org.apache.flink.table.planner.codegen.CodeGenException: Unsupported type 'BIGIN
    'JSON_VALUE(\'{"a": "2020-01-02"}\', \'$.a\' RETURNING DATE)':
        'Flink 2.3 refuses JSON_VALUE ... RETURNING BIGINT / DATE (sqlengine accepts)',  # got "2020-01-02"; Flink: org.apache.flink.table.planner.codegen.CodeGenException: Unsupported type 'DATE'
    # --- value ---
    # --- aggregate ---
    # --- window ---
    'LEAD(v, 1, -1) OVER (PARTITION BY g ORDER BY id) @ W':
        "Flink 2.3 quirk: LEAD/LAG with a default give a non-NULL value (the default, or -1) where the neighbouring row's value is NULL",  # got [20, 20, -1, null, 7, -1, -1]; Flink [20, 20, -1, -1, 7, -1, -1]
    'LAG(v, 1, 0) OVER (PARTITION BY g ORDER BY id) @ W':
        "Flink 2.3 quirk: LEAD/LAG with a default give a non-NULL value (the default, or -1) where the neighbouring row's value is NULL",  # got [0, 10, 20, 0, 5, null, 0]; Flink [0, 10, 20, 0, 5, -1, 0]
}
