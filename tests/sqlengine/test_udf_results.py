"""A Python function's results for a ROW, a MAP or a TIMESTAMP: a dict for a ROW names each
field (in any case; a key in another case or a missing key gave NULL, an unknown key was
dropped, without a word); a vectorised ROW result names the declared fields (other names
gave all-NULL fields); a MAP holds a key once (a list of pairs held one twice); an aware
datetime for a TIMESTAMP keeps its wall clock, as PyFlink 2.3 takes it (it moved to UTC)."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError


def _value(result_type: str, fn: object, kind: str = "row", expr: str = "f(x)") -> object:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("t", pa.table({"x": pa.array([1], pa.int32())}))
    s.create_function("f", sqlengine.udf(fn, result_type=result_type, kind=kind, name="f"))
    return s.sql(f"SELECT {expr} AS r FROM t").collect().column(0).to_pylist()[0]


def test_a_dict_for_a_row_matches_names_in_any_case() -> None:
    assert _value("ROW<a INT, b STRING>", lambda x: {"A": 1, "b": "x"}) == {"a": 1, "b": "x"}
    assert _value("ROW<a INT, b STRING>", lambda x: (2, "y")) == {"a": 2, "b": "y"}
    assert _value("ARRAY<ROW<a INT>>", lambda x: [{"A": 3}, None]) == [{"a": 3}, None]


@pytest.mark.parametrize(("result", "words"), [
    ({"a": 1, "bb": "x"}, "which has no field 'bb'"),
    ({"a": 1}, "'b' is missing"),
    ({"a": 1, "A": 2, "b": "x"}, "each field once"),
])
def test_a_dict_for_a_row_of_other_keys_is_named(result: dict, words: str) -> None:
    with pytest.raises(SqlEngineError, match=words):
        _value("ROW<a INT, b STRING>", lambda x: result)


def test_a_vectorised_row_names_the_declared_fields() -> None:
    def named(names: list[str]):  # type: ignore[no-untyped-def]
        return lambda x: pa.StructArray.from_arrays(
            [pa.array([1] * len(x), pa.int32()), pa.array(["z"] * len(x))], names=names)

    assert _value("ROW<a INT, b STRING>", named(["A", "B"]), kind="arrow") == \
        {"a": 1, "b": "z"}
    with pytest.raises(SqlEngineError, match=r"a ROW of fields \['x', 'y'\], not the "
                                             r"declared \['a', 'b'\]"):
        _value("ROW<a INT, b STRING>", named(["x", "y"]), kind="arrow")


def test_a_map_holds_a_key_once() -> None:
    assert _value("MAP<STRING, INT>", lambda x: [("a", 1), ("b", 2)],
                  expr="CARDINALITY(f(x))") == 2
    with pytest.raises(SqlEngineError, match="a MAP holding the key 'a' twice"):
        _value("MAP<STRING, INT>", lambda x: [("a", 1), ("a", 2)])


def test_an_aware_datetime_keeps_its_wall_clock() -> None:
    plus2 = dt.timezone(dt.timedelta(hours=2))
    assert _value("TIMESTAMP(3)", lambda x: dt.datetime(2024, 1, 1, 12, tzinfo=plus2)) == \
        dt.datetime(2024, 1, 1, 12)
    # (a TIMESTAMP_LTZ is an instant: the offset counts)
    assert _value("TIMESTAMP_LTZ(3)", lambda x: dt.datetime(2024, 1, 1, 12, tzinfo=plus2),
                  expr="CAST(f(x) AS STRING)") == "2024-01-01 10:00:00.000"


def test_a_pandas_dataframe_is_a_row() -> None:
    """As PyFlink takes it (it failed with an internal KeyError)."""
    import pandas as pd

    got = _value("ROW<a BIGINT, b STRING>",
                 lambda x: pd.DataFrame({"a": x, "b": x.astype(str)}), kind="pandas")
    assert got == {"a": 1, "b": "1"}


class _BadStr(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text")


def _raises_bad_str(x: int) -> int:
    raise _BadStr


def _exits(x: int) -> int:
    import sys

    sys.exit(3)


@pytest.mark.parametrize("parallelism", ["1", "2"])
@pytest.mark.parametrize(("fn", "words"), [
    (_raises_bad_str, "_BadStr: (its message cannot be shown"),
    (_exits, "SystemExit: 3"),
])
def test_a_failure_names_the_function_and_row(fn: object, words: str,
                                              parallelism: str) -> None:
    """An exception whose __str__ fails gave an internal error; sys.exit() in a function
    escaped collect() as a raw SystemExit (at parallelism 2: no function named)."""
    s = sqlengine.connect({"execution.runtime-mode": "batch",
                           "parallelism.default": parallelism})
    s.register("t", pa.table({"x": pa.array([1, 2], pa.int32())}))
    s.create_function("f", sqlengine.udf(fn, result_type="INT", name="f"))
    with pytest.raises(SqlEngineError) as e:
        s.sql("SELECT f(x) AS r FROM t").collect()
    assert "the Python function F failed on the row" in str(e.value) and words in str(e.value)


class _Keys:
    def create_accumulator(self) -> list[str]:
        return []

    def accumulate(self, acc: list[str], m: dict) -> None:
        acc.extend(sorted(m))

    def get_value(self, acc: list[str]) -> str:
        return ",".join(acc)


def test_a_map_argument_is_a_dict() -> None:
    """As PyFlink passes one (it came as a list of (key, value) pairs: 'a' in m was False);
    also nested, and to table and aggregate functions. A MAP whose keys cannot be dict keys
    stays a list of pairs."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("t", pa.table({"x": pa.array([1], pa.int32())}))
    s.create_function("has_a", sqlengine.udf(lambda m: "a" in m, result_type="BOOLEAN",
                                             name="has_a"))
    s.create_function("first_k", sqlengine.udf(lambda ms: ms[0]["k"], result_type="INT",
                                             name="first_k"))
    s.create_function("kinds", sqlengine.udf(lambda m: type(m).__name__,
                                             result_type="STRING", name="kinds"))
    s.create_function("pairs", sqlengine.udtf(lambda m: sorted(m.items()),
                                              result_types=["STRING", "INT"], name="pairs"))
    s.create_function("keys", sqlengine.udaf(_Keys, result_type="STRING", name="keys"))
    got = s.sql("SELECT has_a(MAP['a', 1]) AS h, first_k(ARRAY[MAP['k', 7]]) AS i, "
                "kinds(MAP[ARRAY[1], 2]) AS k FROM t").collect().to_pylist()
    assert got == [{"h": True, "i": 7, "k": "list"}]
    rows = s.sql("SELECT k, v FROM t, LATERAL TABLE(pairs(MAP['b', 2, 'a', 1])) AS p(k, v)"
                 ).collect().to_pylist()
    assert rows == [{"k": "a", "v": 1}, {"k": "b", "v": 2}]
    assert s.sql("SELECT keys(MAP['b', x, 'a', x]) AS ks FROM t").collect().to_pylist() == \
        [{"ks": "a,b"}]


