"""The conformance calls: Flink 2.x built-in functions, family by family.

Follows the families of Flink's "System (Built-in) Functions" page (docs/data/sql_functions.yml
in apache/flink). Each call is one of:

* ``scalar``: an SQL expression over literals, run as ``SELECT <expr>``;
* ``table``: an aggregate or window expression over one of the inline ``TABLES`` (VALUES),
  run as ``SELECT <keys>, <expr> FROM <table> [GROUP BY <group>]``; its value is the list of
  the expression's values, one per result row, in the order of the key columns;
* ``query``: a full query; its value is its rows (sorted), its type the list of column types.

The expected answers are Flink 2.3's own (``generate_flink.py`` -> ``flink_expected.json``).
A call with ``prop`` is non-deterministic (RAND(), UUID(), NOW()...): only its type and the
property named (see ``PROPERTIES`` in ``compare.py``) are checked, not its value. A call with
``unordered`` aggregates in an order Flink leaves undefined (LISTAGG, ARRAY_AGG, JSON_ARRAYAGG,
JSON_OBJECTAGG, and FIRST_VALUE / LAST_VALUE without OVER: Flink 2.3's LISTAGG order and
LAST_VALUE change from run to run): both answers are put in an order-free form first
(``compare.unordered``: elements sorted; for FIRST_VALUE / LAST_VALUE only NULL or not).
"""
# ruff: noqa: E501  (the SQL calls stay one per line, whatever their length)

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Call:
    family: str
    sql: str
    kind: str = "scalar"  # scalar | table | query
    table: str | None = None
    group: str | None = None
    prop: str | None = None
    unordered: str | None = None  # an aggregate whose element order Flink leaves undefined

    @property
    def id(self) -> str:
        """The call's stable key (in flink_expected.json and known_failures.py)."""
        if self.kind == "table":
            g = f" GROUP BY {self.group}" if self.group else ""
            return f"{self.sql} @ {self.table}{g}"
        return self.sql


# The inline tables the aggregate and window calls run over.
_T_ROWS = """('a', 1, 1.5E0, 'x', TRUE, CAST(1.10 AS DECIMAL(10, 2))),
 ('a', 2, 2.5E0, 'y', FALSE, CAST(2.25 AS DECIMAL(10, 2))),
 ('b', 3, CAST(NULL AS DOUBLE), 'x', TRUE, CAST(NULL AS DECIMAL(10, 2))),
 ('b', CAST(NULL AS INT), 4.0E0, CAST(NULL AS STRING), CAST(NULL AS BOOLEAN), CAST(3.00 AS DECIMAL(10, 2))),
 ('c', 5, -1.0E0, 'z', TRUE, CAST(-0.50 AS DECIMAL(10, 2))),
 ('a', 2, 0.5E0, 'y', TRUE, CAST(0.01 AS DECIMAL(10, 2)))"""
TABLES: dict[str, tuple[str, list[str]]] = {
    # name: (FROM clause, key columns to order the result rows by)
    "T": (f"(VALUES {_T_ROWS}) AS t(g, i, d, s, b, m)", []),
    "Tg": (f"(VALUES {_T_ROWS}) AS t(g, i, d, s, b, m)", ["g"]),
    "E": (f"(VALUES {_T_ROWS}) AS t(g, i, d, s, b, m) WHERE i > 100", []),
    "W": ("(VALUES (1, 'a', 10), (2, 'a', 20), (3, 'a', 20), (4, 'b', 5),"
          " (5, 'b', CAST(NULL AS INT)), (6, 'b', 7), (7, 'c', 1)) AS w(id, g, v)", ["id"]),
}

_SCALAR: dict[str, str] = {}

_SCALAR["comparison"] = r"""
1 = 1
1 = 2
1 = CAST(NULL AS INT)
'a' = 'a'
'a' = 'a  '
'abc' = 'ABC'
1 <> 2
1 <> 1
1 <> CAST(NULL AS INT)
2 > 1
1.5 > 1
'b' > 'a'
'B' < 'a'
'' < 'a'
1 >= 1
1 <= 0
-1 < 0
DATE '2020-01-01' < DATE '2020-01-02'
TIMESTAMP '2020-01-01 00:00:00' = TIMESTAMP '2020-01-01 00:00:00.000'
TIMESTAMP '2020-01-01 00:00:00.001' > TIMESTAMP '2020-01-01 00:00:00'
1 = 1.0
CAST(1 AS BIGINT) = CAST(1 AS TINYINT)
1.0E0 = 1
0.1E0 + 0.2E0 = 0.3E0
0.1 + 0.2 = 0.3
TRUE > FALSE
CAST('NaN' AS DOUBLE) = CAST('NaN' AS DOUBLE)
CAST(NULL AS INT) IS NULL
1 IS NULL
1 IS NOT NULL
CAST(NULL AS STRING) IS NOT NULL
'' IS NULL
1 IS DISTINCT FROM CAST(NULL AS INT)
CAST(NULL AS INT) IS DISTINCT FROM CAST(NULL AS INT)
1 IS NOT DISTINCT FROM CAST(NULL AS INT)
CAST(NULL AS INT) IS NOT DISTINCT FROM CAST(NULL AS INT)
1 IS DISTINCT FROM 2
'a' IS NOT DISTINCT FROM 'a'
12 BETWEEN 15 AND 12
12 BETWEEN SYMMETRIC 15 AND 12
12 BETWEEN 10 AND CAST(NULL AS INT)
12 BETWEEN CAST(NULL AS INT) AND 10
12 BETWEEN SYMMETRIC CAST(NULL AS INT) AND 12
12 BETWEEN ASYMMETRIC 10 AND 15
12 NOT BETWEEN 15 AND 12
12 NOT BETWEEN SYMMETRIC 15 AND 12
12 NOT BETWEEN CAST(NULL AS INT) AND 15
12 NOT BETWEEN 15 AND CAST(NULL AS INT)
12 NOT BETWEEN SYMMETRIC 12 AND CAST(NULL AS INT)
'b' BETWEEN 'a' AND 'c'
DATE '2020-01-05' BETWEEN DATE '2020-01-01' AND DATE '2020-01-31'
'abc' LIKE 'a%'
'abc' LIKE 'a_c'
'abc' LIKE 'b%'
'abc' LIKE '%'
'' LIKE '%'
'' LIKE '_'
'a%c' LIKE 'a\%c' ESCAPE '\'
'abc' LIKE 'a\%c' ESCAPE '\'
'a.c' LIKE 'a.c'
'abc' LIKE 'a.c'
'a' || CHR(10) || 'b' LIKE 'a%b'
CAST(NULL AS STRING) LIKE 'a%'
'abc' LIKE CAST(NULL AS STRING)
'abc' NOT LIKE 'a%'
'ABC' LIKE 'a%'
'abc' SIMILAR TO 'a(b|c)+'
'abc' SIMILAR TO 'a.c'
'abc' SIMILAR TO 'a_c'
'abd' NOT SIMILAR TO 'a(b|c)+'
'abc' SIMILAR TO '%b%'
4 IN (1, 2, 3)
1 IN (1, 2, CAST(NULL AS INT))
4 IN (1, 2, CAST(NULL AS INT))
CAST(NULL AS INT) IN (1, 2)
4 NOT IN (1, 2, 3)
1 NOT IN (1, 2, CAST(NULL AS INT))
4 NOT IN (1, 2, CAST(NULL AS INT))
'a' IN ('a', 'b')
1.0 IN (1, 2)
EXISTS (SELECT 1)
2 IN (SELECT 2)
3 NOT IN (SELECT 2)
"""

