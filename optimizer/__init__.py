"""The optimizer: logical rewrites (RULES), physical passes (PHYSICAL_PASSES), StreamGraph,
JobGraph."""

from __future__ import annotations

from collections.abc import Callable

from sqlengine.errors import PlanError
from sqlengine.optimizer.chaining import build_job_graph
from sqlengine.optimizer.config import OptimizerConfig
from sqlengine.optimizer.driver import Optimizer
from sqlengine.optimizer.jobgraph import JobGraph
from sqlengine.optimizer.passes import PHYSICAL_PASSES, Observer, to_physical
from sqlengine.optimizer.physical import PhysicalNode
from sqlengine.optimizer.rule import OptimizerRule, RuleContext
from sqlengine.optimizer.rules.decorrelate import Decorrelate
from sqlengine.optimizer.rules.fold_constants import FoldConstants
from sqlengine.optimizer.rules.limit_ranks import LimitRanks
from sqlengine.optimizer.rules.merge_projections import MergeProjections
from sqlengine.optimizer.rules.merge_unions import MergeUnions
from sqlengine.optimizer.rules.prune_empty import PruneEmpty
from sqlengine.optimizer.rules.prune_projections import PruneProjections
from sqlengine.optimizer.rules.push_down_filters import PushDownFilters
from sqlengine.optimizer.rules.push_down_semi_joins import PushDownSemiJoins
from sqlengine.optimizer.rules.reduce_aggregate_inputs import ReduceAggregateInputs
from sqlengine.optimizer.rules.reorder_joins import ReorderJoins
from sqlengine.optimizer.rules.semi_join_extremes import SemiJoinExtremes
from sqlengine.optimizer.streamgraph import build_stream_graph
from sqlengine.optimizer.udf_errors import check_on_error, split_python_calls
from sqlengine.plan.nodes import LogicalPlan

RULES: tuple[OptimizerRule, ...] = (
    # Subqueries become joins before anything else looks at the plan (mandatory).
    Decorrelate(),
    # Constants first, so that pushed-down predicates are already folded.
    FoldConstants(),
    # An aggregate without GROUP BY over a filter folded to FALSE is its one empty-input row.
    PruneEmpty(),
    # Filters move down before pruning, so pruning sees where each column is really needed.
    PushDownFilters(),
    # An IN / EXISTS test filters the join input it reads before that input is joined on.
    PushDownSemiJoins(),
    # With WHERE's conditions in the joins, joins no condition connects are put last.
    ReorderJoins(),
    # An aggregate joined on its keys aggregates only the groups the other side can meet.
    ReduceAggregateInputs(),
    # EXISTS with one comparison beside the keys meets one row per key: its MIN or MAX.
    SemiJoinExtremes(),
    # A filter on a row number, once pushed onto its ranking, becomes a Top-N limit; this
    # runs before pruning so that an unread row number is not computed as an output.
    LimitRanks(),
    # Pruning runs before merging, and merging collapses the projections pruning leaves.
    PruneProjections(),
    MergeProjections(),
    # Nested UNION ALL becomes one n-ary union (after the projections above settled).
    MergeUnions(),
)


def optimize(plan: LogicalPlan, options: dict[str, str] | None = None,
             observer: Callable[[OptimizerRule, LogicalPlan], None] | None = None,
             tables: dict[str, object] | None = None,
             notes: list[str] | None = None) -> LogicalPlan:
    """Apply RULES to a fixed point (subject to ``table.optimizer.*`` options); ``tables``
    (registered data) feed the estimates of cost-based rules, which say what they weighed in
    ``notes`` (EXPLAIN ESTIMATED_COST prints them)."""
    config = OptimizerConfig.from_options(options or {})
    plan = split_python_calls(plan, options)  # ('python.udf.on-error' = 'skip' only)
    return Optimizer(RULES, config.max_passes, observer).optimize(
        plan, RuleContext(dict(options or {}), dict(tables or {}),
                          notes if notes is not None else []))


def plan_physical(plan: LogicalPlan, options: dict[str, str] | None = None,
                  tables: dict[str, object] | None = None,
                  observer: Observer | None = None) -> PhysicalNode:
    """Optimized logical plan -> physical plan (operators, exchanges, estimates) by graph
    creation and PHYSICAL_PASSES; ``tables`` (registered data) feed the estimates;
    ``observer`` sees the plan after each pass."""
    return to_physical(plan, options, tables, observer)


def plan_job(plan: LogicalPlan, options: dict[str, str] | None = None,
             tables: dict[str, object] | None = None,
             physical: PhysicalNode | None = None) -> JobGraph:
    """Optimized logical plan -> physical plan -> StreamGraph -> JobGraph."""
    options = options or {}
    config = OptimizerConfig.from_options(options)
    if physical is None:
        physical = plan_physical(plan, options, tables)
    check_on_error(physical, options)
    stream_graph = build_stream_graph(physical, parallelism=config.parallelism)
    # (a job that runs one subtask per vertex has no shuffles to block)
    blocking = config.batch and config.blocking_shuffles and \
        any(n.parallelism > 1 for n in stream_graph.nodes)
    # Slot sharing: one group by default; a group per pipelined region on request (Flink's
    # batch jobs, where it lets regions take turns on few slots; here every slot is a
    # process of its own, and measured no lighter: bench/optimizer's note in ARCHITECTURE).
    key = "execution.slot-sharing"
    sharing = options.get(key, "ALL").upper()
    if sharing not in ("ALL", "PER_REGION"):
        msg = f"option {key!r} must be 'ALL' or 'PER_REGION', got {options[key]!r}"
        raise PlanError(msg)
    return build_job_graph(stream_graph, config.chaining_enabled, blocking, sharing)


__all__ = ["PHYSICAL_PASSES", "RULES", "JobGraph", "optimize", "plan_job", "plan_physical"]
