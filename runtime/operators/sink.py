"""Sinks: collect (for the API), and a table's connector sink (print, blackhole, filesystem, ...)
writing through the connector's SinkWriter."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pyarrow as pa

from sqlengine import connectors
from sqlengine.connectors import SinkWriter
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


def row_kind_names(batch: pa.RecordBatch) -> pa.Array | None:
    """The rows' kinds as short names (+I, -U, +U, -D), None for an insert-only batch."""
    if not has_rowkind(batch):
        return None
    kinds = batch.column(batch.num_columns - 1).to_numpy(zero_copy_only=False)
    return pa.array(_KIND_NAMES[kinds], pa.string())


class ConnectorSink(Operator):
    """Writes its input's data columns (and row kinds) with a connector's SinkWriter."""

    def __init__(self, writer: SinkWriter, table: str = "",
                 not_null: tuple[str, ...] = ()) -> None:
        self.writer = writer
        self.name = writer.name
        self.table = table
        self.not_null = not_null  # the table's NOT NULL columns

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
                   tuple(f.name for f in schema if not f.nullable))

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
        data = data_part(batch)
        for name in self.not_null:  # (Flink's table.exec.sink.not-null-enforcer = ERROR)
            if data.column(name).null_count:
                msg = (f"column {name!r} of table {self.table!r} is NOT NULL, but a NULL "
                       "value is being written into it")
                raise ExecutionError(msg)
        self.writer.write(data, row_kind_names(batch))
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
