"""The filesystem sink of a checkpointing job: exactly-once, as Flink's FileSink.

Rows go to an in-progress part file with a hidden name (``.part-<token>-<subtask>-<n>
.inprogress``: readers skip names starting with '.'). At a checkpoint barrier the file is
closed and synced and becomes pending; when that checkpoint completes (its metadata is
written) pending files are committed: linked to their visible name ``part-<token>-<subtask>-
<n>`` and their hidden name removed. A restored job commits what its checkpoint lists as
pending (the checkpoint completed, so its files are part of the result, whether or not the
crash came before their commit) and deletes what was written after it (hidden files of its
token that the checkpoint does not list). The token is drawn when the job first starts and
kept in the checkpoint, so part names never collide with another run's.
"""

from __future__ import annotations

import contextlib
import os
import time
import uuid

import pyarrow as pa
import pyarrow.parquet as pq

from sqlengine.connectors.base import SinkWriter
from sqlengine.connectors.filesystem_files import (
    BULK_FORMATS,
    bulk_writer,
    sink_directory,
    text_bytes,
)
from sqlengine.connectors.filesystem_partitions import PartitionedWriter
from sqlengine.connectors.partition_commit import PartitionCommitter
from sqlengine.connectors.rolling_policy import RollingPolicy
from sqlengine.errors import ConnectorError
from sqlengine.failpoints import hit as failpoint

Pending = tuple[int | None, str, str]  # (checkpoint that covers it, hidden name, visible name)


