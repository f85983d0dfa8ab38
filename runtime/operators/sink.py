"""Sinks: collect (for the API), and a table's connector sink (print, blackhole, filesystem, ...)
writing through the connector's SinkWriter."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine import connectors
from sqlengine.connectors import NOT_NULL_ENFORCER, SinkWriter
from sqlengine.errors import ExecutionError, NotSupportedError
from sqlengine.runtime.elements import ROWKIND_NAMES, Watermark, data_part, has_rowkind
from sqlengine.runtime.operators.base import Operator

_KIND_NAMES = np.array(ROWKIND_NAMES, dtype=object)


class CollectSink(Operator):
    """Keeps what arrives for the caller (the API drains ``pending`` as the job runs). In a
    checkpointing job it is at-least-once: rows handed out after the last checkpoint come
    again after a restore."""

    name = "Collect"
    state_fields = ()

    def __init__(self) -> None:
        self.pending: list[pa.RecordBatch] = []
        self.rows = 0

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        self.pending.append(batch)
        self.rows += batch.num_rows
        return ()

    def drain(self) -> list[pa.RecordBatch]:
        out, self.pending = self.pending, []
        return out


RowsT = TypeVar("RowsT", pa.RecordBatch, pa.Table)


def row_kind_names(batch: pa.RecordBatch) -> pa.Array | None:
    """The rows' kinds as short names (+I, -U, +U, -D), None for an insert-only batch."""
    if not has_rowkind(batch):
        return None
    kinds = batch.column(batch.num_columns - 1).to_numpy(zero_copy_only=False)
    return pa.array(_KIND_NAMES[kinds], pa.string())


def not_null_error(column: str, table: str) -> ExecutionError:
    return ExecutionError(f"column {column!r} of table {table!r} is NOT NULL, but a NULL value "
                          "is being written into it (set 'table.exec.sink.not-null-enforcer' = "
                          "'DROP' to drop such rows without a word, as Flink)")


def enforce_not_null(rows: RowsT, not_null: tuple[str, ...], drop: bool, table: str) -> RowsT:
    """Flink's 'table.exec.sink.not-null-enforcer' over rows written into ``table``: a NULL
    in one of its ``not_null`` columns fails (ERROR) or its row is dropped (DROP)."""
    nulls = [name for name in not_null if rows.column(name).null_count]
    if not nulls:
        return rows
    if not drop:
        raise not_null_error(nulls[0], table)
    valid = pc.is_valid(rows.column(nulls[0]))
    for name in nulls[1:]:
        valid = pc.and_(valid, pc.is_valid(rows.column(name)))
    return rows.filter(valid)


class ConnectorSink(Operator):
    """Writes its input's data columns (and row kinds) with a connector's SinkWriter."""

    def __init__(self, writer: SinkWriter, table: str = "",
                 not_null: tuple[str, ...] = (), drop_nulls: bool = False) -> None:
        self.writer = writer
        self.name = writer.name
        self.table = table
        self.not_null = not_null  # the table's NOT NULL columns
        # 'table.exec.sink.not-null-enforcer': a row with a NULL in one of them fails the
        # job (ERROR, Flink's default) or is dropped without a word (DROP)
        self.drop_nulls = drop_nulls

    @classmethod
    def open(cls, table: str, connector: str, options: dict[str, str],
             schema: pa.Schema) -> ConnectorSink:
        """The sink of a table: '$overwrite' (INSERT OVERWRITE) is read off the options."""
        overwrite = options.get("$overwrite") == "true"
        clean = cls.clean_options(options)
        found = connectors.find(connector)
        if found is None:
            msg = f"connector {connector!r} cannot be written"
            raise NotSupportedError(msg)
        return cls(found.open_sink(table, clean, schema, overwrite), table,
                   tuple(f.name for f in schema if not f.nullable),
                   options.get(NOT_NULL_ENFORCER) == "DROP")

    @staticmethod
    def clean_options(options: dict[str, str]) -> dict[str, str]:
        """The table's options without the planner's internal ones (but its partitioning and
        primary key)."""
        return {k: v for k, v in options.items()
                if not k.startswith("$") or k in (connectors.PARTITION_KEYS_OPTION,
                                                  connectors.PRIMARY_KEY_OPTION,
                                                  "$overwrite-before")}

    @property
    def rows(self) -> int:
        return self.writer.rows

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        batch = enforce_not_null(batch, self.not_null, self.drop_nulls, self.table)
        if batch.num_rows:
            self.writer.write(data_part(batch), row_kind_names(batch))
        return ()

    def process_watermark(self, wm: Watermark) -> Iterable[pa.RecordBatch]:
        self.writer.watermark(wm.timestamp)
        return ()

    def end_input(self, input_index: int = 0) -> Iterable[pa.RecordBatch]:
        self.writer.end_input()
        return ()

    # (a checkpoint: the writer's two-phase commit, sinks/base.py's SinkWriter)
    def prepare_snapshot(self, checkpoint: int) -> None:
        self.writer.prepare_commit(checkpoint)

    def snapshot_state(self) -> dict[str, object]:
        return {"writer": self.writer.snapshot()}

    def restore_from(self, states: list[Mapping[str, object]], subtask: int,
                     parallelism: int) -> None:
        self.writer.restore([s.get("writer") for s in states], subtask, parallelism)

    def notify_checkpoint_complete(self, checkpoint: int) -> None:
        self.writer.commit(checkpoint)

    def close(self) -> None:
        self.writer.close()
