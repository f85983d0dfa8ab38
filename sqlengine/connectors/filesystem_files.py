"""The filesystem connector's files: which files a table reads (and which share a subtask
reads), the part file a sink writes, and the checks of a sink path."""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pyarrow as pa
import pyarrow.parquet as pq

from sqlengine import safety
from sqlengine.connectors import avro_format as A
from sqlengine.connectors import filesystem_partitions as P
from sqlengine.connectors import orc_format as O
from sqlengine.connectors.base import (
    DONE,
    ReadStats,
    RowFilter,
    SinkWriter,
    SourceCursor,
    decode_partition_keys,
)
from sqlengine.connectors.csv_format import csv_bytes, csv_quoting, opt_char, read_csv
from sqlengine.connectors.json_format import (
    iso_timestamps,
    json_bytes,
    plain_decimals,
    read_json,
)
from sqlengine.connectors.parquet_format import open_parquet, read_parquet, row_groups
from sqlengine.connectors.prefetch import prefetched
from sqlengine.connectors.raw_format import raw_bytes, read_raw
from sqlengine.connectors.rolling_policy import RollingPolicy
from sqlengine.connectors.text_blocks import record_blocks
from sqlengine.errors import ConnectorError

URI_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.-]+):")  # (one letter: a drive)


def local_path(path: str, table: str = "") -> Path:
    """A table's 'path' as a local path: a ``file:`` URI (``file:///tmp/t``, ``file:/tmp/t``,
    ``file://localhost/tmp/t``, as Flink takes them) is its path. Another scheme (``s3://``,
    ``hdfs://``) is refused: the native runtime reads and writes local files (it wrote under
    a directory named ``s3:`` in the working directory)."""
    m = URI_SCHEME.match(path)
    if m is None or len(m.group(1)) == 1:  # (a Windows drive letter is no scheme)
        return Path(path)
    if m.group(1).lower() != "file":
        whose = f"table {table!r}: " if table else ""
        msg = (f"{whose}path {path!r} (option 'path') is a {m.group(1)}: URI; the native "
               "runtime reads and writes local files (a path, or a file: URI); the Spark "
               "runtime takes other URIs")
        raise ConnectorError(msg)
    rest = path[m.end():]
    if rest.startswith("//"):
        host, _, rest = rest[2:].partition("/")
        if host not in ("", "localhost"):
            msg = (f"path {path!r} (option 'path') names the host {host!r}; a file: URI "
                   "of this machine has none (file:///...)")
            raise ConnectorError(msg)
        rest = "/" + rest
    return Path(unquote(rest))


def list_files(path: str, table: str) -> list[Path]:
    """The files a filesystem table reads: the file itself, or a directory's visible files."""
    p = local_path(path, table)
    if p.is_file():
        return [p]
    if p.is_dir():
        return sorted(f for f in p.rglob("*") if f.is_file()
                      and not any(part.startswith((".", "_")) for part in
                                  f.relative_to(p).parts))
    if p.exists():  # (a FIFO, a socket, a device: nothing a file format reads)
        msg = (f"table {table!r}: path {path!r} (option 'path') is neither a file nor a "
               "directory")
        raise ConnectorError(msg)
    msg = f"table {table!r}: path {path!r} (option 'path') does not exist"
    raise ConnectorError(msg)


def _columnar(units: list[tuple[Path, int]], open_file: Any, read: Any, schema: pa.Schema,
              columns: list[int] | None, stats: ReadStats,
              prune: RowFilter | None = None) -> Iterator[pa.RecordBatch]:
    """The batches of parquet row groups (orc stripes) ``units``, one footer read per file;
    ``prune``: filters parquet may apply to dictionary columns (read_parquet)."""
    opened: tuple[Path, Any] | None = None
    for f, g in units:
        stats.files += 1
        if opened is None or opened[0] != f:
            opened = (f, open_file(f))
        if prune is not None:
            yield from read(f, schema, columns, g, opened[1], prune)
        else:
            yield from read(f, schema, columns, g, opened[1])


