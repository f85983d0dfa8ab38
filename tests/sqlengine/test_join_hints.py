"""Flink's join hints (they were refused): BROADCAST, SHUFFLE_HASH after SELECT choose the
strategy of the joins of their query block in batch mode, whatever the broadcast threshold
says; in streaming mode they are checked and take no effect. What PyFlink 2.3's EXPLAIN
shows for the same statements (checked by hand):

- batch: BROADCAST(t3) -> the t3 side broadcast, built on (also by its alias);
  SHUFFLE_HASH(t4) -> both sides hashed, built on t4; BROADCAST of a FULL join's side, or of
  a LEFT join's left side, is not taken (the next hint is); a name no join input has fails
  with "The options of following hints cannot match the name of input tables or views";
- streaming: the same hints accepted, the joins hashed as without them.

SHUFFLE_MERGE and NEST_LOOP (Flink's sort-merge and nested-loop joins) are refused in batch
mode: the joins here are hash joins."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

T1 = pa.table({"id": pa.array(range(300), pa.int32()), "a": [i % 7 for i in range(300)]})
T2 = pa.table({"id": pa.array(range(0, 600, 2), pa.int32()), "b": [i % 5 for i in range(300)]})
T3 = pa.table({"id": pa.array(range(0, 900, 3), pa.int32()), "c": [i % 3 for i in range(300)]})


def session(mode: str = "batch", parallelism: int = 2, **options: str) -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": mode,
                           "parallelism.default": str(parallelism), **options})
    for name, table in (("t1", T1), ("t2", T2), ("t3", T3)):
        s.register(name, table)
    return s


def job(s: sqlengine.Session, sql: str) -> str:
    return s.sql(sql).explain().split("== Job Graph ==")[1]


def rows(s: sqlengine.Session, sql: str) -> list[tuple]:
    return sorted((tuple(r.values()) for r in s.sql(sql).collect().to_pylist()), key=repr)


def duck(sql: str) -> list[tuple]:
    con = duckdb.connect()
    for name, table in (("t1", T1), ("t2", T2), ("t3", T3)):
        con.register(name, table)
    return sorted(con.sql(sql).fetchall(), key=repr)


JOIN = "SELECT {hint} t1.id, a, b FROM t1 {kind} JOIN t2 ON t1.id = t2.id"


@pytest.mark.parametrize(("hint", "kind", "shown", "broadcast"), [
    ("BROADCAST(t1)", "", "Join(inner, build=left, hint=BROADCAST(left))", True),
    ("BROADCAST(t2)", "LEFT", "Join(left, build=right, hint=BROADCAST(right))", True),
    ("SHUFFLE_HASH(t2)", "", "Join(inner, build=right, hint=SHUFFLE_HASH(right))", False),
    # (a FULL join's side cannot be broadcast: the next hint naming it is taken)
    ("BROADCAST(t1), SHUFFLE_HASH(t1)", "FULL",
     "Join(full, build=left, hint=SHUFFLE_HASH(left))", False),
    # (of one strategy's tables, the first naming an input)
    ("BROADCAST(t2, t1)", "", "Join(inner, build=right, hint=BROADCAST(right))", True),
])
def test_batch_mode_takes_the_hint(hint: str, kind: str, shown: str, broadcast: bool) -> None:
    # (broadcasting switched off: the hint broadcasts whatever the threshold says, as Flink)
    s = session(**{"table.optimizer.join.broadcast-threshold": "-1"})
    sql = JOIN.format(hint=f"/*+ {hint} */", kind=kind)
    graph = job(s, sql)
    assert shown in graph, graph
    assert ("--BROADCAST" in graph) == broadcast, graph
    assert rows(s, sql) == duck(JOIN.format(hint="", kind=kind))


def test_each_join_of_the_block_takes_the_input_it_names() -> None:
    s = session()
    sql = ("SELECT /*+ BROADCAST(x, t3) */ x.id, a, b, c FROM t1 AS x JOIN t2 ON x.id = t2.id "
           "JOIN t3 ON x.id = t3.id")
    graph = job(s, sql)
    assert "hint=BROADCAST(left)" in graph and "hint=BROADCAST(right)" in graph, graph
    assert rows(s, sql) == duck(sql.replace("/*+ BROADCAST(x, t3) */", ""))


def test_streaming_mode_checks_the_hint_and_takes_no_effect() -> None:
    s = session("streaming")
    for hint in ("BROADCAST(t1)", "SHUFFLE_HASH(t2)", "SHUFFLE_MERGE(t1)", "NEST_LOOP(t2)"):
        sql = JOIN.format(hint=f"/*+ {hint} */", kind="")
        graph = job(s, sql)
        assert "--BROADCAST" not in graph and "hint=" not in graph, graph
        assert rows(s, sql) == duck(JOIN.format(hint="", kind=""))


@pytest.mark.parametrize(("mode", "sql", "message"), [
    ("batch", JOIN.format(hint="/*+ BROADCAST(nope) */", kind=""),
     "The options of following hints cannot match the name of input tables or views: `nope` "
     "in `BROADCAST`"),
    ("streaming", "SELECT /*+ SHUFFLE_HASH(t1) */ * FROM t1",
     "cannot match the name of input tables or views: `t1` in `SHUFFLE_HASH`"),
    ("batch", JOIN.format(hint="/*+ SHUFFLE_MERGE(t1) */", kind=""),
     "the 'SHUFFLE_MERGE' hint asks for a sort-merge join, which is not implemented"),
    ("batch", JOIN.format(hint="/*+ NEST_LOOP(t2) */", kind=""),
     "the 'NEST_LOOP' hint asks for a nested-loop join"),
    ("batch", "SELECT * FROM t1 /*+ BROADCAST(t1) */",
     "a BROADCAST hint goes right after SELECT"),
    ("batch", "SELECT /*+ BROADCAST(t1 t2) */ * FROM t1 JOIN t2 ON t1.id = t2.id",
     "BROADCAST hint: expected the names of tables"),
])
def test_refused(mode: str, sql: str, message: str) -> None:
    with pytest.raises(SqlEngineError, match=message.replace("(", r"\(").replace(")", r"\)")):
        session(mode).sql(sql).collect()
