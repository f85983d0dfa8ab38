"""The canal-json and maxwell-json formats read as changelogs: the row kinds Flink emits for
hand-written messages, the final table after the changelog (hand-worked, and for random
messages against a replay), the database / table filters, bad messages named by file:line,
ignore-parse-errors, and what is refused (batch mode, writing, checkpoints, options)."""

from __future__ import annotations

import datetime as dt
import json
import random
from decimal import Decimal
from pathlib import Path

import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

DDL = ("CREATE TABLE products (id INT, name STRING, weight DECIMAL(10, 2)) WITH ("
       "'connector' = 'filesystem', 'path' = '{path}', 'format' = '{fmt}'{extra})")

# Canal's messages as Canal writes them (every value a string; "old" holds only the changed
# fields' old values), from Flink's canal-json documentation's example, extended.
CANAL = [
    {"data": [{"id": "101", "name": "scooter", "weight": "3.14"},
              {"id": "102", "name": "car battery", "weight": "8.1"}],
     "database": "inventory", "es": 1589373515000, "id": 1, "isDdl": False,
     "mysqlType": {"id": "int(11)", "name": "varchar(255)", "weight": "decimal(10,2)"},
     "old": None, "pkNames": ["id"], "sql": "",
     "sqlType": {"id": 4, "name": 12, "weight": 3}, "table": "products",
     "ts": 1589373515477, "type": "INSERT"},
    {"data": [{"id": "103", "name": "hammer", "weight": "0.75"}], "database": "inventory",
     "table": "products", "isDdl": False, "old": None, "pkNames": ["id"], "type": "INSERT"},
    {"data": [{"id": "101", "name": "scooter", "weight": "5.18"},
              {"id": "103", "name": "big hammer", "weight": "0.75"}],
     "database": "inventory", "table": "products", "isDdl": False, "pkNames": ["id"],
     "old": [{"weight": "3.14"}, {"name": "hammer"}], "type": "UPDATE"},
    {"data": None, "database": "inventory", "table": "products", "isDdl": True,
     "sql": "CREATE TABLE products2 (id INT)", "type": "CREATE"},
    {"data": [{"id": "102", "name": "car battery", "weight": "8.1"}],
     "database": "inventory", "table": "products", "isDdl": False, "old": None,
     "pkNames": ["id"], "type": "DELETE"},
]
CANAL_KINDS = [
    "+I[101, scooter, 3.14]", "+I[102, car battery, 8.10]", "+I[103, hammer, 0.75]",
    "-U[101, scooter, 3.14]", "+U[101, scooter, 5.18]",
    "-U[103, hammer, 0.75]", "+U[103, big hammer, 0.75]",
    "-D[102, car battery, 8.10]"]
CANAL_FINAL = [(101, "scooter", Decimal("5.18")), (103, "big hammer", Decimal("0.75"))]

# Maxwell's messages (numbers as JSON numbers; "old" names the changed fields, a null there
# is the field's old value).
MAXWELL = [
    {"database": "test", "table": "products", "type": "insert", "ts": 1477053217,
     "xid": 23396, "commit": True, "data": {"id": 111, "name": "scooter", "weight": 5.18}},
    {"database": "test", "table": "products", "type": "insert", "ts": 1477053218,
     "data": {"id": 112, "name": None, "weight": 1}},
    {"database": "test", "table": "products", "type": "update", "ts": 1477053219,
     "data": {"id": 111, "name": "scooter", "weight": 5.17}, "old": {"weight": 5.18}},
    {"database": "test", "table": "products", "type": "update", "ts": 1477053220,
     "data": {"id": 112, "name": "pen", "weight": 1}, "old": {"name": None}},
    {"database": "test", "table": "products", "type": "insert", "ts": 1477053221,
     "data": {"id": 113, "name": "ink", "weight": "0.5"}},
    {"database": "test", "table": "products", "type": "delete", "ts": 1477053222,
     "data": {"id": 111, "name": "scooter", "weight": 5.17}},
]
MAXWELL_KINDS = [
    "+I[111, scooter, 5.18]", "+I[112, null, 1.00]",
    "-U[111, scooter, 5.18]", "+U[111, scooter, 5.17]",
    "-U[112, null, 1.00]", "+U[112, pen, 1.00]",
    "+I[113, ink, 0.50]", "-D[111, scooter, 5.17]"]
