"""SQL/JSON paths and documents as Flink 2.3 reads them (Calcite over Jayway), each case run
here on PyFlink 2.3 with the same SQL (its answers quoted below; values built from a view's
column, so nothing is folded at planning):

- past a wildcard a missing member is left out, in strict mode too ('$.b[*].c'), and '[*]'
  of an object is its member values, of a scalar nothing;
- a JSON null a definite path selects is NULL in JSON_QUERY, with a wrapper too;
- the document null is an error for a path into it (lax too); a text that is no JSON is
  empty in lax mode, an error in strict mode; a lax JSON_QUERY of a scalar is empty;
- Jackson reads the first value of a text ('{"a":1} trailing' is JSON);
- member names as Jayway reads them ('$.a-b', '$.1', 'a.b' without '$', '$."a"' with its
  quotes), '$..name' at any depth, a last '.size()' / '.length()';
- a path may be a column's value (JSON_VALUE, JSON_QUERY; JSON_EXISTS here too, where
  Flink's code generation fails), a NULL path NULL, one that does not read an error
  (NULL ON ERROR);
- JSON_UNQUOTE of a quoted text Jackson reads, its escapes read ('"a"b1"' is 'a"b1').
"""

from __future__ import annotations

import pytest

import sqlengine

ONE_ROW_VIEW = ('CREATE TEMPORARY VIEW v AS SELECT * FROM (VALUES (1)) AS t(k)')
ONE_ROW = [
    ('SELECT JSON_QUERY(CONCAT(\'{"b":[{"c":\',CAST(k AS STRING),\'},{"c":2},{"d":3}]}\'),'
     " '$.b[*].c') FROM v",
     [('[1,2]',)]),
    ('SELECT JSON_QUERY(CONCAT(\'{"b":[{"c":\',CAST(k AS STRING),\'},{"c":2},{"d":3}]}\'),'
     " '$.b[*].c' WITH WRAPPER) FROM v",
     [('[[1,2]]',)]),
    ('SELECT JSON_QUERY(CONCAT(\'{"b":\',CAST(k AS STRING),\',"c":[1]}\'), \'$[*]\') FROM v',
     [('[1,[1]]',)]),
    ('SELECT JSON_QUERY(CONCAT(\'"s\',CAST(k AS STRING),\'"\'), \'$[*]\') FROM v',
     [('[]',)]),
    ('SELECT JSON_QUERY(CONCAT(\'{"b":null,"k":\',CAST(k AS STRING),\'}\'), \'$.b\' WITH WRA'
     'PPER) FROM v',
     [(None,)]),
    ('SELECT JSON_QUERY(CONCAT(\'{"b":null,"k":\',CAST(k AS STRING),\'}\'), \'$.b\' WITH CON'
     'DITIONAL WRAPPER) FROM v',
     [(None,)]),
    ("SELECT JSON_QUERY(CONCAT('[null,',CAST(k AS STRING),']'), '$[0]' WITH WRAPPER) F"
     'ROM v',
     [(None,)]),
    ("SELECT JSON_EXISTS(CONCAT('null',REPEAT(' ',k)), '$.*') FROM v",
     [(False,)]),
    ("SELECT JSON_VALUE(CONCAT('null',REPEAT(' ',k)), 'lax $.a' DEFAULT 'e' ON EMPTY D"
     "EFAULT 'r' ON ERROR) FROM v",
     [('r',)]),
    ("SELECT JSON_VALUE(CONCAT('null',REPEAT(' ',k)), '$.a' DEFAULT 'e' ON EMPTY DEFAU"
     "LT 'r' ON ERROR) FROM v",
     [('r',)]),
    ("SELECT JSON_VALUE(CONCAT('nul',REPEAT(' ',k)), 'lax $.a' DEFAULT 'e' ON EMPTY DE"
     "FAULT 'r' ON ERROR) FROM v",
     [('e',)]),
    ("SELECT JSON_VALUE(CONCAT('nul',REPEAT(' ',k)), '$.a' DEFAULT 'e' ON EMPTY DEFAUL"
     "T 'r' ON ERROR) FROM v",
     [('r',)]),
    ("SELECT JSON_EXISTS(CONCAT('nul',REPEAT(' ',k)), 'lax $.a' ERROR ON ERROR) FROM v",
     [(False,)]),
    ("SELECT JSON_QUERY(CONCAT('nul',REPEAT(' ',k)), 'lax $.a' ERROR ON ERROR) FROM v",
     [(None,)]),
    ("SELECT JSON_EXISTS(CONCAT('not json',REPEAT(' ',k)), 'lax $.a' UNKNOWN ON ERROR)"
     ' FROM v',
     [(False,)]),
    ("SELECT JSON_QUERY(CONCAT('nul',REPEAT(' ',k)), 'lax $.zz' EMPTY ARRAY ON EMPTY E"
     'MPTY OBJECT ON ERROR) FROM v',
     [('[]',)]),
    ('SELECT JSON_QUERY(CONCAT(\'{"a":\',CAST(k AS STRING),\'}\'), \'lax $.a\' EMPTY ARRAY O'
     'N EMPTY EMPTY OBJECT ON ERROR) FROM v',
     [('[]',)]),
    ('SELECT JSON_VALUE(CONCAT(\'{"a":\',CAST(k AS STRING),\'} trailing\'), \'$.a\') FROM v',
     [('1',)]),
    ('SELECT CONCAT(\'{"a":\',CAST(k AS STRING),\'} trailing\') IS JSON FROM v',
     [(True,)]),
    ('SELECT CONCAT(\'{"a":\',CAST(k AS STRING),\'}}\') IS JSON FROM v',
     [(True,)]),
    ('SELECT JSON_EXISTS(CONCAT(\'{"a":\',CAST(k AS STRING),\'} {"a":2}\'), \'$.a\') FROM v',
     [(True,)]),
    ('SELECT JSON_QUERY(CONCAT(\'{"a":\',CAST(k AS STRING),\'} trailing\'), \'$\') FROM v',
     [('{"a":1}',)]),
    ("SELECT CONCAT(CAST(k AS STRING),'x') IS JSON FROM v",
     [(False,)]),
    ("SELECT CONCAT('tru',CAST(k AS STRING)) IS JSON FROM v",
     [(False,)]),
    ("SELECT CONCAT('[', CAST(k AS STRING), '] x') IS JSON ARRAY FROM v",
     [(True,)]),
    ('SELECT JSON_VALUE(CONCAT(\'{"a":[1,\',CAST(k AS STRING),\']}\'), \'$.a[*]\') FROM v',
     [(None,)]),
    ('SELECT JSON_QUERY(CONCAT(\'{"a":{"x":1,"y":\',CAST(k AS STRING),\'}}\'), \'$.a.*\') FR'
     'OM v',
     [('[1,1]',)]),
    ('SELECT JSON_QUERY(CONCAT(\'{"a":[{"x":[1]},{"x":\',CAST(k AS STRING),\'}]}\'), \'$.a['
     "*].x[0]') FROM v",
     [('[1]',)]),
    ('SELECT JSON_QUERY(CONCAT(\'{"a":[{"x":{"y":1}},{"x":\',CAST(k AS STRING),\'}]}\'), \''
     "$.a[*].x.y') FROM v",
     [('[1]',)]),
    ('SELECT JSON_EXISTS(CONCAT(\'{"a":[{"x":1},{"y":\',CAST(k AS STRING),\'}]}\'), \'$.a[*'
     "].x') FROM v",
     [(True,)]),
    ('SELECT JSON_EXISTS(CONCAT(\'{"a":[{"z":1},{"y":\',CAST(k AS STRING),\'}]}\'), \'$.a[*'
     "].x') FROM v",
     [(True,)]),
    ('SELECT JSON_QUERY(CONCAT(\'{"a":[{"z":1},{"y":\',CAST(k AS STRING),\'}]}\'), \'$.a[*]'
     ".x') FROM v",
     [('[]',)]),
    ('SELECT JSON_QUERY(CONCAT(\'{"a":[{"z":1},{"y":\',CAST(k AS STRING),\'}]}\'), \'strict'
     " $.a[*].x' ERROR ON ERROR) FROM v",
     [('[]',)]),
    ("SELECT JSON_QUERY(CONCAT('[',CAST(k AS STRING),', [2]]'), '$[*][0]') FROM v",
     [('[2]',)]),
    ("SELECT JSON_VALUE(CONCAT('null',REPEAT(' ',k)), '$') FROM v",
     [(None,)]),
    ("SELECT JSON_QUERY(CONCAT('null',REPEAT(' ',k)), '$' WITH WRAPPER) FROM v",
     [(None,)]),
]