_SCALAR["logical"] = r"""
TRUE OR FALSE
FALSE OR FALSE
TRUE OR CAST(NULL AS BOOLEAN)
FALSE OR CAST(NULL AS BOOLEAN)
TRUE AND TRUE
TRUE AND FALSE
TRUE AND CAST(NULL AS BOOLEAN)
FALSE AND CAST(NULL AS BOOLEAN)
CAST(NULL AS BOOLEAN) AND CAST(NULL AS BOOLEAN)
NOT TRUE
NOT FALSE
NOT CAST(NULL AS BOOLEAN)
TRUE IS FALSE
FALSE IS FALSE
CAST(NULL AS BOOLEAN) IS FALSE
CAST(NULL AS BOOLEAN) IS NOT FALSE
TRUE IS NOT FALSE
TRUE IS TRUE
CAST(NULL AS BOOLEAN) IS TRUE
FALSE IS NOT TRUE
CAST(NULL AS BOOLEAN) IS NOT TRUE
CAST(NULL AS BOOLEAN) IS UNKNOWN
TRUE IS UNKNOWN
TRUE IS NOT UNKNOWN
CAST(NULL AS BOOLEAN) IS NOT UNKNOWN
(1 > 2) OR (2 > 1)
NOT (1 = 1) AND TRUE
NOT 1 = 2 OR FALSE AND FALSE
"""

_SCALAR["arithmetic"] = r"""
+5
-5
-(-5)
-(CAST(-2147483648 AS INT))
-CAST(NULL AS INT)
-1.5
1 + 2
1 + 2.5
1 + 2.5E0
CAST(1 AS TINYINT) + CAST(1 AS TINYINT)
CAST(1 AS SMALLINT) + 1
CAST(1 AS BIGINT) + 1
CAST(1.5 AS FLOAT) + 1
CAST(1.5 AS FLOAT) + 1.5E0
2147483647 + 1
CAST(9223372036854775807 AS BIGINT) + 1
CAST(127 AS TINYINT) + CAST(1 AS TINYINT)
5 - 7
1.1 - 0.1
0.1E0 + 0.2E0
3 * 4
2147483647 * 2
1.5 * 2.25
CAST(1.5 AS DECIMAL(10, 2)) * CAST(2 AS DECIMAL(10, 3))
CAST(1.5 AS DECIMAL(38, 10)) * CAST(2 AS DECIMAL(38, 10))
CAST(99999999999999999999999999999999999999 AS DECIMAL(38, 0)) + 1
7 / 2
-7 / 2
7 / 2.0
7.0E0 / 2
1 / 3.0
CAST(10 AS DECIMAL(38, 0)) / 3
CAST(1 AS BIGINT) / 2
1 / 0
1.0 / 0
1.0E0 / 0
-1.0E0 / 0
0.0E0 / 0
7 % 3
-7 % 3
7 % -3
7 % 0
MOD(7, 3)
MOD(-7, 3)
MOD(7.5, 2)
MOD(7.5E0, 2)
CAST(NULL AS INT) + 1
1 * CAST(NULL AS DOUBLE)
(1 + 2) * 3 - 4 / 2
POWER(2, 10)
POWER(2.0, -1)
POWER(-8, 1.0E0 / 3)
POWER(0, 0)
POWER(10, 400)
POWER(CAST(NULL AS INT), 2)
ABS(-5)
ABS(-5.5)
ABS(-1.5E0)
ABS(CAST(-2147483648 AS INT))
ABS(CAST(-3 AS TINYINT))
ABS(CAST(NULL AS INT))
SQRT(16)
SQRT(2)
SQRT(-1)
SQRT(CAST(NULL AS DOUBLE))
LN(1)
LN(2.718281828459045)
LN(0)
LN(-1)
LOG10(1000)
LOG10(0.001)
LOG2(8)
LOG2(0)
LOG(100)
LOG(10, 1000)
LOG(2, 8)
LOG(1, 8)
LOG(10, -1)
LOG(CAST(NULL AS DOUBLE))
EXP(0)
EXP(1)
EXP(710)
EXP(CAST(NULL AS DOUBLE))
CEIL(1.2)
CEIL(-1.2)
CEILING(1.5E0)
CEIL(5)
CEIL(CAST(1.25 AS DECIMAL(5, 2)))
CEIL(CAST(NULL AS DOUBLE))
FLOOR(1.8)
FLOOR(-1.2)
FLOOR(-1.5E0)
FLOOR(7)
FLOOR(CAST(-1.25 AS DECIMAL(5, 2)))
SIN(0)
SIN(PI() / 2)
SINH(1)
COS(0)
COS(PI())
TAN(PI() / 4)
TANH(0.5)
COT(1)
COT(0)
ASIN(1)
ASIN(2)
ACOS(0.5)
ACOS(-2)
ATAN(1)
ATAN2(1, 1)
ATAN2(0, -1)
COSH(0)
COSH(1.5E0)
DEGREES(PI())
RADIANS(180)
SIN(CAST(NULL AS DOUBLE))
SIGN(-3)
SIGN(0)
SIGN(2.5)
SIGN(-2.5E0)
SIGN(CAST(NULL AS INT))
ROUND(3.14159, 2)
ROUND(2.5, 0)
ROUND(-2.5, 0)
ROUND(1234.5, -2)
ROUND(2.5E0, 0)
ROUND(-2.5E0, 0)
ROUND(1.005E0, 2)
ROUND(5, -1)
ROUND(15, -1)
ROUND(3.7)
ROUND(CAST(NULL AS DOUBLE), 1)
PI()
E()
RAND(42)
RAND(0)
RAND_INTEGER(42, 10)
RAND_INTEGER(0, 100)
!unit_interval RAND()
!int_below_10 RAND_INTEGER(10)
!uuid UUID()
BIN(4)
BIN(12)
BIN(0)
BIN(-1)
BIN(CAST(NULL AS INT))
HEX(20)
HEX(100)
HEX(-1)
HEX('hello,world')
HEX('')
HEX(CAST(NULL AS STRING))
TRUNCATE(42.324, 2)
TRUNCATE(42.324)
TRUNCATE(-42.326, 2)
TRUNCATE(1234.56, -2)
TRUNCATE(42.324E0, 1)
TRUNCATE(123, -1)
TRUNCATE(CAST(NULL AS DOUBLE), 2)
"""

