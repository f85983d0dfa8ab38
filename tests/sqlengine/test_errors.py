"""Every user mistake is an sqlengine error naming the place: line:col and a caret for SQL."""

from __future__ import annotations

import re

import pytest

import sqlengine
from sqlengine.errors import (
    BindError,
    ConnectorError,
    NotSupportedError,
    ParseError,
    PlanError,
    SqlEngineError,
)

T = """CREATE TABLE t (a INT, b STRING, c DOUBLE)
WITH ('connector' = 'filesystem', 'path' = 'queries/data/orders.csv', 'format' = 'csv');
"""


def _err(script: str, cls: type[SqlEngineError] = SqlEngineError) -> SqlEngineError:
    s = sqlengine.connect()
    with pytest.raises(cls) as info:
        s.execute(script)
    return info.value


def test_statement_syntax_error_has_line_col_and_caret() -> None:
    e = _err("SET 'parallelism.default' = '1';\n"
             "CREATE TABLE t (a INT b STRING) WITH ('connector' = 'print')",
             ParseError)
    assert (e.span.line, e.span.column) == (2, 23)
    text = str(e)
    assert text.startswith("2:23: unexpected 'b'")
    lines = text.splitlines()
    assert lines[1] == "  CREATE TABLE t (a INT b STRING) WITH ('connector' = 'print')"
    assert lines[2] == "  " + " " * 22 + "^"



def test_sqlglots_token_objects_stay_out_of_messages() -> None:
    # (it showed "but got <Token token_type: TokenType.WHERE, text: WHERE, line: 1, ...>")
    assert "Expected table name but got 'WHERE'" in _err("SELECT FROM WHERE", ParseError).message
    assert _err("SELECT * FROM", ParseError).message.endswith("but got the end of the query")


@pytest.mark.parametrize(("statement", "expected"), [
    ("CREATE TABLE (a INT)", "expected IF NOT EXISTS, a name"),
    ("INSERT t SELECT 1", "expected INTO or OVERWRITE"),
    ("DROP TABLE", "expected IF EXISTS, a name"),
    ("EXPLAIN", "expected ESTIMATED_COST, CHANGELOG_MODE, JSON_EXECUTION_PLAN, PLAN_ADVICE or "
                "VERBOSE, INSERT, PLAN FOR, a query"),
    ("ALTER TABLE t ADD", "expected CONSTRAINT, '(', a name, PRIMARY, WATERMARK"),
    ("DROP TABLE t WHAT", None)])
def test_what_a_syntax_error_expects_is_in_words(statement: str, expected: str | None) -> None:
    # (the grammar's names were shown: IF_NOT_EXISTS, INSERT_MODE, EXPLAIN_DETAIL, PLAN_FOR,
    # and "a name, a name" for the two kinds of names)
    message = str(_err(statement, ParseError)).splitlines()[0]
    if expected is not None:
        assert message.endswith(expected)
    assert not re.search(r"\b[A-Z]+_[A-Z_]+\b", message.replace("ESTIMATED_COST, CHANGELOG_MODE,"
                         " JSON_EXECUTION_PLAN, PLAN_ADVICE", "")), message


def test_query_syntax_error_is_located_in_the_script() -> None:
    e = _err(T + "\nSELECT a,\n  b FROM t WHERE a = = 1;", ParseError)
    assert e.span.line == 5
    assert "b FROM t WHERE a = = 1" in str(e)


def test_unknown_statement() -> None:
    e = _err("SELEKT 1", ParseError)
    assert e.span.line == 1 and e.span.column == 1


def test_unknown_table() -> None:
    e = _err("SELECT * FROM nope", BindError)
    assert "unknown table 'nope'" in e.message
    assert e.span.column == 15


def test_unknown_column_suggests_a_name() -> None:
    e = _err(T + "SELECT bb FROM t", BindError)
    assert "unknown column 'bb'; did you mean 'b'?" in e.message
    assert (e.span.line, e.span.column) == (3, 8)


