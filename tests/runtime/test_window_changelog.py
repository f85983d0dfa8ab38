"""Window aggregation over a changelog, and SESSION windows' partitions, against PyFlink 2.3.

Flink (since 1.19) runs TUMBLE / HOP / CUMULATE / SESSION aggregations over an updating input
such as a CDC table: a retraction leaves the window of its row's time, a window all of whose
rows were retracted is not emitted, the result stays insert-only; MIN / MAX and the DISTINCT
aggregates keep each window's values with a count each (Flink's MinWithRetract map). On main
such queries were refused ("window table functions need an insert-only input").

SESSION windows are formed per the TVF's PARTITION BY (all rows in one without it), from every
row of the TVF's input; the aggregate then groups the windowed rows. On main the sessions were
formed per the GROUP BY keys instead and from the rows left by a WHERE: a query partitioned by
k but grouped by the window only merged all keys' rows into one session (1 row for Flink's 15).

tests/fixtures/flink/window_changelog.json holds PyFlink 2.3's rows for the same files
(tests/fixtures/flink/gen_window_changelog.py writes it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import sqlengine
from sqlengine.errors import NotSupportedError, PlanError
from tests.fixtures.flink.window_changelog_cases import (
    CHANGELOG,
    CHANGES_DDL,
    INSERTS_DDL,
    ODD_HOPS,
    SESSIONS,
    text,
    write,
)

_FIXTURE = Path(__file__).parent.parent / "fixtures" / "flink" / "window_changelog.json"


def _session(tmp_path: Path, parallelism: int) -> sqlengine.Session:
    chg, ins = write(tmp_path)
    s = sqlengine.connect({"execution.runtime-mode": "streaming",
                           "parallelism.default": str(parallelism)})
    s.execute(CHANGES_DDL.format(path=chg))
    s.execute(INSERTS_DDL.format(path=ins))
    return s


def _rows(s: sqlengine.Session, query: str) -> list[list[object]]:
    return sorted(([text(v) for v in r.values()] for r in s.sql(query).collect().to_pylist()),
                  key=repr)


@pytest.mark.parametrize("parallelism", [1, 2])
def test_window_aggregation_over_a_changelog_as_flink(tmp_path: Path, parallelism: int) -> None:
    flink = json.loads(_FIXTURE.read_text())
    s = _session(tmp_path, parallelism)
    for name, query in CHANGELOG.items():
        assert _rows(s, query) == flink[name], name


@pytest.mark.parametrize("parallelism", [1, 2])
def test_sessions_per_partition_from_every_row_as_flink(tmp_path: Path, parallelism: int
                                                        ) -> None:
    flink = json.loads(_FIXTURE.read_text())
    s = _session(tmp_path, parallelism)
    for name, query in SESSIONS.items():
        assert _rows(s, query) == flink[name], name


@pytest.mark.parametrize("parallelism", [1, 2])
def test_hop_windows_of_any_size_as_flink(tmp_path: Path, parallelism: int) -> None:
    """A HOP whose size is not a whole multiple of its slide, on its own, under a window
    Top-N and a window join (main refused it in the binder); a window aggregation refuses
    it, as Flink's does."""
    flink = json.loads(_FIXTURE.read_text())
    s = _session(tmp_path, parallelism)
    for name, query in ODD_HOPS.items():
        assert _rows(s, query) == flink[name], name
    with pytest.raises(PlanError, match=r"a window aggregation over HOP\(ts, 2 min, 5 min\) "
                       "needs a size that is a whole multiple of the slide"):
        s.sql("SELECT window_start, COUNT(*) AS n FROM TABLE(HOP(TABLE ins, DESCRIPTOR(ts), "
              "INTERVAL '2' MINUTE, INTERVAL '5' MINUTE)) GROUP BY window_start, "
              "window_end").collect()


def test_the_result_is_insert_only_and_the_plan_says_retractions(tmp_path: Path) -> None:
    s = _session(tmp_path, 1)
    assert "retractions" in s.sql(CHANGELOG["hop"]).explain()
    kinds = {op for b in s.sql(CHANGELOG["tumble-key"]).stream()
             for op in b.column("op").to_pylist()}
    assert kinds == {"+I"}


@pytest.mark.parametrize(("select", "name"), [
    ("LISTAGG(k)", "LISTAGG"), ("FIRST_VALUE(v)", "FIRST_VALUE"),
    ("LAST_VALUE(v)", "LAST_VALUE"), ("ARRAY_AGG(v)", "ARRAY_AGG")])
def test_other_aggregates_are_refused_by_name(tmp_path: Path, select: str, name: str) -> None:
    s = _session(tmp_path, 1)
    query = (f"SELECT window_start, {select} FROM TABLE(TUMBLE(TABLE chg, DESCRIPTOR(ts), "
             "INTERVAL '5' MINUTE)) GROUP BY window_start, window_end")
    with pytest.raises(NotSupportedError) as info:
        s.sql(query).collect()
    assert info.value.message.startswith(f"{name} in a window agg"), info.value.message
    assert info.value.span is not None  # (at the query's start: the message quotes no name)


def test_allowed_lateness_is_refused(tmp_path: Path) -> None:
    s = _session(tmp_path, 1)
    s.execute("SET 'table.exec.emit.allow-lateness' = '1 min'")
    s.execute("SET 'table.exec.emit.late-fire.enabled' = 'true'")
    with pytest.raises(NotSupportedError, match="allow-lateness"):
        s.sql(CHANGELOG["tumble-all"]).collect()