_SCALAR["string"] = r"""
'ab' || 'cd'
'ab' || CAST(NULL AS STRING)
'ab' || ''
CHAR_LENGTH('hello')
CHARACTER_LENGTH('')
CHAR_LENGTH('héllo')
CHAR_LENGTH('  ')
CHAR_LENGTH(CAST(NULL AS STRING))
UPPER('hello')
UPPER('straße')
LOWER('HeLLo')
UPPER('')
LOWER(CAST(NULL AS STRING))
POSITION('b' IN 'abc')
POSITION('z' IN 'abc')
POSITION('' IN 'abc')
POSITION('a' IN CAST(NULL AS STRING))
TRIM('  ab  ')
TRIM(BOTH 'x' FROM 'xxabxx')
TRIM(LEADING 'x' FROM 'xxabxx')
TRIM(TRAILING 'x' FROM 'xxabxx')
TRIM(BOTH 'xy' FROM 'xyabyx')
TRIM('')
TRIM(CAST(NULL AS STRING))
LTRIM('  ab  ')
RTRIM('  ab  ')
LTRIM('')
LTRIM('xxab', 'x')
RTRIM('abyy', 'y')
BTRIM('  ab  ')
BTRIM('xxabxx', 'x')
REPEAT('ab', 3)
REPEAT('ab', 0)
REPEAT('ab', -1)
REPEAT('', 5)
REPEAT(CAST(NULL AS STRING), 2)
REGEXP_REPLACE('foobar', 'oo|ar', '')
REGEXP_REPLACE('abc123', '[0-9]+', '#')
REGEXP_REPLACE('aaa', 'a*', 'X')
REGEXP_REPLACE('abc', '(b)', '$1$1')
REGEXP_REPLACE('abc', '[', 'x')
REGEXP_REPLACE(CAST(NULL AS STRING), 'a', 'b')
OVERLAY('xxxxxtest' PLACING 'xxxx' FROM 6)
OVERLAY('xxxxxtest' PLACING 'xxxx' FROM 6 FOR 2)
OVERLAY('abc' PLACING 'Z' FROM 10)
SUBSTRING('hello' FROM 2)
SUBSTRING('hello' FROM 2 FOR 3)
SUBSTRING('hello' FROM 0 FOR 2)
SUBSTRING('hello' FROM -2)
SUBSTRING('hello' FROM 10)
SUBSTRING('hello' FROM 2 FOR -1)
SUBSTRING('hello', 2, 2)
SUBSTRING(CAST(NULL AS STRING) FROM 2)
SUBSTR('hello', 2)
SUBSTR('hello', 2, 2)
SUBSTR('hello', -3, 2)
REPLACE('hello world', 'world', 'flink')
REPLACE('ababab', 'abab', 'z')
REPLACE('abc', '', 'x')
REPLACE('abc', 'b', '')
REPLACE(CAST(NULL AS STRING), 'a', 'b')
REGEXP_EXTRACT('foothebar', 'foo(.*?)(bar)', 2)
REGEXP_EXTRACT('foothebar', 'foo(.*?)(bar)', 0)
REGEXP_EXTRACT('foothebar', 'foo(.*?)(bar)')
REGEXP_EXTRACT('foothebar', 'x(.*)', 1)
REGEXP_EXTRACT('foothebar', 'foo(.*?)(bar)', 3)
REGEXP_EXTRACT(CAST(NULL AS STRING), 'a', 0)
INITCAP('hello wORLD')
INITCAP('a-b c_d 1x')
INITCAP('')
CONCAT('AA', 'BB', 'CC')
CONCAT('a', CAST(NULL AS STRING))
CONCAT('a')
CONCAT('', '')
CONCAT_WS('~', 'AA', CAST(NULL AS STRING), 'BB', '', 'CC')
CONCAT_WS(CAST(NULL AS STRING), 'a', 'b')
CONCAT_WS(',', 'a')
LPAD('hi', 4, '??')
LPAD('hi', 1, '??')
LPAD('hi', 5, 'ab')
LPAD('hi', -1, '?')
LPAD('hi', 4, '')
LPAD(CAST(NULL AS STRING), 4, '?')
RPAD('hi', 4, '??')
RPAD('hi', 1, '??')
RPAD('hi', 5, 'ab')
FROM_BASE64('aGVsbG8gd29ybGQ=')
FROM_BASE64('!!')
FROM_BASE64('')
TO_BASE64('hello world')
TO_BASE64('')
TO_BASE64(CAST(NULL AS STRING))
ASCII('abc')
ASCII('')
ASCII(CAST(NULL AS STRING))
CHR(97)
CHR(353)
CHR(256)
CHR(-1)
DECODE(ENCODE('abc', 'UTF-8'), 'UTF-8')
ENCODE('abc', 'UTF-16BE')
ENCODE('é', 'ISO-8859-1')
DECODE(X'616263', 'US-ASCII')
ENCODE('abc', 'BOGUS')
INSTR('hello', 'l')
INSTR('hello', 'z')
INSTR('hello', '')
INSTR(CAST(NULL AS STRING), 'a')
LEFT('hello', 2)
LEFT('hello', -1)
LEFT('hello', 10)
LEFT(CAST(NULL AS STRING), 2)
RIGHT('hello', 2)
RIGHT('hello', -1)
RIGHT('hello', 0)
LOCATE('l', 'hello')
LOCATE('l', 'hello', 4)
LOCATE('z', 'hello')
LOCATE('l', 'hello', 0)
LOCATE('', 'hello')
PARSE_URL('http://facebook.com/path1/p.php?k1=v1&k2=v2#Ref1', 'HOST')
PARSE_URL('http://facebook.com/path1/p.php?k1=v1&k2=v2#Ref1', 'PATH')
PARSE_URL('http://facebook.com/path1/p.php?k1=v1&k2=v2#Ref1', 'QUERY')
PARSE_URL('http://facebook.com/path1/p.php?k1=v1&k2=v2#Ref1', 'REF')
PARSE_URL('http://facebook.com/path1/p.php?k1=v1&k2=v2#Ref1', 'PROTOCOL')
PARSE_URL('http://facebook.com/path1/p.php?k1=v1&k2=v2#Ref1', 'FILE')
PARSE_URL('http://user:pw@facebook.com:8080/p?x=1', 'AUTHORITY')
PARSE_URL('http://user:pw@facebook.com:8080/p?x=1', 'USERINFO')
PARSE_URL('http://facebook.com/path1/p.php?k1=v1&k2=v2#Ref1', 'QUERY', 'k1')
PARSE_URL('http://facebook.com/path1/p.php?k1=v1&k2=v2#Ref1', 'QUERY', 'k3')
PARSE_URL('not a url', 'HOST')
REGEXP('abc', 'b')
REGEXP('abc', '^b')
REGEXP('', '')
REGEXP('abc', CAST(NULL AS STRING))
REVERSE('abc')
REVERSE('')
REVERSE(CAST(NULL AS STRING))
SPLIT_INDEX('a,b,c', ',', 1)
SPLIT_INDEX('a,b,c', ',', 5)
SPLIT_INDEX('a,b,c', ',', -1)
SPLIT_INDEX('a,,c', ',', 1)
STR_TO_MAP('a=1,b=2')
STR_TO_MAP('a:1;b:2', ';', ':')
STR_TO_MAP('')
STARTSWITH('abc', 'ab')
STARTSWITH('abc', '')
ENDSWITH('abc', 'bc')
ENDSWITH('abc', 'x')
REGEXP_COUNT('abcabc', 'b')
REGEXP_EXTRACT_ALL('a1b22c333', '[0-9]+')
REGEXP_EXTRACT_ALL('a1b22', '([a-z])([0-9]+)', 2)
REGEXP_INSTR('abc123', '[0-9]')
REGEXP_SUBSTR('abc123def456', '[0-9]+')
TRANSLATE('abcabc', 'ab', 'xy')
TRANSLATE('xxa', CAST(NULL AS STRING), 'q')
TRANSLATE('xxa', 'x', CAST(NULL AS STRING))
TRANSLATE(CAST(NULL AS STRING), 'x', 'y')
PRINTF('%d-%s', 1, 'a')
ELT(2, 'a', 'b', 'c')
ELT(5, 'a', 'b')
URL_ENCODE('a b&c=d')
URL_DECODE('a+b%26c')
SPLIT('a,b,c', ',')
SPLIT('abc', '')
SPLIT('', ',')
"""

