"""Flink's bitmap aggregates (Flink 2.3): BITMAP_BUILD_AGG(INT), BITMAP_AND_AGG /
BITMAP_OR_AGG / BITMAP_XOR_AGG(BITMAP), and each one's _CARDINALITY_AGG form (the result's
cardinality, a BIGINT).

They are built-in aggregate functions on the path of Python aggregates
(functions_python.UserFunction, runtime/operators/python_aggregate.py), which gives them an
accumulator object per group in GROUP BY, window and OVER aggregations, both phases of a
two-phase aggregation and checkpoints. ``accumulate_arrays`` takes a group's rows of a batch at
once (a bitmap's values go to CRoaring as one array).

As Flink's: NULL inputs are skipped; a group without a non-NULL input is NULL (the
cardinalities too). Over an append-only input an accumulator is the result so far (a BitMap);
over an updating input (Flink's *WithRetract functions) it counts each value's multiplicity
(BUILD: the rows holding the value; AND / OR / XOR: the live bitmaps holding it), so a
retraction takes out one row: OR keeps the values counted at least once, AND those counted
by every live bitmap, XOR those counted an odd number of times.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

from sqlengine import bitmap as B
from sqlengine.opaque_type import storage
from sqlengine.types import BIGINT, INT

KEY_PREFIX = "py:"
KEY_SUFFIX = ":builtin"


class Plain:
    """An append-only group's accumulator: the result so far and the non-NULL inputs."""

    __slots__ = ("bm", "rows")

    def __init__(self) -> None:
        self.bm: Any = None  # (a BitMap once the first non-NULL input came)
        self.rows = 0

    def __getstate__(self) -> tuple[bytes | None, int]:
        return (None if self.bm is None else self.bm.serialize()), self.rows

    def __setstate__(self, state: tuple[bytes | None, int]) -> None:
        raw, self.rows = state
        self.bm = None if raw is None else B.load(raw)


class Counted:
    """An updating group's accumulator: each value's count (sorted unsigned values beside
    their counts) and the live non-NULL inputs."""

    __slots__ = ("counts", "rows", "values")

    def __init__(self) -> None:
        self.values = np.zeros(0, np.uint32)
        self.counts = np.zeros(0, np.int64)
        self.rows = 0

    def add(self, values: np.ndarray, weights: np.ndarray) -> None:
        """Add ``weights`` to the counts of ``values`` (a value whose count falls to 0 goes)."""
        if not len(values):
            return
        merged, at = np.unique(np.concatenate([self.values, values]), return_inverse=True)
        counts = np.bincount(at, weights=np.concatenate([self.counts, weights]).astype(
            np.float64), minlength=len(merged)).astype(np.int64)
        keep = counts != 0
        self.values, self.counts = merged[keep], counts[keep]

    def __getstate__(self) -> tuple[bytes, bytes, int]:
        return self.values.tobytes(), self.counts.tobytes(), self.rows

    def __setstate__(self, state: tuple[bytes, bytes, int]) -> None:
        values, counts, self.rows = state
        self.values = np.frombuffer(values, np.uint32).copy()
        self.counts = np.frombuffer(counts, np.int64).copy()