def read_files(table: str, options: dict[str, str], schema: pa.Schema,
               stats: ReadStats, columns: list[int] | None = None,
               split: tuple[int, int] = (0, 1),
               row_filter: RowFilter | None = None,
               split_files: bool = True,
               cursor: SourceCursor | None = None) -> Iterator[pa.RecordBatch]:
    """Yield record batches of ``schema`` from this subtask's share of the files under the
    table's path: parquet by row group (row group i goes to subtask i mod parallelism), csv
    and json by file, or by byte range when there are fewer files than subtasks and
    ``split_files`` (text_blocks.py). A partitioned table reads only the partitions
    ``row_filter`` keeps (filesystem_partitions.py).

    With a ``cursor`` (a checkpointing job), each split's position is kept in it: a parquet
    row group's rows read, a text file's (block offset, its line, rows read since); a
    restored cursor resumes each split there."""
    fmt = options["format"]
    index, parallelism = split
    if decode_partition_keys(options):
        if cursor is not None:
            msg = (f"table {table!r}: a PARTITIONED BY table cannot resume reading from a "
                   "checkpoint yet")
            raise ConnectorError(msg)
        yield from _read_partitioned(table, options, schema, stats, columns, split, row_filter)
        return
    files = list_files(options["path"], table)
    for f in files:
        safety.check_file(table, f, options)
    if fmt in ("parquet", "orc"):
        # (parquet by row group, orc by stripe)
        count, open_file, read = (row_groups, open_parquet, read_parquet) if fmt == "parquet" \
            else (O.stripes, O.open_orc, O.read_orc)
        units = [(f, g) for f in files for g in range(count(f))][index::parallelism]
        if cursor is None:
            # (rows the pushed filters reject may be dropped while reading when nothing
            # else sees them: no watermark or changelog order (split_files), no position)
            prune = row_filter if fmt == "parquet" and split_files else None
            yield from prefetched(_columnar(units, open_file, read, schema, columns, stats,
                                            prune))
            return
        opened: tuple[Path, Any] | None = None  # (one footer read per file)
        for f, g in units:
            key = f"{f}@{g}"
            done = cursor.resume(key) if cursor is not None else None
            if cursor is not None and done is not None:
                cursor.position[key] = done
            if done == DONE:
                continue
            stats.files += 1
            if opened is None or opened[0] != f:
                opened = (f, open_file(f))
            batches = read(f, schema, columns, g, opened[1])
            yield from _positioned(batches, cursor, key, int(done or 0), lambda n: n)
            cursor.position[key] = DONE
        return
    if fmt == "avro":  # (by file: its records are read in order)
        for f in files[index::parallelism]:
            key = str(f)
            done = cursor.resume(key) if cursor is not None else None
            if cursor is not None and done is not None:
                cursor.position[key] = done
            if done == DONE:
                continue
            stats.files += 1
            batches = A.read_avro(f, schema, columns)
            if cursor is None:
                yield from batches
                continue
            yield from _positioned(batches, cursor, key, int(done or 0), lambda n: n)
            cursor.position[key] = DONE
        return
    # Text files: whole files to subtasks while there are enough of them (or the rows must
    # keep their order: ``split_files`` False), else each file's byte ranges (one per subtask).
    if len(files) >= parallelism or not split_files:
        shares = [(f, (0, 1)) for f in files[index::parallelism]]
    else:
        shares = [(f, split) for f in files]
    for f, share in shares:
        key = str(f) if share == (0, 1) else f"{f}#{share[0]}/{share[1]}"
        start = cursor.resume(key) if cursor is not None else None
        if cursor is not None and start is None and share != (0, 1) and \
                any(k.startswith(f"{f}#") for k in cursor.start):
            msg = (f"table {table!r}: file {str(f)!r} was read in byte ranges by another "
                   "number of subtasks; it can be restored only at the parallelism it was "
                   "checkpointed with")
            raise ConnectorError(msg)
        if cursor is not None and start is not None:
            cursor.position[key] = start
        if start == DONE:
            continue
        stats.files += 1
        yield from _read_text(fmt, f, options, schema, stats, share, columns, cursor, key,
                              start)  # type: ignore[arg-type]
        if cursor is not None:
            cursor.position[key] = DONE


def _positioned(batches: Iterator[pa.RecordBatch], cursor: SourceCursor, key: str,
                skip: int, position: Callable[[int], object]) -> Iterator[pa.RecordBatch]:
    """``batches`` without their first ``skip`` rows (read before the checkpoint), recording
    ``position(rows read)`` in the cursor before each one goes out."""
    read = 0
    for batch in batches:
        n = batch.num_rows
        if read + n <= skip:
            read += n
            continue
        if read < skip:
            batch = batch.slice(skip - read)
        read += n
        cursor.position[key] = position(read)
        yield batch


