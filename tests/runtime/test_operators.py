"""Operators driven by hand: changelogs checked row by row."""

from __future__ import annotations

import pyarrow as pa
import pytest

from sqlengine.plan.expressions import AggCall, ColumnRef
from sqlengine.plan.nodes import SortKey
from sqlengine.runtime.changelog import apply_changelog
from sqlengine.runtime.elements import DELETE, INSERT, UPDATE_AFTER, UPDATE_BEFORE, with_rowkind
from sqlengine.runtime.operators.aggregate import GroupAggregateOperator
from sqlengine.runtime.operators.join import JoinOperator
from sqlengine.runtime.operators.sort import LimitOperator, SortOperator
from tests.harness import OperatorHarness

K = ColumnRef(0, "k", pa.string())
V = ColumnRef(1, "v", pa.int64())
SCHEMA = pa.schema([("k", pa.string()), ("v", pa.int64())])


def batch(rows: list[tuple], kinds: list[int] | None = None) -> pa.RecordBatch:
    b = pa.RecordBatch.from_pylist([{"k": k, "v": v} for k, v in rows], schema=SCHEMA)
    return with_rowkind(b, pa.array(kinds, pa.int8()).to_numpy()) if kinds else b


def agg(emit: str) -> GroupAggregateOperator:
    aggs = (AggCall("count_star", (), pa.int64()), AggCall("sum", (V,), pa.int64()),
            AggCall("count", (V,), pa.int64(), distinct=True))
    out = pa.schema([("k", pa.string()), ("n", pa.int64()), ("s", pa.int64()),
                     ("d", pa.int64())])
    return GroupAggregateOperator((K,), aggs, out, emit)


def test_group_aggregate_emits_a_changelog() -> None:
    h = OperatorHarness(agg("changelog"))
    # t1: a gets two rows, b one
    assert h.process(batch([("a", 1), ("a", 2), ("b", 5)])).take_rows() == [
        ("+I", "a", 2, 3, 2), ("+I", "b", 1, 5, 1)]
    # t2: a changes: -U then +U; b untouched emits nothing
    assert h.process(batch([("a", 2)])).take_rows() == [
        ("-U", "a", 2, 3, 2), ("+U", "a", 3, 5, 2)]
    # t3: an input retraction of b's only row deletes the group
    assert h.process(batch([("b", 5)], [DELETE])).take_rows() == [("-D", "b", 1, 5, 1)]
    # t4: b comes back: a new insert
    assert h.process(batch([("b", 7)])).take_rows() == [("+I", "b", 1, 7, 1)]
    # t5: retract a's duplicate 2: the distinct count stays 2, count and sum drop
    assert h.process(batch([("a", 2)], [UPDATE_BEFORE])).take_rows() == [
        ("-U", "a", 3, 5, 2), ("+U", "a", 2, 3, 2)]
    assert h.end().take_rows() == []


def test_group_aggregate_batch_mode_emits_once_at_the_end() -> None:
    h = OperatorHarness(agg("final"))
    h.process(batch([("a", 1), ("b", None)])).process(batch([("a", 1), (None, 4)]))
    assert h.take_rows() == []
    assert sorted(h.end().take_rows(), key=str) == sorted(
        [("+I", "a", 2, 2, 1), ("+I", "b", 1, None, 0), ("+I", None, 1, 4, 1)], key=str)


def test_global_aggregate_over_no_rows_yields_one_row() -> None:
    op = GroupAggregateOperator((), (AggCall("count_star", (), pa.int64()),
                                     AggCall("sum", (V,), pa.int64())),
                                pa.schema([("n", pa.int64()), ("s", pa.int64())]), "final")
    assert OperatorHarness(op).end().rows() == [("+I", 0, None)]


def join(kind: str, emit: str) -> JoinOperator:
    left = pa.schema([("k", pa.string()), ("v", pa.int64())])
    right = pa.schema([("rk", pa.string()), ("w", pa.int64())])
    out = pa.schema(list(left) + list(right))
    return JoinOperator(kind, (K,), (ColumnRef(0, "rk", pa.string()),), None, left, right, out,
                        emit)