_SCALAR["temporal"] = r"""
DATE '2020-02-29'
DATE '2020-13-01'
TIME '10:11:12'
TIME '23:59:59.999'
TIMESTAMP '2020-01-02 10:11:12'
TIMESTAMP '2020-01-02 10:11:12.123456'
TIMESTAMP '2020-01-02 10:11:12.123456789'
INTERVAL '10 00:00:00.004' DAY TO SECOND
INTERVAL '10' DAY
INTERVAL '2-10' YEAR TO MONTH
INTERVAL '3' HOUR
INTERVAL '90' MINUTE
INTERVAL '1' YEAR
INTERVAL '5' MONTH
INTERVAL '1.5' SECOND
EXTRACT(DAY FROM DATE '2006-06-05')
EXTRACT(YEAR FROM TIMESTAMP '2020-01-02 10:11:12')
EXTRACT(MONTH FROM TIMESTAMP '2020-01-02 10:11:12')
EXTRACT(HOUR FROM TIMESTAMP '2020-01-02 10:11:12')
EXTRACT(MINUTE FROM TIMESTAMP '2020-01-02 10:11:12')
EXTRACT(SECOND FROM TIMESTAMP '2020-01-02 10:11:12.5')
EXTRACT(DOW FROM DATE '1994-09-27')
EXTRACT(DOY FROM DATE '1994-09-27')
EXTRACT(WEEK FROM DATE '1994-09-27')
EXTRACT(QUARTER FROM DATE '1994-09-27')
EXTRACT(MILLISECOND FROM TIMESTAMP '2020-01-02 10:11:12.123')
EXTRACT(MICROSECOND FROM TIMESTAMP '2020-01-02 10:11:12.123456')
EXTRACT(EPOCH FROM TIMESTAMP '1970-01-02 00:00:00')
EXTRACT(CENTURY FROM DATE '2020-01-01')
EXTRACT(DAY FROM INTERVAL '3' DAY)
EXTRACT(HOUR FROM TIME '10:11:12')
EXTRACT(YEAR FROM CAST(NULL AS DATE))
YEAR(DATE '1994-09-27')
QUARTER(DATE '1994-09-27')
MONTH(DATE '1994-09-27')
WEEK(DATE '1994-09-27')
WEEK(DATE '2021-01-01')
DAYOFYEAR(DATE '1994-09-27')
DAYOFMONTH(DATE '1994-09-27')
DAYOFWEEK(DATE '1994-09-27')
DAYOFWEEK(DATE '2023-01-01')
HOUR(TIMESTAMP '1994-09-27 13:14:15')
MINUTE(TIMESTAMP '1994-09-27 13:14:15')
SECOND(TIMESTAMP '1994-09-27 13:14:15')
YEAR(TIMESTAMP '1994-09-27 13:14:15')
YEAR(CAST(NULL AS DATE))
FLOOR(TIME '12:44:31' TO MINUTE)
CEIL(TIME '12:44:31' TO MINUTE)
FLOOR(TIMESTAMP '2020-05-17 12:44:31' TO HOUR)
FLOOR(TIMESTAMP '2020-05-17 12:44:31' TO DAY)
FLOOR(TIMESTAMP '2020-05-17 12:44:31' TO MONTH)
FLOOR(TIMESTAMP '2020-05-17 12:44:31' TO YEAR)
FLOOR(TIMESTAMP '2020-05-17 12:44:31' TO WEEK)
FLOOR(TIMESTAMP '2020-05-17 12:44:31' TO QUARTER)
CEIL(TIMESTAMP '2020-05-17 12:44:31' TO DAY)
CEIL(TIMESTAMP '2020-05-17 00:00:00' TO DAY)
CEIL(TIMESTAMP '2020-05-17 12:44:31.5' TO SECOND)
FLOOR(DATE '2020-05-17' TO MONTH)
CEIL(DATE '2020-05-17' TO YEAR)
FLOOR(CAST(NULL AS TIMESTAMP(3)) TO DAY)
(TIME '2:55:00', INTERVAL '1' HOUR) OVERLAPS (TIME '3:30:00', INTERVAL '2' HOUR)
(TIME '9:00:00', TIME '10:00:00') OVERLAPS (TIME '10:15:00', INTERVAL '3' HOUR)
(DATE '2020-01-01', DATE '2020-01-10') OVERLAPS (DATE '2020-01-05', DATE '2020-01-20')
DATE_FORMAT(TIMESTAMP '2020-01-02 10:11:12', 'yyyy-MM-dd HH:mm')
DATE_FORMAT(TIMESTAMP '2020-01-02 10:11:12', 'EEE, d MMM yyyy')
DATE_FORMAT(TIMESTAMP '2020-01-02 10:11:12.345', 'HH:mm:ss.SSS')
DATE_FORMAT('2020-01-02 10:11:12', 'yyyyMMdd')
DATE_FORMAT(DATE '2020-01-02', 'yyyy/MM/dd')
DATE_FORMAT(CAST(NULL AS TIMESTAMP(3)), 'yyyy')
DATE_FORMAT('garbage', 'yyyy')
TIMESTAMPADD(DAY, 3, TIMESTAMP '2020-01-30 10:00:00')
TIMESTAMPADD(MONTH, 1, DATE '2020-01-31')
TIMESTAMPADD(HOUR, -25, TIMESTAMP '2020-01-01 00:00:00')
TIMESTAMPADD(YEAR, 1, DATE '2020-02-29')
TIMESTAMPADD(WEEK, 1, TIMESTAMP '2020-01-01 00:00:00')
TIMESTAMPADD(SECOND, 90, TIMESTAMP '2020-01-01 00:00:00')
TIMESTAMPDIFF(DAY, TIMESTAMP '2020-01-01 00:00:00', TIMESTAMP '2020-01-03 12:00:00')
TIMESTAMPDIFF(HOUR, TIMESTAMP '2020-01-01 00:00:00', TIMESTAMP '2020-01-03 12:00:00')
TIMESTAMPDIFF(MONTH, DATE '2020-01-31', DATE '2020-02-29')
TIMESTAMPDIFF(YEAR, DATE '2019-06-01', DATE '2020-05-31')
TIMESTAMPDIFF(SECOND, TIMESTAMP '2020-01-01 00:00:10', TIMESTAMP '2020-01-01 00:00:00')
TIMESTAMPDIFF(MINUTE, TIMESTAMP '2020-01-01 00:00:00', TIMESTAMP '2020-01-01 01:30:59')
TIMESTAMPDIFF(DAY, DATE '2020-01-01', DATE '2020-03-01')
CONVERT_TZ('1970-01-01 00:00:00', 'UTC', 'America/Los_Angeles')
CONVERT_TZ('2020-06-01 12:00:00', 'Europe/Berlin', 'UTC')
CONVERT_TZ('2020-01-01 00:00:00', 'GMT+08:00', 'UTC')
CONVERT_TZ('bad', 'UTC', 'UTC')
FROM_UNIXTIME(44)
FROM_UNIXTIME(0, 'yyyy-MM-dd')
FROM_UNIXTIME(1600000000)
FROM_UNIXTIME(-1)
FROM_UNIXTIME(CAST(NULL AS BIGINT))
UNIX_TIMESTAMP('1970-01-01 08:00:01')
UNIX_TIMESTAMP('1970-01-01 08:00:01.001', 'yyyy-MM-dd HH:mm:ss.SSS')
UNIX_TIMESTAMP('1970-01-01 08:00:01.001 +0800', 'yyyy-MM-dd HH:mm:ss.SSS X')
UNIX_TIMESTAMP('1970-01-01 08:00:01.001 +0800', 'yyyy-MM-dd HH:mm:ss.SSS')
UNIX_TIMESTAMP('garbage')
UNIX_TIMESTAMP('2020-01-01', 'yyyy-MM-dd')
TO_DATE('2020-01-02')
TO_DATE('02/01/2020', 'dd/MM/yyyy')
TO_DATE('garbage')
TO_DATE('2020-02-30')
TO_DATE(CAST(NULL AS STRING))
TO_TIMESTAMP('2020-01-02 10:11:12')
TO_TIMESTAMP('2020-01-02', 'yyyy-MM-dd')
TO_TIMESTAMP('2020-01-02 10:11:12.123', 'yyyy-MM-dd HH:mm:ss.SSS')
TO_TIMESTAMP('2020/01/02 10:11', 'yyyy/MM/dd HH:mm')
TO_TIMESTAMP('garbage')
TO_TIMESTAMP(CAST(NULL AS STRING))
TO_TIMESTAMP_LTZ(0, 0)
TO_TIMESTAMP_LTZ(1600000000, 0)
TO_TIMESTAMP_LTZ(1600000000123, 3)
TO_TIMESTAMP_LTZ(1600000000123)
TO_TIMESTAMP_LTZ('2020-01-02 10:11:12')
TO_TIMESTAMP_LTZ(1.5E0, 0)
TO_TIMESTAMP_LTZ(CAST(NULL AS BIGINT), 3)
TIMESTAMP '2020-01-01 00:00:00' + INTERVAL '1' DAY
TIMESTAMP '2020-01-31 10:00:00' + INTERVAL '1' MONTH
DATE '2020-01-31' + INTERVAL '1' MONTH
DATE '2020-03-01' - INTERVAL '1' DAY
TIMESTAMP '2020-03-01 00:00:00' - INTERVAL '1-1' YEAR TO MONTH
TIME '23:00:00' + INTERVAL '2' HOUR
INTERVAL '1' DAY + INTERVAL '2' HOUR
INTERVAL '1' DAY * 3
!recent_ltz CURRENT_TIMESTAMP
!recent_ltz NOW()
!recent_ltz CURRENT_ROW_TIMESTAMP()
!recent_timestamp LOCALTIMESTAMP
!today CURRENT_DATE
!time_of_day CURRENT_TIME
!time_of_day LOCALTIME
!recent_seconds UNIX_TIMESTAMP()
"""