def test_a_row_argument_is_a_row_as_pyflink_passes_it() -> None:
    """A ROW argument answers by position, by name and as an attribute, and unpacks to its
    values, as PyFlink's Row (it was a dict: r[0] and r.a failed, ``a, b = r`` gave the
    names); nested ROWs too; a function may return a Row."""
    import pickle

    from sqlengine import Row

    s = sqlengine.connect()

    def text(r: Row) -> str:
        a, b, _, _ = r
        return f"{r[0]}|{r['b']}|{r.a}|{a}|{b}|{r.as_dict()}|{r.nest.k}|{r.arr[0].z}"

    s.create_function("text_of", text, result_type="STRING")
    s.create_function("twice", lambda r: Row(x=r.a * 2, y=r.b.upper()),
                      result_type="ROW<x INT, y STRING>")
    s.create_function("plain", lambda r: Row(r.a, "z"), result_type="ROW<x INT, y STRING>")
    arg = ("CAST(ROW(a, b, ROW(a), ARRAY[ROW(a + 1)]) AS ROW<a INT, b STRING, nest ROW<k INT>,"
           " arr ARRAY<ROW<z INT>>>)")
    rows = s.sql(f"SELECT text_of({arg}) AS s, twice({arg}) AS t, plain({arg}) AS p "
                 "FROM (VALUES (1, 'x'), (2, 'y')) AS v(a, b)").collect().to_pylist()
    assert rows == [
        {"s": "1|x|1|1|x|{'a': 1, 'b': 'x', 'nest': Row(k=1), 'arr': [Row(z=2)]}|1|2",
         "t": {"x": 2, "y": "X"}, "p": {"x": 1, "y": "z"}},
        {"s": "2|y|2|2|y|{'a': 2, 'b': 'y', 'nest': Row(k=2), 'arr': [Row(z=3)]}|2|3",
         "t": {"x": 4, "y": "Y"}, "p": {"x": 2, "y": "z"}}]
    r = Row(a=1, b=Row(c=2))
    assert pickle.loads(pickle.dumps(r)) == r and r.as_dict(recursive=True) == \
        {"a": 1, "b": {"c": 2}}
    with pytest.raises(AttributeError, match="no field 'c'"):
        _ = r.c