def rbatch(rows: list[tuple]) -> pa.RecordBatch:
    return pa.RecordBatch.from_pylist([{"rk": k, "w": w} for k, w in rows],
                                      schema=pa.schema([("rk", pa.string()), ("w", pa.int64())]))


def test_streaming_left_join_retracts_padded_rows() -> None:
    h = OperatorHarness(join("left", "stream"))
    assert h.process(batch([("a", 1), ("b", 2), (None, 3)]), 0).take_rows() == [
        ("+I", "a", 1, None, None), ("+I", "b", 2, None, None), ("+I", None, 3, None, None)]
    assert h.process(rbatch([("a", 10)]), 1).take_rows() == [
        ("-D", "a", 1, None, None), ("+I", "a", 1, "a", 10)]
    # a second match for a: no retraction this time
    assert h.process(rbatch([("a", 11), (None, 0)]), 1).take_rows() == [("+I", "a", 1, "a", 11)]
    assert h.process(batch([("a", 4)]), 0).take_rows() == [
        ("+I", "a", 4, "a", 10), ("+I", "a", 4, "a", 11)]


def test_streaming_inner_join_is_insert_only() -> None:
    h = OperatorHarness(join("inner", "stream"))
    h.process(rbatch([("x", 1)]), 1)
    assert h.process(batch([("x", 5), ("y", 6)]), 0).take_rows() == [("+I", "x", 5, "x", 1)]
    assert not any(b.schema.names[-1] == "$row_kind" for b in h.output)


def test_batch_join_builds_on_the_side_that_ends_first() -> None:
    h = OperatorHarness(join("left", "final"))
    h.process(batch([("a", 1), ("c", 3)]), 0).process(rbatch([("a", 9)]), 1)
    # The left side ends first: it is the build side; the right rows that waited probe it.
    assert h.end(0).take_rows() == [("+I", "a", 1, "a", 9)]
    assert h.process(rbatch([("a", 8), ("b", 7)]), 1).take_rows() == [("+I", "a", 1, "a", 8)]
    # Unmatched left rows are known only when the right side has ended.
    assert h.end(1).take_rows() == [("+I", "c", 3, None, None)]


def test_batch_join_probes_rows_of_the_open_side_as_they_come() -> None:
    h = OperatorHarness(join("left", "final"))
    h.process(rbatch([("a", 9), ("a", 8)]), 1)
    assert h.end(1).take_rows() == []
    assert h.process(batch([("a", 1), ("c", 3)]), 0).take_rows() == [
        ("+I", "a", 1, "a", 9), ("+I", "a", 1, "a", 8), ("+I", "c", 3, None, None)]
    assert h.end(0).take_rows() == []


def test_sort_applies_the_changelog_then_orders_nulls_as_asked() -> None:
    op = SortOperator((SortKey(V, ascending=False, nulls_first=False),), None, 0, SCHEMA)
    h = OperatorHarness(op)
    h.process(batch([("a", 1), ("b", None), ("c", 3)], [INSERT, INSERT, INSERT]))
    h.process(batch([("c", 3), ("c", 4)], [UPDATE_BEFORE, UPDATE_AFTER]))
    assert h.end().rows() == [("+I", "c", 4), ("+I", "a", 1), ("+I", "b", None)]


def test_limit_passes_rows_through_with_offset() -> None:
    h = OperatorHarness(LimitOperator(2, 1, SCHEMA, False))
    h.process(batch([("a", 1)])).process(batch([("b", 2), ("c", 3), ("d", 4)]))
    assert h.end().rows() == [("+I", "b", 2), ("+I", "c", 3)]


def test_apply_changelog_cancels_retractions_as_a_multiset() -> None:
    b1 = batch([("a", 1), ("a", 1), ("b", 2)])
    b2 = batch([("a", 1), ("b", 2), ("b", 3)], [DELETE, UPDATE_BEFORE, UPDATE_AFTER])
    table = apply_changelog([with_rowkind(b1, INSERT), b2], SCHEMA)
    assert table.to_pylist() == [{"k": "a", "v": 1}, {"k": "b", "v": 3}]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now


