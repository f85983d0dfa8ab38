"""Physical properties a node's output already has (Flink's global and local properties):
how its rows are partitioned, how they are ordered, whether they come from one subtask. The
interesting-properties pass compares them with what a consumer requests."""

from __future__ import annotations

from sqlengine.optimizer.physical import Partitioning, PhysicalNode
from sqlengine.optimizer.specs import (
    FilterSpec,
    GlobalAggregateSpec,
    GroupAggregateSpec,
    JoinSpec,
    LimitSpec,
    OrderedConcatSpec,
    ProjectSpec,
    SortSpec,
    TableSinkSpec,
)
from sqlengine.plan.expressions import ColumnRef, Expr
from sqlengine.plan.nodes import SortKey


def partitioned_on(node: PhysicalNode) -> frozenset[int] | None:
    """Interesting properties: the output columns by which ``node``'s rows are already
    hash-partitioned (rows with equal values there are in one subtask), or None. A HASH
    exchange establishes it; aggregates and joins keep it on their key columns; filters keep
    it and projections carry it to where the columns go."""

    op = node.op
    if isinstance(op, FilterSpec | ProjectSpec | TableSinkSpec) and node.inputs:
        (child, ex), = node.inputs
        if ex.partitioning is not Partitioning.FORWARD:
            return None
        below = partitioned_on(child)
        if below is None or not isinstance(op, ProjectSpec):
            return below
        plain = [_value_preserving(e) for e in op.exprs]
        where = {e.index: i for i, e in enumerate(plain) if isinstance(e, ColumnRef)}
        return frozenset(where[c] for c in below) if below <= set(where) else None
    if isinstance(op, GroupAggregateSpec | GlobalAggregateSpec) and node.inputs:
        (_, ex), = node.inputs
        if ex.partitioning in (Partitioning.HASH, Partitioning.FORWARD) and op.keys:
            return frozenset(range(len(op.keys)))
        return None
    if isinstance(op, JoinSpec) and len(node.inputs) == 2:
        if op.join_kind == "full":
            # (its left columns are NULL on the right side's unmatched rows, which sit where
            # the right keys sent them: NULL keys in every subtask)
            return None
        (left, lex), (_, rex) = node.inputs
        columns = [k for k in op.left_keys if isinstance(k, ColumnRef)]
        if lex.partitioning is Partitioning.HASH and rex.partitioning is Partitioning.HASH \
                and len(columns) == len(op.left_keys):
            return frozenset(k.index for k in columns)
        if lex.partitioning is Partitioning.FORWARD and \
                rex.partitioning is Partitioning.FORWARD and co_partitioned(node):
            return partitioned_on(left)  # (a join's left columns come first)
        return None
    return None


def already_partitioned(child: PhysicalNode, keys: tuple[Expr, ...]) -> bool:
    """Whether a HASH exchange on ``keys`` would only send rows where they already are: the
    child is partitioned on a subset of the key columns."""

    have = partitioned_on(child)
    columns = [k for k in keys if isinstance(k, ColumnRef)]
    if not have or len(columns) < len(keys):
        return False
    return have <= {k.index for k in columns}




