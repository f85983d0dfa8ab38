"""The datagen connector (Flink's options): random or sequence fields, vectorised with numpy,
throttled to 'rows-per-second', bounded by 'number-of-rows' or by a sequence's end."""

from __future__ import annotations

import decimal
import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.cast import WIDE_DECIMALS
from sqlengine.connectors.base import (
    LENGTHS_OPTION,
    Clock,
    Connector,
    Fail,
    OptionSpec,
    SourceCursor,
    SourceRead,
    strided_done,
)
from sqlengine.errors import ConnectorError, SqlEngineError
from sqlengine.options import parse_duration
from sqlengine.statistics import UNKNOWN_ROWS, ColumnStats, Estimate, type_width
from sqlengine.types import type_name

if TYPE_CHECKING:
    from sqlengine.catalog import TableDef
    from sqlengine.plan.nodes import Schema, SourceSpec

_ALPHABET = np.frombuffer(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
                          dtype=np.uint8)
_INT_RANGE = {pa.int8(): (-128, 127), pa.int16(): (-32768, 32767),
              pa.int32(): (-(2**31), 2**31 - 1), pa.int64(): (-(2**63), 2**63 - 1)}


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """How one column is generated ('fields.<col>.*')."""

    name: str
    type: pa.DataType
    kind: str  # random | sequence
    null_rate: float = 0.0
    start: int = 0  # sequence
    end: int = 0
    min: str | None = None  # random
    max: str | None = None
    length: int = 100
    max_past: int = 0