def test_unknown_function() -> None:
    e = _err(T + "SELECT frobnicate(a) FROM t", BindError)
    assert "unknown function FROBNICATE" in e.message


def test_type_mismatch() -> None:
    e = _err(T + "SELECT a + b FROM t", BindError)
    assert "ADD expects numeric arguments, got (INT, STRING)" in e.message
    e = _err(T + "SELECT a FROM t WHERE b", BindError)
    assert "WHERE condition must be BOOLEAN" in e.message


def test_column_not_grouped() -> None:
    e = _err(T + "SELECT b, a FROM t GROUP BY b", BindError)
    assert "column 'a' must appear in GROUP BY" in e.message
    assert "GROUP BY 1" not in e.message
    # (as Flink, a number in GROUP BY is a constant: the message says so to users of
    # engines where it names a select item)
    e = _err(T + "SELECT a, COUNT(*) FROM t GROUP BY 1", BindError)
    assert "GROUP BY 1 groups by the constant 1" in e.message
    e = _err(T + "SELECT a FROM t WHERE COUNT(*) > 1", BindError)
    assert "aggregate functions are not allowed in WHERE" in e.message


def test_bad_connector_option_names_the_key() -> None:
    sql = ("CREATE TABLE t (a INT) WITH ('connector' = 'filesystem', 'path' = 'x', "
           "'format' = 'xml')")
    e = _err(sql, ConnectorError)
    assert ("option 'format' must be one of 'csv', 'json', 'parquet', 'debezium-json', "
            "'canal-json', 'maxwell-json', 'raw', 'orc', 'avro', got 'xml'") in e.message
    assert e.span is not None and e.span.column == sql.index("'format'") + 1
    e = _err("CREATE TABLE t (a INT) WITH ('connector' = 'datagen', 'rows-per-sec' = '5')",
             ConnectorError)
    assert "unsupported option 'rows-per-sec'" in e.message
    e = _err("CREATE TABLE t (a INT) WITH ('connector' = 'kafka')", ConnectorError)
    assert "unknown connector 'kafka'" in e.message
    e = _err("CREATE TABLE t (a INT) WITH ('connector' = 'datagen', "
             "'fields.zz.min' = '1')", ConnectorError)
    assert "unknown column 'zz'" in e.message


def test_missing_file_names_the_path() -> None:
    e = _err("CREATE TABLE t (a INT) WITH ('connector' = 'filesystem', "
             "'path' = '/no/such/file.csv', 'format' = 'csv'); SELECT * FROM t")
    assert "/no/such/file.csv" in str(e)
    assert "does not exist" in str(e)


def test_bad_type_name() -> None:
    e = _err("CREATE TABLE t (a INTEGRAL) WITH ('connector' = 'print')", BindError)
    assert "column 'a': unknown type 'INTEGRAL'" in e.message
    assert e.span.column == 17


@pytest.mark.parametrize(("sql", "word"), [
    ("SELECT CAST(1 AS INTEGR)", "INTEGR"),
    ("SELECT TRY_CAST(1 as  integr)", "integr"),
    ("SELECT CAST(CAST(1 AS INT) AS DECIMAL(50, 2))", "DECIMAL"),
    ("SELECT JSON_VALUE('{}', '$.a' RETURNING INTEGR)", "INTEGR"),
])
def test_a_bad_type_in_an_expression_is_pointed_at(sql: str, word: str) -> None:
    """The caret stands on the type (it stood on the CAST's first argument)."""
    e = _err(sql, BindError)
    assert e.span.column == sql.rindex(word) + 1
    assert e.span.end - e.span.start == len(word)