_SCALAR["conditional"] = r"""
CASE 2 WHEN 1 THEN 'one' WHEN 2, 3 THEN 'two-three' ELSE 'other' END
CASE 5 WHEN 1 THEN 'one' END
CASE WHEN 1 > 2 THEN 'a' WHEN 2 > 1 THEN 'b' END
CASE WHEN FALSE THEN 1 END
CASE WHEN TRUE THEN 'a' ELSE 'abc' END
CASE CAST(NULL AS INT) WHEN 1 THEN 'x' ELSE 'null' END
CASE WHEN CAST(NULL AS BOOLEAN) THEN 1 ELSE 2 END
CASE WHEN TRUE THEN 1 ELSE 2.5 END
CASE WHEN TRUE THEN 1 ELSE 2.5E0 END
NULLIF(5, 5)
NULLIF(5, 0)
NULLIF('a', 'b')
NULLIF(CAST(NULL AS INT), 1)
COALESCE(CAST(NULL AS STRING), 'default')
COALESCE(CAST(NULL AS INT), CAST(NULL AS INT))
COALESCE(1, 2.5)
COALESCE(CAST(NULL AS INT), 2, 3)
COALESCE('a', 'bcd')
IF(5 > 3, 5, 3)
IF(CAST(NULL AS BOOLEAN), 1, 2)
IF(TRUE, 'a', 'bcd')
IF(FALSE, 1, CAST(NULL AS INT))
IFNULL(CAST(NULL AS INT), 5)
IFNULL(3, 5)
IFNULL(CAST(NULL AS STRING), CAST(NULL AS STRING))
IS_ALPHA('abc')
IS_ALPHA('ab1')
IS_ALPHA('')
IS_ALPHA(CAST(NULL AS STRING))
IS_DECIMAL('1.5')
IS_DECIMAL('1e5')
IS_DECIMAL('abc')
IS_DECIMAL('')
IS_DECIMAL('-12')
IS_DIGIT('123')
IS_DIGIT('12.3')
IS_DIGIT('')
GREATEST(1, 5, 3)
GREATEST(1, CAST(NULL AS INT))
GREATEST('a', 'b')
GREATEST(1, 2.5)
GREATEST(1.5E0, 2)
LEAST(1, 5, 3)
LEAST(1, CAST(NULL AS INT))
LEAST(DATE '2020-01-01', DATE '2019-01-01')
"""

_SCALAR["conversion"] = r"""
CAST('42' AS INT)
CAST(' 42 ' AS INT)
CAST('+42' AS INT)
CAST('42.5' AS INT)
CAST('abc' AS INT)
CAST('' AS INT)
CAST('2147483648' AS INT)
CAST(2147483648 AS INT)
CAST(300 AS TINYINT)
CAST(42.9 AS INT)
CAST(-42.9 AS INT)
CAST(42.9E0 AS BIGINT)
CAST(1E20 AS BIGINT)
CAST(CAST('NaN' AS DOUBLE) AS INT)
CAST('1.5' AS DOUBLE)
CAST('1e3' AS DOUBLE)
CAST('abc' AS DOUBLE)
CAST('Infinity' AS DOUBLE)
CAST('1.5' AS FLOAT)
CAST('1.239' AS DECIMAL(5, 2))
CAST(123.456 AS DECIMAL(4, 1))
CAST(12345.6 AS DECIMAL(4, 1))
CAST(-0.005 AS DECIMAL(5, 2))
CAST(1 AS DECIMAL(10, 3))
CAST(1.5E0 AS DECIMAL(10, 2))
CAST(0.1E0 AS DECIMAL(20, 18))
CAST('abc' AS DECIMAL(5, 2))
CAST(1 AS BOOLEAN)
CAST(0 AS BOOLEAN)
CAST('true' AS BOOLEAN)
CAST('TRUE' AS BOOLEAN)
CAST('yes' AS BOOLEAN)
CAST('abc' AS BOOLEAN)
CAST(TRUE AS INT)
CAST(TRUE AS STRING)
CAST(42 AS STRING)
CAST(-42 AS STRING)
CAST(1.5E0 AS STRING)
CAST(1.0E0 AS STRING)
CAST(1E20 AS STRING)
CAST(1.0E-5 AS STRING)
CAST(0.1E0 + 0.2E0 AS STRING)
CAST(CAST(1.1 AS FLOAT) AS STRING)
CAST(1.50 AS STRING)
CAST(CAST(NULL AS INT) AS STRING)
CAST(DATE '2020-01-02' AS STRING)
CAST(TIMESTAMP '2020-01-02 10:11:12.5' AS STRING)
CAST(TIME '10:11:12' AS STRING)
CAST(ARRAY[1, 2] AS STRING)
CAST(MAP['a', 1] AS STRING)
CAST(ROW(1, 'a') AS STRING)
CAST(INTERVAL '2' DAY AS STRING)
CAST('abc' AS CHAR(5))
CAST('abcdef' AS VARCHAR(3))
CAST('abc' AS CHAR(2))
CAST('2020-01-02' AS DATE)
CAST('2020-1-2' AS DATE)
CAST('2020-02-30' AS DATE)
CAST('garbage' AS DATE)
CAST('2020-01-02 10:11:12' AS TIMESTAMP)
CAST('2020-01-02 10:11:12.123456' AS TIMESTAMP(3))
CAST('2020-01-02' AS TIMESTAMP)
CAST('2020-01-02T10:11:12' AS TIMESTAMP)
CAST('garbage' AS TIMESTAMP)
CAST('10:11:12' AS TIME)
CAST(TIMESTAMP '2020-01-02 10:11:12' AS DATE)
CAST(TIMESTAMP '2020-01-02 10:11:12' AS TIME)
CAST(DATE '2020-01-02' AS TIMESTAMP)
CAST(TIMESTAMP '2020-01-02 10:11:12.123456' AS TIMESTAMP(3))
CAST(TIMESTAMP '2020-01-02 10:11:12' AS TIMESTAMP_LTZ(3))
CAST(TO_TIMESTAMP_LTZ(0, 3) AS TIMESTAMP(3))
CAST(1600000000 AS TIMESTAMP(3))
CAST('abc' AS BYTES)
CAST('abc' AS BINARY(5))
CAST(X'616263' AS STRING)
CAST(ARRAY[1, 2] AS ARRAY<STRING>)
CAST(ARRAY['1', 'x'] AS ARRAY<INT>)
CAST(ROW(1, 'a') AS ROW<x BIGINT, y STRING>)
TRY_CAST('42' AS INT)
TRY_CAST('abc' AS INT)
TRY_CAST('' AS INT)
TRY_CAST(CAST(NULL AS STRING) AS INT)
TRY_CAST('2020-02-30' AS DATE)
TRY_CAST('1.5x' AS DOUBLE)
COALESCE(TRY_CAST('non-number' AS INT), 0)
TRY_CAST('2147483648' AS INT)
TRY_CAST('abc' AS BOOLEAN)
TYPEOF(1)
TYPEOF('abc')
TYPEOF(1.5)
TYPEOF(1.5E0)
TYPEOF(CAST(NULL AS STRING))
TYPEOF(ARRAY[1])
TYPEOF(DATE '2020-01-01')
TYPEOF(TIMESTAMP '2020-01-01 00:00:00')
TYPEOF(CAST(1 AS BIGINT), TRUE)
"""

