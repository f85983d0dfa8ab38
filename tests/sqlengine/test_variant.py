"""The VARIANT type (Flink 2.1+) as Flink 2.3 has it: PARSE_JSON / TRY_PARSE_JSON,
``v['key']`` / ``v[i]``, ``=`` on the binary encoding, JSON_STRING / JSON_VALUE / JSON_QUERY
and JSON_OBJECT / JSON_ARRAY of a variant. Each case was run on PyFlink 2.3 with the same SQL
(its answers quoted: the Java value's toString, as PyFlink cannot collect a VARIANT; inputs
built from a view's column, so nothing is folded at planning)."""

from __future__ import annotations

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

VIEW = "CREATE TEMPORARY VIEW v AS SELECT * FROM (VALUES ('', 1, 'a')) AS t(e, o, kc)"


def pj(text: str, fn: str = "PARSE_JSON", extra: str = "") -> str:
    return f"{fn}(CONCAT('{text}', e){extra})"


def _rows(sql: str, mode: str = "batch") -> list[tuple]:
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.execute(VIEW)
    return [tuple(r.values()) for r in s.sql(sql).collect().to_pylist()]


CASES = [
    # compact, keys sorted (Java's UTF-16 order) at every level, arrays in order
    (pj(' { "b" : 1 , "a" : [ 1 , 2 ] } '), '{"a":[1,2],"b":1}'),
    (pj('{"é":1,"B":2,"a":3,"aa":4,"A":5,"10":6,"9":7,"":8}'),
     '{"":8,"10":6,"9":7,"A":5,"B":2,"a":3,"aa":4,"é":1}'),
    # numbers: integers by size, DECIMAL without trailing zeros, DOUBLE as Java writes it
    ("JSON_STRING(" + pj("[1,127,128,32768,2147483648,9223372036854775808,1.0,1.50,0.00001,"
                         "-0.0,1e3,1.5E+2,1e-5,1e400,-1e-400,-0]") + ")",
     "[1,127,128,32768,2147483648,9223372036854775808,1,1.5,0.00001,0,1000.0,150.0,1.0E-5,"
     "Infinity,-0.0,0]"),
    (pj("12345678901234567890123456789012345678.5"), "1.2345678901234568E37"),
    # (a DECIMAL's every digit, past Python's 28 of precision too)
    (pj("3.14159265358979323846264338327950288"), "3.14159265358979323846264338327950288"),
    (pj("9999999999999999999999999999999999999.9"), "9999999999999999999999999999999999999.9"),
    (pj("1.0000000000000000000000000000001"), "1.0000000000000000000000000000001"),
    (pj("null"), "null"),
    (pj('"str\\"q\\t/é"'), '"str\\"q\\t/é"'),
    # duplicate keys: the last one with the flag; trailing text after the first value ignored
    (pj('{"a":{"x":1,"x":[2]},"b":[{"y":1,"y":2}]}', extra=", TRUE"),
     '{"a":{"x":[2]},"b":[{"y":2}]}'),
    (pj('{"a":1} x'), '{"a":1}'),
    (pj('{"a":1,"a":2}', "TRY_PARSE_JSON"), None),
    (pj("{a:1}", "TRY_PARSE_JSON"), None),
    (pj("01", "TRY_PARSE_JSON"), None),
    (pj("[1,2", "TRY_PARSE_JSON"), None),
    (pj(" ", "TRY_PARSE_JSON"), None),
    (pj('{"a":1}{"b":2}', "TRY_PARSE_JSON"), '{"a":1}'),
    ("PARSE_JSON(CAST(NULL AS STRING))", None),
    # access: keys, and indexes from 1; absent or out of range is NULL
    (pj('{"a":{"b":[1,2,{"c":"d"}],"n":null}}') + "['a']['b'][3]['c']", '"d"'),
    (pj("[10,20]") + "[0]", None),
    (pj("[10,20]") + "[2]", "20"),
    (pj("[10,20]") + "[3]", None),
    (pj('{"A":1}') + "['a']", None),
    (pj('{"a":7}') + "[kc]", "7"),
    (pj('{"a":null}') + "['a'] IS NULL", False),  # (JSON's null is no SQL NULL)
    (pj('{"a":null}') + "['z'] IS NULL", True),
    # = compares the encoding: types and the document's key dictionary count
    (pj("7") + " = " + pj("7.0"), False),
    (pj("1.5") + " = " + pj("1.50"), False),
    (pj('{"a":1,"b":2}') + " = " + pj('{"b":2,"a":1}'), False),
    (pj(' {"a": 1}') + " = " + pj('{"a":1} '), True),
    (pj('{"b":2,"a":1}') + "['a'] = " + pj('{"a":1}') + "['a']", False),
    (pj('{"a":1}') + "['a'] = " + pj('{"a":1}') + "['a']", True),
    (pj("[1]") + "[1] = " + pj('{"a":1}') + "['a']", False),
    # JSON functions read the variant's JSON text; JSON_OBJECT / JSON_ARRAY insert it as JSON
    ("JSON_VALUE(" + pj('{"i":7,"a":{"b":[10,20]}}') + ", '$.a.b[1]')", "20"),
    ("JSON_VALUE(" + pj('{"i":7}') + ", '$.i' RETURNING INT)", 7),
    ("JSON_QUERY(" + pj('{"i":7,"a":{"b":[10,20]}}') + ", '$.a')", '{"b":[10,20]}'),
    ("JSON_STRING(" + pj("null") + ")", "null"),
    ("JSON_OBJECT('k' VALUE " + pj('{"b":1,"a":2}') + ")", '{"k":{"a":2,"b":1}}'),
    ("JSON_ARRAY(" + pj("[1]") + ", 'x')", '[[1],"x"]'),
    ("COALESCE(CAST(NULL AS VARIANT), " + pj("[1]") + ")", "[1]"),
]