MAXWELL_FINAL = [(112, "pen", Decimal("1.00")), (113, "ink", Decimal("0.50"))]

CASES = {"canal-json": (CANAL, CANAL_KINDS, CANAL_FINAL),
         "maxwell-json": (MAXWELL, MAXWELL_KINDS, MAXWELL_FINAL)}


def _write(path: Path, messages: list[dict]) -> Path:
    path.write_text("".join(json.dumps(m) + "\n" for m in messages))
    return path


def _session(path: Path, fmt: str, extra: str = "", mode: str = "streaming"
             ) -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": mode})
    s.execute(DDL.format(path=path, fmt=fmt, extra=extra))
    return s


def _rows(s: sqlengine.Session, sql: str = "SELECT id, name, weight FROM products"
          ) -> list[tuple]:
    return sorted((r["id"], r["name"], r["weight"]) for r in s.sql(sql).collect().to_pylist())


@pytest.mark.parametrize("fmt", list(CASES))
def test_row_kinds_as_flink_emits_them(tmp_path: Path, fmt: str,
                                       capsys: pytest.CaptureFixture) -> None:
    messages, kinds, _ = CASES[fmt]
    s = _session(_write(tmp_path / "m.json", messages), fmt)
    s.execute("CREATE TABLE out (id INT, name STRING, weight DECIMAL(10, 2)) "
              "WITH ('connector' = 'print')")
    capsys.readouterr()
    s.execute("INSERT INTO out SELECT * FROM products")
    assert capsys.readouterr().out.splitlines() == kinds


@pytest.mark.parametrize("fmt", list(CASES))
def test_final_table_streaming_and_batch(tmp_path: Path, fmt: str) -> None:
    """Streaming: the table after the changelog, and an aggregate over it (hand-worked).
    Batch: refused as Flink refuses a changelog source in batch mode."""
    messages, _, final = CASES[fmt]
    path = _write(tmp_path / "m.json", messages)
    s = _session(path, fmt)
    assert _rows(s) == final
    agg = s.sql("SELECT COUNT(*) AS n, SUM(weight) AS w FROM products").collect().to_pylist()
    assert agg == [{"n": len(final), "w": sum(w for _, _, w in final)}]
    b = _session(path, fmt, mode="batch")
    with pytest.raises(SqlEngineError, match="batch mode cannot consume"):
        b.sql("SELECT * FROM products").collect()


def _canal_events(n: int, seed: int) -> list[dict]:
    """Random Canal messages of one to three rows each, over a few keys (a name may be
    null: "old" then lists it as null, which is the old value, not an unchanged field)."""
    rng = random.Random(seed)
    live: dict[int, dict] = {}
    out: list[dict] = []
    for _ in range(n):
        keys = rng.sample(range(1, 15), rng.randint(1, 3))
        fresh = [k for k in keys if k not in live]
        known = [k for k in keys if k in live]
        if fresh:
            rows = [{"id": str(k), "name": rng.choice(["a", "b", "c", None]),
                     "weight": str(Decimal(rng.randint(1, 999)) / 100)} for k in fresh]
            out.append({"data": rows, "old": None, "type": "INSERT", "database": "db",
                        "table": "products"})
            live.update({int(r["id"]): r for r in rows})
        if not known:
            continue
        if rng.random() < 0.3:
            out.append({"data": [live.pop(k) for k in known], "old": None,
                        "type": "DELETE", "database": "db", "table": "products"})
            continue
        data, old = [], []
        for k in known:
            row = dict(live[k])
            changed = {}
            for col in rng.sample(["name", "weight"], rng.randint(1, 2)):
                changed[col] = row[col]
                row[col] = rng.choice(["a", "b", "c", None]) if col == "name" else \
                    str(Decimal(rng.randint(1, 999)) / 100)
            data.append(row)
            old.append(changed)
            live[k] = row
        out.append({"data": data, "old": old, "type": "UPDATE", "database": "db",
                    "table": "products"})
    return out