def updating_join(kind: str, clock: Clock | None = None, ttl_ms: int = 0) -> JoinOperator:
    left = pa.schema([("k", pa.string()), ("v", pa.int64())])
    right = pa.schema([("rk", pa.string()), ("w", pa.int64())])
    return JoinOperator(kind, (K,), (ColumnRef(0, "rk", pa.string()),), None, left, right,
                        pa.schema(list(left) + list(right)), "stream", ttl_ms, True,
                        clock or Clock())


def rkinds(rows: list[tuple], kinds: list[int]) -> pa.RecordBatch:
    return with_rowkind(rbatch(rows), pa.array(kinds, pa.int8()).to_numpy())


def test_left_join_follows_retractions_on_both_sides() -> None:
    h = OperatorHarness(updating_join("left"))
    assert h.process(batch([("a", 1), ("b", 2)]), 0).take_rows() == [
        ("+I", "a", 1, None, None), ("+I", "b", 2, None, None)]
    # a's first match: its padded row goes, the joined row comes
    assert h.process(rbatch([("a", 10)]), 1).take_rows() == [
        ("-D", "a", 1, None, None), ("+I", "a", 1, "a", 10)]
    # the right row is updated (-U old, +U new): the joined row follows, no padding flicker
    assert h.process(rkinds([("a", 10), ("a", 11)], [UPDATE_BEFORE, UPDATE_AFTER]), 1) \
        .take_rows() == [("-D", "a", 1, "a", 10), ("+I", "a", 1, "a", 11)]
    # the last match is deleted: the joined row goes, the padded row comes back
    assert h.process(rkinds([("a", 11)], [DELETE]), 1).take_rows() == [
        ("-D", "a", 1, "a", 11), ("+I", "a", 1, None, None)]
    # deleting an unmatched left row retracts its padded row
    assert h.process(batch([("b", 2)], [DELETE]), 0).take_rows() == [
        ("-D", "b", 2, None, None)]
    state = h.op.state_summary()
    assert state == {"left_rows": 1, "right_rows": 0}


def test_inner_join_of_updating_inputs_retracts_joined_rows() -> None:
    h = OperatorHarness(updating_join("inner"))
    h.process(batch([("x", 1), ("x", 1)]), 0)  # the same row twice: multiplicity 2
    assert h.process(rbatch([("x", 5)]), 1).take_rows() == [("+I", "x", 1, "x", 5)] * 2
    assert h.process(batch([("x", 1)], [DELETE]), 0).take_rows() == [("-D", "x", 1, "x", 5)]


def test_state_ttl_forgets_idle_rows() -> None:
    clock = Clock()
    h = OperatorHarness(updating_join("left", clock, ttl_ms=1000))
    h.process(rbatch([("a", 10)]), 1)
    clock.now = 0.5
    assert h.process(batch([("a", 1)]), 0).take_rows() == [("+I", "a", 1, "a", 10)]
    clock.now = 1.6  # the right row was written at 0.0: expired
    assert h.process(batch([("a", 2)]), 0).take_rows() == [("+I", "a", 2, None, None)]


def test_each_side_keeps_its_own_ttl() -> None:
    """A STATE_TTL hint's per-side TTLs: the left side's rows expire after 1 s, the right
    side's ('0 s') never."""
    clock = Clock()
    left = pa.schema([("k", pa.string()), ("v", pa.int64())])
    right = pa.schema([("rk", pa.string()), ("w", pa.int64())])
    op = JoinOperator("inner", (K,), (ColumnRef(0, "rk", pa.string()),), None, left, right,
                      pa.schema(list(left) + list(right)), "stream", 1000, clock=clock,
                      right_ttl_ms=0)
    h = OperatorHarness(op)
    h.process(batch([("a", 1)]), 0)
    h.process(rbatch([("b", 20)]), 1)
    clock.now = 5.0
    assert h.process(rbatch([("a", 10)]), 1).take_rows() == []  # (a's left row: expired)
    assert h.process(batch([("b", 2)]), 0).take_rows() == [("+I", "b", 2, "b", 20)]


def topn(limit: int, output_rank: bool, ascending: bool = False):  # type: ignore[no-untyped-def]
    from sqlengine.runtime.operators.rank import TopNOperator

    out = pa.schema([("k", pa.string()), ("v", pa.int64()), ("rn", pa.int64())])
    return TopNOperator((K,), (SortKey(V, ascending=ascending, nulls_first=ascending),), limit,
                        out, "changelog", output_rank)