@pytest.mark.parametrize(("expr", "expected"), CASES)
def test_as_flink(expr: str, expected: object) -> None:
    assert _rows(f"SELECT {expr} FROM v") == [(expected,)]


@pytest.mark.parametrize(("sql", "words"), [
    ("SELECT " + pj('{"a":1,"a":2}') + " FROM v",
     'Failed to parse json string: {"a":1,"a":2}'),
    ("SELECT " + pj("[1,2") + " FROM v", "Failed to parse json string: [1,2"),
    ("SELECT " + pj("[1]") + "['a'] FROM v",
     "String key access on variant requires an object variant"),
    ("SELECT " + pj('{"a":1}') + "[1] FROM v",
     "Integer index access on variant requires an array variant"),
])
def test_failures_as_flink(sql: str, words: str) -> None:
    with pytest.raises(SqlEngineError) as info:
        _rows(sql)
    assert words in str(info.value)


@pytest.mark.parametrize(("sql", "words"), [
    ("SELECT CAST(" + pj("1") + " AS INT) FROM v", "cannot CAST VARIANT to INT"),
    ("SELECT CAST(" + pj("1") + " AS STRING) FROM v", "cannot CAST VARIANT to STRING"),
    ("SELECT CAST(o AS VARIANT) FROM v", "cannot CAST INT to VARIANT"),
    ("SELECT " + pj("1") + " < " + pj("2") + " FROM v", "a BITMAP or VARIANT has none"),
    ("SELECT " + pj("1") + " FROM v ORDER BY 1", "cannot ORDER BY a VARIANT"),
    ("SELECT MAX(" + pj("1") + ") FROM v", "MAX of a VARIANT"),
    ("SELECT " + pj("1") + " = 1 FROM v", "COMPARISON expects"),
    ("SELECT " + pj("{}") + "[1.5] FROM v", "a VARIANT indexed by a STRING key or an INTEGER"),
    ("SELECT PARSE_JSON(o) FROM v", "PARSE_JSON expects a STRING"),
    ("SELECT ROW_NUMBER() OVER (PARTITION BY " + pj("1") + " ORDER BY o) FROM v",
     "PARTITION BY a VARIANT is not supported"),
])
def test_refused_by_name(sql: str, words: str) -> None:
    with pytest.raises(SqlEngineError, match="1:") as info:
        _rows(sql)
    assert words in str(info.value)


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_grouping_distinct_and_aggregates(mode: str) -> None:
    """Flink's streaming mode groups by the encoding ({"a":1,"b":2} and {"b":2,"a":1} are two
    groups); FIRST_VALUE / LAST_VALUE / ARRAY_AGG / COUNT take variants."""
    s = sqlengine.connect({"execution.runtime-mode": mode, "parallelism.default": "2"})
    s.execute("CREATE TEMPORARY VIEW w AS SELECT * FROM (VALUES (1, '{\"a\":1,\"b\":2}'), "
              "(2, '{\"b\":2,\"a\":1}'), (3, '{\"a\":1,\"b\":2}')) AS t(i, j)")

    def rows(sql: str) -> list[tuple]:
        return sorted(tuple(r.values()) for r in s.sql(sql).collect().to_pylist())

    assert rows("SELECT JSON_STRING(x), COUNT(*) FROM (SELECT PARSE_JSON(j) AS x FROM w) "
                "GROUP BY x") == [('{"a":1,"b":2}', 1), ('{"a":1,"b":2}', 2)]
    assert rows("SELECT COUNT(DISTINCT PARSE_JSON(j)), COUNT(PARSE_JSON(j)) FROM w") == [(2, 3)]
    assert rows("SELECT x FROM (SELECT DISTINCT PARSE_JSON(j) AS x FROM w)") == [
        ('{"a":1,"b":2}',), ('{"a":1,"b":2}',)]
    assert rows("SELECT a.i, b.i FROM w a JOIN w b ON PARSE_JSON(a.j) = PARSE_JSON(b.j) "
                "AND a.i < b.i") == [(1, 3)]
    got = rows("SELECT MIN(i), JSON_STRING(ARRAY_AGG(PARSE_JSON(j))[1]) FROM w")
    assert got == [(1, '{"a":1,"b":2}')]