class CommittingFileWriter(SinkWriter):
    name = "FileSink"
    guarantee = "exactly-once"

    def __init__(self, table: str, options: dict[str, str], schema: pa.Schema,
                 subtask: int = 0) -> None:
        super().__init__()
        self.options = options
        self.schema = schema
        self.format = options["format"]
        self.root = sink_directory(table, options)
        self.subtask = subtask
        self.token = uuid.uuid4().hex[:12]
        self.count = 0  # part files begun
        self.pending: list[Pending] = []
        self._file: object | None = None
        self._parquet: pq.ParquetWriter | None = None
        self._bulk: object | None = None  # (orc, avro: their file writer)
        self._current: tuple[str, str] | None = None  # (hidden, visible) being written
        self._stale: set[str] = set()
        self.policy = RollingPolicy.of(options)
        self._opened = self._written = 0.0

    def set_tokens(self, token: str | None, stale: str) -> None:
        if token:
            self.token = token
        self._stale = {t for t in stale.split(",") if t}

    def _discard_stale(self, keep: set[str]) -> None:
        """Delete what earlier attempts (killed before their first checkpoint, or past the
        one restored) left uncommitted: hidden part files of their tokens. Once, before
        writing; tokens in ``keep`` (the restored line's) are left to ``restore``."""
        stale, self._stale = self._stale - keep, set()
        if not stale:
            return
        for f in self.root.iterdir():
            name = f.name
            if name.startswith(".part-") and name[6:18] in stale and \
                    name.endswith(".inprogress"):
                with contextlib.suppress(FileNotFoundError):
                    f.unlink()

    def _names(self, n: int) -> tuple[str, str]:
        visible = f"part-{self.token}-{self.subtask}-{n}"
        return f".{visible}.inprogress", visible

    def write(self, batch: pa.RecordBatch, kinds: pa.Array | None = None) -> None:
        if batch.schema != self.schema:
            batch = batch.cast(self.schema)
        now = time.monotonic()
        if self._current is not None and \
                self.policy.due(now - self._opened, now - self._written):
            self._roll()
        self._written = now
        self.rows += batch.num_rows
        # (a rolled file is pending: committed with the next checkpoint)
        if self.format not in ("parquet", *BULK_FORMATS):  # (a row format: cut at rows)
            for piece, full in self.policy.pieces(
                    batch, 0 if self._file is None else self._file.tell(),  # type: ignore[attr-defined]
                    lambda b: text_bytes(self.format, b, self.options)):
                self._open(now).write(piece)  # type: ignore[attr-defined]
                if full:
                    self._roll()
        else:
            f = self._open(now)
            if self.format == "parquet":
                if self._parquet is None:
                    self._parquet = pq.ParquetWriter(f, self.schema)
                self._parquet.write_batch(batch)
            else:
                if self._bulk is None:
                    self._bulk = bulk_writer(self.format, f, self.schema, self.options)
                self._bulk.write(batch)  # type: ignore[attr-defined]
            if f.tell() > self.policy.size:  # type: ignore[attr-defined]
                self._roll()

    def _open(self, now: float) -> object:
        """The part file being written, begun if there is none."""
        if self._current is None:
            if self._stale:
                self._discard_stale({self.token})
            hidden, visible = self._names(self.count)
            self.count += 1
            # (O_TRUNC: a leftover of a failed attempt under this name is not part of it)
            self._file = open(self.root / hidden, "wb")  # noqa: SIM115
            self._current = (hidden, visible)
            self._opened = now
        return self._file

    def _roll(self) -> None:
        """The in-progress file is complete: synced, closed and pending."""
        if self._current is None:
            return
        if self._parquet is not None:
            self._parquet.close()
            self._parquet = None
        if self._bulk is not None:
            self._bulk.close()  # type: ignore[attr-defined]
            self._bulk = None
        f = self._file
        f.flush()  # type: ignore[attr-defined]
        os.fsync(f.fileno())  # type: ignore[attr-defined]
        f.close()  # type: ignore[attr-defined]
        self._file = None
        self.pending.append((None, *self._current))
        self._current = None

    def end_input(self) -> None:
        self._roll()  # (committed by the job's final checkpoint)

    def prepare_commit(self, checkpoint: int) -> None:
        self._roll()
        self.pending = [(checkpoint if c is None else c, h, v) for c, h, v in self.pending]

    def snapshot(self) -> object:
        return {"token": self.token, "subtask": self.subtask, "count": self.count,
                "rows": self.rows, "pending": list(self.pending)}

    def commit(self, checkpoint: int) -> None:
        keep: list[Pending] = []
        for c, hidden, visible in self.pending:
            if c is not None and c <= checkpoint:
                failpoint("commit")
                self._publish(hidden, visible)
            else:
                keep.append((c, hidden, visible))
        self.pending = keep

    def _publish(self, hidden: str, visible: str) -> None:
        """Make a pending file visible; done already (a commit repeated after a restore)
        when only the visible name is there."""
        src = self.root / hidden
        try:
            os.link(src, self.root / visible)
        except FileExistsError:
            pass
        except FileNotFoundError:
            if not (self.root / visible).exists():
                msg = (f"sink path {str(self.root)!r}: part file {hidden!r} of a completed "
                       "checkpoint is missing (removed by someone else?)")
                raise ConnectorError(msg) from None
            return
        src.unlink(missing_ok=True)

    def restore(self, states: list[object], subtask: int, parallelism: int) -> None:
        mine = [s for s in states if isinstance(s, dict)]
        self._discard_stale({str(s["token"]) for s in mine})
        # What the checkpoint covered is committed, by the subtask that wrote it or (after a
        # rescale) by the new subtask its index maps to.
        for s in mine:
            if int(s["subtask"]) % parallelism != subtask:
                continue
            for _c, hidden, visible in s["pending"]:
                self._publish(hidden, visible)
            # What that subtask wrote after the checkpoint is not part of the result.
            prefix = f".part-{s['token']}-{s['subtask']}-"
            listed = {h for _c, h, _v in s["pending"]}
            for f in self.root.iterdir():
                if f.name.startswith(prefix) and f.name not in listed:
                    with contextlib.suppress(FileNotFoundError):
                        f.unlink()
        same = len(mine) == parallelism and subtask < len(mine) and \
            int(mine[subtask]["subtask"]) == subtask
        if same:
            s = mine[subtask]
            self.token, self.count = str(s["token"]), int(s["count"])
        # (rescaled: a fresh token, so the new subtasks' names never meet the old ones)
        self.rows = sum(int(s["rows"]) for s in mine if int(s["subtask"]) % parallelism ==
                        subtask)

    def close(self) -> None:
        # An unfinished part file stays hidden: a restore deletes it.
        if self._parquet is not None:
            with contextlib.suppress(Exception):
                self._parquet.close()
        if self._bulk is not None:
            with contextlib.suppress(Exception):
                self._bulk.close()  # type: ignore[attr-defined]
        if self._file is not None:
            self._file.close()  # type: ignore[attr-defined]
            self._file = None