class DatagenReader:
    def __init__(self, table: str, options: dict[str, str], schema: pa.Schema,
                 clock: Clock = time, split: tuple[int, int] = (0, 1),
                 cursor: SourceCursor | None = None) -> None:
        self.table = table
        self.cursor = cursor
        self.schema = schema
        self.options = options
        self.rate = int(options.get("rows-per-second", "10000"))
        total = options.get("number-of-rows")
        self.total = int(total) if total is not None else None
        # A seeded generator draws each chunk from its own stream (seed, chunk number), so the
        # rows do not depend on how many subtasks share the chunks.
        self.seed = int(options["seed"]) if "seed" in options else None
        self.rng = np.random.default_rng(self.seed)
        self.split = split
        self.clock = clock
        self.fields = [self._field_spec(f) for f in schema]
        seq_lengths = [s.end - s.start + 1 for s in self.fields if s.kind == "sequence"]
        if seq_lengths:
            self.total = min([*seq_lengths, *([self.total] if self.total is not None else [])])

    def _opt(self, col: str, key: str) -> str | None:
        return self.options.get(f"fields.{col}.{key}")

    def _field_spec(self, f: pa.Field) -> FieldSpec:
        kind = self._opt(f.name, "kind") or "random"
        null_rate = float(self._opt(f.name, "null-rate") or 0)
        if kind == "sequence":
            start, end = self._opt(f.name, "start"), self._opt(f.name, "end")
            if start is None or end is None:
                msg = (f"table {self.table!r}: sequence field {f.name!r} needs options "
                       f"'fields.{f.name}.start' and 'fields.{f.name}.end'")
                raise ConnectorError(msg)
            if not (pa.types.is_integer(f.type) or pa.types.is_string(f.type)
                    or pa.types.is_decimal(f.type) or pa.types.is_floating(f.type)):
                msg = (f"table {self.table!r}: option 'fields.{f.name}.kind' = 'sequence' "
                       f"does not support type {f.type}")
                raise ConnectorError(msg)
            return FieldSpec(f.name, f.type, kind, null_rate, start=int(float(start)),
                             end=int(float(end)))
        declared = declared_lengths(self.options).get(f.name)
        given = self._opt(f.name, "length")
        length = int(given) if given is not None else \
            declared[1] if declared is not None else 100
        past = self._opt(f.name, "max-past")
        return FieldSpec(f.name, f.type, kind, null_rate, min=self._opt(f.name, "min"),
                         max=self._opt(f.name, "max"), length=length,
                         max_past=parse_duration(past, f"fields.{f.name}.max-past")
                         if past else 0)

    def batches(self) -> Iterator[pa.RecordBatch]:
        """This subtask's chunks (chunk c goes to subtask c mod parallelism), each subtask at
        its share of 'rows-per-second'."""
        index, parallelism = self.split
        rate = self.rate / parallelism
        chunk = max(1, min(self.rate // 10 or 1, 8192))
        started = self.clock.monotonic()
        mine = 0  # rows this subtask produced
        c = index
        key = f"datagen:{index}/{parallelism}"  # (its value: the next chunk this subtask reads)
        cursor = self.cursor
        while self.total is None or c * chunk < self.total:
            if cursor is not None and strided_done(cursor.start, "datagen", c):
                c += parallelism  # (read before the checkpoint)
                continue
            offset = c * chunk
            n = chunk if self.total is None else min(chunk, self.total - offset)
            due = started + (mine + n) / rate if rate > 0 else 0
            wait = due - self.clock.monotonic()
            if wait > 0:
                self.clock.sleep(wait)
            if self.seed is not None:
                self.rng = np.random.default_rng([self.seed, c])
            if cursor is not None:
                cursor.position = {k: v for k, v in cursor.position.items()
                                   if not k.startswith("datagen:")} | {key: c + parallelism}
            yield self._generate(offset, n)
            mine += n
            c += parallelism

    def _generate(self, offset: int, n: int) -> pa.RecordBatch:
        arrays = [self._column(spec, offset, n) for spec in self.fields]
        return pa.RecordBatch.from_arrays(arrays, schema=self.schema)

    def _column(self, spec: FieldSpec, offset: int, n: int) -> pa.Array:
        t = spec.type
        if spec.kind == "sequence":
            values = np.arange(offset, offset + n, dtype=np.int64) + spec.start
            arr = pa.array(values).cast(pa.string()) if pa.types.is_string(t) else \
                pa.array(values).cast(t)
        else:
            arr = self._random(spec, t, n)
        rate = spec.null_rate
        if rate > 0:
            mask = pa.array(self.rng.random(n) < rate)
            arr = pc.if_else(mask, pa.nulls(n, t), arr)
        return arr

    def _bounds(self, spec: FieldSpec, lo: float, hi: float) -> tuple[float, float]:
        mn = float(spec.min) if spec.min is not None else lo
        mx = float(spec.max) if spec.max is not None else hi
        return mn, mx

    def _random(self, spec: FieldSpec, t: pa.DataType, n: int) -> pa.Array:
        rng = self.rng
        if pa.types.is_integer(t):
            lo, hi = _INT_RANGE.get(t, (-(2**63), 2**63 - 1))
            mn, mx = self._bounds(spec, lo, hi)
            return pa.array(rng.integers(int(mn), int(mx), size=n, endpoint=True,
                                         dtype=np.int64)).cast(t)
        if pa.types.is_floating(t):
            mn, mx = self._bounds(spec, -1e9, 1e9)
            return pa.array(rng.uniform(mn, mx, size=n)).cast(t)
        if pa.types.is_decimal(t):
            top = decimal.Decimal(10) ** (t.precision - t.scale) - 1
            lo = decimal.Decimal(spec.min) if spec.min is not None else -top
            hi = decimal.Decimal(spec.max) if spec.max is not None else top
            unit = decimal.Decimal(10) ** t.scale
            lo_s, hi_s = int(lo * unit), int(hi * unit)
            # (unscaled values past int64, a DECIMAL(38, 30)'s: drawn in steps of 10^k)
            k = 0
            while max(abs(lo_s), abs(hi_s)) // 10 ** k >= 1 << 62:
                k += 1
            step = 10 ** k
            drawn = rng.integers(-(-lo_s // step), hi_s // step, size=n, endpoint=True,
                                 dtype=np.int64)
            return _scaled_decimal(drawn, t, step)
        if pa.types.is_boolean(t):
            return pa.array(rng.random(n) < 0.5)
        if pa.types.is_string(t):
            length = spec.length
            data = _ALPHABET[rng.integers(0, len(_ALPHABET), size=n * length)]
            offsets = np.arange(0, (n + 1) * length, length, dtype=np.int32)
            return pa.StringArray.from_buffers(n, pa.py_buffer(offsets.tobytes()),
                                               pa.py_buffer(data.tobytes()))
        if pa.types.is_timestamp(t) or pa.types.is_date(t):
            now = int(time.time() * 1000)
            past = spec.max_past
            ms = now - rng.integers(0, past + 1, size=n) if past else np.full(n, now)
            ts = pa.array(ms, pa.timestamp("ms"))
            return ts.cast(t) if pa.types.is_timestamp(t) else \
                pc.floor_temporal(ts, unit="day").cast(t)
        if pa.types.is_time(t):  # (Flink's: the time of day now)
            unit = {"s": 1, "ms": 1000, "us": 10**6, "ns": 10**9}[t.unit]
            now = time.time_ns() * unit // 10**9 % (86400 * unit)
            store = pa.int32() if t.bit_width == 32 else pa.int64()
            return pa.array(np.full(n, now), store).cast(t)
        if pa.types.is_binary(t) or pa.types.is_fixed_size_binary(t):
            # (Flink's: 'length' random bytes, a BINARY(n) column's n)
            length = t.byte_width if pa.types.is_fixed_size_binary(t) else spec.length
            data = rng.integers(0, 256, size=n * length, dtype=np.uint8)
            offsets = np.arange(0, (n + 1) * length, length, dtype=np.int32)
            out = pa.BinaryArray.from_buffers(pa.binary(), n, [
                None, pa.py_buffer(offsets.tobytes()), pa.py_buffer(data.tobytes())])
            return out.cast(t)
        msg = f"table {self.table!r}: datagen cannot generate column {spec.name!r} of {t}"
        raise ConnectorError(msg)


def _scaled_decimal(scaled: np.ndarray, t: pa.Decimal128Type, step: int = 1) -> pa.Array:
    """DECIMALs of the unscaled values ``scaled * step``."""
    wide = WIDE_DECIMALS
    q = decimal.Decimal(1).scaleb(-t.scale)
    return pa.array([decimal.Decimal(int(v) * step).scaleb(-t.scale, wide).quantize(q,
                                                                                  context=wide)
                     for v in scaled], t)


def declared_lengths(options: dict[str, str]) -> dict[str, tuple[str, int]]:
    """The CHAR(n) / VARCHAR(n) columns' declared lengths (Flink generates strings of that
    length, not 100 characters)."""
    text = options.get(LENGTHS_OPTION)
    return {c: (k, int(n)) for c, (k, n) in json.loads(text).items()} if text else {}


def _number(key: str, value: str, t: pa.DataType, fail: Fail) -> float | int:
    """A min / max / start / end value for a column of type ``t``: an integer within its
    range for an integer column, a number otherwise (as Flink parses them)."""
    if pa.types.is_integer(t) or pa.types.is_string(t):
        if not re.fullmatch(r"\s*[-+]?\d+\s*", value):
            raise fail(key, f"option {key!r} must be an integer, got {value!r}")
        n = int(value)
        lo, hi = _INT_RANGE.get(t, (-(2**63), 2**63 - 1))
        if not lo <= n <= hi:
            raise fail(key, f"option {key!r} = {value!r} is out of the range of "
                       f"{type_name(t)} ({lo}..{hi})")
        return n
    try:
        number = decimal.Decimal(value.strip())
    except decimal.InvalidOperation:
        raise fail(key, f"option {key!r} must be a number, got {value!r}") from None
    if pa.types.is_decimal(t):
        top = decimal.Decimal(10) ** (t.precision - t.scale) - decimal.Decimal(1).scaleb(
            -t.scale)
        if not -top <= number <= top:
            raise fail(key, f"option {key!r} = {value!r} is out of the range of "
                       f"{type_name(t)} ({-top}..{top})")
    return float(number)


def _check_field(col: str, t: pa.DataType, options: dict[str, str],
                 declared: tuple[str, int] | None, fail: Fail) -> None:
    """A column's option values, as Flink's datagen checks them when the table is read."""
    def opt(name: str) -> tuple[str, str | None]:
        key = f"fields.{col}.{name}"
        return key, options.get(key)

    kind = options.get(f"fields.{col}.kind", "random")
    pair = ("start", "end") if kind == "sequence" else ("min", "max")
    if kind == "sequence" and not (pa.types.is_integer(t) or pa.types.is_string(t)):
        # (the sequence steps by 1 from an integer start)
        for name in pair:
            key, value = opt(name)
            if value is not None and not re.fullmatch(r"\s*[-+]?\d+\s*", value):
                raise fail(key, f"option {key!r} must be an integer, got {value!r}")
    bounds = []
    for name in pair:
        key, value = opt(name)
        bounds.append(None if value is None else _number(key, value, t, fail))
    if None not in bounds and bounds[0] > bounds[1]:  # type: ignore[operator]
        key, _ = opt(pair[0])
        raise fail(key, f"option {key!r} ({bounds[0]}) is greater than "
                   f"'fields.{col}.{pair[1]}' ({bounds[1]})")
    key, value = opt("length")
    if value is not None:
        if not re.fullmatch(r"\s*\d+\s*", value):
            raise fail(key, f"option {key!r} must be a non-negative integer, got {value!r}")
        if declared is not None and declared[0] == "CHAR":
            raise fail(key, f"option {key!r} would change the length of a CHAR("
                       f"{declared[1]}) column (its values have {declared[1]} characters)")
        if declared is not None and int(value) > declared[1]:
            raise fail(key, f"option {key!r} = {value!r} is longer than the column's "
                       f"{declared[0]}({declared[1]})")
    key, value = opt("max-past")
    if value is not None:
        try:
            parse_duration(value, key)
        except SqlEngineError as e:
            raise fail(key, e.message) from None
    key, value = opt("null-rate")
    if value is not None:
        try:
            rate = float(value)
        except ValueError:
            raise fail(key, f"option {key!r} must be a number, got {value!r}") from None
        if not 0 <= rate <= 1:
            raise fail(key, f"option {key!r} is a fraction of the rows, from 0 to 1; got "
                       f"{value!r}")


_FIELD_OPTION = re.compile(r"^fields\.(?P<col>.+)\.(?P<opt>kind|min|max|max-past|length|start|"
                           r"end|null-rate|seed)$")


def _takes(kind: str, t: pa.DataType) -> tuple[str, ...]:
    """The per-column options a column of ``kind`` and type ``t`` uses."""
    if kind == "sequence":
        return ("kind", "start", "end", "null-rate")
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
        return ("kind", "min", "max", "null-rate")
    if pa.types.is_string(t) or pa.types.is_binary(t):
        return ("kind", "length", "null-rate")
    if pa.types.is_timestamp(t) or pa.types.is_date(t):
        return ("kind", "max-past", "null-rate")
    return ("kind", "null-rate")


class Datagen(Connector):
    name = "datagen"
    options: ClassVar[tuple[OptionSpec, ...]] = (
        OptionSpec("rows-per-second", "int"),
        OptionSpec("number-of-rows", "int"),
        OptionSpec("scan.parallelism", "positive"),
        OptionSpec("seed", "int"),  # sqlengine extension: a fixed seed for repeatable data
        OptionSpec("scan.watermark.idle-timeout", "duration"),
    )
    is_source = True

    def check_extra_option(self, key: str, value: str, columns: set[str], fail: Fail) -> bool:
        """The per-column options 'fields.<col>.<option>'."""
        m = _FIELD_OPTION.match(key)
        if m is None:
            return False
        if m.group("col") not in columns:
            raise fail(key, f"option {key!r} names unknown column {m.group('col')!r}")
        if m.group("opt") == "kind" and value not in ("random", "sequence"):
            raise fail(key, f"option {key!r} must be 'random' or 'sequence', got {value!r}")
        return True  # (the values are checked against the column's type: check_columns)

    def type_refusal(self, options: dict[str, str], t: pa.DataType) -> str | None:
        """The types datagen makes values of (every scalar type but the intervals)."""
        if not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)
                or pa.types.is_boolean(t) or pa.types.is_string(t) or pa.types.is_binary(t)
                or pa.types.is_fixed_size_binary(t) or pa.types.is_timestamp(t)
                or pa.types.is_date(t) or pa.types.is_time(t)):
            return f"connector 'datagen' does not generate {type_name(t)} columns"
        return None

    def check_columns(self, options: dict[str, str], schema: Schema, fail: Fail) -> None:
        """A per-column option the column's kind and type do not use would be ignored:
        refused, naming it."""
        types = {f.name: f.type for f in schema.fields}
        for key in options:
            m = _FIELD_OPTION.match(key)
            if m is None or m.group("col") not in types:
                continue
            col, opt = m.group("col"), m.group("opt")
            if opt == "seed":
                raise fail(key, f"option {key!r} is not implemented (the table's 'seed' "
                           "seeds every column); it would be ignored")
            kind = options.get(f"fields.{col}.kind", "random")
            takes = _takes(kind, types[col])
            if opt not in takes:
                raise fail(key, f"option {key!r} would be ignored: a {kind} column of type "
                           f"{type_name(types[col])} takes "
                           f"{', '.join(repr(f'fields.{col}.{o}') for o in takes)}")
        declared = declared_lengths(options)
        for col, t in types.items():
            _check_field(col, t, options, declared.get(col), fail)
        for f in schema.fields:
            key = f"fields.{f.name}.null-rate"
            if not f.nullable and key in options and float(options[key]) > 0:
                raise fail(key, f"option {key!r} would put NULLs in the NOT NULL column "
                           f"{f.name!r}")

    def bounded(self, table: TableDef) -> bool:
        """Bounded by 'number-of-rows', or by a sequence field (it ends when the sequence
        does, as in Flink)."""
        if table.option("number-of-rows") is not None:
            return True
        return any(k.endswith(".kind") and v == "sequence" for k, v in table.options)

    def statistics(self, source: SourceSpec, schema: Schema, data: object | None,
                   read: frozenset[str] | None = None) -> Estimate | None:
        """Rows from 'number-of-rows' or the sequences; per column the ranges generated."""
        rows_opt = source.option("number-of-rows")
        rows = float(rows_opt) if rows_opt else UNKNOWN_ROWS
        cols = []
        width = 0.0
        for f in schema.fields:
            kind = source.option(f"fields.{f.name}.kind") or "random"
            lo, hi = source.option(f"fields.{f.name}.min"), source.option(f"fields.{f.name}.max")
            if kind == "sequence":
                start = float(source.option(f"fields.{f.name}.start") or 0)
                end = float(source.option(f"fields.{f.name}.end") or 0)
                rows = min(rows, end - start + 1)
                cols.append(ColumnStats(end - start + 1, start, end))
            elif lo is not None and hi is not None and pa.types.is_integer(f.type):
                cols.append(ColumnStats(min(rows, float(hi) - float(lo) + 1), float(lo),
                                        float(hi)))
            else:
                cols.append(ColumnStats(None, float(lo) if lo else None,
                                        float(hi) if hi else None))
            length = source.option(f"fields.{f.name}.length")
            width += float(length) if length and pa.types.is_string(f.type) else \
                type_width(f.type)
        return Estimate(rows, max(width, 1.0), tuple(cols))

    def checkpoint_refusal(self, read: SourceRead) -> str | None:
        # (chunks are generated from their number: a sequence, or random values with a
        # 'seed', come again the same after a restore; unseeded random values do not, as in
        # Flink, but no row is lost or read twice)
        return None

    def open_source(self, read: SourceRead) -> Iterator[object]:
        return DatagenReader(read.table, read.options, read.schema, split=read.split,
                             cursor=read.cursor).batches()


CONNECTOR = Datagen()