def _read_text(fmt: str, f: Path, options: dict[str, str], schema: pa.Schema,
               stats: ReadStats, share: tuple[int, int] = (0, 1),
               columns: list[int] | None = None, cursor: SourceCursor | None = None,
               key: str = "", start: tuple[int, int, int] | None = None
               ) -> Iterator[pa.RecordBatch]:
    """A csv or json file (or its ``share`` of byte ranges) block by block: memory stays
    bounded by the block size, whatever the file's. csv converts only ``columns``. A
    ``start`` = (offset, line, rows) resumes at the record at offset (on that line), skipping
    the rows read from there before the checkpoint."""
    quote, escape = csv_quoting(options) if fmt == "csv" else (None, None)
    at = (start[0], start[1]) if start is not None else None
    skip = start[2] if start is not None else 0
    csv = fmt == "csv"
    blocks = record_blocks(
        f, quote, escape, share, start=at,
        delimiter=(opt_char(options, "csv.field-delimiter", ",") or ",") if csv else ",",
        comments=csv and options.get("csv.allow-comments", "false").lower() == "true")
    if cursor is None:  # (parsed a block ahead on a thread: Arrow's parser frees the GIL)
        yield from prefetched(batch for data, first_line, _ in blocks
                              for batch in _parse(fmt, f, options, schema, stats, data,
                                                  first_line, columns))
        return
    # The position is the offset and line of the block being read and the rows read since
    # it began; resuming skips rows counted from the resumed offset, whatever blocks the
    # reread cuts (so across blocks too).
    since: tuple[int, int] | None = None
    read = 0
    for data, first_line, offset in blocks:
        if since is None:
            since = (offset, first_line)
        for batch in _parse(fmt, f, options, schema, stats, data, first_line, columns):
            n = batch.num_rows
            if skip >= n:
                skip -= n
                read += n
                continue
            if skip:
                batch = batch.slice(skip)
                skip = 0
            read += n
            cursor.position[key] = (since[0], since[1], read)
            yield batch
        if not skip:  # (the next block starts a new position)
            since = None
            read = 0


def _parse(fmt: str, f: Path, options: dict[str, str], schema: pa.Schema, stats: ReadStats,
           data: bytes, first_line: int, columns: list[int] | None
           ) -> Iterator[pa.RecordBatch]:
    if fmt == "csv":
        return read_csv(f, options, schema, stats, data=data, first_line=first_line,
                        columns=columns)
    if fmt == "debezium-json":
        from sqlengine.connectors.debezium_format import read_debezium

        return read_debezium(f, options, schema, stats, data=data, first_line=first_line)
    if fmt == "canal-json":
        from sqlengine.connectors.canal_format import read_canal

        return read_canal(f, options, schema, stats, data=data, first_line=first_line)
    if fmt == "maxwell-json":
        from sqlengine.connectors.maxwell_format import read_maxwell

        return read_maxwell(f, options, schema, stats, data=data, first_line=first_line)
    if fmt == "raw":
        return read_raw(f, options, schema, stats, data=data, first_line=first_line)
    return read_json(f, options, schema, stats, data=data, first_line=first_line)


def _read_file(fmt: str, f: Path, options: dict[str, str], schema: pa.Schema,
               stats: ReadStats, columns: list[int] | None, group: int | None
               ) -> Iterator[pa.RecordBatch]:
    if fmt == "parquet":
        return read_parquet(f, schema, columns, group)
    if fmt == "orc":
        return O.read_orc(f, schema, columns, group)
    if fmt == "avro":
        return A.read_avro(f, schema, columns)
    return _read_text(fmt, f, options, schema, stats, columns=columns)


def _read_partitioned(table: str, options: dict[str, str], schema: pa.Schema,
                      stats: ReadStats, columns: list[int] | None, split: tuple[int, int],
                      row_filter: RowFilter | None) -> Iterator[pa.RecordBatch]:
    """A PARTITIONED BY table: the kept partitions' files, read with the files' columns and
    widened with the partition columns' values."""
    keys = decode_partition_keys(options)
    fmt = options["format"]
    parts = P.discover(local_path(options["path"]), keys, P.default_name(options))
    values = P.partition_values(parts, keys, schema)
    kept, values = P.prune(parts, values, schema, keys, row_filter)
    stats.partitions_pruned += len(parts) - len(kept)
    fschema = P.file_schema(schema, keys)
    fcols = None
    if columns is not None:
        wanted = {schema.field(i).name for i in columns}
        fcols = [j for j, f in enumerate(fschema) if f.name in wanted]
    units: list[tuple[int, Path, int | None]] = []
    for row, part in enumerate(kept):
        for f in P.data_files(part.directory):
            safety.check_file(table, f, options)
            if fmt == "parquet":
                units.extend((row, f, g) for g in range(row_groups(f)))
            elif fmt == "orc":
                units.extend((row, f, g) for g in range(O.stripes(f)))
            else:
                units.append((row, f, None))
    index, parallelism = split
    for row, f, group in units[index::parallelism]:
        stats.files += 1
        for batch in _read_file(fmt, f, options, fschema, stats, fcols, group):
            yield P.with_partition_columns(batch, values, row, schema)