def test_print_sink_and_formats(capsys: pytest.CaptureFixture[str], tmp_path: object) -> None:
    """PyFlink's print connector writes a SQL NULL and a JSON null alike as 'null'; its csv
    and json formats refuse a VARIANT column."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(VIEW)
    s.execute("CREATE TABLE p (i INT, x VARIANT) WITH ('connector' = 'print')")
    capsys.readouterr()
    s.execute("INSERT INTO p SELECT o, " + pj('{"t":true,"s":"str\\"q","f":1.5,"e":1e3}') +
              " FROM v UNION ALL SELECT 2, " + pj("null") + " FROM v UNION ALL SELECT 3, "
              "CAST(NULL AS VARIANT) FROM v")
    out = capsys.readouterr().out.splitlines()
    assert sorted(out) == ['+I[1, {"e":1000.0,"f":1.5,"s":"str\\"q","t":true}]',
                           "+I[2, null]", "+I[3, null]"]
    described = s.execute("DESCRIBE p")[0].table.to_pylist()
    assert [(r["name"], r["type"]) for r in described] == [("i", "INT"), ("x", "VARIANT")]
    for fmt in ("csv", "json"):
        with pytest.raises(SqlEngineError, match="does not support VARIANT columns"):
            s.execute(f"CREATE TABLE f_{fmt} (x VARIANT) WITH ('connector' = 'filesystem', "
                      f"'path' = '{tmp_path}', 'format' = '{fmt}')")


def test_python_functions_take_and_give_variants() -> None:
    """A Python function gets a VARIANT as its JSON text and gives one as JSON text."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(VIEW)

    @sqlengine.udf(result_type="VARIANT")
    def wrapped(text: str) -> str:
        return '{"b": [1, 2.50], "a": ' + text + "}"

    @sqlengine.udf(result_type="STRING")
    def seen(v: str | None) -> str | None:
        return v

    s.create_function("wrapped", wrapped)
    s.create_function("seen", seen)
    assert _rows_of(s, "SELECT JSON_STRING(wrapped(CONCAT('7', e))), seen(" + pj("[1.0]") +
                    "), wrapped('1')['b'][2] = " + pj('{"b":[1,2.50],"a":1}') +
                    "['b'][2] FROM v") == [('{"a":7,"b":[1,2.5]}', "[1]", True)]


def _rows_of(s: sqlengine.Session, sql: str) -> list[tuple]:
    return [tuple(r.values()) for r in s.sql(sql).collect().to_pylist()]