_SCALAR["collection"] = r"""
ARRAY[1, 2, 3]
ARRAY['a', 'bc']
ARRAY[1, CAST(NULL AS INT)]
ARRAY[1, 2.5]
ARRAY[ARRAY[1], ARRAY[2, 3]]
CARDINALITY(ARRAY[1, 2, 3])
CARDINALITY(MAP['a', 1, 'b', 2])
CARDINALITY(CAST(NULL AS ARRAY<INT>))
ARRAY[10, 20, 30][2]
ARRAY[10, 20][5]
ARRAY[10, 20][0]
ARRAY[ARRAY[1], ARRAY[2, 3]][2][1]
MAP['a', 1, 'b', 2]['b']
MAP['a', 1]['z']
ELEMENT(ARRAY[5])
ELEMENT(ARRAY[1, 2])
ELEMENT(CAST(NULL AS ARRAY<INT>))
ARRAY_CONTAINS(ARRAY[1, 2, 3], 2)
ARRAY_CONTAINS(ARRAY[1, 2, 3], 5)
ARRAY_CONTAINS(ARRAY[1, CAST(NULL AS INT)], CAST(NULL AS INT))
ARRAY_CONTAINS(CAST(NULL AS ARRAY<INT>), 1)
ARRAY_DISTINCT(ARRAY[1, 2, 1, 3, 2])
ARRAY_DISTINCT(ARRAY[1, CAST(NULL AS INT), CAST(NULL AS INT)])
ARRAY_POSITION(ARRAY[1, 2, 3, 2], 2)
ARRAY_POSITION(ARRAY[1, 2], 5)
ARRAY_REMOVE(ARRAY[1, 2, 1, 3], 1)
ARRAY_REMOVE(ARRAY[1, CAST(NULL AS INT)], CAST(NULL AS INT))
ARRAY_REVERSE(ARRAY[1, 2, 3])
ARRAY_APPEND(ARRAY[1, 2], 3)
ARRAY_PREPEND(ARRAY[1, 2], 0)
ARRAY_CONCAT(ARRAY[1], ARRAY[2, 3])
ARRAY_MAX(ARRAY[1, 5, 3])
ARRAY_MIN(ARRAY[4, 2, 9])
ARRAY_MAX(ARRAY[CAST(NULL AS INT)])
ARRAY_SLICE(ARRAY[1, 2, 3, 4], 2, 3)
ARRAY_SLICE(ARRAY[1, 2, 3, 4], -2)
ARRAY_UNION(ARRAY[1, 2], ARRAY[2, 3])
ARRAY_JOIN(ARRAY['a', 'b', 'c'], '-')
ARRAY_JOIN(ARRAY['a', CAST(NULL AS STRING)], ',', 'N')
ARRAY_EXCEPT(ARRAY[1, 2, 3], ARRAY[2])
ARRAY_INTERSECT(ARRAY[1, 2, 3], ARRAY[2, 3, 4])
ARRAY_SORT(ARRAY[3, 1, 2])
ARRAY_SORT(ARRAY[3, 1, 2], FALSE)
MAP['a', 1, 'b', 2]
MAP['a', 1, 'a', 2]
MAP[1, 'x', 2, CAST(NULL AS STRING)]
MAP_KEYS(MAP['a', 1, 'b', 2])
MAP_VALUES(MAP['a', 1, 'b', 2])
MAP_ENTRIES(MAP['a', 1])
MAP_FROM_ARRAYS(ARRAY['a', 'b'], ARRAY[1, 2])
MAP_FROM_ARRAYS(ARRAY['a'], ARRAY[1, 2])
MAP_UNION(MAP['a', 1], MAP['a', 2, 'b', 3])
"""

_SCALAR["json"] = r"""
'1' IS JSON
'[]' IS JSON
'{}' IS JSON
'"abc"' IS JSON
'abc' IS JSON
CAST(NULL AS STRING) IS JSON
'' IS JSON
'{"a":1' IS JSON
'1' IS JSON SCALAR
'1' IS JSON ARRAY
'1' IS JSON OBJECT
'{}' IS JSON SCALAR
'{}' IS JSON ARRAY
'{}' IS JSON OBJECT
'[1, 2]' IS JSON ARRAY
'{}' IS NOT JSON
JSON_EXISTS('{"a": true}', '$.a')
JSON_EXISTS('{"a": true}', '$.b')
JSON_EXISTS('{"a": [{ "b": 1 }]}', '$.a[0].b')
JSON_EXISTS('{"a": true}', 'strict $.b' TRUE ON ERROR)
JSON_EXISTS('{"a": true}', 'strict $.b' FALSE ON ERROR)
JSON_EXISTS('{"a": true}', 'strict $.b' UNKNOWN ON ERROR)
JSON_EXISTS('invalid', '$.a')
JSON_EXISTS(CAST(NULL AS STRING), '$.a')
JSON_STRING(CAST(NULL AS INT))
JSON_STRING(1)
JSON_STRING(TRUE)
JSON_STRING('Hello, World!')
JSON_STRING(ARRAY[1, 2])
JSON_STRING(1.5E0)
JSON_STRING(MAP['a', 1])
JSON_STRING(ROW(1, 'a'))
JSON_STRING(DATE '2020-01-01')
JSON_VALUE('{"a": true}', '$.a')
JSON_VALUE('{"a": true}', '$.a' RETURNING BOOLEAN)
JSON_VALUE('{"a": true}', 'lax $.b' DEFAULT FALSE ON EMPTY)
JSON_VALUE('{"a": true}', 'strict $.b' DEFAULT FALSE ON ERROR)
JSON_VALUE('{"a.b": [0.998,0.996]}','$.["a.b"][0]' RETURNING DOUBLE)
JSON_VALUE('{"contains blank": "right"}', 'strict $.[''contains blank'']' NULL ON EMPTY DEFAULT 'wrong' ON ERROR)
JSON_VALUE('{"a": 1}', '$.a' RETURNING INT)
JSON_VALUE('{"a": "x"}', '$.a' RETURNING INT)
JSON_VALUE('{"a": "x"}', '$.a' RETURNING INT ERROR ON ERROR)
JSON_VALUE('{"a": [1, 2]}', '$.a')
JSON_VALUE('{"a": null}', '$.a')
JSON_VALUE('not json', '$.a')
JSON_VALUE('{"a": {"b": "c"}}', '$.a.b')
JSON_VALUE('[10, 20]', '$[1]')
JSON_VALUE('{"a": 1}', '$.b' ERROR ON EMPTY)
JSON_VALUE(CAST(NULL AS STRING), '$.a')
JSON_VALUE('{"a": 1.5}', '$.a' RETURNING DOUBLE)
JSON_VALUE('{"a": 12345678901}', '$.a' RETURNING BIGINT)
JSON_VALUE('{"a": "2020-01-02"}', '$.a' RETURNING DATE)
JSON_VALUE('{"a": 1.5}', '$.a')
JSON_QUERY('{ "a": { "b": 1 } }', '$.a')
JSON_QUERY('[1, 2]', '$')
JSON_QUERY(CAST(NULL AS STRING), '$')
JSON_QUERY('{"a":[{"c":"c1"},{"c":"c2"}]}', 'lax $.a[*].c')
JSON_QUERY('{}', '$' WITH CONDITIONAL ARRAY WRAPPER)
JSON_QUERY('[1, 2]', '$' WITH CONDITIONAL ARRAY WRAPPER)
JSON_QUERY('[1, 2]', '$' WITH UNCONDITIONAL ARRAY WRAPPER)
JSON_QUERY('1', '$')
JSON_QUERY('1', '$' WITH CONDITIONAL ARRAY WRAPPER)
JSON_QUERY('{}', 'lax $.invalid' EMPTY OBJECT ON EMPTY)
JSON_QUERY('{}', 'strict $.invalid' EMPTY ARRAY ON ERROR)
JSON_QUERY('{"a": 1}', '$.b' ERROR ON EMPTY)
JSON_QUERY('invalid', '$')
JSON_OBJECT()
JSON_OBJECT('K1' VALUE 'V1', 'K2' VALUE 'V2')
JSON_OBJECT(KEY 'K1' VALUE CAST(NULL AS STRING) NULL ON NULL)
JSON_OBJECT(KEY 'K1' VALUE CAST(NULL AS STRING) ABSENT ON NULL)
JSON_OBJECT(KEY 'K1' VALUE JSON_OBJECT(KEY 'K2' VALUE 'V'))
JSON_OBJECT('a' VALUE 1, 'b' VALUE TRUE, 'c' VALUE 1.5E0)
JSON_OBJECT('a' VALUE ARRAY[1, 2])
JSON_OBJECT('a' VALUE '{"x":1}')
JSON_OBJECT('a' VALUE 'q"uote')
JSON_ARRAY()
JSON_ARRAY(1, '2')
JSON_ARRAY(CAST(NULL AS STRING) NULL ON NULL)
JSON_ARRAY(CAST(NULL AS STRING) ABSENT ON NULL)
JSON_ARRAY(JSON_ARRAY(1))
JSON_ARRAY(TRUE, 1.5E0, DATE '2020-01-01')
JSON_QUOTE('a"b')
JSON_UNQUOTE('"a\u0041b"')
"""