PER_ROW_VIEW = ("CREATE TEMPORARY VIEW v AS SELECT * FROM (VALUES (1, '$.a'), (2, '$.b'), (3, 'la"
    "x $.c[0]'), (4, CAST(NULL AS STRING)), (5, '$.')) AS t(k, p)")
PER_ROW = [
    ('SELECT k, JSON_VALUE(CONCAT(\'{"a":\', CAST(k AS STRING), \',"b":"x","c":[7]}\'), p)'
     ' FROM v',
     [(1, '1'), (2, 'x'), (3, '7'), (4, None), (5, None)]),
    ('SELECT k, JSON_QUERY(CONCAT(\'{"a":[\', CAST(k AS STRING), \'],"b":{"x":1},"c":[[7]'
     "]}'), p) FROM v",
     [(1, '[1]'), (2, '{"x":1}'), (3, '[7]'), (4, None), (5, None)]),
    ('SELECT k, JSON_VALUE(CONCAT(\'{"a":\', CAST(k AS STRING), \'}\'), CASE WHEN k > 1 TH'
     "EN '$.b' ELSE '$.a' END) FROM v",
     [(1, '1'), (2, None), (3, None), (4, None), (5, None)]),
    ('SELECT k, JSON_VALUE(CONCAT(\'{"b":[10,20,\', CAST(k AS STRING), \']}\'), \'$.b.size('
     ")') FROM v",
     [(1, '3'), (2, '3'), (3, '3'), (4, '3'), (5, '3')]),
    ('SELECT k, JSON_VALUE(CONCAT(\'{"b":{"x":\', CAST(k AS STRING), \'}}\'), \'$.b.length('
     ")') FROM v",
     [(1, '1'), (2, '1'), (3, '1'), (4, '1'), (5, '1')]),
    ('SELECT k, JSON_VALUE(CONCAT(\'{"b":"x\', CAST(k AS STRING), \'"}\'), \'$.b.length()\')'
     ' FROM v',
     [(1, None), (2, None), (3, None), (4, None), (5, None)]),
    ('SELECT k, JSON_QUERY(CONCAT(\'{"b":\', CAST(k AS STRING), \',"c":[{"b":2}],"d":{"b"'
     ':{"b":3}}}\'), \'$..b\') FROM v',
     [(1, '[1,2,{"b":3},3]'), (2, '[2,2,{"b":3},3]'), (3, '[3,2,{"b":3},3]'),
      (4, '[4,2,{"b":3},3]'), (5, '[5,2,{"b":3},3]')]),
    ('SELECT k, JSON_VALUE(CONCAT(\'{"a-b":\', CAST(k AS STRING), \'}\'), \'$.a-b\') FROM v',
     [(1, '1'), (2, '2'), (3, '3'), (4, '4'), (5, '5')]),
    ('SELECT k, JSON_VALUE(CONCAT(\'{"1":\', CAST(k AS STRING), \'}\'), \'$.1\') FROM v',
     [(1, '1'), (2, '2'), (3, '3'), (4, '4'), (5, '5')]),
    ('SELECT k, JSON_VALUE(CONCAT(\'{"a":{"b":\', CAST(k AS STRING), \'}}\'), \'a.b\') FROM '
     'v',
     [(1, '1'), (2, '2'), (3, '3'), (4, '4'), (5, '5')]),
    ('SELECT k, JSON_VALUE(CONCAT(\'{"a":\', CAST(k AS STRING), \'}\'), \'$."a"\') FROM v',
     [(1, None), (2, None), (3, None), (4, None), (5, None)]),
    ('SELECT k, JSON_UNQUOTE(CONCAT(\'"a"b\', CAST(k AS STRING), \'"\')) FROM v',
     [(1, 'a"b1'), (2, 'a"b2'), (3, 'a"b3'), (4, 'a"b4'), (5, 'a"b5')]),
    ('SELECT k, JSON_UNQUOTE(CONCAT(\'"x\\\\n\', CAST(k AS STRING), \'\\\\u00e9"\')) FROM v',
     [(1, 'x\\n1\\u00e9'), (2, 'x\\n2\\u00e9'), (3, 'x\\n3\\u00e9'), (4, 'x\\n4\\u00e9'),
      (5, 'x\\n5\\u00e9')]),
    ('SELECT k, JSON_UNQUOTE(CONCAT(\'"\', CAST(k AS STRING), \'"\', \'"\')) FROM v',
     [(1, '1"'), (2, '2"'), (3, '3"'), (4, '4"'), (5, '5"')]),
    ('SELECT k, JSON_UNQUOTE(CONCAT(\'"\', CAST(k AS STRING))) FROM v',
     [(1, '"1'), (2, '"2'), (3, '"3'), (4, '"4'), (5, '"5')]),
    ('SELECT k, JSON_QUERY(CONCAT(\'{"a":[{"x":[\', CAST(k AS STRING), \']},{"y":1},{"x":'
     "[2,3]}]}'), '$.a[*].x[1]') FROM v",
     [(1, '[3]'), (2, '[3]'), (3, '[3]'), (4, '[3]'), (5, '[3]')]),
    ('SELECT k, JSON_QUERY(CONCAT(\'{"b":null,"k":\', CAST(k AS STRING), \'}\'), \'$.b\' EMP'
     'TY ARRAY ON EMPTY) FROM v',
     [(1, None), (2, None), (3, None), (4, None), (5, None)]),
    ('SELECT k, JSON_VALUE(CONCAT(\'{"b":null,"k":\', CAST(k AS STRING), \'}\'), \'$.b\' DEF'
     "AULT 'e' ON EMPTY) FROM v",
     [(1, None), (2, None), (3, None), (4, None), (5, None)]),
    ('SELECT k, JSON_EXISTS(CONCAT(\'{"b":null,"k":\', CAST(k AS STRING), \'}\'), \'$.b\') F'
     'ROM v',
     [(1, False), (2, False), (3, False), (4, False), (5, False)]),
    ('SELECT k, JSON_QUERY(CONCAT(\'[\', CAST(k AS STRING), \',{"a":2}]\'), \'lax $[*].a\') '
     'FROM v',
     [(1, '[2]'), (2, '[2]'), (3, '[2]'), (4, '[2]'), (5, '[2]')]),
]


