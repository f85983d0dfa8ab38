"""The cost model (Flink's Costs and CostEstimator): network bytes, disk bytes and CPU (rows
handled) of shipping a node's inputs along their exchanges and of running its operator."""

from __future__ import annotations

import math
from dataclasses import dataclass

from sqlengine.optimizer.config import OptimizerConfig
from sqlengine.optimizer.physical import Exchange, Partitioning, PhysicalNode
from sqlengine.optimizer.specs import SortSpec
from sqlengine.optimizer.specs_windows import TopNSpec, WindowTopNSpec


@dataclass(frozen=True, slots=True)
class Cost:
    """Flink's Costs: bytes over the network, bytes to disk, and CPU (rows handled)."""

    network: float = 0.0
    disk: float = 0.0
    cpu: float = 0.0

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.network + other.network, self.disk + other.disk,
                    self.cpu + other.cpu)

    @property
    def total(self) -> float:
        # A byte shipped costs more than a row handled; a byte spilled more than shipped.
        return self.network + 2.0 * self.disk + 4.0 * self.cpu

    def label(self) -> str:
        return (f"network={_size(self.network)}, disk={_size(self.disk)}, "
                f"cpu={self.cpu:,.0f} rows")


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"


class CostModel:
    """The cost of shipping inputs along their exchanges, and of an operator's work."""

    @staticmethod
    def for_options(options: dict[str, str]) -> CostModel:
        config = OptimizerConfig.from_options(options)
        return CostModel(config.parallelism, config.blocking)

    def __init__(self, parallelism: int, blocking: bool = False) -> None:
        self.parallelism = parallelism
        self.blocking = blocking  # shuffles write their results to disk first

    def exchange(self, child: PhysicalNode, ex: Exchange) -> Cost:
        est = child.estimate
        if est is None:
            return Cost()
        data = est.bytes
        rows = est.rows
        p = self.parallelism
        if ex.partitioning is Partitioning.FORWARD:
            return Cost()
        spill = 1.0 if self.blocking else 0.0
        if ex.partitioning is Partitioning.BROADCAST:
            # every subtask gets every row, and builds its own table of them
            return Cost(network=data * p, disk=spill * data * p, cpu=rows * p)
        # HASH / REBALANCE / RANGE / GLOBAL: every row crosses once (and is hashed)
        return Cost(network=data, disk=spill * data, cpu=rows)

    def exchanges(self, inputs: tuple[tuple[PhysicalNode, Exchange], ...]) -> Cost:
        total = Cost()
        for child, ex in inputs:
            total = total + self.exchange(child, ex)
        return total

    def operator(self, node: PhysicalNode) -> Cost:
        est = node.estimate
        rows_in = sum(getattr(c.estimate, "rows", 0.0) for c, _ in node.inputs)
        cpu = rows_in
        if isinstance(node.op, SortSpec | TopNSpec | WindowTopNSpec) and rows_in > 1:
            cpu = rows_in * math.log2(rows_in)
        return Cost(cpu=cpu) if est is not None or node.inputs else Cost()

    def total(self, root: PhysicalNode) -> dict[int, Cost]:
        """Cumulative cost per node (each shared node counted once)."""
        out: dict[int, Cost] = {}

        def visit(node: PhysicalNode) -> Cost:
            if id(node) in out:
                return Cost()  # (already counted under another consumer)
            cost = self.operator(node) + self.exchanges(node.inputs)
            for child, _ in node.inputs:
                cost = cost + visit(child)
            out[id(node)] = cost
            return cost

        visit(root)
        return out


