"""JSON(s) inside JSON_OBJECT / JSON_ARRAY: the document s inserted as JSON, not as a string.
Every expected value is PyFlink 2.3's answer to the same query (run on a view of the rows
below, streaming, parallelism 1): Jackson reads the first value of the text and writes it
again, compact, numbers as written, a key given twice its last value."""

from __future__ import annotations

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

DOCS = [(1, '{"x": 1, "y" :[1, 2 ]}'), (2, '[1,"a"]'), (3, None), (4, "  7 "), (5, '"s"'),
        (6, "null")]


@pytest.fixture(scope="module")
def s() -> sqlengine.Session:
    s = sqlengine.connect({})
    values = ", ".join(f"({k}, {'CAST(NULL AS STRING)' if j is None else repr(j)})"
                       for k, j in DOCS)
    s.execute(f"CREATE TEMPORARY VIEW h(k, j) AS VALUES {values}")
    s.execute("CREATE TEMPORARY VIEW g(k) AS VALUES (1)")
    return s


def literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def by_key(s: sqlengine.Session, sql: str) -> dict:
    return {r["k"]: r["v"] for r in s.sql(sql).collect().to_pylist()}


def test_json_object_and_array_take_documents_with_their_null_handling(s) -> None:
    assert by_key(s, "SELECT k, JSON_OBJECT('a' VALUE JSON(j)) AS v FROM h") == {
        1: '{"a":{"x":1,"y":[1,2]}}', 2: '{"a":[1,"a"]}', 3: '{"a":null}', 4: '{"a":7}',
        5: '{"a":"s"}', 6: '{"a":null}'}
    # (ABSENT ON NULL leaves out a NULL string, not the JSON null of 'null')
    assert by_key(s, "SELECT k, JSON_OBJECT('a' VALUE JSON(j) ABSENT ON NULL) AS v "
                     "FROM h") == {
        1: '{"a":{"x":1,"y":[1,2]}}', 2: '{"a":[1,"a"]}', 3: "{}", 4: '{"a":7}',
        5: '{"a":"s"}', 6: '{"a":null}'}
    assert by_key(s, "SELECT k, JSON_ARRAY(JSON(j), k) AS v FROM h") == {
        1: '[{"x":1,"y":[1,2]},1]', 2: '[[1,"a"],2]', 3: "[3]", 4: "[7,4]", 5: '["s",5]',
        6: "[null,6]"}
    assert by_key(s, "SELECT k, JSON_ARRAY(JSON(j) NULL ON NULL) AS v FROM h")[3] == "[null]"
    assert by_key(s, "SELECT 1 AS k, JSON_OBJECT(KEY 'a' VALUE JSON('[1, 2]'), KEY 'b' VALUE "
                     "JSON_ARRAY(JSON('{}'))) AS v") == {1: '{"a":[1,2],"b":[{}]}'}


@pytest.mark.parametrize("text, expected", [
    # numbers as Jackson reads them (BigDecimal, BigInteger): as written, no -0
    ("[1.50, 1e2, 1E20, 123456789012345678901234567890, 0.1, -0.0, 1.0, 1E400, "
     "12345678.9, 0.00001, 1]",
     "[[1.50,1E+2,1E+20,123456789012345678901234567890,0.1,0.0,1.0,1E+400,12345678.9,"
     "0.00001,1]]"),
    # a key given twice: its last value; escapes as Jackson writes them (\u001F)
    ('{"a":1, "a":2, "b": "\\u00e9\\n\\t/\\\\\\"x\\u001f", "c": true}',
     '[{"a":2,"b":"é\\n\\t/\\\\\\"x\\u001F","c":true}]'),
    # the first value of the text; what follows after a space is not read
    ("1 2", "[1]"), (" 1", "[1]"), ("1 ,", "[1]"), ("[1]x", "[[1]]"), ('"a"x', '["a"]'),
    ("true,", "[true]"), ("null x", "[null]"),
    # no value at all: NULL, which JSON_ARRAY leaves out
    ("", "[]"), ("  ", "[]"),
])
def test_documents_as_flink_reads_and_writes_them(s, text: str, expected: str) -> None:
    # (the text goes through CONCAT with the row's k, so that it is a value of the row)
    sql = f"SELECT JSON_ARRAY(JSON(CONCAT({literal(text)}, SUBSTRING(CAST(k AS STRING), 9)))) " \
          "FROM g"
    assert s.sql(sql).collect().column(0)[0].as_py() == expected


@pytest.mark.parametrize("text", ['{"x": NaN}', "[1,]", "1/* c */", "{'a':1}", "{1", "1x",
                                  "1,", "truex", "-", "01"])
def test_text_that_is_no_document_fails_the_query_naming_it(s, text: str) -> None:
    sql = f"SELECT JSON_OBJECT('a' VALUE JSON(CONCAT({literal(text)}, " \
          "SUBSTRING(CAST(k AS STRING), 9)))) FROM g"
    with pytest.raises(SqlEngineError, match="JSON\\(\\): not a JSON document"):
        s.sql(sql).collect()


@pytest.mark.parametrize("sql, where", [
    ("SELECT JSON(j) FROM h", 8),
    ("SELECT JSON_ARRAYAGG(JSON(j)) FROM h", 22),
    ("SELECT JSON_STRING(JSON(j)) FROM h", 20),
    ("SELECT JSON_OBJECT(JSON(j) VALUE 1) FROM h", 20),
])
def test_json_elsewhere_is_refused_as_in_flink(s, sql: str, where: int) -> None:
    with pytest.raises(SqlEngineError, match=f"1:{where}: JSON\\(\\) is only supported inside "
                                             "JSON_ARRAY\\(\\) or as the VALUE of JSON_OBJECT"):
        s.sql(sql).collect()


def test_json_of_a_number_is_refused(s) -> None:
    with pytest.raises(SqlEngineError, match="the argument of JSON\\(\\) must be a STRING, got "
                                             "INT"):
        s.sql("SELECT JSON_OBJECT('a' VALUE JSON(k)) FROM h").collect()