def _rows(view: str, sql: str) -> list[tuple]:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(view)
    return [tuple(r.values()) for r in s.sql(sql).collect().to_pylist()]


@pytest.mark.parametrize(("sql", "expected"), ONE_ROW)
def test_one_row_as_flink(sql: str, expected: list[tuple]) -> None:
    assert _rows(ONE_ROW_VIEW, sql) == expected


@pytest.mark.parametrize(("sql", "expected"), PER_ROW)
def test_paths_and_names_as_flink(sql: str, expected: list[tuple]) -> None:
    assert sorted(_rows(PER_ROW_VIEW, sql), key=repr) == sorted(expected, key=repr)


def test_unsupported_path_functions_are_refused() -> None:
    s = sqlengine.connect()
    with pytest.raises(sqlengine.SqlEngineError, match="the function 'min\\(\\)' is not "
                       "supported"):
        s.sql("SELECT JSON_VALUE('{\"b\":[1]}', '$.b.min()')").collect()


# JSON_OBJECT's pairs: a VALUE of any expression, no pair with an ON NULL clause (were a
# parse error)
OBJECT_VIEW = ("CREATE TEMPORARY VIEW g AS SELECT * FROM (VALUES (1, 'a'), (3, CAST(NULL AS "
               "STRING))) AS t(k, s)")
