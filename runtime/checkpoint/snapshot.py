"""A subtask's part of a checkpoint: what each operator of its chain snapshots, and its
watermark valve; and the way back (restore), possibly at another parallelism."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from sqlengine.errors import CheckpointError
from sqlengine.failpoints import hit as failpoint
from sqlengine.optimizer.jobgraph import JobGraph
from sqlengine.runtime.native.chain import ChainedTask
from sqlengine.runtime.operators.base import NotCheckpointable, NotRescalable
from sqlengine.runtime.operators.source import SourceOperator


def job_layout(graph: JobGraph) -> dict[str, Any]:
    """What a checkpoint's state must fit: each vertex's operators (and its parallelism)."""
    return {v.id: {"parallelism": v.parallelism,
                   "operators": [spec.label() for spec in v.chain]}
            for v in graph.vertices}


def fingerprint(graph: JobGraph) -> str:
    """The job's state layout as a short hash: its vertices, their operators and edges
    (parallelism excluded: a job may be restored at another)."""
    shape = [[v.id, [spec.label() for spec in v.chain]] for v in graph.vertices]
    edges = sorted([e.source, e.target, e.label(), e.input_index] for e in graph.edges)
    text = json.dumps([shape, edges], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def check_checkpointable(chain: ChainedTask) -> None:
    """Refuse a job whose operators, sources or sinks cannot take part in checkpoints, naming
    them (rather than take checkpoints a restore could not honour). Sources start keeping
    their split positions."""
    for op in chain.operators:
        if isinstance(op, SourceOperator):
            why = op.enable_checkpoints()
            if why is not None:
                raise CheckpointError(f"table {op.source.table!r} cannot be read by a "
                                      f"checkpointing job: {why}")
            continue
        guarantee = getattr(op, "guarantee", "none")
        if guarantee is None:
            table = getattr(op, "table_name", "?")
            raise CheckpointError(f"the sink of table {table!r} ({op.name}) cannot take part "
                                  "in checkpoints yet: its rows could be lost or written twice "
                                  "after a restore")
        if guarantee == "none" and op.state_fields is None:
            raise CheckpointError(f"operator {op.name} (vertex {chain.vertex_id}) cannot be "
                                  "checkpointed yet")


def snapshot_task(chain: ChainedTask, checkpoint: int, finished: bool = False
                  ) -> dict[str, Any]:
    """The subtask's state at a checkpoint barrier (or, ``finished``, its last: a restore at
    the same parallelism does not run it again)."""
    ops = []
    for op in chain.operators:
        failpoint("snapshot")
        op.prepare_snapshot(checkpoint)
        try:
            ops.append(op.snapshot_state())
        except NotCheckpointable as e:
            raise CheckpointError(f"operator {e.operator} (vertex {chain.vertex_id}) cannot be "
                                  "checkpointed in its present state (it spilled to disk)") \
                from None
    valve = chain.valve
    return {"operators": ops, "valve": (list(valve.channel_wm), list(valve.channel_idle),
                                        valve.watermark),
            "ended": sorted(chain.ended), "finished": finished}


def restore_task(chain: ChainedTask, states: list[dict[str, Any]], subtask: int,
                 parallelism: int, where: str) -> None:
    """Set back the state the old subtasks of this vertex wrote (``states``, one each)."""
    for i, op in enumerate(chain.operators):
        failpoint("restore")
        try:
            op.restore_from([s["operators"][i] for s in states], subtask, parallelism)
        except NotRescalable as e:
            raise CheckpointError(f"checkpoint {where!r}: operator {e.operator} (vertex "
                                  f"{chain.vertex_id}) was checkpointed with parallelism "
                                  f"{len(states)} and cannot be restored at {parallelism} "
                                  "yet") from None
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
            raise CheckpointError(f"checkpoint {where!r}: the state of operator {op.name} "
                                  f"(vertex {chain.vertex_id}) does not fit it "
                                  f"({type(e).__name__}: {e})") from None
    valve = chain.valve
    own = states[subtask]["valve"] if len(states) == parallelism else None
    if own is not None and len(own[0]) == len(valve.channel_wm):
        valve.channel_wm = list(own[0])
        valve.channel_idle = list(own[1])
        valve.watermark = int(own[2])
        # (input channels that had ended: their end, sent again by a restored producer,
        # is not processed twice)
        chain.ended = set(states[subtask].get("ended", ()))
    else:  # (another layout of channels: each starts at the lowest old watermark)
        low = min(int(s["valve"][2]) for s in states)
        valve.watermark = low
        valve.channel_wm = [low] * len(valve.channel_wm)