def test_window_tvf_needs_a_time_attribute() -> None:
    e = _err("CREATE TABLE t (a INT, ts TIMESTAMP(3)) WITH ('connector' = 'datagen'); "
             "SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(ts), INTERVAL '10' MINUTES))",
             PlanError)  # (in streaming mode: batch mode windows any TIMESTAMP column)
    assert "column 'ts' is not a time attribute: windows in streaming mode" in e.message


@pytest.mark.parametrize("offset", ["5", "-7"])
def test_a_tumble_offset_as_long_as_the_window_is_refused(offset: str) -> None:
    """As Flink's TUMBLE: abs(offset) < size (main windowed the rows anyway)."""
    e = _err("CREATE TABLE t (a INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH "
             "('connector' = 'datagen', 'number-of-rows' = '1'); SELECT * FROM TABLE(TUMBLE("
             f"TABLE t, DESCRIPTOR(ts), INTERVAL '5' MINUTE, INTERVAL '{offset}' MINUTE))",
             BindError)
    assert "TUMBLE's offset must be shorter than its size (abs(offset) < size), got " \
        f"{offset.lstrip('-')} min for a 5 min window" in e.message


def test_session_window_on_processing_time_is_refused() -> None:
    e = _err("CREATE TABLE t (a INT, pt AS PROCTIME()) WITH ('connector' = 'datagen', "
             "'number-of-rows' = '1'); SELECT * FROM "
             "TABLE(SESSION(TABLE t PARTITION BY a, DESCRIPTOR(pt), INTERVAL '1' MINUTE))",
             NotSupportedError)
    assert "SESSION windows on processing time are not supported yet" in e.message


def test_order_by_on_unbounded_input_is_refused_at_plan_time() -> None:
    e = _err("CREATE TABLE g (a INT) WITH ('connector' = 'datagen'); "
             "SELECT a FROM g ORDER BY a", PlanError)
    assert "ORDER BY over an unbounded input" in e.message and "time attribute" in e.message


def test_updating_result_into_a_file_sink_is_refused() -> None:
    e = _err(T + "CREATE TABLE o (b STRING, n BIGINT) WITH ('connector' = 'filesystem', "
             "'path' = 'out/never', 'format' = 'csv');\n"
             "INSERT INTO o SELECT b, COUNT(*) FROM t GROUP BY b", PlanError)
    assert "does not support consuming update changes" in e.message


def test_runtime_error_names_the_operator() -> None:
    s = sqlengine.connect()
    with pytest.raises(sqlengine.OperatorError) as info:
        s.sql("SELECT a / (a - 1) FROM (VALUES (1), (2)) AS v (a)").collect()
    assert "division by zero" in str(info.value)
    assert "in operator Project" in str(info.value)


def test_bad_set_value_names_the_key() -> None:
    e = _err("SET 'execution.runtime-mode' = 'fast'", PlanError)
    assert "'execution.runtime-mode' must be one of 'streaming', 'batch'" in e.message


def test_errors_keep_what_was_accepted_before() -> None:
    s = sqlengine.connect()
    with pytest.raises(BindError):
        s.execute(T + "SELECT nope FROM t")
    assert s.catalog.table("t") is not None


def test_a_bad_task_mode_names_the_option() -> None:
    # (refused when set, before any job plans with it)
    with pytest.raises(PlanError, match=r"'execution\.native\.task-mode' must be one of"):
        sqlengine.connect({"parallelism.default": "2", "execution.native.task-mode": "fibers"})