def test_top_n_emits_the_difference_per_batch() -> None:
    h = OperatorHarness(topn(2, output_rank=True))
    assert h.process(batch([("a", 3), ("a", 1), ("b", 2)])).take_rows() == [
        ("+I", "a", 3, 1), ("+I", "a", 1, 2), ("+I", "b", 2, 1)]
    # a 5 arrives: 1 falls out, 3 moves from #1 to #2, 5 comes in at #1
    assert h.process(batch([("a", 5)])).take_rows() == [
        ("-D", "a", 1, 2), ("-U", "a", 3, 1), ("+U", "a", 3, 2), ("+I", "a", 5, 1)]
    # a 0 is not in the top 2: nothing
    assert h.process(batch([("a", 0)])).take_rows() == []


def test_deduplication_keeps_the_first_row_without_rank_updates() -> None:
    h = OperatorHarness(topn(1, output_rank=False, ascending=True))
    assert h.process(batch([("a", 7), ("b", 9)])).take_rows() == [
        ("+I", "a", 7, 1), ("+I", "b", 9, 1)]
    assert h.process(batch([("a", 8)])).take_rows() == []          # later and larger: kept out
    # smaller: replaces, as an update (Flink's Top-1 emits -U/+U; PyFlink 2.3)
    assert h.process(batch([("a", 6)])).take_rows() == [
        ("-U", "a", 7, 1), ("+U", "a", 6, 1)]


def test_join_of_updating_inputs_with_nested_columns() -> None:
    """Retractions of rows holding an ARRAY and a ROW (an updating GROUP BY's ARRAY[COUNT(*)]
    joined with another table) net out per whole row; Arrow's group_by, which netted them,
    failed with "Keys of type list<element: int32>"."""
    arr_t = pa.list_(pa.int32())
    row_t = pa.struct([("x", pa.int32()), ("y", pa.string())])
    left = pa.schema([("k", pa.string()), ("a", arr_t), ("r", row_t)])
    right = pa.schema([("rk", pa.string()), ("w", pa.int64())])
    clock = Clock()
    op = JoinOperator("left", (K,), (ColumnRef(0, "rk", pa.string()),), None, left, right,
                      pa.schema(list(left) + list(right)), "stream", 60_000, True, clock)
    h = OperatorHarness(op)

    def lbatch(rows: list[tuple], kinds: list[int]) -> pa.RecordBatch:
        b = pa.RecordBatch.from_pylist([{"k": k, "a": a, "r": r} for k, a, r in rows],
                                       schema=left)
        return with_rowkind(b, pa.array(kinds, pa.int8()).to_numpy())

    one, two = {"x": 1, "y": "p"}, {"x": 2, "y": None}
    h.process(lbatch([("a", [1], one), ("b", [1, None], two)], [INSERT, INSERT]), 0)
    assert h.process(rbatch([("a", 10)]), 1).take_rows() == [
        ("+I", "a", [1], one, None, None), ("+I", "b", [1, None], two, None, None),
        ("-D", "a", [1], one, None, None), ("+I", "a", [1], one, "a", 10)]
    clock.now = 1.0
    # a's ARRAY[COUNT(*)] goes from [1] to [2]; b's row is deleted and inserted again
    out = h.process(lbatch([("a", [1], one), ("a", [2], one), ("b", [1, None], two),
                            ("b", [1, None], two)],
                           [UPDATE_BEFORE, UPDATE_AFTER, DELETE, INSERT]), 0).take_rows()
    assert out == [("-D", "a", [1], one, "a", 10), ("+I", "a", [2], one, "a", 10)]
    assert h.op.state_summary() == {"left_rows": 2, "right_rows": 1}
    assert h.process(rkinds([("a", 10)], [DELETE]), 1).take_rows() == [
        ("-D", "a", [2], one, "a", 10), ("+I", "a", [2], one, None, None)]


