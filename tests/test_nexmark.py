"""Every Nexmark query against an independent DuckDB computation on the same events."""

from __future__ import annotations

import pytest

from sqlengine.connectors.nexmark import NexmarkGenerator
from tests.nexmark import REFERENCES, queries, query, result_rows, rows, session, tables

duckdb = pytest.importorskip("duckdb")

EVENTS = 30_000
QUERIES = queries()


@pytest.fixture(scope="module")
def duck():  # type: ignore[no-untyped-def]
    con = duckdb.connect()
    for name, table in tables(EVENTS).items():
        con.register(name, table)
    return con


def test_every_query_has_a_reference() -> None:
    assert set(QUERIES) == set(REFERENCES)


@pytest.mark.parametrize("mode", ["streaming", "batch"])
@pytest.mark.parametrize("name", list(QUERIES))
@pytest.mark.usefixtures("repo_cwd")
def test_query_matches_reference(name: str, mode: str, duck) -> None:  # type: ignore[no-untyped-def]
    q = query(session(EVENTS, {"execution.runtime-mode": mode}), QUERIES[name])
    got = result_rows(name, q.collect())
    want = rows(duck.sql(REFERENCES[name]).fetchall())
    assert len(got) > 0, "the query should produce rows on this data"
    assert got == want
    assert q.late_records_dropped == 0


def test_generator_is_deterministic_and_proportioned() -> None:
    a = NexmarkGenerator("bid", 10_000, 10_000, 7, 0).chunk(0)
    b = NexmarkGenerator("bid", 10_000, 10_000, 7, 0).chunk(0)
    assert a.equals(b)
    counts = {t: NexmarkGenerator(t, 10_000, 10_000, 7, 0).chunk(0).num_rows
              for t in ("person", "auction", "bid")}
    assert counts == {"person": 200, "auction": 600, "bid": 9200}  # 1 : 3 : 46


def test_out_of_order_events_stay_within_the_bound() -> None:
    batch = NexmarkGenerator("bid", 10_000, 1000, 1, 3000).chunk(0)
    times = batch.column("dateTime").cast("int64").to_numpy()
    running_max = times.copy()
    for i in range(1, len(times)):
        running_max[i] = max(running_max[i - 1], times[i])
    assert (running_max - times).max() <= 3000
    assert (running_max - times).max() > 0
