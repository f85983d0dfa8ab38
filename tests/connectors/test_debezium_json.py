"""The debezium-json format read as a changelog: the row kinds Flink emits for each event,
the final state of aggregations and of the table itself, schema-include, tombstones, bad
events, and what is refused (batch mode, writing, checkpoints)."""

from __future__ import annotations

import json
import random
from decimal import Decimal
from pathlib import Path

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

DDL = ("CREATE TABLE products (id INT, name STRING, weight DECIMAL(10, 2)) WITH ("
       "'connector' = 'filesystem', 'path' = '{path}', 'format' = 'debezium-json'{extra})")


def _events(n: int, seed: int) -> list[dict]:
    """Random create / update / delete events over a few keys, as Debezium writes them."""
    rng = random.Random(seed)
    live: dict[int, dict] = {}
    out = []
    for _ in range(n):
        key = rng.randint(1, 12)
        row = {"id": key, "name": rng.choice(["a", "b", "c"]),
               "weight": float(Decimal(rng.randint(1, 999)) / 100)}
        if key not in live:
            out.append({"before": None, "after": row, "op": rng.choice("cr")})
            live[key] = row
        elif rng.random() < 0.3:
            out.append({"before": live.pop(key), "after": None, "op": "d"})
        else:
            out.append({"before": live[key], "after": row, "op": "u"})
            live[key] = row
    return out


def _write(path: Path, events: list[dict], wrap: bool = False) -> None:
    lines = [json.dumps({"schema": {}, "payload": e} if wrap else e) for e in events]
    path.write_text("\n".join(lines) + "\n")


def _session(path: Path, extra: str = "") -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.execute(DDL.format(path=path, extra=extra))
    return s


@pytest.mark.parametrize("wrap", [False, True])
def test_final_state_and_aggregates(tmp_path: Path, wrap: bool) -> None:
    events = _events(300, 5)
    path = tmp_path / "p.json"
    _write(path, events, wrap)
    s = _session(path, ", 'debezium-json.schema-include' = 'true'" if wrap else "")
    live: dict[int, dict] = {}
    for e in events:
        if e["op"] == "d":
            del live[e["before"]["id"]]
        else:
            live[e["after"]["id"]] = e["after"]
    got = s.sql("SELECT id, name, weight FROM products").collect().to_pylist()
    assert sorted((r["id"], r["name"], r["weight"]) for r in got) == sorted(
        (r["id"], r["name"], Decimal(str(r["weight"])).quantize(Decimal("0.01")))
        for r in live.values())
    by_name = s.sql("SELECT name, COUNT(*) AS n, SUM(weight) AS w FROM products GROUP BY name"
                    ).collect().to_pylist()
    want: dict[str, list] = {}
    for r in live.values():
        want.setdefault(r["name"], []).append(Decimal(str(r["weight"])))
    assert {g["name"]: (g["n"], g["w"]) for g in by_name} == {
        k: (len(v), sum(v)) for k, v in want.items()}


def test_row_kinds_as_flink_emits_them(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "p.json"
    path.write_text("\n".join([
        '{"before": null, "after": {"id": 1, "name": "scooter", "weight": 3.14}, "op": "c"}',
        '{"before": null, "after": {"id": 2, "name": "battery", "weight": 8.1}, "op": "r"}',
        '{"before": {"id": 1, "name": "scooter", "weight": 3.14}, '
        '"after": {"id": 1, "name": "scooter", "weight": 5.18}, "op": "u"}',
        "null",
        '{"before": {"id": 2, "name": "battery", "weight": 8.1}, "after": null, "op": "d"}',
    ]) + "\n")
    s = _session(path)
    s.execute("CREATE TABLE out (id INT, name STRING, weight DECIMAL(10, 2)) "
              "WITH ('connector' = 'print')")
    capsys.readouterr()
    s.execute("INSERT INTO out SELECT * FROM products")
    assert capsys.readouterr().out.splitlines() == [
        "+I[1, scooter, 3.14]", "+I[2, battery, 8.10]", "-U[1, scooter, 3.14]",
        "+U[1, scooter, 5.18]", "-D[2, battery, 8.10]"]


@pytest.mark.parametrize(("line", "message"), [
    ('{"before": null, "after": {"id": 1}, "op": "x"}', "unknown Debezium operation 'x'"),
    ('{"before": null, "after": {"id": 1}, "op": "u"}', "'before' field of an UPDATE"),
    ('{"before": null, "after": {"id": "one"}, "op": "c"}', "p.json:2"),
])
def test_bad_events_are_named(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "p.json"
    path.write_text('{"before": null, "after": {"id": 7}, "op": "c"}\n' + line + "\n")
    s = _session(path)
    with pytest.raises(SqlEngineError, match=message):
        s.sql("SELECT * FROM products").collect()


def test_refused_with_the_reason(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    _write(path, _events(10, 1))
    b = sqlengine.connect({"execution.runtime-mode": "batch"})
    b.execute(DDL.format(path=path, extra=""))
    with pytest.raises(SqlEngineError, match="batch mode cannot consume"):
        b.sql("SELECT * FROM products").collect()
    s = _session(path)
    s.execute(f"CREATE TABLE w (id INT) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 'w'}', 'format' = 'debezium-json')")
    with pytest.raises(SqlEngineError, match="writing the debezium-json format"):
        s.execute("INSERT INTO w SELECT id FROM products")
    s.set("execution.checkpointing.interval", "1 s")
    s.set("execution.checkpointing.dir", str(tmp_path / "chk"))
    with pytest.raises(SqlEngineError, match="cannot resume reading from a checkpoint"):
        s.execute("CREATE TABLE o (id INT) WITH ('connector' = 'blackhole'); "
                  "INSERT INTO o SELECT id FROM products")