def test_state_ttl_forgets_idle_groups() -> None:
    """'table.exec.state.ttl' on a GROUP BY: a group no row reached for the TTL is forgotten
    without a word (Flink's expired state emits nothing); its next row starts it again as an
    INSERT, its old values gone (MAX of an expired group does not remember them); a group
    reached within the TTL keeps its state."""
    clock = Clock()
    aggs = (AggCall("count_star", (), pa.int64()), AggCall("sum", (V,), pa.int64()),
            AggCall("max", (V,), pa.int64()), AggCall("max", (K,), pa.string()))
    out = pa.schema([("k", pa.string()), ("n", pa.int64()), ("s", pa.int64()),
                     ("m", pa.int64()), ("mk", pa.string())])
    h = OperatorHarness(GroupAggregateOperator((K,), aggs, out, "changelog", ttl_ms=1000,
                                               clock=clock))
    assert h.process(batch([("a", 9), ("b", 5)])).take_rows() == [
        ("+I", "a", 1, 9, 9, "a"), ("+I", "b", 1, 5, 5, "b")]
    clock.now = 0.8
    assert h.process(batch([("b", 1)])).take_rows() == [
        ("-U", "b", 1, 5, 5, "b"), ("+U", "b", 2, 6, 5, "b")]
    clock.now = 1.5  # a's last row at 0.0: expired; b's at 0.8: kept
    assert h.process(batch([("a", 2), ("b", 1)])).take_rows() == [
        ("+I", "a", 1, 2, 2, "a"), ("-U", "b", 2, 6, 5, "b"), ("+U", "b", 3, 7, 5, "b")]
    # (a retraction reaching an expired group is dropped, as one reaching no group)
    clock.now = 5.0
    assert h.process(batch([("b", 1)], [DELETE])).take_rows() == []
    assert h.process(batch([("b", 4)])).take_rows() == [("+I", "b", 1, 4, 4, "b")]


def distinct_agg(clock: Clock, ttl_ms: int) -> GroupAggregateOperator:
    aggs = (AggCall("count", (V,), pa.int64(), distinct=True),
            AggCall("sum", (V,), pa.int64(), distinct=True),
            AggCall("count_star", (), pa.int64()))
    out = pa.schema([("k", pa.string()), ("d", pa.int64()), ("sd", pa.int64()),
                     ("n", pa.int64())])
    return GroupAggregateOperator((K,), aggs, out, "changelog", input_updating=True,
                                  ttl_ms=ttl_ms, clock=clock)


@pytest.mark.parametrize("levels", [False, True])
def test_state_ttl_forgets_the_distinct_values_of_idle_groups(levels: bool) -> None:
    """A GROUP BY with COUNT / SUM(DISTINCT x) and 'table.exec.state.ttl': an expired group's
    distinct values go with it (a value it had counts again), in the dense counts and in
    the sorted levels they turn into when groups x values grow."""
    clock = Clock()
    h = OperatorHarness(distinct_agg(clock, 1000))
    if levels:
        h.op.accs[0].distinct_counts._to_levels()
        h.op.accs[0].distinct_counts.dense = None
    assert h.process(batch([("a", 1), ("a", 2), ("a", 2), ("b", 7)])).take_rows() == [
        ("+I", "a", 2, 3, 3), ("+I", "b", 1, 7, 1)]
    clock.now = 0.8
    assert h.process(batch([("b", 7), ("b", 8)])).take_rows() == [
        ("-U", "b", 1, 7, 1), ("+U", "b", 2, 15, 3)]
    clock.now = 1.5  # a expired (last row at 0.0), b kept (0.8)
    assert h.process(batch([("a", 2), ("b", 8)])).take_rows() == [
        ("+I", "a", 1, 2, 1), ("-U", "b", 2, 15, 3), ("+U", "b", 2, 15, 4)]
    assert len(h.op.accs[0].distinct_counts) == 6  # (a: 2; b: 7, 8; a column each)
    # (a's 1 from before the expiry is not counted: a new copy of it is a new value)
    assert h.process(batch([("a", 1)])).take_rows() == [
        ("-U", "a", 1, 2, 1), ("+U", "a", 2, 3, 2)]


def test_a_group_emptied_by_retractions_forgets_its_distinct_values() -> None:
    """As Flink's GroupAggFunction, a group whose row count falls to 0 is cleared whatever
    its accumulators hold: a changelog with a retraction of a value never inserted (read
    from its middle) leaves no count behind that would hide the value's next insert."""
    h = OperatorHarness(distinct_agg(Clock(), 0))
    assert h.process(batch([("a", 1)])).take_rows() == [("+I", "a", 1, 1, 1)]
    assert h.process(batch([("a", 2)], [DELETE])).take_rows() == [("-D", "a", 1, 1, 1)]
    assert h.process(batch([("a", 1)])).take_rows() == [("+I", "a", 1, 1, 1)]