def ordered_on(node: PhysicalNode) -> tuple[SortKey, ...]:
    """Interesting properties: the sort keys (over output columns) by which ``node``'s whole
    output is ordered, as one stream from one subtask; () when it is not. A global sort
    establishes it (and so does the ordered concatenation of a range-partitioned sort);
    filters and limits keep it, projections carry it while the keys' columns survive."""
    op = node.op
    if isinstance(op, SortSpec) and node.inputs and \
            node.inputs[0][1].partitioning is Partitioning.SINGLE:
        return op.keys if all(isinstance(k.expr, ColumnRef) for k in op.keys) else ()
    if isinstance(op, OrderedConcatSpec) and node.inputs:
        (local, _), = node.inputs
        if not isinstance(local.op, SortSpec):
            return ()
        keys = local.op.keys
        return keys if all(isinstance(k.expr, ColumnRef) for k in keys) else ()
    if isinstance(op, FilterSpec | LimitSpec | ProjectSpec) and node.inputs:
        (child, ex), = node.inputs
        if ex.partitioning not in (Partitioning.FORWARD, Partitioning.SINGLE):
            return ()
        below = ordered_on(child)
        if not isinstance(op, ProjectSpec) or not below:
            return below
        where = {e.index: i for i, e in enumerate(op.exprs) if isinstance(e, ColumnRef)}
        out = []
        for k in below:  # a prefix of the order survives the projection
            column = k.expr
            if not isinstance(column, ColumnRef) or column.index not in where:
                break
            out.append(SortKey(ColumnRef(where[column.index], column.name, column.dtype),
                               k.ascending, k.nulls_first))
        return tuple(out)
    return ()


def satisfies_order(have: tuple[SortKey, ...], want: tuple[SortKey, ...]) -> bool:
    """Whether rows ordered by ``have`` are ordered by ``want`` too: ``want`` is a prefix of
    ``have`` (same columns, directions and null orders)."""
    if not want or len(want) > len(have):
        return False
    return all(isinstance(w.expr, ColumnRef) and isinstance(h.expr, ColumnRef)
               and w.expr.index == h.expr.index and w.ascending == h.ascending
               and w.nulls_first == h.nulls_first for h, w in zip(have, want))


def keys_text(keys: tuple[Expr, ...]) -> str:
    return ", ".join(k.sql() for k in keys)


def runs_in_one_subtask(node: PhysicalNode) -> bool:
    """Whether ``node`` runs in one subtask whatever the default parallelism (a non-parallel
    source, VALUES, what follows a SINGLE exchange or only such operators by FORWARD): the
    parallelism the StreamGraph will give it."""
    from sqlengine.optimizer.streamgraph import StreamNode, operator_parallelism

    memo: dict[int, int] = {}

    def parallelism(n: PhysicalNode) -> int:
        if id(n) not in memo:
            inputs = [(StreamNode(0, c.op, parallelism(c)), ex.partitioning)
                      for c, ex in n.inputs]
            memo[id(n)] = operator_parallelism(n.op, inputs, 2)
        return memo[id(n)]

    return parallelism(node) == 1


def co_partitioned(join: PhysicalNode) -> bool:
    """Whether both inputs of a join already sit where a HASH exchange on the join keys would
    put them: each side hash-partitioned on one column that is the same key of the pair (equal
    SQL values hash equally whatever their types, runtime/native/partitioner.py), at the
    same parallelism (both behind hash exchanges)."""
    (left, _), (right, _) = join.inputs
    if not isinstance(join.op, JoinSpec):
        return False
    lk, rk = join.op.left_keys, join.op.right_keys
    lside, rside = partitioned_on(left), partitioned_on(right)
    if lside is None or rside is None or len(lside) != 1 or len(rside) != 1:
        return False
    (lcol,), (rcol,) = lside, rside
    for a, b in zip(lk, rk):
        a, b = _value_preserving(a), _value_preserving(b)
        if isinstance(a, ColumnRef) and isinstance(b, ColumnRef) and a.index == lcol and \
                b.index == rcol:
            return True
    return False


def _value_preserving(e: Expr) -> Expr:
    """The column under a cast that keeps every value equal to itself (an integer widened
    to a wider signed integer, or one of up to 32 bits to DOUBLE): it hashes as the column
    does."""
    import pyarrow as pa

    from sqlengine.plan.expressions import Cast

    while isinstance(e, Cast) and pa.types.is_integer(e.arg.dtype) and (
            (pa.types.is_integer(e.type) and e.type.bit_width >= e.arg.dtype.bit_width
             and pa.types.is_signed_integer(e.type))
            or (pa.types.is_float64(e.type) and e.arg.dtype.bit_width <= 32)):
        e = e.arg
    return e
