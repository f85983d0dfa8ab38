"""Strange SQL gets a sqlengine error, never a raw Python exception (issue 15's fuzzing found
RecursionError, ValueError, AttributeError and ArrowCapacityError escaping on main)."""

from __future__ import annotations

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import BindError, ExecutionError, NotSupportedError

CASES = [
    # Deeper than anybody writes: a located refusal, not a RecursionError.
    ("SELECT " + "(" * 3000 + "1" + ")" * 3000, NotSupportedError, "nests too deeply"),
    ("SELECT " + "NOT " * 30000 + "TRUE", NotSupportedError, "nests too deeply"),
    ("SELECT 1e", BindError, "malformed numeric literal '1e'"),
    ("SELECT " + "9" * 5000, BindError, "out of range"),
    ("SELECT LPAD('x', 2000000000, 'y')", ExecutionError, "too large"),
    # Java reserves every pattern letter: one DATE_FORMAT cannot format is refused (on main
    # 'Q' was copied into the text, and '' raised an AttributeError).
    ("SELECT DATE_FORMAT(ts, 'yyyy VV') FROM t", ExecutionError,
     "unsupported DATE_FORMAT pattern letter 'VV'"),
]


@pytest.mark.parametrize(("sql", "error", "message"), CASES)
def test_a_sqlengine_error_through_every_door(sql: str, error: type, message: str) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("t", pa.table({"ts": pa.array([0], pa.timestamp("ms"))}))
    with pytest.raises(error, match=message):
        s.sql(sql).collect()
    with pytest.raises(error, match=message) as info:
        s.execute(sql)
    assert info.value.span is not None  # located in the script


@pytest.mark.parametrize(("script", "message"), [
    ("SELECT a FROM t ORDER ORDER BY a", "ORDER is a reserved word"),
    ("SELECT a FROM t GROUP GROUP BY a", "GROUP is a reserved word"),
    ("SELECT 1 AS a; /* the rest", "unterminated comment"),
])
def test_accepted_on_main_though_invalid(script: str, message: str) -> None:
    # ORDER ORDER BY / GROUP GROUP BY ran with the first word as a table alias (Flink rejects
    # both); an unterminated /* silently dropped the rest of the script.
    s = sqlengine.connect()
    s.register("t", pa.table({"a": [1]}))
    with pytest.raises(sqlengine.errors.ParseError, match=message) as info:
        s.execute(script)
    assert info.value.span is not None
    assert s.sql("SELECT a FROM t AS `order`").collect().num_rows == 1  # quoted: a name


def test_register_an_iterator_of_something_else() -> None:
    # On main: AttributeError 'NoneType' object has no attribute 'schema'.
    s = sqlengine.connect()
    with pytest.raises(sqlengine.errors.PlanError, match="its first item is NoneType"):
        s.register("t", iter([None]))
    s.register("e", pa.record_batch([pa.array([], pa.int32())], names=["a"]))  # 0 rows: fine
    assert s.sql("SELECT * FROM e").collect().num_rows == 0


@pytest.mark.parametrize("sql", ["SELECT 1 AS `a\x00b`", "CREATE TABLE `t\nx` (a INT) WITH "
                                 "('connector' = 'blackhole')"])
def test_control_characters_in_a_quoted_name_are_refused(sql: str) -> None:
    # On main `a\x00b` became a column name holding NUL.
    from sqlengine.errors import ParseError

    with pytest.raises(ParseError, match="control character") as info:
        sqlengine.connect().execute(sql)
    assert info.value.span is not None


def test_control_characters_in_strings_are_data() -> None:
    rows = sqlengine.connect().sql("SELECT '\x01`x\x00`' AS s").collect().to_pylist()
    assert rows == [{"s": "\x01`x\x00`"}]


@pytest.mark.parametrize(("name", "sql", "rows"), [
    ("256 parentheses", "SELECT " + "(" * 256 + "1" + ")" * 256, 1),
    ("256 NOT", "SELECT " + "NOT " * 256 + "TRUE", 1),
    ("256 CASE", "SELECT " + "CASE WHEN TRUE THEN " * 256 + "1" + " END" * 256, 1),
    ("256 subqueries", "SELECT * FROM " + "(SELECT * FROM " * 256 + "(VALUES (1)) AS v(a)"
     + ") AS s" * 256, 1),
    ("1,000 UNION ALL branches", " UNION ALL ".join(f"SELECT {i}" for i in range(1000)), 1000),
])
def test_statements_as_deep_as_people_write_them_run(name: str, sql: str, rows: int) -> None:
    # On main 50 parentheses, 100 NOT / CASE, 200 subqueries or 300 UNION branches failed.
    s = sqlengine.connect()
    q = s.sql(sql)
    assert q.collect().num_rows == rows
    assert sum(b.num_rows for b in q.stream()) == rows
    assert q.explain()
    assert s.execute(sql)[-1].table.num_rows == rows


def test_memory_running_out_in_an_operator_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # (on main: "out of memory: the query's state or a value grew too large", no operator)
    import pyarrow as pa

    from sqlengine.errors import OperatorError
    from sqlengine.runtime.operators.aggregate import GroupAggregateOperator

    def exhausted(self: object, batch: object, input_index: int = 0) -> object:
        raise MemoryError

    monkeypatch.setattr(GroupAggregateOperator, "process_batch", exhausted)
    s = sqlengine.connect()
    s.register("t", pa.table({"k": ["a", "b"]}))
    with pytest.raises(OperatorError, match=r"out of memory \(process peak [\d,]+ MiB; the "
                                            r"operator's state counted [\d,]+ MiB\)") as info:
        s.sql("SELECT k, COUNT(*) FROM t GROUP BY k").collect()
    assert "GroupAggregate" in str(info.value)