@pytest.mark.parametrize("ttl_ms", [0, 1000])
def test_an_unchanged_value_is_sent_again_only_with_a_state_ttl(ttl_ms: int) -> None:
    """As Flink's GroupAggFunction: a row that leaves its group's value as it was emits
    nothing, unless state expires (then -U/+U of the same row, so that the operators after
    it see the row written and keep it)."""
    aggs = (AggCall("max", (V,), pa.int64()),)
    out = pa.schema([("k", pa.string()), ("m", pa.int64())])
    h = OperatorHarness(GroupAggregateOperator((K,), aggs, out, "changelog", ttl_ms=ttl_ms,
                                               clock=Clock()))
    assert h.process(batch([("a", 9)])).take_rows() == [("+I", "a", 9)]
    assert h.process(batch([("a", 1)])).take_rows() == (
        [("-U", "a", 9), ("+U", "a", 9)] if ttl_ms else [])


def test_no_ttl_keeps_groups_for_ever() -> None:
    clock = Clock()
    aggs = (AggCall("count_star", (), pa.int64()),)
    out = pa.schema([("k", pa.string()), ("n", pa.int64())])
    h = OperatorHarness(GroupAggregateOperator((K,), aggs, out, "changelog", clock=clock))
    h.process(batch([("a", 1)])).take_rows()
    clock.now = 1e9
    assert h.process(batch([("a", 1)])).take_rows() == [("-U", "a", 1), ("+U", "a", 2)]


def test_state_ttl_forgets_idle_top_n_partitions() -> None:
    """'table.exec.state.ttl' on a Top-N of an insert-only input: a partition whose kept rows
    no row changed for the TTL is forgotten without a word (a row kept out of the top is not
    a write); its next row enters an empty top."""
    from sqlengine.runtime.operators.rank import TopNOperator

    clock = Clock()
    out = pa.schema([("k", pa.string()), ("v", pa.int64()), ("rn", pa.int64())])
    h = OperatorHarness(TopNOperator((K,), (SortKey(V, ascending=False, nulls_first=False),),
                                     2, out, "changelog", True, ttl_ms=1000, clock=clock))
    assert h.process(batch([("a", 5), ("b", 5)])).take_rows() == [
        ("+I", "a", 5, 1), ("+I", "b", 5, 1)]
    clock.now = 0.8
    assert h.process(batch([("a", 1), ("b", 9)])).take_rows() == [
        ("-U", "b", 5, 1), ("+U", "b", 5, 2), ("+I", "a", 1, 2), ("+I", "b", 9, 1)]
    clock.now = 1.5  # a's last write at 0.8, b's at 0.8: both kept
    assert h.process(batch([("b", 0)])).take_rows() == []  # (not into the top: no write)
    clock.now = 1.9  # both expired (b's row at 1.5 wrote nothing)
    assert h.process(batch([("a", 0), ("b", 0)])).take_rows() == [
        ("+I", "a", 0, 1), ("+I", "b", 0, 1)]
    assert h.op.state_summary() == {"kept_rows": 2}


def test_state_ttl_forgets_idle_partitions_of_an_updating_top_n() -> None:
    """A Top-N of an updating input (Flink's RetractableTopNFunction) with a state TTL: a
    partition no row reached for the TTL is forgotten, its live rows with it, without a
    word; a retraction of a forgotten row is ignored (Flink's lenient handling of state
    cleared by its TTL), and the partition's next row enters an empty top."""
    from sqlengine.runtime.operators.rank import TopNOperator

    clock = Clock()
    out = pa.schema([("k", pa.string()), ("v", pa.int64()), ("rn", pa.int64())])
    op = TopNOperator((K,), (SortKey(V, ascending=False, nulls_first=False),), 1, out,
                      "changelog", True, retract=True, ttl_ms=1000, clock=clock)
    h = OperatorHarness(op)
    assert h.process(batch([("a", 5), ("a", 3), ("b", 5)])).take_rows() == [
        ("+I", "a", 5, 1), ("+I", "b", 5, 1)]
    clock.now = 0.8  # (a retraction writes the state too: b's is kept)
    assert h.process(batch([("b", 5)], [UPDATE_BEFORE])).take_rows() == [("-D", "b", 5, 1)]
    clock.now = 1.5  # a idle since 0.0: forgotten with its rows 5 and 3
    assert h.process(batch([("a", 5)], [UPDATE_BEFORE])).take_rows() == []
    assert op.rows is not None and "a" not in op.rows["k"].to_pylist()
    assert h.process(batch([("a", 1), ("b", 2)])).take_rows() == [
        ("+I", "a", 1, 1), ("+I", "b", 2, 1)]