@pytest.mark.parametrize(("sql", "words"), [
    # (sqlglot's words were shown: "Required keyword: 'this' missing for <class
    # 'sqlglot.expressions.math.Round'>")
    ("SELECT ROUND()", r"ROUND\(\.\.\.\) is missing an argument"),
    ("SELECT 1 +", r"the operator \+ is missing an operand"),
    ("SELECT a FROM t WHERE a =", "the operator = is missing an operand"),
    ('SELECT "b" FROM t', "Flink quotes names with backticks"),
    # (TPC-DS's aliases: the hint was missing after AS, where the highlight starts inside)
    ('SELECT a AS "order count" FROM t', "Flink quotes names with backticks"),
    ("SELECT DATE '2000-01-01' + a FROM t", r"add an interval: d \+ INTERVAL '5' DAY"),
    # (sqlglot makes it STR_TO_DATE: "unknown function STR_TO_DATE")
    ("SELECT CAST(b AS DATE FORMAT 'YYYY') FROM t", r"CAST \.\.\. FORMAT is not supported"),
    ("SELECT ROW_NUMBER() FROM t", r"ROW_NUMBER\(\) is a window function: it needs OVER"),
    # (a window function where SQL allows none: "OVER windows are not supported yet"; inside
    # an aggregate: "the statement nests too deeply", a RecursionError)
    ("SELECT a FROM t WHERE ROW_NUMBER() OVER (ORDER BY a) = 1",
     r"a window function \(OVER\) is not allowed here, only in the SELECT list and ORDER BY"),
    ("SELECT a FROM t GROUP BY a HAVING SUM(a) OVER () > 1", r"OVER\) is not allowed here"),
    ("SELECT SUM(ROW_NUMBER() OVER (ORDER BY a)) FROM t",
     r"a window function \(OVER\) cannot be an aggregate's argument"),
    # (the DISTINCT was ignored: every row counted)
    ("SELECT COUNT(DISTINCT *) FROM t", r"COUNT\(DISTINCT \*\) is not SQL"),
])
def test_messages_in_sqls_words(sql: str, words: str) -> None:
    e = _err(T + sql)
    assert e.span is not None and e.span.line >= 3
    assert "sqlglot" not in e.message
    assert re.search(words, e.message), e.message


def test_a_misspelt_option_gets_a_suggestion() -> None:
    e = _err("CREATE TABLE x (a INT) WITH ('connector' = 'filesystem', 'path' = '/tmp/x', "
             "'fromat' = 'csv')")
    assert "unsupported option 'fromat' for connector 'filesystem'; did you mean 'format'?" \
        in e.message


def test_the_caret_of_a_tabbed_or_very_long_line_lands_on_the_place() -> None:
    from sqlengine.errors import Span, highlight

    # (a tab in the line stays a tab under it: spaces put the caret in the wrong column)
    assert highlight("\tSELECT\tfoo(\t1);", Span(1, 9, 8, 11)).splitlines() == [
        "  \tSELECT\tfoo(\t1);", "  \t      \t^^^"]
    # (a 60,000-character line was echoed whole, with a caret line as long)
    long = "SELECT " + ", ".join(f"c{i}" for i in range(10000)) + ", nope FROM t"
    at = long.index("nope")
    shown, caret = highlight(long, Span(1, at + 1, at, at + 4)).splitlines()
    assert len(shown) < 200 and shown.startswith("  ...")
    assert shown[caret.index("^"):caret.index("^") + 4] == "nope"


def test_the_caret_after_emoji_sequences_lands_on_the_place() -> None:
    from sqlengine.errors import Span, highlight

    # (a skin tone, a flag and a ZWJ family each show as one picture two columns wide: counted
    # character by character they put the caret 2 to 6 columns right)
    line = "SELECT '\U0001f44d\U0001f3fd\U0001f1eb\U0001f1f7\U0001f468\u200d\U0001f469', nope;"
    at = line.index("nope")
    caret = highlight(line, Span(1, at + 1, at, at + 4)).splitlines()[1]
    assert caret == "  " + " " * (len("SELECT '',  ") - 1 + 3 * 2) + "^^^^"


def test_text_that_was_not_utf8_is_located() -> None:
    """Bytes of a stream that is not UTF-8 (the shell reading a Latin-1 pipe) reach a
    statement as surrogate escapes: they failed inside the job with Python's
    UnicodeEncodeError."""
    e = _err("SELECT 1 AS a;\nSELECT 'caf\udce9' AS b;")
    assert e.span is not None and (e.span.line, e.span.column) == (2, 12)
    assert "not UTF-8 text here (byte 0xe9)" in e.message


