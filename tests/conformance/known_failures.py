"""The conformance calls whose sqlengine answer does not match Flink 2.3's yet, and why.

Keyed by call id (calls.Call.id). test_flink_conformance fails when a call not listed here
mismatches (a regression) and when a listed call now matches (remove it: the list stays exact).
Regenerate with ``python -m tests.conformance.report --write-known-failures``; the comment
after each entry says what differs (or sqlengine's error).
"""
# ruff: noqa: E501

from __future__ import annotations

KNOWN_FAILURES: dict[str, str] = {
    # --- comparison ---
    "CAST('NaN' AS DOUBLE) = CAST('NaN' AS DOUBLE)":
        'different value',  # got false; Flink true
    '1 IS DISTINCT FROM CAST(NULL AS INT)':
        'error where Flink returns a value',  # NotSupportedError: 1:8: unsupported expression '1 IS DISTINCT FROM CAST(NULL AS INT)'
    'CAST(NULL AS INT) IS DISTINCT FROM CAST(NULL AS INT)':
        'error where Flink returns a value',  # NotSupportedError: 1:1: unsupported expression 'CAST(NULL AS INT) IS DISTINCT FROM CAST(NULL AS INT)'
    '1 IS NOT DISTINCT FROM CAST(NULL AS INT)':
        'error where Flink returns a value',  # NotSupportedError: 1:8: unsupported expression '1 IS NOT DISTINCT FROM CAST(NULL AS INT)'
    'CAST(NULL AS INT) IS NOT DISTINCT FROM CAST(NULL AS INT)':
        'error where Flink returns a value',  # NotSupportedError: 1:1: unsupported expression 'CAST(NULL AS INT) IS NOT DISTINCT FROM CAST(NULL AS INT)'
    '1 IS DISTINCT FROM 2':
        'error where Flink returns a value',  # NotSupportedError: 1:8: unsupported expression '1 IS DISTINCT FROM 2'
    "'a' IS NOT DISTINCT FROM 'a'":
        'error where Flink returns a value',  # NotSupportedError: 1:8: unsupported expression "'a' IS NOT DISTINCT FROM 'a'"
    "'a%c' LIKE 'a\\%c' ESCAPE '\\'":
        'error where Flink returns a value',  # NotSupportedError: 1:33: unsupported expression "'a%c' LIKE 'a\\%c' ESCAPE '\\'"
    "'abc' LIKE 'a\\%c' ESCAPE '\\'":
        'error where Flink returns a value',  # NotSupportedError: 1:33: unsupported expression "'abc' LIKE 'a\\%c' ESCAPE '\\'"
    "'abc' LIKE CAST(NULL AS STRING)":
        'error where Flink returns a value',  # NotSupportedError: 1:1: argument 2 of LIKE must be a constant
    "'abc' SIMILAR TO 'a(b|c)+'":
        'error where Flink returns a value',  # NotSupportedError: 1:8: unsupported expression "'abc' SIMILAR TO 'a(b|c)+'"
    "'abc' SIMILAR TO 'a.c'":
        'error where Flink returns a value',  # NotSupportedError: 1:8: unsupported expression "'abc' SIMILAR TO 'a.c'"
    "'abc' SIMILAR TO 'a_c'":
        'error where Flink returns a value',  # NotSupportedError: 1:8: unsupported expression "'abc' SIMILAR TO 'a_c'"
    "'abd' NOT SIMILAR TO 'a(b|c)+'":
        'error where Flink returns a value',  # NotSupportedError: 1:8: unsupported expression "'abd' SIMILAR TO 'a(b|c)+'"
    "'abc' SIMILAR TO '%b%'":
        'error where Flink returns a value',  # NotSupportedError: 1:8: unsupported expression "'abc' SIMILAR TO '%b%'"
    'EXISTS (SELECT 1)':
        'error where Flink returns a value',  # OperatorError: ValueError: Schema and number of arrays unequal (in operator Join of vertex v4)
    '2 IN (SELECT 2)':
        'error where Flink returns a value',  # OperatorError: ValueError: Schema and number of arrays unequal (in operator Join of vertex v4)
    '3 NOT IN (SELECT 2)':
        'error where Flink returns a value',  # OperatorError: ValueError: Schema and number of arrays unequal (in operator Join of vertex v4)
    # --- arithmetic ---
    'CAST(1.5 AS FLOAT) + 1':
        'different result type',  # got DOUBLE; Flink FLOAT
    'CAST(1.5 AS FLOAT) + 1.5E0':
        'different result type',  # got DOUBLE; Flink FLOAT
    '1.0E0 / 0':
        'Flink raises on DOUBLE division by zero (sqlengine: IEEE Infinity / NaN)',  # got Infinity; Flink: java.lang.ArithmeticException: Division by zero
    '-1.0E0 / 0':
        'Flink raises on DOUBLE division by zero (sqlengine: IEEE Infinity / NaN)',  # got -Infinity; Flink: java.lang.ArithmeticException: Division by zero
    '0.0E0 / 0':
        'Flink raises on DOUBLE division by zero (sqlengine: IEEE Infinity / NaN)',  # got NaN; Flink: java.lang.ArithmeticException: Division by zero
    'MOD(7.5E0, 2)':
        'returns a value where Flink raises an error',  # got 1.5; Flink: org.apache.calcite.sql.validate.SqlValidatorException: Cannot apply 'MOD' to arg
    'CEIL(CAST(1.25 AS DECIMAL(5, 2)))':
        'different result type',  # got DECIMAL(4, 0); Flink DECIMAL(5, 0)
    'FLOOR(CAST(-1.25 AS DECIMAL(5, 2)))':
        'different result type',  # got DECIMAL(4, 0); Flink DECIMAL(5, 0)
    'SIGN(2.5)':
        'error where Flink returns a value',  # OperatorError: cannot evaluate SIGN(2.5): Precision is not great enough for the result. It should be at least 20 (in operator Project of vertex v1)
    # --- string ---
    "UPPER('straße')":
        'different value',  # got "STRAẞE"; Flink "STRASS"
    "REGEXP_REPLACE('aaa', 'a*', 'X')":
        'different value',  # got "X"; Flink "XX"
    "REGEXP_REPLACE('abc', '(b)', '$1$1')":
        'different value',  # got "abbc"; Flink "a$1$1c"
    "OVERLAY('abc' PLACING 'Z' FROM 10)":
        'different value',  # got "abcZ"; Flink "abc"
    "REPLACE('abc', '', 'x')":
        'different value',  # got "abc"; Flink "xaxbxcx"
    "REGEXP_EXTRACT('foothebar', 'foo(.*?)(bar)')":
        'different value',  # got "the"; Flink "foothebar"
    "REGEXP_EXTRACT('foothebar', 'foo(.*?)(bar)', 3)":
        'error where Flink returns a value',  # OperatorError: REGEXP_EXTRACT group 3 does not exist in 'foo(.*?)(bar)' in REGEXP_EXTRACT('foothebar', 'foo(.*?)(bar)', 3) (in operator Project of ver
    "INITCAP('a-b c_d 1x')":
        'different value',  # got "A-B C_D 1X"; Flink "A-B C_D 1x"
    "FROM_BASE64('!!')":
        'returns a value where Flink raises an error',  # got ""; Flink: java.lang.IllegalArgumentException: Illegal base64 character 21
    "DECODE(ENCODE('abc', 'UTF-8'), 'UTF-8')":
        'function not implemented',  # BindError: 1:15: unknown function DECODE
    "ENCODE('abc', 'UTF-16BE')":
        'function not implemented',  # BindError: 1:8: unknown function ENCODE
    "ENCODE('é', 'ISO-8859-1')":
        'function not implemented',  # BindError: 1:8: unknown function ENCODE
    "DECODE(X'616263', 'US-ASCII')":
        'syntax not supported (parse error)',  # ParseError: 1:16: Required keyword: 'charset' missing for <class 'sqlglot.expressions.string.Decode'>
    "REGEXP('', '')":
        'different value',  # got true; Flink false
    "REGEXP('abc', CAST(NULL AS STRING))":
        'error where Flink returns a value',  # NotSupportedError: 1:1: argument 2 of REGEXP must be a constant
    "STR_TO_MAP('a=1,b=2')":
        'function not implemented',  # BindError: 1:8: unknown function STR_TO_MAP
    "STR_TO_MAP('a:1;b:2', ';', ':')":
        'function not implemented',  # BindError: 1:8: unknown function STR_TO_MAP
    "STR_TO_MAP('')":
        'function not implemented',  # BindError: 1:8: unknown function STR_TO_MAP
    "REGEXP_EXTRACT_ALL('a1b22c333', '[0-9]+')":
        'function not implemented',  # BindError: 1:8: unknown function REGEXP_EXTRACT_ALL
    "REGEXP_EXTRACT_ALL('a1b22', '([a-z])([0-9]+)', 2)":
        'function not implemented',  # BindError: 1:8: unknown function REGEXP_EXTRACT_ALL
    "PRINTF('%d-%s', 1, 'a')":
        'function not implemented',  # BindError: 1:8: unknown function PRINTF
    "SPLIT('', ',')":
        'different value',  # got [""]; Flink []
    # --- temporal ---
    "TIME '10:11:12'":
        'type not supported',  # BindError: 1:13: unknown type 'TIME'
    "TIME '23:59:59.999'":
        'type not supported',  # BindError: 1:13: unknown type 'TIME'
    "TIMESTAMP '2020-01-02 10:11:12'":
        'different result type',  # got TIMESTAMP(6); Flink TIMESTAMP(0)
    "TIMESTAMP '2020-01-02 10:11:12.123456789'":
        'error where Flink returns a value',  # OperatorError: cannot CAST STRING to TIMESTAMP(6): Failed to parse string: '2020-01-02 10:11:12.123456789' as a scalar of type timestamp[us] in CAST('
    "EXTRACT(MICROSECOND FROM TIMESTAMP '2020-01-02 10:11:12.123456')":
        'error where Flink returns a value',  # NotSupportedError: 1:43: EXTRACT(MICROSECOND ...) is not supported
    "EXTRACT(EPOCH FROM TIMESTAMP '1970-01-02 00:00:00')":
        'error where Flink returns a value',  # NotSupportedError: 1:37: EXTRACT(EPOCH ...) is not supported
    "EXTRACT(CENTURY FROM DATE '2020-01-01')":
        'error where Flink returns a value',  # NotSupportedError: 1:34: EXTRACT(CENTURY ...) is not supported
    "EXTRACT(DAY FROM INTERVAL '3' DAY)":
        'error where Flink returns a value',  # BindError: 1:34: DAY expects a DATE or TIMESTAMP, got (INTERVAL DAY TO SECOND(3))
    "EXTRACT(HOUR FROM TIME '10:11:12')":
        'type not supported',  # BindError: 1:31: unknown type 'TIME'
    "FLOOR(TIME '12:44:31' TO MINUTE)":
        'type not supported',  # BindError: 1:19: unknown type 'TIME'
    "CEIL(TIME '12:44:31' TO MINUTE)":
        'type not supported',  # BindError: 1:18: unknown type 'TIME'
    "FLOOR(TIMESTAMP '2020-05-17 12:44:31' TO HOUR)":
        'different result type',  # got TIMESTAMP(6); Flink TIMESTAMP(0)
    "FLOOR(TIMESTAMP '2020-05-17 12:44:31' TO DAY)":
        'different result type',  # got TIMESTAMP(6); Flink TIMESTAMP(0)
    "FLOOR(TIMESTAMP '2020-05-17 12:44:31' TO MONTH)":
        'different result type',  # got TIMESTAMP(6); Flink TIMESTAMP(0)
    "FLOOR(TIMESTAMP '2020-05-17 12:44:31' TO YEAR)":
        'different result type',  # got TIMESTAMP(6); Flink TIMESTAMP(0)
    "FLOOR(TIMESTAMP '2020-05-17 12:44:31' TO WEEK)":
        'error where Flink returns a value',  # NotSupportedError: 1:1: FLOOR(... TO WEEK) is not supported; use one of YEAR, QUARTER, MONTH, DAY, HOUR, MINUTE, SECOND, MILLISECOND
    "FLOOR(TIMESTAMP '2020-05-17 12:44:31' TO QUARTER)":
        'different result type',  # got TIMESTAMP(6); Flink TIMESTAMP(0)
    "CEIL(TIMESTAMP '2020-05-17 12:44:31' TO DAY)":
        'different result type',  # got TIMESTAMP(6); Flink TIMESTAMP(0)
    "CEIL(TIMESTAMP '2020-05-17 00:00:00' TO DAY)":
        'different result type',  # got TIMESTAMP(6); Flink TIMESTAMP(0)
    "CEIL(TIMESTAMP '2020-05-17 12:44:31.5' TO SECOND)":
        'different result type',  # got TIMESTAMP(6); Flink TIMESTAMP(1)
    "(TIME '2:55:00', INTERVAL '1' HOUR) OVERLAPS (TIME '3:30:00', INTERVAL '2' HOUR)":
        'error where Flink returns a value',  # NotSupportedError: 1:14: unsupported expression "(CAST('2:55:00' AS TIME), INTERVAL '1' HOUR) OVERLAPS (CAST('3:30:00' AS TIME), INTERVAL '2' HOUR)"
    "(TIME '9:00:00', TIME '10:00:00') OVERLAPS (TIME '10:15:00', INTERVAL '3' HOUR)":
        'error where Flink returns a value',  # NotSupportedError: 1:14: unsupported expression "(CAST('9:00:00' AS TIME), CAST('10:00:00' AS TIME)) OVERLAPS (CAST('10:15:00' AS TIME), INTERVAL '3'
    "(DATE '2020-01-01', DATE '2020-01-10') OVERLAPS (DATE '2020-01-05', DATE '2020-01-20')":
        'error where Flink returns a value',  # NotSupportedError: 1:14: unsupported expression "(CAST('2020-01-01' AS DATE), CAST('2020-01-10' AS DATE)) OVERLAPS (CAST('2020-01-05' AS DATE), CAST('
    "DATE_FORMAT(TIMESTAMP '2020-01-02 10:11:12', 'EEE, d MMM yyyy')":
        'error where Flink returns a value',  # OperatorError: unsupported DATE_FORMAT pattern letter 'd' in 'EEE, d MMM yyyy' in DATE_FORMAT(TIMESTAMP '2020-01-02 10:11:12', 'EEE, d MMM yyyy') (in
    "DATE_FORMAT(DATE '2020-01-02', 'yyyy/MM/dd')":
        'returns a value where Flink raises an error',  # got "2020/01/02"; Flink: org.apache.calcite.sql.validate.SqlValidatorException: Cannot apply 'DATE_FORMAT
    "DATE_FORMAT('garbage', 'yyyy')":
        'error where Flink returns a value',  # OperatorError: cannot CAST 'garbage' to TIMESTAMP(3): not a valid value in DATE_FORMAT(CAST('garbage' AS TIMESTAMP(3)), 'yyyy') (in operator Project o
    "TIMESTAMPADD(DAY, 3, TIMESTAMP '2020-01-30 10:00:00')":
        'different result type',  # got TIMESTAMP(6); Flink TIMESTAMP(0)
    "TIMESTAMPADD(HOUR, -25, TIMESTAMP '2020-01-01 00:00:00')":
        'different result type',  # got TIMESTAMP(6); Flink TIMESTAMP(0)
    "TIMESTAMPADD(WEEK, 1, TIMESTAMP '2020-01-01 00:00:00')":
        'different result type',  # got TIMESTAMP(6); Flink TIMESTAMP(0)
    "TIMESTAMPADD(SECOND, 90, TIMESTAMP '2020-01-01 00:00:00')":
        'different result type',  # got TIMESTAMP(6); Flink TIMESTAMP(0)
    "UNIX_TIMESTAMP('1970-01-01 08:00:01.001 +0800', 'yyyy-MM-dd HH:mm:ss.SSS X')":
        'error where Flink returns a value',  # OperatorError: unsupported fraction-of-second pattern in 'yyyy-MM-dd HH:mm:ss.SSS X' (only at the end, after a separator, as in 'yyyy-MM-dd HH:mm:ss.S
    "UNIX_TIMESTAMP('1970-01-01 08:00:01.001 +0800', 'yyyy-MM-dd HH:mm:ss.SSS')":
        'different value',  # got -9223372036854775808; Flink 28801
    'TO_TIMESTAMP_LTZ(0, 0)':
        'function not implemented',  # BindError: 1:8: unknown function TO_TIMESTAMP_LTZ
    'TO_TIMESTAMP_LTZ(1600000000, 0)':
        'function not implemented',  # BindError: 1:8: unknown function TO_TIMESTAMP_LTZ
    'TO_TIMESTAMP_LTZ(1600000000123, 3)':
        'function not implemented',  # BindError: 1:8: unknown function TO_TIMESTAMP_LTZ
    'TO_TIMESTAMP_LTZ(1600000000123)':
        'function not implemented',  # BindError: 1:8: unknown function TO_TIMESTAMP_LTZ
    "TO_TIMESTAMP_LTZ('2020-01-02 10:11:12')":
        'function not implemented',  # BindError: 1:8: unknown function TO_TIMESTAMP_LTZ
    'TO_TIMESTAMP_LTZ(1.5E0, 0)':
        'function not implemented',  # BindError: 1:8: unknown function TO_TIMESTAMP_LTZ
    'TO_TIMESTAMP_LTZ(CAST(NULL AS BIGINT), 3)':
        'function not implemented',  # BindError: 1:8: unknown function TO_TIMESTAMP_LTZ
    "TIMESTAMP '2020-01-01 00:00:00' + INTERVAL '1' DAY":
        'different result type',  # got TIMESTAMP(6); Flink TIMESTAMP(0)
    "TIMESTAMP '2020-01-31 10:00:00' + INTERVAL '1' MONTH":
        'different result type',  # got TIMESTAMP(6); Flink TIMESTAMP(0)
    "TIMESTAMP '2020-03-01 00:00:00' - INTERVAL '1-1' YEAR TO MONTH":
        'different result type',  # got TIMESTAMP(6); Flink TIMESTAMP(0)
    "TIME '23:00:00' + INTERVAL '2' HOUR":
        'type not supported',  # BindError: 1:13: unknown type 'TIME'
    "INTERVAL '1' DAY * 3":
        'error where Flink returns a value',  # BindError: 1:27: MULTIPLY expects numeric arguments, got (INTERVAL DAY TO SECOND(3), INT)
    'CURRENT_TIMESTAMP':
        'different result type',  # got TIMESTAMP(3); Flink TIMESTAMP_LTZ(3)
    'NOW()':
        'different result type',  # got TIMESTAMP(3); Flink TIMESTAMP_LTZ(3)
    'CURRENT_ROW_TIMESTAMP()':
        'different result type',  # got TIMESTAMP(3); Flink TIMESTAMP_LTZ(3)
    'CURRENT_TIME':
        'function not implemented',  # BindError: 1:1: unknown function CURRENT_TIME
    'LOCALTIME':
        'error where Flink returns a value',  # BindError: 1:8: unknown column 'LOCALTIME'
    # --- conditional ---
    "CASE 2 WHEN 1 THEN 'one' WHEN 2, 3 THEN 'two-three' ELSE 'other' END":
        'syntax not supported (parse error)',  # ParseError: 1:39: Required keyword: 'true' missing for <class 'sqlglot.expressions.functions.If'>
    "IS_ALPHA('abc')":
        'function not implemented',  # BindError: 1:8: unknown function IS_ALPHA
    "IS_ALPHA('ab1')":
        'function not implemented',  # BindError: 1:8: unknown function IS_ALPHA
    "IS_ALPHA('')":
        'function not implemented',  # BindError: 1:8: unknown function IS_ALPHA
    'IS_ALPHA(CAST(NULL AS STRING))':
        'function not implemented',  # BindError: 1:8: unknown function IS_ALPHA
    "IS_DECIMAL('1.5')":
        'function not implemented',  # BindError: 1:8: unknown function IS_DECIMAL
    "IS_DECIMAL('1e5')":
        'function not implemented',  # BindError: 1:8: unknown function IS_DECIMAL
    "IS_DECIMAL('abc')":
        'function not implemented',  # BindError: 1:8: unknown function IS_DECIMAL
    "IS_DECIMAL('')":
        'function not implemented',  # BindError: 1:8: unknown function IS_DECIMAL
    "IS_DECIMAL('-12')":
        'function not implemented',  # BindError: 1:8: unknown function IS_DECIMAL
    "IS_DIGIT('123')":
        'function not implemented',  # BindError: 1:8: unknown function IS_DIGIT
    "IS_DIGIT('12.3')":
        'function not implemented',  # BindError: 1:8: unknown function IS_DIGIT
    "IS_DIGIT('')":
        'function not implemented',  # BindError: 1:8: unknown function IS_DIGIT
    # --- conversion ---
    "CAST('+42' AS INT)":
        'error where Flink returns a value',  # OperatorError: cannot CAST STRING to INT: Failed to parse string: '+42' as a scalar of type int64 in CAST('+42' AS INT) (in operator Project of vertex
    "CAST('42.5' AS INT)":
        'error where Flink returns a value',  # OperatorError: cannot CAST '42.5' to INT: not a valid value in CAST('42.5' AS INT) (in operator Project of vertex v1)
    'CAST(2147483648 AS INT)':
        'error where Flink returns a value',  # OperatorError: cannot CAST 2147483648 from BIGINT to INT: Integer value 2147483648 not in range: -2147483648 to 2147483647 in CAST(2147483648 AS INT)
    'CAST(300 AS TINYINT)':
        'error where Flink returns a value',  # OperatorError: cannot CAST 300 from INT to TINYINT: Integer value 300 not in range: -128 to 127 in CAST(300 AS TINYINT) (in operator Project of vertex
    'CAST(1E20 AS BIGINT)':
        'error where Flink returns a value',  # OperatorError: cannot CAST 1e+20 from DOUBLE to BIGINT: Float value 100000000000000000000.000000 was truncated converting to int64 in CAST(1e+20 AS BI
    "CAST(CAST('NaN' AS DOUBLE) AS INT)":
        'error where Flink returns a value',  # OperatorError: cannot CAST nan from DOUBLE to INT: Float value nan was truncated converting to int32 in CAST(nan AS INT) (in operator Project of verte
    'CAST(12345.6 AS DECIMAL(4, 1))':
        'error where Flink returns a value',  # OperatorError: cannot CAST Decimal('12345.6') from DECIMAL(6, 1) to DECIMAL(4, 1): Decimal value does not fit in precision 4 in CAST(12345.6 AS DECIMA
    'CAST(0.1E0 AS DECIMAL(20, 18))':
        'different value',  # got "0.100000000000000006"; Flink "0.100000000000000000"
    'CAST(1.0E0 AS STRING)':
        'different value',  # got "1"; Flink "1.0"
    'CAST(1E20 AS STRING)':
        'different value',  # got "1e+20"; Flink "1.0E20"
    'CAST(1.0E-5 AS STRING)':
        'different value',  # got "0.00001"; Flink "1.0E-5"
    "CAST(TIMESTAMP '2020-01-02 10:11:12.5' AS STRING)":
        'different value',  # got "2020-01-02 10:11:12.500000"; Flink "2020-01-02 10:11:12.5"
    "CAST(TIME '10:11:12' AS STRING)":
        'type not supported',  # BindError: 1:18: unknown type 'TIME'
    "CAST(INTERVAL '2' DAY AS STRING)":
        'different value',  # got "172800000"; Flink "+2 00:00:00.000"
    "CAST('2020-1-2' AS DATE)":
        'error where Flink returns a value',  # OperatorError: cannot CAST STRING to DATE: Failed to parse string: '2020-1-2' as a scalar of type date32[day] in CAST('2020-1-2' AS DATE) (in operator
    "CAST('2020-01-02 10:11:12.123456' AS TIMESTAMP(3))":
        'error where Flink returns a value',  # OperatorError: cannot CAST STRING to TIMESTAMP(3): Failed to parse string: '2020-01-02 10:11:12.123456' as a scalar of type timestamp[ms] in CAST('202
    "CAST('10:11:12' AS TIME)":
        'type not supported',  # BindError: 1:13: unknown type 'TIME'
    "CAST(TIMESTAMP '2020-01-02 10:11:12' AS TIME)":
        'type not supported',  # BindError: 1:23: unknown type 'TIME'
    "CAST(TIMESTAMP '2020-01-02 10:11:12.123456' AS TIMESTAMP(3))":
        'error where Flink returns a value',  # OperatorError: cannot CAST datetime.datetime(2020, 1, 2, 10, 11, 12, 123456) from TIMESTAMP(6) to TIMESTAMP(3): Casting from timestamp[us] to timestam
    "CAST(TIMESTAMP '2020-01-02 10:11:12' AS TIMESTAMP_LTZ(3))":
        'error where Flink returns a value',  # BindError: 1:23: TIMESTAMPLTZ(3): TIMESTAMP_LTZ (WITH LOCAL TIME ZONE) is not supported yet; the session time zone is UTC, use TIMESTAMP
    'CAST(TO_TIMESTAMP_LTZ(0, 3) AS TIMESTAMP(3))':
        'function not implemented',  # BindError: 1:13: unknown function TO_TIMESTAMP_LTZ
    "CAST('abc' AS BYTES)":
        'error where Flink returns a value',  # OperatorError: CAST from STRING to BYTES is not supported in CAST('abc' AS BYTES) (in operator Project of vertex v1)
    "CAST('abc' AS BINARY(5))":
        'error where Flink returns a value',  # OperatorError: CAST from STRING to BYTES is not supported in CAST('abc' AS BYTES) (in operator Project of vertex v1)
    "CAST(X'616263' AS STRING)":
        'syntax not supported (parse error)',  # ParseError: 1:14: Expected AS after CAST
    "CAST(ROW(1, 'a') AS ROW<x BIGINT, y STRING>)":
        'syntax not supported (parse error)',  # ParseError: 1:28: Expected TYPE after CAST
    'TYPEOF(1)':
        'function not implemented',  # BindError: 1:8: unknown function TYPEOF
    "TYPEOF('abc')":
        'function not implemented',  # BindError: 1:8: unknown function TYPEOF
    'TYPEOF(1.5)':
        'function not implemented',  # BindError: 1:8: unknown function TYPEOF
    'TYPEOF(1.5E0)':
        'function not implemented',  # BindError: 1:8: unknown function TYPEOF
    'TYPEOF(CAST(NULL AS STRING))':
        'function not implemented',  # BindError: 1:8: unknown function TYPEOF
    'TYPEOF(ARRAY[1])':
        'function not implemented',  # BindError: 1:8: unknown function TYPEOF
    "TYPEOF(DATE '2020-01-01')":
        'function not implemented',  # BindError: 1:8: unknown function TYPEOF
    "TYPEOF(TIMESTAMP '2020-01-01 00:00:00')":
        'function not implemented',  # BindError: 1:8: unknown function TYPEOF
    'TYPEOF(CAST(1 AS BIGINT), TRUE)':
        'syntax not supported (parse error)',  # ParseError: 1:38: The number of provided arguments (2) is greater than the maximum number of supported arguments (1)
    # --- collection ---
    'ARRAY[10, 20][5]':
        'Flink 2.3 quirk: a missing element of a constant ARRAY/MAP reads as -1 (sqlengine: NULL)',  # got null; Flink -1
    'ARRAY[10, 20][0]':
        'returns a value where Flink raises an error',  # got null; Flink: org.apache.flink.table.api.ValidationException: Array element access needs an in
    "MAP['a', 1]['z']":
        'Flink 2.3 quirk: a missing element of a constant ARRAY/MAP reads as -1 (sqlengine: NULL)',  # got null; Flink -1
    'ARRAY_DISTINCT(ARRAY[1, 2, 1, 3, 2])':
        'function not implemented',  # BindError: 1:8: unknown function ARRAY_DISTINCT
    'ARRAY_DISTINCT(ARRAY[1, CAST(NULL AS INT), CAST(NULL AS INT)])':
        'function not implemented',  # BindError: 1:8: unknown function ARRAY_DISTINCT
    'ARRAY_POSITION(ARRAY[1, 2, 3, 2], 2)':
        'function not implemented',  # BindError: 1:8: unknown function ARRAY_POSITION
    'ARRAY_POSITION(ARRAY[1, 2], 5)':
        'function not implemented',  # BindError: 1:8: unknown function ARRAY_POSITION
    'ARRAY_REMOVE(ARRAY[1, 2, 1, 3], 1)':
        'function not implemented',  # BindError: 1:8: unknown function ARRAY_REMOVE
    'ARRAY_REMOVE(ARRAY[1, CAST(NULL AS INT)], CAST(NULL AS INT))':
        'function not implemented',  # BindError: 1:8: unknown function ARRAY_REMOVE
    'ARRAY_REVERSE(ARRAY[1, 2, 3])':
        'function not implemented',  # BindError: 1:8: unknown function ARRAY_REVERSE
    'ARRAY_APPEND(ARRAY[1, 2], 3)':
        'function not implemented',  # BindError: 1:8: unknown function ARRAY_APPEND
    'ARRAY_PREPEND(ARRAY[1, 2], 0)':
        'function not implemented',  # BindError: 1:8: unknown function ARRAY_PREPEND
    'ARRAY_CONCAT(ARRAY[1], ARRAY[2, 3])':
        'function not implemented',  # BindError: 1:8: unknown function ARRAY_CONCAT
    'ARRAY_MAX(ARRAY[1, 5, 3])':
        'function not implemented',  # BindError: 1:8: unknown function ARRAY_MAX
    'ARRAY_MIN(ARRAY[4, 2, 9])':
        'function not implemented',  # BindError: 1:8: unknown function ARRAY_MIN
    'ARRAY_MAX(ARRAY[CAST(NULL AS INT)])':
        'function not implemented',  # BindError: 1:8: unknown function ARRAY_MAX
    'ARRAY_SLICE(ARRAY[1, 2, 3, 4], 2, 3)':
        'function not implemented',  # BindError: 1:8: unknown function ARRAY_SLICE
    'ARRAY_SLICE(ARRAY[1, 2, 3, 4], -2)':
        'function not implemented',  # BindError: 1:8: unknown function ARRAY_SLICE
    'ARRAY_UNION(ARRAY[1, 2], ARRAY[2, 3])':
        'function not implemented',  # BindError: 1:8: unknown function ARRAY_UNION
    "ARRAY_JOIN(ARRAY['a', 'b', 'c'], '-')":
        'function not implemented',  # BindError: 1:8: unknown function ARRAY_TO_STRING
    "ARRAY_JOIN(ARRAY['a', CAST(NULL AS STRING)], ',', 'N')":
        'function not implemented',  # BindError: 1:8: unknown function ARRAY_TO_STRING
    'ARRAY_EXCEPT(ARRAY[1, 2, 3], ARRAY[2])':
        'function not implemented',  # BindError: 1:8: unknown function ARRAY_EXCEPT
    'ARRAY_INTERSECT(ARRAY[1, 2, 3], ARRAY[2, 3, 4])':
        'function not implemented',  # BindError: 1:8: unknown function ARRAY_INTERSECT
    'ARRAY_SORT(ARRAY[3, 1, 2])':
        'function not implemented',  # BindError: 1:8: unknown function ARRAY_SORT
    'ARRAY_SORT(ARRAY[3, 1, 2], FALSE)':
        'function not implemented',  # BindError: 1:8: unknown function ARRAY_SORT
    "MAP_KEYS(MAP['a', 1, 'b', 2])":
        'function not implemented',  # BindError: 1:8: unknown function MAP_KEYS
    "MAP_VALUES(MAP['a', 1, 'b', 2])":
        'function not implemented',  # BindError: 1:8: unknown function MAP_VALUES
    "MAP_ENTRIES(MAP['a', 1])":
        'function not implemented',  # BindError: 1:8: unknown function MAP_ENTRIES
    "MAP_FROM_ARRAYS(ARRAY['a', 'b'], ARRAY[1, 2])":
        'function not implemented',  # BindError: 1:8: unknown function MAP_FROM_ARRAYS
    "MAP_UNION(MAP['a', 1], MAP['a', 2, 'b', 3])":
        'function not implemented',  # BindError: 1:8: unknown function MAP_UNION
    # --- json ---
    'JSON_STRING(ARRAY[1, 2])':
        'different value',  # got "\"[1, 2]\""; Flink "[1,2]"
    "JSON_STRING(MAP['a', 1])":
        'different value',  # got "\"{a=1}\""; Flink "{\"a\":1}"
    "JSON_STRING(ROW(1, 'a'))":
        'different value',  # got "\"(1, a)\""; Flink "{\"EXPR$0\":1,\"EXPR$1\":\"a\"}"
    "JSON_STRING(DATE '2020-01-01')":
        'returns a value where Flink raises an error',  # got "\"2020-01-01\""; Flink: org.apache.flink.table.api.ValidationException: Unsupported argument type. Expec
    'JSON_VALUE(\'{"a": true}\', \'lax $.b\' DEFAULT FALSE ON EMPTY)':
        'different value',  # got "FALSE"; Flink "false"
    'JSON_VALUE(\'{"a": true}\', \'strict $.b\' DEFAULT FALSE ON ERROR)':
        'different value',  # got "FALSE"; Flink "false"
    'JSON_VALUE(\'{"a": "x"}\', \'$.a\' RETURNING INT)':
        'Flink 2.3 quirk: ClassCastException instead of the default NULL ON ERROR',  # got null; Flink: java.lang.ClassCastException: class java.lang.String cannot be cast to class jav
    'JSON_VALUE(\'{"a": 12345678901}\', \'$.a\' RETURNING BIGINT)':
        'Flink 2.3 refuses JSON_VALUE ... RETURNING BIGINT / DATE (sqlengine accepts)',  # got 12345678901; Flink: org.apache.flink.table.planner.codegen.CodeGenException: Unsupported type 'BIGIN
    'JSON_VALUE(\'{"a": "2020-01-02"}\', \'$.a\' RETURNING DATE)':
        'Flink 2.3 refuses JSON_VALUE ... RETURNING BIGINT / DATE (sqlengine accepts)',  # got "2020-01-02"; Flink: org.apache.flink.table.planner.codegen.CodeGenException: Unsupported type 'DATE'
    'JSON_QUERY(\'{"a":[{"c":"c1"},{"c":"c2"}]}\', \'lax $.a[*].c\')':
        'different NULL handling',  # got null; Flink "[\"c1\",\"c2\"]"
    "JSON_OBJECT('a' VALUE ARRAY[1, 2])":
        'different value',  # got "{\"a\":\"[1, 2]\"}"; Flink "{\"a\":[1,2]}"
    "JSON_ARRAY(TRUE, 1.5E0, DATE '2020-01-01')":
        'returns a value where Flink raises an error',  # got "[true,1.5,\"2020-01-01\"]"; Flink: org.apache.flink.table.planner.codegen.CodeGenException: Type 'DATE NOT NULL' is
    'JSON_QUOTE(\'a"b\')':
        'function not implemented',  # BindError: 1:8: unknown function JSON_QUOTE
    'JSON_UNQUOTE(\'"a\\u0041b"\')':
        'function not implemented',  # BindError: 1:8: unknown function JSON_UNQUOTE
    # --- value ---
    "(1, 'a')":
        'error where Flink returns a value',  # NotSupportedError: 1:9: unsupported expression "(1, 'a')"
    'CURRENT_DATABASE()':
        'function not implemented',  # BindError: 1:8: unknown function CURRENT_DATABASE
    "SELECT t.r.x, t.r.y FROM (SELECT CAST(ROW(1, 'a') AS ROW<x INT, y STRING>) AS r) AS t":
        'syntax not supported (parse error)',  # ParseError: 1:54: Expected TYPE after CAST
    "SELECT t.r.* FROM (SELECT CAST(ROW(1, 'a') AS ROW<x INT, y STRING>) AS r) AS t":
        'syntax not supported (parse error)',  # ParseError: 1:47: Expected TYPE after CAST
    "SELECT r.x FROM (SELECT CAST(ROW(1, 'a') AS ROW<x INT, y STRING>) AS r) AS t":
        'syntax not supported (parse error)',  # ParseError: 1:45: Expected TYPE after CAST
    # --- hash ---
    "SHA2('abc', 100)":
        'returns a value where Flink raises an error',  # got null; Flink: java.lang.RuntimeException: Unsupported algorithm.
    "SHA2('abc', CAST(NULL AS INT))":
        'error where Flink returns a value',  # NotSupportedError: 1:1: argument 2 of SHA2 must be a constant
    # --- aggregate ---
    'COLLECT(s) @ T':
        'function not implemented',  # BindError: 1:8: unknown function COLLECT
    'COLLECT(DISTINCT s) @ T':
        'function not implemented',  # BindError: 1:8: unknown function COLLECT
    'LISTAGG(DISTINCT s) @ T':
        'error where Flink returns a value',  # NotSupportedError: 1:8: LISTAGG(DISTINCT ...) is not supported yet
    'ARRAY_AGG(i) @ T':
        'error where Flink returns a value',  # NotSupportedError: 1:8: aggregate function ARRAYAGG is not supported yet
    'ARRAY_AGG(DISTINCT s) @ T':
        'error where Flink returns a value',  # NotSupportedError: 1:8: aggregate function ARRAYAGG is not supported yet
    'JSON_ARRAYAGG(s) @ T':
        'function not implemented',  # BindError: 1:8: unknown function JSON_ARRAYAGG
    'JSON_ARRAYAGG(s NULL ON NULL) @ T':
        'syntax not supported (parse error)',  # ParseError: 1:24: Expecting )
    'PERCENTILE(i, 0.5) @ T':
        'function not implemented',  # BindError: 1:8: unknown function PERCENTILE
    'COLLECT(s) @ Tg GROUP BY g':
        'function not implemented',  # BindError: 1:11: unknown function COLLECT
    'COLLECT(s) @ E':
        'function not implemented',  # BindError: 1:8: unknown function COLLECT
    'ARRAY_AGG(i) @ E':
        'error where Flink returns a value',  # NotSupportedError: 1:8: aggregate function ARRAYAGG is not supported yet
    'JSON_ARRAYAGG(s) @ E':
        'function not implemented',  # BindError: 1:8: unknown function JSON_ARRAYAGG
    "SELECT g, h, GROUPING_ID(g, h) AS gid, SUM(i) AS s FROM (VALUES ('a', 'x', 1), ('a', 'y', 2), ('b', 'x', 3)) AS t(g, h, i) GROUP BY ROLLUP (g, h)":
        'error where Flink returns a value',  # NotSupportedError: 1:14: aggregate function GROUPINGID is not supported yet
    "SELECT g, GROUP_ID() AS gid, COUNT(*) AS n FROM (VALUES ('a'), ('b')) AS t(g) GROUP BY GROUPING SETS ((g), (g))":
        'function not implemented',  # BindError: 1:11: unknown function GROUP_ID
    "SELECT JSON_OBJECTAGG(KEY g VALUE i) AS j FROM (VALUES ('a', 1), ('b', 3), ('c', CAST(NULL AS INT))) AS t(g, i)":
        'error where Flink returns a value',  # NotSupportedError: 1:27: aggregate function JSONOBJECTAGG is not supported yet
    "SELECT JSON_OBJECTAGG(KEY g VALUE i ABSENT ON NULL) AS j FROM (VALUES ('a', 1), ('b', 3), ('c', CAST(NULL AS INT))) AS t(g, i)":
        'error where Flink returns a value',  # NotSupportedError: 1:27: aggregate function JSONOBJECTAGG is not supported yet
    # --- window ---
    'LEAD(v, 1, -1) OVER (PARTITION BY g ORDER BY id) @ W':
        "Flink 2.3 quirk: LEAD/LAG with a default give a non-NULL value (the default, or -1) where the neighbouring row's value is NULL",  # got [20, 20, -1, null, 7, -1, -1]; Flink [20, 20, -1, -1, 7, -1, -1]
    'LAG(v, 1, 0) OVER (PARTITION BY g ORDER BY id) @ W':
        "Flink 2.3 quirk: LEAD/LAG with a default give a non-NULL value (the default, or -1) where the neighbouring row's value is NULL",  # got [0, 10, 20, 0, 5, null, 0]; Flink [0, 10, 20, 0, 5, -1, 0]
    'LISTAGG(g) OVER (ORDER BY id) @ W':
        'error where Flink returns a value',  # OperatorError: ArrowTypeError: Expected bytes, got a 'int' object (in operator WindowFunctions of vertex v2)
}