OBJECTS = [
    ("SELECT k, JSON_OBJECT('b' VALUE k > 2) FROM g",
     [(1, '{"b":false}'), (3, '{"b":true}')]),
    ('SELECT k, JSON_OBJECT(ABSENT ON NULL) FROM g',
     [(1, '{}'), (3, '{}')]),
    ('SELECT k, JSON_OBJECT(NULL ON NULL) FROM g',
     [(1, '{}'), (3, '{}')]),
    ('SELECT k, JSON_OBJECT() FROM g',
     [(1, '{}'), (3, '{}')]),
    ("SELECT k, JSON_OBJECT('a' VALUE s ABSENT ON NULL) FROM g",
     [(1, '{"a":"a"}'), (3, '{}')]),
    ("SELECT k, JSON_OBJECT(KEY 'a' VALUE s, 'b' VALUE k > 1 AND k < 5 NULL ON NULL) FROM g",
     [(1, '{"a":"a","b":false}'), (3, '{"a":null,"b":true}')]),
    ("SELECT k, JSON_OBJECT('a' VALUE k + 1, 'c' : s) FROM g",
     [(1, '{"a":2,"c":"a"}'), (3, '{"a":4,"c":null}')]),
    ("SELECT k, JSON_OBJECT('n' VALUE JSON_OBJECT('x' VALUE k = 1)) FROM g",
     [(1, '{"n":{"x":true}}'), (3, '{"n":{"x":false}}')]),
    ("SELECT k, JSON_OBJECT('a' VALUE s IS NULL) FROM g",
     [(1, '{"a":false}'), (3, '{"a":true}')]),
    ("SELECT k, JSON_OBJECT('a' VALUE CASE WHEN k > 2 THEN 'big' ELSE 'small' END) FROM g",
     [(1, '{"a":"small"}'), (3, '{"a":"big"}')]),
]


@pytest.mark.parametrize(("sql", "expected"), OBJECTS)
def test_json_object_pairs_as_flink(sql: str, expected: list[tuple]) -> None:
    assert sorted(_rows(OBJECT_VIEW, sql), key=repr) == sorted(expected, key=repr)