def _maxwell_events(n: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    live: dict[int, dict] = {}
    out: list[dict] = []
    for _ in range(n):
        key = rng.randint(1, 12)
        if key not in live:
            row = {"id": key, "name": rng.choice(["a", "b", None]),
                   "weight": rng.randint(1, 999) / 100}
            out.append({"database": "db", "table": "products", "type": "insert", "data": row})
            live[key] = row
        elif rng.random() < 0.3:
            out.append({"database": "db", "table": "products", "type": "delete",
                        "data": live.pop(key)})
        else:
            row = dict(live[key])
            old = {}
            for col in rng.sample(["name", "weight"], rng.randint(1, 2)):
                old[col] = row[col]
                row[col] = rng.choice(["a", "b", None]) if col == "name" else \
                    rng.randint(1, 999) / 100
            out.append({"database": "db", "table": "products", "type": "update",
                        "data": row, "old": old})
            live[key] = row
    return out


def _replay(messages: list[dict], fmt: str) -> list[tuple]:
    """The final table, replaying the messages as plain Python."""
    live: dict[int, dict] = {}
    for m in messages:
        rows = m["data"] if fmt == "canal-json" else [m["data"]]
        for r in rows:
            key = int(r["id"])
            if m["type"].upper() == "DELETE":
                del live[key]
            else:
                live[key] = r
    return sorted((int(r["id"]), r["name"],
                   Decimal(str(r["weight"])).quantize(Decimal("0.01")))
                  for r in live.values())


@pytest.mark.parametrize("fmt", list(CASES))
def test_random_messages_final_state(tmp_path: Path, fmt: str) -> None:
    messages = _canal_events(200, 3) if fmt == "canal-json" else _maxwell_events(300, 4)
    s = _session(_write(tmp_path / "m.json", messages), fmt)
    assert _rows(s) == _replay(messages, fmt)
    # -U carries the old row: an aggregate retracts exactly what it counted.
    by_name = s.sql("SELECT name, COUNT(*) AS n FROM products GROUP BY name"
                    ).collect().to_pylist()
    want: dict[object, int] = {}
    for _, name, _ in _replay(messages, fmt):
        want[name] = want.get(name, 0) + 1
    assert {g["name"]: g["n"] for g in by_name} == want


def test_canal_database_and_table_include(tmp_path: Path) -> None:
    other = [{"data": [{"id": "900", "name": "elsewhere", "weight": "1"}],
              "database": "inventory", "table": "orders", "type": "INSERT"},
             {"data": [{"id": "901", "name": "other db", "weight": "2"}],
              "database": "staging", "table": "products", "type": "INSERT"}]
    path = _write(tmp_path / "m.json", CANAL + other)
    s = _session(path, "canal-json", ", 'canal-json.database.include' = 'inv.*', "
                 "'canal-json.table.include' = 'products'")
    assert _rows(s) == CANAL_FINAL
    s = _session(path, "canal-json", ", 'canal-json.database.include' = 'inventory'")
    assert _rows(s) == sorted([*CANAL_FINAL, (900, "elsewhere", Decimal("1.00"))])
    # (a full match, as Java's Pattern.matches: 'inv' does not match 'inventory')
    s = _session(path, "canal-json", ", 'canal-json.database.include' = 'inv'")
    assert _rows(s) == []


@pytest.mark.parametrize(("fmt", "line", "message"), [
    ("canal-json", '{"data": [{"id": "1"}], "type": "ALTER"}',
     r"m.json:2: cannot read the canal-json message .*unknown Canal \"type\" 'ALTER'"),
    ("canal-json", '{"data": [{"id": "1"}], "old": [], "type": "UPDATE"}',
     "m.json:2: .*an UPDATE with 1 rows in \"data\" and 0 in \"old\""),
    ("canal-json", '{"data": [{"id": "1"}, {"id": "abc"}], "type": "INSERT"}',
     "m.json:2: cannot parse row .*column 'id': 'abc' is not a valid INT"),
    ("canal-json", '{"data": [{"id": "1"}], "type": "INSERT"', "m.json:2: .*Expecting"),
    ("maxwell-json", '{"data": {"id": 1}, "type": "bootstrap-insert"}',
     "m.json:2: .*unknown Maxwell \"type\" 'bootstrap-insert'"),
    ("maxwell-json", '{"data": {"id": 1}, "type": "update"}',
     "m.json:2: .*'old' is not a row"),
    ("maxwell-json", '{"data": {"id": 1, "weight": "heavy"}, "type": "insert"}',
     "m.json:2: cannot parse row .*column 'weight': 'heavy' is not a valid DECIMAL"),
])
def test_bad_messages_are_named(tmp_path: Path, fmt: str, line: str, message: str) -> None:
    first = CASES[fmt][0][0]
    path = tmp_path / "m.json"
    path.write_text(json.dumps(first) + "\n" + line + "\n")
    s = _session(path, fmt)
    with pytest.raises(SqlEngineError, match=message):
        s.sql("SELECT * FROM products").collect()


@pytest.mark.parametrize("fmt", list(CASES))
def test_ignore_parse_errors_nulls_bad_values_and_skips_bad_messages(tmp_path: Path,
                                                                     fmt: str) -> None:
    """A value that does not convert is NULL and its message kept; a message that is no
    JSON or of an unknown type is skipped (PyFlink 2.3's rows for canal-json and
    maxwell-json with such values: '"id": "x"' gives a row with a NULL id)."""
    messages, _, final = CASES[fmt]
    if fmt == "canal-json":
        bad = ['{"data": [{"id": "7", "name": "ok"}, {"id": "x"}], "type": "INSERT"}',
               '{"data": [{"id": "8"}], "type": "TRUNCATE"}', "not json"]
        kept = [(7, "ok", None), (None, None, None)]
    else:
        bad = ['{"data": {"id": "x"}, "type": "insert"}',
               '{"data": {"id": 8}, "type": "table-create"}', "[1, 2]"]
        kept = [(None, None, None)]
    path = tmp_path / "m.json"
    path.write_text("\n".join([*bad, *(json.dumps(m) for m in messages)]) + "\n")
    s = _session(path, fmt, f", '{fmt}.ignore-parse-errors' = 'true'")
    got = [(r["id"], r["name"], r["weight"]) for r in
           s.sql("SELECT id, name, weight FROM products").collect().to_pylist()]
    assert sorted(got, key=repr) == sorted([*final, *kept], key=repr)


@pytest.mark.parametrize("fmt", list(CASES))
def test_refused_with_the_reason(tmp_path: Path, fmt: str) -> None:
    path = _write(tmp_path / "m.json", CASES[fmt][0])
    s = _session(path, fmt)
    s.execute(f"CREATE TABLE w (id INT) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 'w'}', 'format' = '{fmt}')")
    with pytest.raises(SqlEngineError, match=f"writing the {fmt} format is not supported"):
        s.execute("INSERT INTO w SELECT id FROM products")
    s.set("execution.checkpointing.interval", "1 s")
    s.set("execution.checkpointing.dir", str(tmp_path / "chk"))
    with pytest.raises(SqlEngineError, match=f"a {fmt} table cannot resume reading from a "
                       "checkpoint"):
        s.execute("CREATE TABLE o (id INT) WITH ('connector' = 'blackhole'); "
                  "INSERT INTO o SELECT id FROM products")


@pytest.mark.parametrize(("fmt", "extra", "message"), [
    ("canal-json", ", 'canal-json.schema-include' = 'true'",
     "unsupported option 'canal-json.schema-include'"),
    ("maxwell-json", ", 'maxwell-json.database.include' = 'x'",
     "unsupported option 'maxwell-json.database.include'"),
    ("maxwell-json", ", 'canal-json.database.include' = 'x'",
     "'canal-json.database.include' is an option of the canal-json format"),
    ("canal-json", ", 'debezium-json.schema-include' = 'true'",
     "'debezium-json.schema-include' is an option of the debezium-json format"),
    ("canal-json", ", 'canal-json.table.include' = '(unclosed'",
     "'canal-json.table.include': '\\(unclosed' is not a regular expression"),
    ("canal-json", ", 'canal-json.timestamp-format.standard' = 'iso-8601'",
     "'canal-json.timestamp-format.standard' must be one of 'SQL', 'ISO-8601'"),
    ("canal-json", ", 'canal-json.map-null-key.mode' = 'DROP'",
     "'canal-json.map-null-key.mode' is not implemented"),
    ("maxwell-json", ", 'maxwell-json.ignore-parse-errors' = 'maybe'",
     "must be 'true' or 'false'"),
])
def test_options_refused_by_name(tmp_path: Path, fmt: str, extra: str, message: str) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    with pytest.raises(SqlEngineError, match=message):
        s.execute(DDL.format(path=tmp_path / "m.json", fmt=fmt, extra=extra))


def test_nested_columns_refused(tmp_path: Path) -> None:
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    with pytest.raises(SqlEngineError, match="the canal-json format reads a database's "
                       "columns: no ARRAY<INT>"):
        s.execute(f"CREATE TABLE t (a ARRAY<INT>) WITH ('connector' = 'filesystem', "
                  f"'path' = '{tmp_path}', 'format' = 'canal-json')")


def test_canal_bytes_and_timestamps(tmp_path: Path) -> None:
    """Canal's string values for TIMESTAMP, BOOLEAN and base64 BYTES columns, and numbers
    written as JSON numbers (Flink's JSON reader takes either)."""
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"data": [
        {"id": 1, "ok": "true", "at": "2020-05-13 12:38:35.123", "raw": "AQI="},
        {"id": "2", "ok": False, "at": None, "raw": None}], "type": "INSERT"}) + "\n")
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.execute(f"CREATE TABLE t (id INT, ok BOOLEAN, at TIMESTAMP(3), raw BYTES) WITH ("
              f"'connector' = 'filesystem', 'path' = '{path}', 'format' = 'canal-json')")
    import datetime as dt

    got = sorted(s.sql("SELECT * FROM t").collect().to_pylist(), key=lambda r: r["id"])
    assert got == [{"id": 1, "ok": True, "at": dt.datetime(2020, 5, 13, 12, 38, 35, 123000),
                    "raw": b"\x01\x02"},
                   {"id": 2, "ok": False, "at": None, "raw": None}]