class FileWriter(SinkWriter):
    """Writes part files under the sink's directory, batch by batch: one, or as many as the
    rolling policy (rolling_policy.py) begins; all published when every row is written."""

    name = "FileSink"
    guarantee = None  # (one part file renamed at the end: see filesystem_commit.py)

    def __init__(self, table: str, options: dict[str, str], schema: pa.Schema,
                 overwrite: bool) -> None:
        self.options = options
        self.schema = schema
        self.format = options["format"]
        root = sink_directory(table, options)
        # As Flink's FileSink: the part file is written under a hidden name (readers skip it,
        # so a query reading the table it inserts into sees only the old rows) and renamed
        # when complete; OVERWRITE removes the old parts then, not before they are read.
        # OVERWRITE removes the parts last written before the statement was planned (its
        # parallel subtasks open at different times: a part another subtask of this job has
        # written since is not an old part).
        given = options.get("$overwrite-before")
        self.before = int(given) if given else time.time_ns()
        self.root = root
        self.overwrite = overwrite
        self._file: Any = None  # (the part file is begun by the first write, or at close)
        self._parquet: pq.ParquetWriter | None = None
        self._bulk: Any = None  # (orc, avro: their file writer)
        self.rows = 0
        # The sink subtask writing (set when its operator opens): its part files are
        # ``part-<subtask>-<n>``, so parallel subtasks never claim the same names.
        self.subtask = 0
        self.ended = False  # every row written: close() publishes the parts (else drops them)
        self.policy = RollingPolicy.of(options)
        self._finished: list[Path] = []  # (rolled part files, published by close())
        self._opened = self._written = 0.0
        # A table without PARTITIONED BY with a partition commit policy (batch mode; written
        # by one subtask): its directory's success file once the parts are published.
        from sqlengine.connectors.partition_commit import CommitPolicy

        self.commit_policy = None if decode_partition_keys(options) else \
            CommitPolicy.of(options, ())
        del table

    def _begin(self) -> None:
        root = self.root
        part = re.compile(rf"\.?part-{self.subtask}-(\d+)(?:\.inprogress)?")
        taken = [int(m.group(1)) for f in root.iterdir()
                 if (m := part.fullmatch(f.name)) is not None]
        n = max(taken, default=-1) + 1
        while True:  # claim a name no other writer of this directory holds
            try:
                fd = os.open(root / f".part-{self.subtask}-{n}.inprogress",
                             os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
                break
            except FileExistsError:
                n += 1
        if not self._finished:  # (the first part's name: the others follow it)
            # (after the old parts' names, OVERWRITE's too: another subtask removes the old
            # parts by name, and one published under an old part's name could go with them,
            # every row of a parallel INSERT OVERWRITE lost at times)
            self.index = n
        self.path = root / f".part-{self.subtask}-{n}.inprogress"
        self._file = os.fdopen(fd, "wb")

    def write(self, batch: pa.RecordBatch, kinds: pa.Array | None = None) -> None:
        if batch.schema != self.schema:
            batch = batch.cast(self.schema)
        now = time.monotonic()
        if self._file is not None and self.policy.due(now - self._opened, now - self._written):
            self._roll()
        self.rows += batch.num_rows
        self._written = now
        if self.format not in ("parquet", *BULK_FORMATS):  # (a row format: cut at rows)
            for piece, full in self.policy.pieces(
                    batch, 0 if self._file is None else self._file.tell(),
                    lambda b: text_bytes(self.format, b, self.options)):
                self._open(now)
                self._file.write(piece)
                self._file.flush()
                if full:
                    self._roll()
        else:
            self._open(now)
            if self.format == "parquet":
                if self._parquet is None:
                    self._parquet = pq.ParquetWriter(self._file, self.schema)
                self._parquet.write_batch(batch)
            else:
                if self._bulk is None:
                    self._bulk = bulk_writer(self.format, self._file, self.schema,
                                             self.options)
                self._bulk.write(batch)
            if self._file.tell() > self.policy.size:
                self._roll()

    def _open(self, now: float) -> None:
        if self._file is None:
            self._begin()
            self._opened = now

    def _complete(self) -> None:
        """Finish the part file being written (its format's footer), and close it."""
        if self.format == "parquet" and self._parquet is None:
            # (an empty parquet file still holds its schema: 0 bytes would not be readable)
            self._parquet = pq.ParquetWriter(self._file, self.schema)
        if self.format in BULK_FORMATS and self._bulk is None:
            # (an empty orc / avro file still holds its schema)
            self._bulk = bulk_writer(self.format, self._file, self.schema, self.options)
        if self._bulk is not None:
            self._bulk.close()
            self._bulk = None
        if self._parquet is not None:
            self._parquet.close()
            self._parquet = None
        self._file.close()
        self._file = None

    def _roll(self) -> None:
        """The rolling policy closes the part file: published with the others at the end."""
        self._complete()
        self._finished.append(self.path)

    def _remove_replaced(self) -> None:
        """INSERT OVERWRITE: remove the parts written before the statement."""
        if not self.overwrite:
            return
        for old in self.root.iterdir():
            if not old.name.startswith("part-"):
                continue
            try:
                if old.is_file() and old.stat().st_mtime_ns < self.before:
                    old.unlink()
            except FileNotFoundError:  # (another subtask removed it)
                pass

    def end_input(self) -> None:
        self.ended = True

    def close(self) -> None:
        if not self.ended:
            # A failed or cancelled job: its parts stay unpublished, as Flink's in-progress
            # files do (a visible, half-written part would be read, or break every read).
            if self._file is not None:
                with contextlib.suppress(OSError):
                    self._file.close()
                self._finished.append(self.path)
            for path in self._finished:
                with contextlib.suppress(OSError):
                    path.unlink()
            return
        if self._file is None and not self._finished:
            if self.subtask > 0:  # (a parallel subtask that got no rows writes no file)
                self._remove_replaced()
                return
            self._begin()  # (an empty result is an empty part file)
        if self._file is not None:
            self._roll()
        self._remove_replaced()
        n = self.index
        for path in self._finished:
            while True:  # the complete part's name: never one that exists (link, not replace)
                try:
                    os.link(path, self.root / f"part-{self.subtask}-{n}")
                    break
                except FileExistsError:
                    n += 1
            path.unlink()
            n += 1
        if self.commit_policy is not None:
            self.commit_policy.commit(self.root)


BULK_FORMATS = ("orc", "avro")


def bulk_writer(fmt: str, file: Any, schema: pa.Schema, options: dict[str, str]) -> Any:
    """The writer of an orc or avro file onto ``file``: ``write(batch)``, ``close()`` (which
    leaves ``file`` open)."""
    if fmt == "orc":
        return O.OrcWriter(file, schema, options)
    return A.AvroWriter(file, schema, options)


def text_bytes(fmt: str, batch: pa.RecordBatch, options: dict[str, str]) -> bytes:
    """A batch as the lines of a text format's file."""
    if fmt == "csv":
        return csv_bytes(batch, options)
    if fmt == "raw":
        return raw_bytes(batch, options)
    return json_bytes(batch, iso_timestamps(options, "json"), plain_decimals(options, "json"))


def sink_directory(table: str, options: dict[str, str]) -> Path:
    """The sink's directory (option 'path'), created if missing; a file there is refused."""
    root = local_path(options["path"], table)
    safety.check_file(table, root, options)
    if root.exists() and root.is_file():
        msg = (f"table {table!r}: path {str(root)!r} (option 'path') is a file; INSERT "
               "writes part files into a directory (a single file is readable, not "
               "writable: writing would replace its rows)")
        raise ConnectorError(msg)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        msg = f"sink path {str(root)!r}: {e.strerror or e}"
        raise ConnectorError(msg) from None
    return root


def sink_path_ok(options: dict[str, str]) -> None:
    """Fail at plan time when a sink path cannot be created or written."""
    path = local_path(options["path"])
    existing = path
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if existing.exists() and existing.is_file():
        where = "" if existing == path else f": {str(existing)!r}"
        msg = (f"sink path {options['path']!r} (option 'path'){where} is a file, not a "
               "directory: INSERT writes part files into a directory (a single file is "
               "readable, not writable)")
        raise ConnectorError(msg)
    if existing.exists() and not os.access(existing, os.W_OK):
        msg = f"sink path {options['path']!r}: {str(existing)!r} is not writable"
        raise ConnectorError(msg)