@dataclass(frozen=True)
class BitmapAggregate:
    """One of the eight functions: ``op`` 'build', 'and', 'or' or 'xor'; ``cardinality``:
    the _CARDINALITY_AGG form."""

    op: str
    cardinality: bool

    @property
    def name(self) -> str:
        card = "_CARDINALITY" if self.cardinality else ""
        return f"BITMAP_{self.op.upper()}{card}_AGG"

    def argument_refusal(self, t: pa.DataType) -> str | None:
        """Why an argument of type ``t`` is refused (None: taken)."""
        if self.op == "build":
            ok = pa.types.is_integer(t) and t.bit_width <= 32
            return None if ok else f"{self.name} takes a TINYINT, SMALLINT or INT value " \
                f"(Flink's INTEGER family; CAST a BIGINT AS INT), got {_name(t)}"
        return None if B.is_bitmap(t) else f"{self.name} takes a BITMAP, got {_name(t)}"

    def null_type(self) -> pa.DataType:
        """The type a bare NULL argument is read as."""
        return INT if self.op == "build" else B.BITMAP

    # -- PyFlink's AggregateFunction methods --------------------------------------------------
    def create_accumulator(self) -> Plain:
        return Plain()

    def create_retracting_accumulator(self) -> Counted:
        return Counted()

    def accumulate(self, acc: Plain | Counted, value: object) -> None:
        self._apply(acc, [value], 1)

    def retract(self, acc: Plain | Counted, value: object) -> None:
        self._apply(acc, [value], -1)

    def accumulate_arrays(self, acc: Plain | Counted, arg: pa.Array,
                          signs: np.ndarray | None) -> None:
        """A group's rows of a batch (``signs``: -1 where a row is retracted)."""
        valid = np.asarray(arg.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        if self.op == "build":
            values = np.asarray(arg.fill_null(0).to_numpy(zero_copy_only=False))
            values = values.astype(np.int64).astype(np.uint32)[valid]
            weights = np.ones(len(values), np.int64) if signs is None else signs[valid]
            self._add_values(acc, values, weights)
            return
        raws = storage(arg).to_pylist()
        for i in np.flatnonzero(valid).tolist():
            self._add_bitmap(acc, B.load(raws[i]), 1 if signs is None else int(signs[i]))

    def merge(self, acc: Plain | Counted, others: list[Plain | Counted]) -> None:
        for other in others:
            if isinstance(acc, Plain) != isinstance(other, Plain):
                msg = f"{self.name}: cannot merge an append-only and an updating accumulator"
                raise TypeError(msg)
            if isinstance(other, Counted):
                acc.add(other.values, other.counts)  # type: ignore[union-attr]
                acc.rows += other.rows
            elif other.bm is not None:
                self._fold(acc, other.bm)  # type: ignore[arg-type]
                acc.rows += other.rows

    def get_value(self, acc: Plain | Counted) -> object:
        if acc.rows <= 0:
            return None
        if isinstance(acc, Plain):
            bm = acc.bm
        else:
            if self.op == "and":
                take = acc.counts == acc.rows
            elif self.op == "xor":
                take = acc.counts % 2 == 1
            else:
                take = acc.counts > 0
            bm = B.new(acc.values[take])
        return len(bm) if self.cardinality else B.dump(bm)

    # -- the work ---------------------------------------------------------------------------
    def _apply(self, acc: Plain | Counted, values: list[object], sign: int) -> None:
        for value in values:
            if value is None:
                continue
            if self.op == "build":
                self._add_values(acc, np.array([int(value) & 0xFFFFFFFF], np.uint32),
                                 np.array([sign], np.int64))
            else:
                bm = value if not isinstance(value, bytes) else B.load(value)
                self._add_bitmap(acc, bm, sign)

    def _add_values(self, acc: Plain | Counted, values: np.ndarray,
                    weights: np.ndarray) -> None:
        if isinstance(acc, Counted):
            acc.add(values, weights)
            acc.rows += int(weights.sum())
            return
        if (weights < 0).any():
            raise TypeError(f"{self.name}: a retraction reached an append-only accumulator")
        if len(values):
            if acc.bm is None:
                acc.bm = B.new()
            acc.bm.update(values)
            acc.rows += len(values)

    def _add_bitmap(self, acc: Plain | Counted, bm: Any, sign: int) -> None:
        if isinstance(acc, Counted):
            values = np.asarray(bm.to_array(), dtype=np.uint32)
            acc.add(values, np.full(len(values), sign, np.int64))
            acc.rows += sign
            return
        if sign < 0:
            raise TypeError(f"{self.name}: a retraction reached an append-only accumulator")
        self._fold(acc, bm)
        acc.rows += 1

    def _fold(self, acc: Plain, bm: Any) -> None:
        if acc.bm is None:
            acc.bm = bm.copy()
        elif self.op == "and":
            acc.bm &= bm
        elif self.op == "xor":
            acc.bm ^= bm
        else:
            acc.bm |= bm


def _name(t: pa.DataType) -> str:
    from sqlengine.types import type_name

    return type_name(t)


FUNCTIONS: dict[str, BitmapAggregate] = {
    f"{KEY_PREFIX}{f.name.lower()}{KEY_SUFFIX}": f
    for op in ("build", "and", "or", "xor") for card in (False, True)
    for f in [BitmapAggregate(op, card)]}
NAMES: dict[str, str] = {f.name.lower(): key for key, f in FUNCTIONS.items()}


def result_type(f: BitmapAggregate) -> pa.DataType:
    return BIGINT if f.cardinality else B.BITMAP
