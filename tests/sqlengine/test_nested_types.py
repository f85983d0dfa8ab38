"""ARRAY, MAP and ROW: DDL types, reading parquet and json, constructors, access, CARDINALITY,
ELEMENT, ARRAY_CONTAINS, SPLIT, CAST to STRING and UNNEST, against DuckDB over the same
parquet file and against the data itself; and what is refused."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sqlengine
from sqlengine import types as T
from sqlengine.errors import BindError, SqlEngineError

ROW_TYPE = pa.struct([("city", pa.string()), ("zip", pa.int32())])
SCHEMA = pa.schema([("id", pa.int32()), ("tags", pa.list_(pa.field("element", pa.string()))),
                    ("nums", pa.list_(pa.field("element", pa.int64()))),
                    ("props", pa.map_(pa.string(), pa.int32())), ("addr", ROW_TYPE)])
DDL = ("id INT, tags ARRAY<STRING>, nums ARRAY<BIGINT>, props MAP<STRING, INT>, "
       "addr ROW<city STRING, zip INT>")


def _rows(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        def maybe(v: object) -> object:
            return None if rng.random() < 0.15 else v
        tags = maybe([rng.choice(["a", "b", "c", None]) for _ in range(rng.randint(0, 4))])
        nums = maybe([rng.randint(-5, 5) for _ in range(rng.randint(0, 3))])
        keys = rng.sample(["k", "x", "y", "z"], rng.randint(0, 3))
        props = maybe([(k, rng.choice([rng.randint(0, 9), None])) for k in keys])
        addr = maybe({"city": rng.choice(["X", "Y", None]), "zip": maybe(rng.randint(1, 99))})
        out.append({"id": i, "tags": tags, "nums": nums, "props": props, "addr": addr})
    return out


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    rows = _rows(400, 11)
    path = tmp_path_factory.mktemp("nested") / "t.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=SCHEMA), path, row_group_size=97)
    return path, rows


@pytest.fixture(scope="module")
def s(data: tuple[Path, list[dict]]) -> sqlengine.Session:
    session = sqlengine.connect({"execution.runtime-mode": "batch"})
    session.execute(f"CREATE TABLE t ({DDL}) WITH ('connector' = 'filesystem', "
                    f"'path' = '{data[0]}', 'format' = 'parquet')")
    return session


def _sorted(rows: list) -> list:
    return sorted(rows, key=repr)


def test_access_against_duckdb(s: sqlengine.Session, data: tuple[Path, list[dict]]) -> None:
    duckdb = pytest.importorskip("duckdb")
    ours = s.sql("SELECT id, tags[1], tags[3], nums[2], CARDINALITY(tags), addr.city, "
                 "t.addr.zip, ARRAY_CONTAINS(tags, 'a') FROM t").collect()
    theirs = duckdb.sql(
        f"SELECT id, tags[1], tags[3], nums[2], len(tags), addr.city, addr.zip, "
        f"list_contains(tags, 'a') FROM '{data[0]}'").fetchall()
    got = [tuple(r.values()) for r in ours.to_pylist()]
    # (DuckDB's list_contains ignores NULL elements and says FALSE for NULL, as Flink)
    assert _sorted(got) == _sorted([tuple(r) for r in theirs])


def test_map_access_against_the_data(s: sqlengine.Session,
                                     data: tuple[Path, list[dict]]) -> None:
    got = s.sql("SELECT id, props['k'], CARDINALITY(props), props[CAST(id % 3 AS STRING)] "
                "FROM t").collect().to_pylist()
    want = []
    for r in data[1]:
        m = dict(r["props"]) if r["props"] is not None else None
        want.append((r["id"], m.get("k") if m else None, len(m) if m is not None else None,
                     m.get(str(r["id"] % 3)) if m else None))
    assert _sorted([tuple(r.values()) for r in got]) == _sorted(want)


@pytest.mark.parametrize("ordinality", [False, True])
def test_unnest_against_duckdb(s: sqlengine.Session, data: tuple[Path, list[dict]],
                               ordinality: bool) -> None:
    duckdb = pytest.importorskip("duckdb")
    ours_sql = ("SELECT id, x, pos FROM t CROSS JOIN UNNEST(nums) WITH ORDINALITY AS u(x, pos)"
                if ordinality else "SELECT id, x FROM t CROSS JOIN UNNEST(nums) AS u(x)")
    theirs_sql = (f"SELECT id, u.x, u.pos FROM '{data[0]}' t, unnest(t.nums) WITH ORDINALITY "
                  "AS u(x, pos)" if ordinality else
                  f"SELECT id, u.x FROM '{data[0]}' t, unnest(t.nums) AS u(x)")
    got = [tuple(r.values()) for r in s.sql(ours_sql).collect().to_pylist()]
    want = [tuple(r) for r in duckdb.sql(theirs_sql).fetchall()]
    assert len(got) > 100
    assert _sorted(got) == _sorted(want)


def test_left_join_unnest_keeps_rows_without_elements(s: sqlengine.Session,
                                                      data: tuple[Path, list[dict]]) -> None:
    got = s.sql("SELECT id, tag FROM t LEFT JOIN UNNEST(tags) AS u(tag) ON TRUE"
                ).collect().to_pylist()
    want = []
    for r in data[1]:
        want += [(r["id"], tag) for tag in r["tags"]] if r["tags"] else [(r["id"], None)]
    assert _sorted([tuple(r.values()) for r in got]) == _sorted(want)


def test_unnest_map_and_rows_then_aggregate(s: sqlengine.Session,
                                            data: tuple[Path, list[dict]]) -> None:
    got = s.sql("SELECT k, SUM(v) AS total, COUNT(*) AS n FROM t CROSS JOIN UNNEST(props) "
                "AS u(k, v) GROUP BY k").collect().to_pylist()
    want: dict[str, list] = {}
    for r in data[1]:
        for k, v in r["props"] or []:
            want.setdefault(k, []).append(v)
    assert {g["k"]: (g["total"], g["n"]) for g in got} == {
        k: (sum(x for x in vs if x is not None) if any(x is not None for x in vs) else None,
            len(vs)) for k, vs in want.items()}
    rows = s.sql("SELECT x, y FROM UNNEST(ARRAY[ROW(1, 'a'), ROW(2, 'b')]) AS u(x, y)"
                 ).collect().to_pylist()
    assert rows == [{"x": 1, "y": "a"}, {"x": 2, "y": "b"}]


@pytest.mark.parametrize("opts", [{"execution.runtime-mode": "streaming"},
                                  {"execution.runtime-mode": "batch",
                                   "parallelism.default": "2"}])
def test_unnest_streaming_and_parallel(data: tuple[Path, list[dict]], opts: dict) -> None:
    session = sqlengine.connect(opts)
    session.execute(f"CREATE TABLE t ({DDL}) WITH ('connector' = 'filesystem', "
                    f"'path' = '{data[0]}', 'format' = 'parquet')")
    got = session.sql("SELECT tag, COUNT(*) AS n FROM t CROSS JOIN UNNEST(tags) AS u(tag) "
                      "GROUP BY tag").collect().to_pylist()
    want: dict[object, int] = {}
    for r in data[1]:
        for tag in r["tags"] or []:
            want[tag] = want.get(tag, 0) + 1
    assert {g["tag"]: g["n"] for g in got} == want


def test_constructors_and_functions(s: sqlengine.Session) -> None:
    row = s.sql("SELECT ARRAY[1, 2, 3] AS a, ARRAY[1, 2][2] AS b, MAP['a', 1, 'b', 2] AS m, "
                "MAP['a', 1, 'a', 2]['a'] AS last, ROW(1, 'x') AS r, ELEMENT(ARRAY[5]) AS e, "
                "ELEMENT(ARRAY[CAST(NULL AS INT)]) AS en, SPLIT('a,b,,c', ',') AS sp, "
                "ARRAY[1, 2][3] AS out_of_range, ARRAY_CONTAINS(ARRAY[1, CAST(NULL AS INT)], "
                "CAST(NULL AS INT)) AS has_null").collect()
    got = row.to_pylist()[0]
    assert got["a"] == [1, 2, 3] and got["b"] == 2
    assert got["m"] == [("a", 1), ("b", 2)] and got["last"] == 2
    assert got["r"] == {"EXPR$0": 1, "EXPR$1": "x"}
    assert got["e"] == 5 and got["en"] is None
    assert got["sp"] == ["a", "b", "", "c"] and got["out_of_range"] is None
    assert got["has_null"] is True
    assert T.type_name(row.schema.field("a").type) == "ARRAY<INT>"
    assert T.type_name(row.schema.field("m").type) == "MAP<STRING, INT>"


def test_cast_to_string_as_flink_prints(s: sqlengine.Session) -> None:
    got = s.sql("SELECT CAST(ARRAY[1, 2] AS STRING) AS a, CAST(MAP['a', 1, 'b', "
                "CAST(NULL AS INT)] AS STRING) AS m, CAST(ROW(1, 'x', ARRAY['y']) AS STRING) "
                "AS r").collect().to_pylist()[0]
    assert got == {"a": "[1, 2]", "m": "{a=1, b=NULL}", "r": "(1, x, [y])"}


def test_types_round_trip_through_describe(s: sqlengine.Session) -> None:
    rows = s.execute("DESCRIBE t")[0].table.to_pylist()
    types = {r["name"]: r["type"] for r in rows}
    assert types["addr"] == "ROW<`city` STRING, `zip` INT>"
    for text in types.values():
        assert T.type_name(T.parse_type(text)) == text
    assert T.parse_type("INT ARRAY") == T.parse_type("ARRAY<INT>")
    assert T.parse_type("ROW(a INT, `b c` STRING NOT NULL)") == pa.struct(
        [pa.field("a", pa.int32()), pa.field("b c", pa.string(), nullable=False)])


def test_json_arrays_and_rows(tmp_path: Path) -> None:
    rows = [{"id": 1, "xs": [1, 2], "r": {"a": "p", "b": [1.5]}},
            {"id": 2, "xs": [], "r": None}, {"id": 3, "xs": None, "r": {"a": None, "b": []}}]
    path = tmp_path / "t.json"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    session = sqlengine.connect({"execution.runtime-mode": "batch"})
    session.execute(f"CREATE TABLE j (id INT, xs ARRAY<BIGINT>, r ROW<a STRING, b ARRAY<DOUBLE>>)"
                    f" WITH ('connector' = 'filesystem', 'path' = '{path}', 'format' = 'json')")
    got = session.sql("SELECT id, xs, r.a, r.b FROM j").collect().to_pylist()
    assert [tuple(g.values()) for g in got] == [
        (1, [1, 2], "p", [1.5]), (2, [], None, None), (3, None, None, [])]


@pytest.mark.parametrize(("ddl", "message"), [
    ("CREATE TABLE a (x ARRAY<INT>) WITH ('connector' = 'datagen')",
     "does not generate ARRAY<INT>"),
    ("CREATE TABLE b (x MAP<INT, INT>) WITH ('connector' = 'filesystem', 'path' = '/tmp', "
     "'format' = 'json')", "json format holds only ARRAY, ROW and MAP<STRING, ...>"),
    ("CREATE TABLE c (x ROW<a INT>) WITH ('connector' = 'filesystem', 'path' = '/tmp', "
     "'format' = 'csv')", "csv format cannot hold"),
    ("CREATE TABLE d (x MULTISET<INT>) WITH ('connector' = 'datagen')", "MULTISET"),
])
def test_refused_with_the_reason(ddl: str, message: str) -> None:
    session = sqlengine.connect()
    with pytest.raises(SqlEngineError) as e:
        session.execute(ddl)
    assert message in str(e.value)


@pytest.mark.parametrize("sql", [
    "SELECT id FROM t CROSS JOIN UNNEST(id) AS u(x)",
    "SELECT id FROM t CROSS JOIN UNNEST(tags, nums) AS u(x, y)",
    "SELECT id FROM t LEFT JOIN UNNEST(tags) AS u(x) ON x = 'a'",
    "SELECT id FROM t CROSS JOIN UNNEST(tags) AS u(x, y)",
    "SELECT tags.x FROM t",
    "SELECT addr.nope FROM t",
    "SELECT ELEMENT(ARRAY[1, 2])",
])
def test_bad_nested_sql(s: sqlengine.Session, sql: str) -> None:
    with pytest.raises(SqlEngineError) as e:
        s.sql(sql).collect()
    assert "bug in sqlengine" not in str(e.value)


def test_field_by_position_checks_its_arguments() -> None:
    """FIELD(row, i) (what r.f binds to) with a non-ROW or a position out of range is a
    BindError naming FIELD; the fuzzer found FIELD('x', 1e3) failing with an IndexError."""
    s = sqlengine.connect()
    assert s.sql("SELECT FIELD(ROW(1, 'a'), 1) AS v").collect().to_pylist() == [{"v": "a"}]
    for bad in ("FIELD('x', 1e3)", "FIELD(ROW(1, 'a'), 2)", "FIELD(ROW(1, 'a'), -1)"):
        with pytest.raises(BindError, match="FIELD expects a ROW"):
            s.sql(f"SELECT {bad} AS v")



def test_star_of_a_row_column_expands_its_fields() -> None:
    """``r.*`` and ``t.r.*`` of a ROW column (Flink's composite type expansion; it failed:
    "unknown table or alias 'r'"); a NULL row gives NULL fields."""
    s = sqlengine.connect()
    s.register("t", pa.table({"id": [1, 2], "r": pa.array(
        [{"a": 1, "b": "x"}, None], pa.struct([("a", pa.int32()), ("b", pa.string())]))}))
    got = s.sql("SELECT id, r.* FROM t").collect()
    assert got.schema.names == ["id", "a", "b"]
    assert got.to_pylist() == [{"id": 1, "a": 1, "b": "x"}, {"id": 2, "a": None, "b": None}]
    assert s.sql("SELECT t.r.* FROM t").collect().to_pylist() == [
        {"a": 1, "b": "x"}, {"a": None, "b": None}]
    assert s.sql("SELECT q.* FROM (SELECT ROW(1, 'x') AS q)").collect().to_pylist() == [
        {"EXPR$0": 1, "EXPR$1": "x"}]
    with pytest.raises(BindError, match="unknown table or alias 'id'"):
        s.sql("SELECT id.* FROM t").collect()