class CommittingPartitionedWriter(PartitionedWriter):
    """A PARTITIONED BY table's sink in a checkpointing job: a CommittingFileWriter per
    partition directory (one name token for all), so each partition's part files are
    committed with the checkpoints as a table's are; with a partition commit policy
    (partition_commit.py) the partitions written up to a completed checkpoint are then
    committed as its trigger says, and every one still pending when the input has ended."""

    guarantee = "exactly-once"

    def __init__(self, table: str, options: dict[str, str], schema: pa.Schema,
                 subtask: int = 0) -> None:
        super().__init__(table, options, schema)
        self.root.mkdir(parents=True, exist_ok=True)
        self.subtask = subtask
        self.token = uuid.uuid4().hex[:12]
        self._stale: set[str] = set()
        self.committer = None if self.policy is None else \
            PartitionCommitter(self.policy, self.root)
        self.current_watermark = -(2**63)

    def _new_writer(self, name: str) -> CommittingFileWriter:
        options = {**self.options, "path": str(self.root / name)}
        writer = CommittingFileWriter(self.table, options, self.data_schema, self.subtask)
        writer.token = self.token
        return writer

    def set_tokens(self, token: str | None, stale: str) -> None:
        if token:
            self.token = token
        self._stale = {t for t in stale.split(",") if t}

    def write(self, batch: pa.RecordBatch, kinds: pa.Array | None = None) -> None:
        if self._stale:  # (earlier attempts' uncommitted files: once, before writing)
            self._discard({t for t in self._stale if t != self.token}, {})
            self._stale = set()
        super().write(batch, kinds)
        if self.committer is not None:
            self.committer.wrote(self.last_written, int(time.time() * 1000))

    def watermark(self, timestamp: int) -> None:
        self.current_watermark = max(self.current_watermark, timestamp)

    def prepare_commit(self, checkpoint: int) -> None:
        for w in self.writers.values():
            w.prepare_commit(checkpoint)
        if self.committer is not None:
            self.committer.checkpoint(checkpoint, self.current_watermark)

    def snapshot(self) -> object:
        return {"token": self.token, "subtask": self.subtask, "rows": self.rows,
                "partitions": {n: w.snapshot() for n, w in self.writers.items()},
                "committer": None if self.committer is None else self.committer.snapshot()}

    def commit(self, checkpoint: int) -> None:
        for w in self.writers.values():
            w.commit(checkpoint)
        if self.committer is None:
            return
        now = int(time.time() * 1000)
        self.committer.completed(checkpoint, now)
        if self.ended and not any(w.pending for w in self.writers.values()):  # type: ignore[attr-defined]
            self.committer.end_input()  # (the last checkpoint: every partition pending)

    def close(self) -> None:
        for w in self.writers.values():  # (no success files here: commits write them)
            w.close()

    def restore(self, states: list[object], subtask: int, parallelism: int) -> None:
        """(One subtask writes a partitioned table, so there is one state.)"""
        mine = [s for s in states if isinstance(s, dict)]
        listed: dict[str, set[str]] = {}
        for s in mine:
            for name, sub in dict(s["partitions"]).items():
                writer = self.writers.get(name)
                if writer is None:
                    writer = self.writers[name] = self._new_writer(name)
                writer.restore([sub], 0, 1)  # (commits what the checkpoint covered)
                listed.setdefault(name, set()).update(h for _c, h, _v in sub["pending"])
            if s.get("committer") is not None and self.committer is not None:
                self.committer.restore(s["committer"])  # type: ignore[arg-type]
            self.rows += int(s["rows"])
        if mine:
            self.token = str(mine[0]["token"])
            for w in self.writers.values():
                w.token = self.token  # type: ignore[attr-defined]
        # What was written after the checkpoint is not part of the result: the hidden part
        # files of its token (and of earlier attempts') that it does not list.
        self._discard({str(s["token"]) for s in mine} | self._stale, listed)
        self._stale = set()

    def _discard(self, tokens: set[str], listed: dict[str, set[str]]) -> None:
        if not tokens:
            return
        for f in self.root.rglob(".part-*.inprogress"):
            name = f.name
            if name[6:18] in tokens and \
                    name not in listed.get(f.parent.relative_to(self.root).as_posix(), ()):
                with contextlib.suppress(FileNotFoundError):
                    f.unlink()