@pytest.mark.parametrize(("sql", "where", "words"), [
    ("SELECT 1;\nSELECT 'abc", (2, 8), "this string's ' is never closed"),
    ("SELECT `abc FROM t", (1, 8), "this name's ` is never closed"),
    ("SELECT 'it''s' AS a, 'ok", (1, 22), "this string's ' is never closed"),
    # (an unclosed " was read as a name: "unknown column '\"\"'")
    ('SELECT 1 AS a,\n "abc', (2, 2), "this name's \" is never closed"),
])
def test_an_unclosed_quote_is_located(sql: str, where: tuple[int, int], words: str) -> None:
    """It was "cannot tokenize query: Error tokenizing 'SELECT 'ab'" at the statement's
    start."""
    e = _err(sql)
    assert e.span is not None and (e.span.line, e.span.column) == where
    assert words in e.message


def test_a_ddl_error_without_a_place_points_at_the_name_it_quotes() -> None:
    """'table 'x': option 'connector' is missing' had no line:col at all."""
    e = _err("SELECT 1;\nCREATE TABLE x (a INT)")
    assert e.span is not None and (e.span.line, e.span.column) == (2, 14)
    assert "option 'connector' is missing" in e.message


def test_a_byte_order_mark_before_a_script_is_white_space() -> None:
    """It failed: "cannot parse statement starting with '\\ufeffSELECT'"."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    assert s.execute("\ufeffSELECT 1 AS a")[0].table.to_pylist() == [{"a": 1}]
    e = _err("\ufeffSELECT 1;\nSELECT nope")
    assert e.span is not None and (e.span.line, e.span.column) == (2, 8)


def test_an_invalid_date_literal_is_refused_where_it_is_written() -> None:
    # (it failed when the job ran: "... (in operator Project of vertex v1)" at 1:1)
    e = _err("SELECT 1 AS a,\n  DATE '2024-13-45' AS d", BindError)
    assert e.span is not None and (e.span.line, e.span.column) == (2, 8)
    assert e.message == "cannot CAST '2024-13-45' to DATE: not a valid value"


def test_a_malformed_binary_literal_is_located() -> None:
    # (it was located at 1:1, the statement's start)
    e = _err("SELECT 1, X'ABC'", BindError)
    assert e.span is not None and (e.span.line, e.span.column) == (1, 11)
    assert e.message == "malformed binary literal X'ABC'"


def test_a_parameter_error_is_located_at_its_placeholder() -> None:
    # (they were located at 1:1, the statement's start)
    s = sqlengine.connect()
    for sql, params, where in [("SELECT :a AS x,\n :b AS y", {"a": 1}, (2, 2)),
                               ("SELECT ? AS x, ? AS y", [1], (1, 16))]:
        with pytest.raises(BindError) as info:
            s.sql(sql, params)
        span = info.value.span
        assert span is not None and (span.line, span.column) == where


def test_a_plan_time_refusal_of_a_query_has_a_place() -> None:
    """(sql(...).collect() gave none; execute() pointed at the quoted table already)"""
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.execute("CREATE TABLE gen (k INT, v INT) WITH ('connector' = 'datagen')")
    with pytest.raises(SqlEngineError, match="ORDER BY over an unbounded input") as info:
        s.sql("SELECT k, v FROM gen ORDER BY v").collect()
    assert info.value.span is not None and (info.value.span.line, info.value.span.column) == \
        (1, 18)


@pytest.mark.parametrize(("sql", "column", "where"), [
    # (sqlglot dropped the empty item without a word: the values after it moved left, so
    # VALUES (1,,2) AS v(a,b,c) gave a=1, b=2 and SUBSTRING('abcdef',,3) ran as ('abcdef', 3))
    ("SELECT * FROM (VALUES (1,,2)) AS v(a,b,c)", 25, "after"),
    ("SELECT SUBSTRING('abcdef',,3) AS s", 26, "after"),
    ("SELECT ROUND(2.567,,1)", 19, "after"),
    ("SELECT COUNT(,) FROM t", 14, "before"),
    ("SELECT ARRAY[1,,2]", 15, "after"),
    ("SELECT 1, FROM t", 9, "after"),
    ("SELECT ,1", 8, "before"),
    ("SELECT a FROM t WHERE a IN (1,)", 30, "after"),
    ("SELECT a FROM t GROUP BY a,", 27, "after"),
    ("INSERT INTO s VALUES (3,,)", 24, "after"),
])
def test_an_empty_item_of_a_list_is_an_error(sql: str, column: int, where: str) -> None:
    e = _err(T + "CREATE TABLE s (a INT, b INT, c INT) WITH ('connector' = 'blackhole');\n"
             + sql, ParseError)
    assert (e.span.line, e.span.column) == (4, column)
    assert e.message == f"unexpected ',': an item is missing {where} it"


@pytest.mark.parametrize(("sql", "message"), [
    ("SELECT * FROM (VALUES (1, 2, 3)) AS v(a)", "1 column names given for 3 columns"),
    ("SELECT * FROM (VALUES (1, 2)) AS v(a, b, c)", "3 column names given for 2 columns"),
    ("SELECT INTERVAL '99999999999' DAY", "out of range (at most 999999999 days)"),
    ("SELECT INTERVAL '99999999999' HOUR", "out of range (at most 999999999 days)"),
    ("SELECT INTERVAL '9999999999' YEAR", "out of range (at most 178956970 years)"),
])
def test_values_aliases_and_interval_ranges(sql: str, message: str) -> None:
    # (the aliases were cut or dropped without a word; the interval was an internal error)
    assert message in str(_err(sql, BindError))


@pytest.mark.parametrize(("options", "column", "message"), [
    ("'number-of-rowz' = '3'", 22, "unsupported option 'number-of-rowz'"),
    ("'number-of-rows' = '-3'", 22, "'number-of-rows' must be a non-negative integer"),
])
def test_an_option_of_create_table_like_is_located_in_its_statement(
        options: str, column: int, message: str) -> None:
    # (it was shown at 1:1, the LIKE's source table's statement, which had succeeded)
    e = _err("CREATE TABLE s (a INT) WITH ('connector' = 'datagen');\nSELECT 1;\n"
             f"CREATE TABLE t WITH ({options}) LIKE s", ConnectorError)
    assert (e.span.line, e.span.column) == (3, column)
    assert message in e.message


@pytest.mark.parametrize(("options", "message"), [
    # (option keys are case-sensitive, as Flink's; the message said only that 'connector'
    # was missing, and 'PATH' was not matched to 'path')
    ("'Connector' = 'datagen'", "option 'connector' is missing: keys are case-sensitive, "
                                "'Connector' is not 'connector'"),
    ("'connector' = 'filesystem', 'PATH' = '/tmp', 'format' = 'csv'",
     "unsupported option 'PATH' for connector 'filesystem'; did you mean 'path'?"),
])
def test_an_option_key_in_another_case_is_named(options: str, message: str) -> None:
    assert message in _err(f"CREATE TABLE k (a INT) WITH ({options})", ConnectorError).message


@pytest.mark.parametrize(("sql", "column", "message"), [
    # (sqlglot read these without a word: IN () matched no row, WINDOW w / WINDOW w AS was
    # an empty window, and an empty GROUP BY was reported as a column not in GROUP BY)
    ("SELECT a FROM t WHERE a IN ()", 29, "IN () is empty: it needs at least one value"),
    ("SELECT a FROM t WHERE a NOT IN ( )", 34, "IN () is empty: it needs at least one value"),
    ("SELECT a FROM t WINDOW w AS", 24, "WINDOW w is missing its definition: AS (PARTITION BY "
     "... ORDER BY ...)"),
    ("SELECT a FROM t WINDOW w", 24, "WINDOW w is missing its definition: AS (PARTITION BY "
     "... ORDER BY ...)"),
    ("SELECT a FROM t GROUP BY", 17, "GROUP BY is missing its expressions"),
    # (sqlglot's class names: 'ORDER(...) is missing an argument')
    ("SELECT a FROM t WHERE", 17, "WHERE is missing its condition"),
    ("SELECT a FROM t HAVING", 17, "HAVING is missing its condition"),
    ("SELECT a FROM t ORDER BY", 17, "ORDER BY is missing its expressions"),
    ("SELECT a FROM t LIMIT", 17, "LIMIT is missing its count"),
    ("SELECT a FROM t LIMIT 1 OFFSET", 25, "OFFSET is missing its count"),
    ("SELECT a FROM t WHERE a BETWEEN 1 AND", 35, "BETWEEN is missing a bound (x BETWEEN low "
     "AND high)"),
])
def test_an_incomplete_clause_is_an_error_naming_it(sql: str, column: int,
                                                     message: str) -> None:
    e = _err(T + sql, ParseError)
    assert (e.span.line, e.span.column) == (3, column)
    assert e.message == message


def test_a_named_window_still_reads() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    rows = s.sql("SELECT a, SUM(a) OVER w AS s FROM (VALUES (1), (2)) AS v(a) "
                 "WINDOW w AS (ORDER BY a)").collect().to_pylist()
    assert rows == [{"a": 1, "s": 1}, {"a": 2, "s": 3}]
    assert s.sql("SELECT a FROM (VALUES (1)) AS v(a) WHERE a IN (1) WINDOW w AS ()") \
        .collect().to_pylist() == [{"a": 1}]


@pytest.mark.parametrize("sql", ["SELECT 'a' ? 'b'", "SELECT x ? 'k' FROM (VALUES ('a')) AS t(x)"])
def test_another_dialects_operator_is_named_as_written(sql: str) -> None:
    """PostgreSQL's JSONB operators: refused quoting the SQL (they were 'unknown function
    J_S_O_N_B_CONTAINS_TOP_KEY', after sqlglot's class; found by a probe)."""
    e = _err(sql)
    assert "is not Flink SQL" in e.message and "J_S_O_N" not in e.message


def test_a_result_beyond_arrows_column_limit_is_named() -> None:
    """(it was Arrow's "ArrowCapacityError: Result might not fit in requested binary/string
    array. If possible, convert to a large binary/string.")"""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    with pytest.raises(SqlEngineError, match=r"more than 2 GiB of text or bytes in one batch"
                                             r".*\(in operator Project") as e:
        s.sql("SELECT REPEAT(s, 1000000000) FROM (VALUES ('ab'), ('cd')) AS t(s)").collect()
    assert "convert to a large" not in str(e.value)


@pytest.mark.parametrize(("sql", "words"), [
    # (sqlglot's names were shown: DECODE_CASE, WEEK_OF_YEAR; DIV as CAST(7 / 2 AS BIGINT))
    ("SELECT DECODE(1, 1, 'x', 'y')", r"^1:15: unknown function DECODE$"),
    ("SELECT WEEKOFYEAR(DATE '2024-01-01')", r"^1:8: unknown function WEEKOFYEAR$"),
    ("SELECT upper(getdate())", r"^1:14: unknown function GETDATE$"),
    ("SELECT 7 DIV 2", r"^1:8: the operator DIV is not Flink SQL: / of two integers divides"),
])
def test_foreign_spellings_are_named_as_written(sql: str, words: str) -> None:
    e = _err(sql)
    assert re.search(words, str(e).splitlines()[0]), str(e)