_SCALAR["value"] = r"""
ROW(1, 'a')
ROW(1, CAST(NULL AS STRING))
ROW(1, ROW(2, 3))
(1, 'a')
ARRAY[ROW(1, 'a')]
ARRAY[ROW(1, 'a')][1]
MAP['k', ROW(1, 2)]
MAP['k', ARRAY[1, 2]]['k'][2]
ARRAY[1, 2][1] + 1
CURRENT_DATABASE()
"""

_SCALAR["hash"] = r"""
MD5('abc')
MD5('')
MD5('héllo')
MD5(CAST(NULL AS STRING))
SHA1('abc')
SHA1('')
SHA224('abc')
SHA256('abc')
SHA384('abc')
SHA512('abc')
SHA2('abc', 224)
SHA2('abc', 256)
SHA2('abc', 384)
SHA2('abc', 512)
SHA2('abc', 100)
SHA2(CAST(NULL AS STRING), 256)
SHA2('abc', CAST(NULL AS INT))
SHA256(CAST(NULL AS STRING))
"""

_TABLE: dict[tuple[str, str], str] = {}

_AGG_ALL = """
COUNT(*)
COUNT(1)
COUNT(i)
COUNT(DISTINCT i)
COUNT(DISTINCT g)
SUM(i)
SUM(DISTINCT i)
SUM(d)
SUM(m)
SUM(i + 2147483640)
SUM(CAST(i AS BIGINT))
AVG(i)
AVG(d)
AVG(m)
AVG(DISTINCT i)
AVG(CAST(i AS DOUBLE))
MIN(i)
MAX(i)
MIN(s)
MAX(s)
MIN(d)
MAX(m)
MAX(b)
STDDEV_POP(d)
STDDEV_SAMP(d)
STDDEV_POP(i)
STDDEV_SAMP(i)
VAR_POP(d)
VAR_SAMP(d)
VARIANCE(i)
VAR_POP(m)
COLLECT(s)
COLLECT(DISTINCT s)
LISTAGG(s)
LISTAGG(s, '|')
LISTAGG(DISTINCT s)
FIRST_VALUE(s)
LAST_VALUE(s)
FIRST_VALUE(i)
LAST_VALUE(d)
ARRAY_AGG(i)
ARRAY_AGG(DISTINCT s)
JSON_ARRAYAGG(s)
JSON_ARRAYAGG(s NULL ON NULL)
COUNT(*) FILTER (WHERE i > 1)
SUM(i) FILTER (WHERE g = 'a')
PERCENTILE(i, 0.5)
"""
_AGG_GROUPED = """
COUNT(*)
COUNT(i)
COUNT(DISTINCT s)
SUM(i)
SUM(d)
AVG(i)
AVG(d)
MIN(s)
MAX(i)
STDDEV_POP(d)
VAR_SAMP(d)
LISTAGG(s)
COLLECT(s)
FIRST_VALUE(i)
LAST_VALUE(i)
"""
_AGG_EMPTY = """
COUNT(*)
COUNT(i)
SUM(i)
AVG(d)
MIN(s)
MAX(m)
STDDEV_POP(d)
VAR_SAMP(d)
LISTAGG(s)
COLLECT(s)
FIRST_VALUE(i)
ARRAY_AGG(i)
JSON_ARRAYAGG(s)
"""
_WINDOW = """
ROW_NUMBER() OVER (PARTITION BY g ORDER BY v, id)
ROW_NUMBER() OVER (ORDER BY id)
RANK() OVER (PARTITION BY g ORDER BY v)
DENSE_RANK() OVER (PARTITION BY g ORDER BY v)
RANK() OVER (ORDER BY v)
DENSE_RANK() OVER (ORDER BY v DESC)
PERCENT_RANK() OVER (PARTITION BY g ORDER BY v)
CUME_DIST() OVER (PARTITION BY g ORDER BY v)
NTILE(2) OVER (PARTITION BY g ORDER BY id)
NTILE(3) OVER (ORDER BY id)
LEAD(v) OVER (PARTITION BY g ORDER BY id)
LEAD(v, 2) OVER (PARTITION BY g ORDER BY id)
LEAD(v, 1, -1) OVER (PARTITION BY g ORDER BY id)
LAG(v) OVER (PARTITION BY g ORDER BY id)
LAG(v, 1, 0) OVER (PARTITION BY g ORDER BY id)
LAG(g, 3) OVER (ORDER BY id)
FIRST_VALUE(v) OVER (PARTITION BY g ORDER BY id)
LAST_VALUE(v) OVER (PARTITION BY g ORDER BY id)
LAST_VALUE(v) OVER (PARTITION BY g ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
SUM(v) OVER (PARTITION BY g ORDER BY id)
SUM(v) OVER (PARTITION BY g ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW)
SUM(v) OVER (PARTITION BY g)
SUM(v) OVER (ORDER BY v RANGE BETWEEN 5 PRECEDING AND CURRENT ROW)
COUNT(*) OVER (PARTITION BY g)
COUNT(v) OVER (ORDER BY id)
AVG(v) OVER (PARTITION BY g ORDER BY id)
MIN(v) OVER (PARTITION BY g ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
MAX(v) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING)
LISTAGG(g) OVER (ORDER BY id)
"""

# A table whose rows give string functions their arguments (calls in _QUERIES["string"]).
_COLUMN_ARGS = """(VALUES (1, 'Hello, World', 'l', 3, 4, 'H%', 'yyyy-MM-dd'),
 (2, '  ÄÖü, ß  ', 'ü', -1, 7, '%ß%', 'HH:mm:ss.SSS'),
 (3, CAST(NULL AS STRING), 'x', 0, 2, 'x%', 'yyyy'),
 (4, '', '', 1, 0, '', 'MM'),
 (5, 'abcabc', 'bc', 2, -1, 'a_c%', CAST(NULL AS STRING)),
 (6, 'a,b,,c', ',', -3, 9, '%,', 'dd HH'),
 (7, 'xyz', CAST(NULL AS STRING), CAST(NULL AS INT), 1, CAST(NULL AS STRING), 'EEE'),
 (8, '€€,€x', '€', 9, CAST(NULL AS INT), '_€%', 'yyyy-MM'),
 (9, 'aaa', 'a', -9, 2, 'a\\%', 'ss'),
 (10, 'mixed Case', 'e', 12, 12, '%e', 'mm')) AS t(id, s, p, n, m, pat, f)"""