def test_state_ttl_lets_a_deduplicated_key_through_again() -> None:
    """Deduplication with 'table.exec.state.ttl': keeping the first row by processing time,
    a key's state is written by its first row only, so its first row after the TTL is
    emitted again (Flink's ProcTimeDeduplicateKeepFirstRowFunction with an expired flag);
    keeping the last row, every row writes it, and one after the TTL is an INSERT, not an
    update of the forgotten row."""
    from sqlengine.runtime.operators.deduplicate import FirstRowOperator
    from sqlengine.runtime.operators.rank import TopNOperator

    clock = Clock()
    out = pa.schema([("k", pa.string()), ("v", pa.int64()), ("rn", pa.int64())])
    first = OperatorHarness(FirstRowOperator((K,), out, None, ttl_ms=1000, clock=clock))
    assert first.process(batch([("a", 1), ("a", 2)])).take_rows() == [("+I", "a", 1, 1)]
    clock.now = 0.9
    assert first.process(batch([("a", 3)])).take_rows() == []
    clock.now = 1.0
    assert first.process(batch([("a", 4), ("a", 5)])).take_rows() == [("+I", "a", 4, 1)]
    clock.now = 0.0
    last = OperatorHarness(TopNOperator((K,), (), 1, out, "changelog", False, keep="LastRow",
                                        time_kind="PROCTIME", ttl_ms=1000, clock=clock))
    assert last.process(batch([("a", 1)])).take_rows() == [("+I", "a", 1, 1)]
    clock.now = 0.9
    assert last.process(batch([("a", 2)])).take_rows() == [("-U", "a", 1, 1), ("+U", "a", 2, 1)]
    clock.now = 1.8  # written at 0.9: still there
    assert last.process(batch([("a", 3)])).take_rows() == [("-U", "a", 2, 1), ("+U", "a", 3, 1)]
    clock.now = 2.9
    assert last.process(batch([("a", 4)])).take_rows() == [("+I", "a", 4, 1)]


def test_a_deduplication_by_event_time_forgets_emitted_keys_and_their_ids() -> None:
    """Keeping the first row by event time: a key forgotten after the TTL lets its next row
    through; forgotten keys leave the partition index too, so state stays bounded."""
    from sqlengine.runtime.operators.deduplicate import FirstRowOperator

    clock = Clock()
    schema = pa.schema([("k", pa.string()), ("ts", pa.timestamp("ms"))])
    out = pa.schema([*schema, ("rn", pa.int64())])
    op = FirstRowOperator((K,), out, 1, ttl_ms=1000, clock=clock)
    h = OperatorHarness(op)

    def rows(keys: list[str], t: int) -> pa.RecordBatch:
        return pa.RecordBatch.from_pydict({"k": keys, "ts": pa.array([t] * len(keys),
                                                                     pa.timestamp("ms"))},
                                          schema=schema)

    keys = [f"k{i}" for i in range(3000)]
    h.process(rows(keys, 10))
    assert len(h.watermark(10).take_rows()) == 3000
    clock.now = 0.5
    h.process(rows(["k0"], 20))
    assert h.watermark(20).take_rows() == []  # (k0 is still known)
    clock.now = 1.2  # every key written at 0.0: forgotten
    h.process(rows(["k0", "new"], 30))
    assert [r[1] for r in h.watermark(30).take_rows()] == ["k0", "new"]
    assert len(op.ids) == 2  # (the 2,999 forgotten keys left the index)
