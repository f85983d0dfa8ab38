"""A subtask's part of a checkpoint: what each operator of its chain snapshots, and its
watermark valve; and the way back (restore), possibly at another parallelism."""

from __future__ import annotations

import hashlib
import itertools
import json
from typing import Any

from sqlengine.errors import CheckpointError
from sqlengine.failpoints import hit as failpoint
from sqlengine.optimizer.jobgraph import JobGraph
from sqlengine.optimizer.specs import OperatorSpec
from sqlengine.runtime.checkpoint.storage import Checkpoint
from sqlengine.runtime.native.chain import ChainedTask
from sqlengine.runtime.operators.base import NotCheckpointable, NotRescalable
from sqlengine.runtime.operators.source import SourceOperator


def _nodes(v: Any) -> list[int]:
    """A vertex's operators by their StreamGraph node ids: stable whatever the chaining (a
    sink chained at parallelism 1 is a vertex of its own at 2), so state is matched by
    operator, as Flink's operator ids do."""
    return list(v.stream_nodes) or [-(i + 1) for i in range(len(v.chain))]


def job_layout(graph: JobGraph) -> dict[str, Any]:
    """What a checkpoint's state must fit: each vertex's operators (and its parallelism)."""
    return {v.id: {"parallelism": v.parallelism, "nodes": _nodes(v),
                   "operators": [spec.label() for spec in v.chain],
                   "types": [row_types(spec) for spec in v.chain]}
            for v in graph.vertices}


def fingerprint(graph: JobGraph) -> str:
    """The job's state layout as a short hash: its operators, the types of their rows, and
    how they connect (neither the parallelism nor the chaining: a job may be restored at
    another parallelism). (Without the types, a job whose table changed a column's type was
    restored, and failed at its first rows with Arrow's 'Schema ... was different'.)"""
    labels: dict[int, str] = {}
    links: set[tuple[int, int, int]] = set()
    for v in graph.vertices:
        nodes = _nodes(v)
        labels.update(zip(nodes, (f"{spec.label()} [{row_types(spec)}]" for spec in v.chain)))
        links.update((a, b, 0) for a, b in itertools.pairwise(nodes))
    for e in graph.edges:
        links.add((_nodes(graph.vertex(e.source))[-1], _nodes(graph.vertex(e.target))[0],
                   e.input_index))
    text = json.dumps([sorted(labels.items()), sorted(links)], default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def row_types(spec: OperatorSpec) -> str:
    """The types of an operator's output rows, as a fingerprint and a mismatch name them."""
    return ", ".join(str(f.type) for f in spec.schema.fields)


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
        why = op.checkpoint_refusal()
        if why:
            raise CheckpointError(f"operator {op.name} (vertex {chain.vertex_id}) cannot be "
                                  f"checkpointed: {why}")


def snapshot_task(chain: ChainedTask, checkpoint: int, finished: bool = False
                  ) -> dict[str, Any]:
    """The subtask's state at a checkpoint barrier (or, ``finished``, its last: a restore at
    the same parallelism does not run it again)."""
    ops: dict[str, Any] = {}
    for node, op in zip(chain.nodes, chain.operators):
        failpoint("snapshot")
        op.prepare_snapshot(checkpoint)
        try:
            ops[str(node)] = op.snapshot_state()
        except NotCheckpointable as e:
            raise CheckpointError(f"operator {e.operator} (vertex {chain.vertex_id}) cannot be "
                                  f"checkpointed in its present state ({e.reason})") \
                from None
    valve = chain.valve
    return {"operators": ops, "valve": (list(valve.channel_wm), list(valve.channel_idle),
                                        valve.watermark),
            "ended": sorted(chain.ended), "finished": finished}


class Restored:
    """A checkpoint being restored into a job, perhaps of another parallelism or chaining:
    each operator finds its old state by its node id (one state per old subtask)."""

    def __init__(self, checkpoint: Checkpoint) -> None:
        self.checkpoint = checkpoint
        self.where = str(checkpoint.path)
        self.vertex_of: dict[int, tuple[str, int, list[int]]] = {}
        for vid, v in checkpoint.metadata["layout"].items():
            for node in v["nodes"]:
                self.vertex_of[node] = (vid, int(v["parallelism"]), list(v["nodes"]))
        self._files: dict[str, dict[str, Any]] = {}

    def _file(self, name: str) -> dict[str, Any]:
        if name not in self._files:
            self._files[name] = self.checkpoint.state(name)
        return self._files[name]

    def states(self, node: int) -> list[dict[str, Any]]:
        """The subtask states of the old vertex that ran ``node``."""
        if node not in self.vertex_of:
            raise CheckpointError(f"checkpoint {self.where!r} has no state for operator "
                                  f"{node}")
        vid, parallelism, _ = self.vertex_of[node]
        return [self._file(f"{vid}-{i}") for i in range(parallelism)]


def restore_task(chain: ChainedTask, restored: Restored, subtask: int,
                 parallelism: int) -> dict[str, Any] | None:
    """Set back each operator's state from what the old subtasks wrote; returns the task's
    own old state when the job ran this chain at this parallelism (else None: its watermark
    starts at the lowest old one)."""
    try:
        return _restore_task(chain, restored, subtask, parallelism)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
        # (a state file of another shape: one not written by this engine's tasks)
        raise CheckpointError(f"checkpoint {restored.where!r}: the state of vertex "
                              f"{chain.vertex_id} is not a task's state "
                              f"({type(e).__name__}: {e})") from None


def _restore_task(chain: ChainedTask, restored: Restored, subtask: int,
                  parallelism: int) -> dict[str, Any] | None:
    where = restored.where
    for node, op in zip(chain.nodes, chain.operators):
        failpoint("restore")
        states = [s["operators"][str(node)] for s in restored.states(node)]
        try:
            op.restore_from(states, subtask, parallelism)
        except NotRescalable as e:
            raise CheckpointError(f"checkpoint {where!r}: operator {e.operator} (vertex "
                                  f"{chain.vertex_id}) was checkpointed with parallelism "
                                  f"{len(states)} and cannot be restored at {parallelism} "
                                  "yet") from None
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
            raise CheckpointError(f"checkpoint {where!r}: the state of operator {op.name} "
                                  f"(vertex {chain.vertex_id}) does not fit it "
                                  f"({type(e).__name__}: {e})") from None
    head = chain.nodes[0]
    old = restored.states(head)
    _, old_parallelism, old_nodes = restored.vertex_of[head]
    valve = chain.valve
    own = old[subtask] if old_parallelism == parallelism and \
        old_nodes == list(chain.nodes) else None
    if own is not None and len(own["valve"][0]) == len(valve.channel_wm):
        valve.restore(list(own["valve"][0]), list(own["valve"][1]), int(own["valve"][2]))
        # (input channels that had ended: their end, sent again by a restored producer,
        # is not processed twice)
        chain.ended = set(own.get("ended", ()))
        return own
    low = min(int(s["valve"][2]) for s in old)
    valve.restore([low] * len(valve.channel_wm), [False] * len(valve.channel_wm), low)
    return None