_COLUMN_ARGS_2 = """(VALUES (1, 'a1b22c333', '[0-9]+', 'abc', 'xyz', 'Europe/Berlin', 'yyyy-MM-dd', '2024-03-05', 'a=1;b=2', ';', '='),
 (2, 'hello world', 'o', 'lo', 'LO', 'America/New_York', 'dd/MM/yyyy', '05/03/2024', 'k:v,x:y', ',', ':'),
 (3, CAST(NULL AS STRING), 'x', 'a', 'b', 'UTC', 'yyyyMMdd', '20240305', CAST(NULL AS STRING), ',', '='),
 (4, 'xxx', CAST(NULL AS STRING), CAST(NULL AS STRING), 'q', CAST(NULL AS STRING), CAST(NULL AS STRING), '2024', 'a=b', CAST(NULL AS STRING), '='),
 (5, 'b', 'b', 'b', 'HOST', 'Asia/Kolkata', 'yyyy', '1999', '', ',', '='),
 (6, 'a,b,,c', ',', 'a', 'c', 'UTC', 'MM-dd', '12-31', 'x', '=', ',')) AS t(id, s, re, f, tt, tz, fmt, d, m, sep1, sep2)"""

_QUERIES: dict[str, list[str]] = {
    "aggregate": [
        "SELECT g, GROUPING(g) AS gg, COUNT(*) AS n FROM (VALUES ('a', 1), ('a', 2), ('b', 3))"
        " AS t(g, i) GROUP BY GROUPING SETS ((g), ())",
        "SELECT g, h, GROUPING_ID(g, h) AS gid, SUM(i) AS s FROM (VALUES ('a', 'x', 1),"
        " ('a', 'y', 2), ('b', 'x', 3)) AS t(g, h, i) GROUP BY ROLLUP (g, h)",
        "SELECT g, h, COUNT(*) AS n FROM (VALUES ('a', 'x'), ('a', 'y'), ('b', 'x')) AS t(g, h)"
        " GROUP BY CUBE (g, h)",
        "SELECT g, GROUP_ID() AS gid, COUNT(*) AS n FROM (VALUES ('a'), ('b')) AS t(g)"
        " GROUP BY GROUPING SETS ((g), (g))",
        "SELECT g, SUM(i) AS s FROM (VALUES ('a', 1), ('a', 2), ('b', 3)) AS t(g, i)"
        " GROUP BY g HAVING SUM(i) > 2",
        "SELECT JSON_OBJECTAGG(KEY g VALUE i) AS j FROM (VALUES ('a', 1), ('b', 3),"
        " ('c', CAST(NULL AS INT))) AS t(g, i)",
        "SELECT JSON_OBJECTAGG(KEY g VALUE i ABSENT ON NULL) AS j FROM (VALUES ('a', 1),"
        " ('b', 3), ('c', CAST(NULL AS INT))) AS t(g, i)",
        "SELECT JSON_OBJECTAGG(KEY g VALUE i) AS j FROM (VALUES ('a', 1), ('a', 2)) AS t(g, i)",
    ],
    # Positions, widths, needles, patterns and formats taken from columns, row by row
    "string": [
        "SELECT id, SUBSTRING(s, n), SUBSTRING(s, n, m), SUBSTRING(s FROM 2 FOR m), SUBSTR(s, n)"
        f" FROM {_COLUMN_ARGS}",
        "SELECT id, POSITION(p IN s), LOCATE(p, s, n), LOCATE('a', s, m), INSTR(s, p)"
        f" FROM {_COLUMN_ARGS}",
        "SELECT id, LPAD(s, m, p), RPAD(s, m, p), LPAD(s, m, '*'), RPAD(s, 6, p)"
        f" FROM {_COLUMN_ARGS}",
        "SELECT id, s LIKE pat, s NOT LIKE pat, TRIM(BOTH p FROM s), LTRIM(s, p), RTRIM(s, p)"
        f" FROM {_COLUMN_ARGS}",
        "SELECT id, SPLIT_INDEX(s, ',', MOD(id, 3)), SPLIT_INDEX(s, p, 1), LEFT(s, n), RIGHT(s, m)"
        f" FROM {_COLUMN_ARGS}",
        "SELECT id, DATE_FORMAT(TIMESTAMP '2024-03-05 10:20:30.123', f),"
        f" SUBSTRING(s, POSITION(',' IN s) + 1) FROM {_COLUMN_ARGS}",
        "SELECT id, REGEXP_COUNT(s, re), REGEXP_INSTR(s, re), REGEXP_SUBSTR(s, re),"
        f" REGEXP_EXTRACT_ALL(s, re, 0) FROM {_COLUMN_ARGS_2}",
        "SELECT id, TRANSLATE(s, f, tt), BTRIM(s, f), SPLIT(s, re), STR_TO_MAP(m, sep1, sep2),"
        f" STARTSWITH(s, f), ENDSWITH(s, tt) FROM {_COLUMN_ARGS_2}",
        "SELECT id, TO_DATE(d, fmt), TO_TIMESTAMP(d, fmt), UNIX_TIMESTAMP(d, fmt),"
        f" FROM_UNIXTIME(id * 100000000, fmt) FROM {_COLUMN_ARGS_2}",
        "SELECT id, CONVERT_TZ('2024-03-05 10:00:00', 'UTC', tz), PARSE_URL("
        f"'http://x.com/p?a=1&b=2', 'QUERY', f), PARSE_URL('http://x.com/p?a=1', tt) FROM {_COLUMN_ARGS_2}",
    ],
    "value": [
        "SELECT t.r.x, t.r.y FROM (SELECT CAST(ROW(1, 'a') AS ROW<x INT, y STRING>) AS r) AS t",
        "SELECT t.r.* FROM (SELECT CAST(ROW(1, 'a') AS ROW<x INT, y STRING>) AS r) AS t",
        "SELECT r.x FROM (SELECT CAST(ROW(1, 'a') AS ROW<x INT, y STRING>) AS r) AS t",
        "SELECT t.a[2], t.m['k'] FROM (SELECT ARRAY[1, 2] AS a, MAP['k', 'v'] AS m) AS t",
        "SELECT x FROM (VALUES (ARRAY[1, 2, 3])) AS t(a) CROSS JOIN UNNEST(t.a) AS u(x)",
        "SELECT k, v FROM (VALUES (MAP['a', 1])) AS t(m) CROSS JOIN UNNEST(t.m) AS u(k, v)",
    ],
}


def _unordered(sql: str) -> str | None:
    if sql.startswith(("FIRST_VALUE(", "LAST_VALUE(")):
        return "any"
    if sql.startswith("JSON_OBJECTAGG("):
        return "json-object"
    if sql.startswith("LISTAGG("):
        return "|" if "'|'" in sql else ","
    if sql.startswith("ARRAY_AGG("):
        return "array"
    if sql.startswith("JSON_ARRAYAGG("):
        return "json-array"
    return None


def _lines(block: str) -> list[tuple[str | None, str]]:
    out = []
    for line in block.strip("\n").split("\n"):
        if not line.strip():
            continue
        prop = None
        if line.startswith("!"):
            prop, line = line[1:].split(" ", 1)
        out.append((prop, line.strip()))
    return out


def all_calls() -> list[Call]:
    """Every call, family by family, in a stable order."""
    calls: list[Call] = []
    for family, block in _SCALAR.items():
        for prop, sql in _lines(block):
            calls.append(Call(family, sql, prop=prop))
    for table, block in (("T", _AGG_ALL), ("Tg", _AGG_GROUPED), ("E", _AGG_EMPTY)):
        for _, sql in _lines(block):
            calls.append(Call("aggregate", sql, kind="table", table=table,
                              group="g" if table == "Tg" else None, unordered=_unordered(sql)))
    for _, sql in _lines(_WINDOW):
        calls.append(Call("window", sql, kind="table", table="W"))
    for family, queries in _QUERIES.items():
        calls.extend(Call(family, q, kind="query",
                          unordered="json-object" if "JSON_OBJECTAGG" in q else None)
                     for q in queries)
    ids = [c.id for c in calls]
    dup = {i for i in ids if ids.count(i) > 1}
    assert not dup, f"duplicate calls: {dup}"
    return calls


FAMILIES = ["comparison", "logical", "arithmetic", "string", "temporal", "conditional",
            "conversion", "collection", "json", "value", "hash", "aggregate", "window"]
