"""When a row is late, as Flink 2.3 decides it (runtime/watermark_emission.py).

Flink's SQL source emits its watermark eagerly once it has grown by more than
'pipeline.auto-watermark-interval' (200 ms by default) since the last one emitted; a row is
judged against the last watermark emitted before it. 'scan.watermark.emit.strategy' =
'on-event' (table option or OPTIONS hint) emits on every advance, as does an interval of 0.
On main every source acted on-event and 'on-periodic' was refused, so a row a few
milliseconds behind the one before it was dropped where Flink keeps it ("close" below).
A window TVF on its own keeps late rows, as Flink's (on main it dropped them).

Expected rows: tests/fixtures/flink/emit_strategy.json, from PyFlink 2.3 on the same files
(tests/fixtures/flink/gen_emit_strategy.py; Flink's filesystem source does not act on the
emit-strategy option, so on-event is compared with its interval-0 answer).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import ConnectorError

FLINK = json.loads((Path(__file__).parent.parent / "fixtures" / "flink" /
                    "emit_strategy.json").read_text())
INPUTS = {
    "far": [(1, 5000), (2, 9000), (3, 5000), (4, 12000)],
    "close": [(1, 5000), (2, 5150), (3, 5010), (4, 5300)],
}
QUERIES = {
    "agg": "SELECT window_start, COUNT(*) AS n, SUM(a) AS s FROM TUMBLE(TABLE t{hint}, "
           "DESCRIPTOR(ts), INTERVAL '0.1' SECOND) GROUP BY window_start, window_end",
    "bare": "SELECT a, window_start FROM TUMBLE(TABLE t{hint}, DESCRIPTOR(ts), "
            "INTERVAL '0.1' SECOND)",
}


def _ddl(path: Path, value: str | None) -> str:
    emit = f", 'scan.watermark.emit.strategy' = '{value}'" if value else ""
    return (f"CREATE TABLE t (a INT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts) WITH ("
            f"'connector' = 'filesystem', 'path' = '{path}', 'format' = 'csv'{emit})")


def _text(v: object) -> str:
    return str(v.replace(tzinfo=None)) if isinstance(v, dt.datetime) else str(v)


def _run(tmp_path: Path, data: str, query: str, value: str | None = None, hint: str = "",
         options: dict[str, str] | None = None) -> list[list[str]]:
    path = tmp_path / "t.csv"
    path.write_text("".join(f"{a},2024-01-01 00:00:{ms // 1000:02d}.{ms % 1000:03d}\n"
                            for a, ms in INPUTS[data]))
    s = sqlengine.connect({"execution.runtime-mode": "streaming", **(options or {})})
    s.execute(_ddl(path, value))
    rows = s.sql(QUERIES[query].format(hint=hint)).collect().to_pylist()
    return sorted([_text(v) for v in r.values()] for r in rows)


@pytest.mark.parametrize("query", sorted(QUERIES))
@pytest.mark.parametrize("data", sorted(INPUTS))
@pytest.mark.parametrize("value", [None, "on-periodic"])
def test_on_periodic_is_the_default_and_emits_as_flink(tmp_path: Path, data: str, query: str,
                                                       value: str | None) -> None:
    assert _run(tmp_path, data, query, value) == FLINK[f"{data}-{query}-default"]


@pytest.mark.parametrize("query", sorted(QUERIES))
@pytest.mark.parametrize("data", sorted(INPUTS))
def test_on_event_is_a_watermark_on_every_advance(tmp_path: Path, data: str,
                                                  query: str) -> None:
    expected = FLINK[f"{data}-{query}-interval-0"]
    assert _run(tmp_path, data, query, "on-event") == expected
    assert _run(tmp_path, data, query, options={"pipeline.auto-watermark-interval": "0"}) \
        == expected
    hint = " /*+ OPTIONS('scan.watermark.emit.strategy' = 'on-event') */"
    assert _run(tmp_path, data, query, hint=hint) == expected


def test_the_strategies_differ_on_close_rows(tmp_path: Path) -> None:
    # (so that the comparisons above tell them apart)
    assert FLINK["close-agg-default"] != FLINK["close-agg-interval-0"]


def test_an_options_hint_overrides_the_table_option(tmp_path: Path) -> None:
    hint = " /*+ OPTIONS('scan.watermark.emit.strategy' = 'on-periodic') */"
    assert _run(tmp_path, "close", "agg", "on-event", hint=hint) == FLINK["close-agg-default"]


def test_registered_batches_emit_at_their_end() -> None:
    """The wall-clock timer's stand-in: the watermark is emitted after each batch, so with
    batches [1, 2] and [3, 4] row 3 (close data) sees 5150 and is dropped."""
    base = dt.datetime(2024, 1, 1)
    rows = INPUTS["close"]
    t = pa.table({"a": pa.array([a for a, _ in rows], pa.int32()),
                  "ts": pa.array([base + dt.timedelta(milliseconds=ms) for _, ms in rows],
                                 pa.timestamp("ms"))})
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    query = QUERIES["agg"].format(hint="")
    for size, late in ((2, 1), (4, 0)):
        s.register("t", pa.Table.from_batches(t.to_batches(max_chunksize=size)), rowtime="ts",
                   watermark="ts")
        q = s.sql(query)
        q.collect()
        assert q.late_records_dropped == late


def test_other_values_are_refused_at_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConnectorError, match="takes 'on-event' or 'on-periodic'") as info:
        sqlengine.connect().execute(_ddl(tmp_path / "t.csv", "sometimes"))
    assert info.value.span is not None
