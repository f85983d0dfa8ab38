"""SET / -D / connect(): every key accepted is one the engine reads; any other is refused,
naming the key and why (never accepted and ignored). Connector WITH options likewise."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

import sqlengine
from sqlengine.errors import ConnectorError, PlanError
from sqlengine.options import SESSION_OPTIONS
from sqlengine.shell.cli import main
from sqlengine.shell.completion_engine import SET_KEYS

ROOT = Path(__file__).resolve().parents[2]


def _sources() -> str:
    texts = []
    for folder in ("sqlengine", "optimizer", "runtime", "shell"):
        for path in (ROOT / folder).rglob("*.py"):
            if path.name != "options.py":
                texts.append(path.read_text())
    return "\n".join(texts)


def test_every_session_option_is_read_somewhere() -> None:
    sources = _sources()
    unread = [k for k in SESSION_OPTIONS if f'"{k}"' not in sources]
    assert unread == []


def test_completion_offers_exactly_the_keys_set_takes() -> None:
    assert sorted(SET_KEYS) == sorted(SESSION_OPTIONS)


@pytest.mark.parametrize(("key", "why"), [
    ("execution.checkpointing.unaligned.enabled", "this checkpointing option is not "
                                                  "implemented"),
    ("execution.checkpointing.min-pause", "this checkpointing option is not implemented"),
    ("execution.state-recovery.claim-mode", "only 'execution.state-recovery.path' is "
                                            "implemented"),
    ("state.checkpoints.dir", "Flink 1.x's checkpoint keys are not implemented"),
    ("state.savepoints.dir", "savepoints are not implemented yet"),
    ("execution.savepoint.path", "savepoints are not implemented yet"),
    ("state.backend.type", "state backends are not implemented yet"),
    ("state.backend", "state backends are not implemented yet"),
    ("table.exec.emit.early-fire.enabled", "early firing of windows is not implemented yet"),
    ("table.exec.emit.early-fire.delay", "early firing of windows is not implemented yet"),
    ("table.exec.mini-batch.enabled", "mini-batch options are not implemented"),
    ("restart-strategy.failure-rate.delay", "only 'fixed-delay' is implemented"),
])
def test_unimplemented_flink_options_are_refused_with_the_reason(key: str, why: str) -> None:
    s = sqlengine.connect()
    with pytest.raises(PlanError) as info:
        s.execute(f"SET '{key}' = 'true'")
    assert f"{why}" in info.value.message
    assert f"{key!r} would be ignored" in info.value.message
    assert (info.value.span.line, info.value.span.column) == (1, 6)  # at the key
    assert key not in s.options


def test_an_unknown_key_is_refused_with_a_suggestion() -> None:
    with pytest.raises(PlanError, match=r"unknown option 'paralelism\.default': sqlengine does "
                                        r"not implement it, so it would be ignored \(did you "
                                        r"mean 'parallelism\.default'\?\)"):
        sqlengine.connect({"paralelism.default": "2"})
    with pytest.raises(PlanError, match=r"unknown option 'sql-client\.display\.max-column-"):
        sqlengine.connect().set("sql-client.display.max-column-width", "10")


def test_reset_of_an_unknown_key_is_refused_and_of_a_known_one_works() -> None:
    s = sqlengine.connect({"parallelism.default": "3"})
    with pytest.raises(PlanError, match="unknown option 'nope'"):
        s.execute("RESET 'nope'")
    s.execute("RESET 'parallelism.default'")
    assert "parallelism.default" not in s.options


def test_values_are_checked_when_set() -> None:
    s = sqlengine.connect()
    cases = {
        "table.exec.state.ttl": ("1 h", "soon", "must be a duration"),
        "table.optimizer.join.broadcast-threshold": ("1 mb", "big", "must be a size"),
        "table.optimizer.agg-phase-strategy": ("two_phase", "THREE_PHASE", "must be one of"),
        "execution.slot-sharing": ("PER_REGION", "SOME", "must be one of"),
        "execution.batch-shuffle-mode": ("ALL_EXCHANGES_PIPELINED", "X", "must be one of"),
        "taskmanager.network.memory.buffers-per-channel": ("4", "0", "positive integer"),
        "execution.exchange.batch-rows": ("0", "-1", "an integer of at least 0"),
        "table.exec.range-sort.enabled": ("false", "no", "'true' or 'false'"),
        "io.tmp.dirs": ("/tmp", "/a,/b", "takes one directory"),
        "table.sql-dialect": ("default", "hive", "the Hive dialect is not supported"),
        "pipeline.name": ("nightly load", None, None),
    }
    for key, (good, bad, message) in cases.items():
        s.set(key, good)
        assert s.options[key] == good
        if bad is None:
            continue
        with pytest.raises(PlanError, match=re.escape(key) + ".*" + re.escape(message)):
            s.set(key, bad)


def test_disabled_rules_must_name_rules_or_passes() -> None:
    s = sqlengine.connect()
    s.set("table.optimizer.disabled-rules", "fold_constants, join_strategy")
    with pytest.raises(PlanError, match=r"no rule or pass 'fold_constant' \(known: "):
        s.set("table.optimizer.disabled-rules", "fold_constant")
    with pytest.raises(PlanError, match=r"rule 'decorrelate' cannot be disabled"):
        s.set("table.optimizer.disabled-rules", "decorrelate")


def test_implemented_options_still_take_effect() -> None:
    # A few of the keys SET keeps, each observed doing what it says.
    s = sqlengine.connect({"execution.runtime-mode": "batch", "parallelism.default": "2",
                           "pipeline.operator-chaining": "false"})
    s.execute("CREATE TABLE g (k INT, v INT) WITH ('connector' = 'datagen', "
              "'number-of-rows' = '100', 'fields.k.min' = '1', 'fields.k.max' = '3')")
    plan = s.sql("SELECT k, COUNT(*) AS n FROM g GROUP BY k").explain()
    assert "[parallelism=2]: GlobalAggregate" in plan
    assert "--FORWARD--> " in plan  # (with chaining, a forward edge is inside a chain)
    q = s.sql("SELECT k, COUNT(*) AS n FROM g GROUP BY k")
    assert sum(q.collect().column("n").to_pylist()) == 100
    s.set("spark.master", "local[1]")  # handed to Spark as it is
    assert s.options["spark.master"] == "local[1]"


def test_the_cli_refuses_an_unknown_key_in_d_and_in_a_script(tmp_path: Path) -> None:
    script = tmp_path / "s.sql"
    script.write_text("SELECT 1 AS one;\nSET 'execution.checkpointing.unaligned.enabled' = "
                      "'true';\nSELECT 2 AS two;\n")
    result = CliRunner().invoke(main, ["run", str(script), "--format", "csv"])
    assert result.exit_code == 1 and result.stdout == "one\n1\n"
    assert (f"{script}:2:6: this checkpointing option is not implemented (implemented: "
            "interval, dir, mode, timeout, num-retained, savepoint-dir); "
            "'execution.checkpointing.unaligned.enabled' would be ignored") in result.stderr
    bad = CliRunner().invoke(main, ["run", str(script), "-D", "state.backend.type=rocksdb"])
    assert bad.exit_code == 2
    assert "state backends are not implemented yet" in bad.stderr


@pytest.mark.parametrize(("options", "message"), [
    ("'connector' = 'filesystem', 'path' = '/tmp/x', 'format' = 'csv', "
     "'csv.write-bom' = 'true'", "option 'csv.write-bom' is not implemented yet"),
    ("'connector' = 'filesystem', 'path' = '/tmp/x', 'format' = 'json', "
     "'json.timestamp-format.standard' = 'ISO'",
     "option 'json.timestamp-format.standard' must be one of 'SQL', 'ISO-8601', got 'ISO'"),
    ("'connector' = 'filesystem', 'path' = '/tmp/x', 'format' = 'csv', "
     "'partition.default-name' = 'x'", "'partition.default-name' takes effect only on a table "
     "with PARTITIONED BY"),
    ("'connector' = 'datagen', 'fields.s.min' = '1'",
     "option 'fields.s.min' would be ignored: a random column of type STRING takes "
     "'fields.s.kind', 'fields.s.length', 'fields.s.null-rate'"),
    ("'connector' = 'datagen', 'fields.k.start' = '1'", "option 'fields.k.start' would be "
     "ignored: a random column of type INT takes"),
    ("'connector' = 'datagen', 'fields.k.kind' = 'sequence', 'fields.k.start' = '1', "
     "'fields.k.end' = '9', 'fields.k.max' = '5'", "option 'fields.k.max' would be ignored: "
     "a sequence column"),
    ("'connector' = 'datagen', 'fields.k.seed' = '1'",
     "option 'fields.k.seed' is not implemented"),
    ("'connector' = 'datagen', 'fields.k.length' = '4'", "option 'fields.k.length' would be "
     "ignored"),
    ("'connector' = 'datagen', 'fields.s.max-past' = '4'", "option 'fields.s.max-past' would be "
     "ignored"),
    ("'connector' = 'datagen', 'rows-per-sec' = '4'", "unsupported option 'rows-per-sec'"),
])
def test_connector_options_that_would_be_ignored_are_refused(options: str, message: str
                                                              ) -> None:
    s = sqlengine.connect()
    with pytest.raises(ConnectorError) as info:
        s.execute(f"CREATE TABLE t (k INT, s STRING) WITH ({options})")
    assert message in info.value.message
    assert info.value.span is not None  # located at the key


def test_connector_options_each_column_uses_are_kept() -> None:
    s = sqlengine.connect()
    s.execute("CREATE TABLE t (k INT, s STRING, ts TIMESTAMP(3), b BOOLEAN, q BIGINT) WITH ("
              "'connector' = 'datagen', 'number-of-rows' = '20', 'seed' = '1', "
              "'fields.k.min' = '5', 'fields.k.max' = '6', 'fields.s.length' = '3', "
              "'fields.ts.max-past' = '1000', 'fields.b.null-rate' = '1', "
              "'fields.q.kind' = 'sequence', 'fields.q.start' = '1', 'fields.q.end' = '20')")
    t = s.sql("SELECT k, s, b, q FROM t").collect()
    assert set(t.column("k").to_pylist()) <= {5, 6}
    assert {len(v) for v in t.column("s").to_pylist()} == {3}
    assert t.column("b").null_count == 20
    assert sorted(t.column("q").to_pylist()) == list(range(1, 21))