# A value of each kind that does not convert, as PyFlink 2.3 reads it under
# '<format>.ignore-parse-errors': NULL in a row that is kept; a BOOLEAN is Java's
# parseBoolean (1, "1" and "yes" are FALSE), an INT a whole number ("12.5" is NULL).
BAD_VALUES = {
    "debezium-json": (
        ['{"before": null, "after": {"id": 1, "d": "2023-01-02", "n": 5, "b": true}, "op": "c"}',
         '{"before": null, "after": {"id": 2, "d": "2023-13-45", "n": "x", "b": "yes"}, '
         '"op": "c"}',
         '{"before": null, "after": {"id": 3, "d": "2023-1-2", "n": 7, "b": 1}, "op": "c"}',
         '{"before": {"id": 1, "d": "2023-01-02", "n": 5, "b": true}, "after": {"id": 1, '
         '"d": "2023-01-03", "n": "12.5", "b": false}, "op": "u"}'],
        [(1, dt.date(2023, 1, 3), None, False), (2, None, None, False), (3, None, 7, False)]),
    "canal-json": (
        ['{"data": [{"id": "1", "d": "2023-01-02", "n": "5", "b": "true"}, {"id": "2", '
         '"d": "2023-13-45", "n": "x", "b": "1"}], "type": "INSERT"}',
         '{"data": [{"id": "3", "d": "2023-1-2", "n": "12.5", "b": "yes"}], "type": "INSERT"}'],
        [(1, dt.date(2023, 1, 2), 5, True), (2, None, None, False), (3, None, None, False)]),
}


@pytest.mark.parametrize("fmt", list(BAD_VALUES))
def test_a_bad_value_is_null_in_a_kept_row_as_flinks(tmp_path: Path, fmt: str) -> None:
    lines, want = BAD_VALUES[fmt]
    path = tmp_path / "v.json"
    path.write_text("\n".join(lines) + "\n")
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.execute(f"CREATE TABLE v (id INT, d DATE, n INT, b BOOLEAN) WITH ('connector' = "
              f"'filesystem', 'path' = '{path}', 'format' = '{fmt}', "
              f"'{fmt}.ignore-parse-errors' = 'true')")
    got = [tuple(r.values()) for r in s.sql("SELECT * FROM v").collect().to_pylist()]
    assert sorted(got, key=repr) == sorted(want, key=repr)
