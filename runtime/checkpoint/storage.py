"""Checkpoints on disk: ``<dir>/<job id>/chk-<n>/`` holds one state file per subtask and,
written last and atomically (a temporary file renamed into place), ``_metadata``: a checkpoint
without it never completed and is never restored. The metadata lists every state file with its
size and CRC-32, so a truncated or altered file is found before anything is restored from it,
and the job's fingerprint (its vertices and their operators), so state is never restored into
another query.

A state file is a pickle (protocol 5: Arrow data and numpy arrays go out-of-band, as their
buffers) of what the subtask's operators snapshot.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import shutil
import time
import uuid
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlengine.errors import CheckpointError
from sqlengine.failpoints import hit as failpoint

METADATA = "_metadata"
FORMAT = 1


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomically(path: Path, data: bytes) -> None:
    """``data`` at ``path``, all or nothing: written to a temporary name, synced, renamed."""
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def _write_state(folder: Path, name: str, state: Any) -> dict[str, Any]:
    """``state`` pickled to ``folder/name.state``, synced; its metadata entry."""
    data = pickle.dumps(state, protocol=5)
    path = folder / f"{name}.state"
    for attempt in range(3):
        try:
            folder.mkdir(parents=True, exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            break
        except (FileNotFoundError, FileExistsError):
            # (the coordinator aborted this checkpoint, past its timeout, and removed its
            # folder between the mkdir and the open, or during the mkdir, which then finds
            # the folder there and then no folder: the state is written anyway and its ack
            # ignored; the folder goes with the next prune)
            if attempt == 2:
                raise
    return {"file": path.name, "size": len(data), "crc32": zlib.crc32(data)}


class CheckpointStorage:
    """Where one job's checkpoints go: ``<root>/<job_id>/chk-<n>``."""

    def __init__(self, root: Path, job_id: str | None = None) -> None:
        self.root = root
        self.job_id = job_id or uuid.uuid4().hex
        self.job_dir = root / self.job_id
        try:
            self.job_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise CheckpointError(f"checkpoint directory {str(root)!r} "
                                  f"('execution.checkpointing.dir'): {e.strerror or e}") from None

    def checkpoint_dir(self, checkpoint: int) -> Path:
        return self.job_dir / f"chk-{checkpoint}"

    def write_state(self, checkpoint: int, name: str, state: Any) -> dict[str, Any]:
        """One subtask's state file; returns its entry for the metadata."""
        return _write_state(self.checkpoint_dir(checkpoint), name, state)

    def write_finished(self, name: str, state: Any) -> dict[str, Any]:
        """The state of a subtask that has finished: every later checkpoint takes it as the
        subtask's (``adopt``)."""
        entry = _write_state(self.job_dir / "finished", name, state)
        return {**entry, "path": str(self.job_dir / "finished" / entry["file"])}

    def adopt(self, checkpoint: int, entry: dict[str, Any]) -> dict[str, Any]:
        """A finished subtask's state file, linked into checkpoint ``checkpoint``."""
        folder = self.checkpoint_dir(checkpoint)
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / entry["file"]
        if not target.exists():
            try:
                os.link(entry["path"], target)
            except OSError:
                shutil.copyfile(entry["path"], target)
        return {k: v for k, v in entry.items() if k != "path"}

    def complete(self, checkpoint: int, metadata: dict[str, Any]) -> Path:
        """Write the checkpoint's metadata (last: from now on it is complete)."""
        folder = self.checkpoint_dir(checkpoint)
        folder.mkdir(parents=True, exist_ok=True)
        _fsync_dir(folder)
        failpoint("metadata")  # (state written, metadata not: never complete)
        body = {"format": FORMAT, "checkpoint": checkpoint, "job": self.job_id,
                "completed_at": time.time(), **metadata}
        write_atomically(folder / METADATA, json.dumps(body, indent=1).encode())
        return folder

    def discard(self, checkpoint: int) -> None:
        """An aborted checkpoint's files go."""
        shutil.rmtree(self.checkpoint_dir(checkpoint), ignore_errors=True)

    def prune(self, retained: int) -> None:
        """Keep this job's ``retained`` newest completed checkpoints; remove older ones and
        any incomplete one older than the newest complete."""
        done: list[int] = []
        partial: list[int] = []
        for d in self.job_dir.glob("chk-*"):
            try:
                n = int(d.name[4:])
            except ValueError:
                continue
            (done if (d / METADATA).exists() else partial).append(n)
        done.sort()
        keep = set(done[-retained:])
        newest = done[-1] if done else -1
        for n in done:
            if n not in keep:
                self.discard(n)
        for n in partial:
            if n < newest:
                self.discard(n)


@dataclass(frozen=True)
class Checkpoint:
    """A completed checkpoint (or savepoint) found on disk."""

    path: Path
    metadata: dict[str, Any]

    @property
    def id(self) -> int:
        return int(self.metadata["checkpoint"])

    @property
    def finished(self) -> bool:
        """Taken when the job had finished (every input read, every result written)."""
        return bool(self.metadata.get("finished"))

    def state(self, name: str) -> Any:
        """The state a subtask wrote (``name`` as in the metadata's 'subtasks')."""
        entry = self.metadata["subtasks"].get(name)
        if entry is None:
            raise CheckpointError(f"checkpoint {str(self.path)!r} has no state for {name}")
        path = self.path / entry["file"]
        try:
            data = path.read_bytes()
        except OSError as e:
            raise CheckpointError(f"checkpoint {str(self.path)!r}: state file "
                                  f"{entry['file']!r} cannot be read: "
                                  f"{e.strerror or e}") from None
        if len(data) != entry["size"] or zlib.crc32(data) != entry["crc32"]:
            raise CheckpointError(f"checkpoint {str(self.path)!r}: state file "
                                  f"{entry['file']!r} is corrupt (its size or checksum is not "
                                  "what the checkpoint's metadata recorded)")
        try:
            return _StateUnpickler(io.BytesIO(data)).load()
        except _ForeignClass as e:
            raise CheckpointError(f"checkpoint {str(self.path)!r}: state file "
                                  f"{entry['file']!r} holds {e}, which no operator's state "
                                  "holds: it was not written by sqlengine") from None
        except Exception as e:
            raise CheckpointError(f"checkpoint {str(self.path)!r}: state file "
                                  f"{entry['file']!r} cannot be read back: "
                                  f"{type(e).__name__}: {e}") from None


class _ForeignClass(Exception):
    """A pickled state file names a class that operators' state does not hold."""


# What operators' state holds (Arrow data, numpy arrays, plain Python, the engine's own
# classes, and a Python aggregate's accumulators, of its function's package): a state file
# naming anything else (os.system, say, in a forged file whose checksum was made to match) is
# refused before anything is called. Of the engine's and the libraries' modules only data
# classes and the functions that pickles of Arrow and numpy data call are taken: a function
# such as sqlengine.api.connect, pyarrow's output_stream or a numpy.memmap (which write files)
# is refused too.
_CLASS_MODULES = frozenset({"collections", "datetime", "decimal", "zoneinfo", "array",
                            "fractions"})
_ONLY = {"builtins": frozenset({
    "bool", "bytearray", "bytes", "complex", "dict", "float", "frozenset", "int", "list",
    "object", "range", "set", "slice", "str", "tuple", "NotImplemented", "Ellipsis"}),
    "functools": frozenset({"partial"}), "copyreg": frozenset({"_reconstructor"}),
    "_codecs": frozenset({"encode"}),
    "array": frozenset({"_array_reconstructor"})}
# (the reconstructors of pickled Arrow data, and its types' factories)
_ARROW_FUNCTIONS = frozenset({
    "_restore_array", "_reconstruct_table", "_reconstruct_record_batch", "chunked_array",
    "schema", "field", "py_buffer", "type_for_alias", "scalar", "array", "table",
    "record_batch", "null", "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16",
    "uint32", "uint64", "float16", "float32", "float64", "decimal32", "decimal64",
    "decimal128", "decimal256", "string", "utf8", "large_string", "large_utf8", "string_view",
    "binary", "large_binary", "binary_view", "fixed_size_binary", "date32", "date64",
    "time32", "time64", "timestamp", "duration", "month_day_nano_interval", "list_",
    "large_list", "list_view", "large_list_view", "map_", "struct", "dictionary", "union",
    "sparse_union", "dense_union", "run_end_encoded"})
_NUMPY_FUNCTIONS = frozenset({"_reconstruct", "scalar", "_frombuffer"})


def _allowed(module: str, name: str, obj: object) -> bool:
    """Whether ``obj`` (``module.name``) is what a state file of sqlengine's may call."""
    top = module.split(".")[0]
    if top == "pyarrow":
        import pyarrow as pa

        data = (pa.DataType, pa.Field, pa.Schema, pa.Array, pa.ChunkedArray, pa.Scalar,
                pa.Table, pa.RecordBatch, pa.Buffer)
        return name in _ARROW_FUNCTIONS or (isinstance(obj, type) and issubclass(obj, data))
    if top == "numpy":
        import numpy as np

        return name in _NUMPY_FUNCTIONS or obj is np.ndarray or obj is np.dtype or \
            (isinstance(obj, type) and issubclass(obj, np.generic | np.dtype))
    if top == "sqlengine" or module in _CLASS_MODULES:
        return isinstance(obj, type)
    return True  # (a registered Python function's package, checked before its import)


class _StateUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if name in _ONLY.get(module, ()):
            return super().find_class(module, name)
        top = module.split(".")[0]
        if top not in ("pyarrow", "numpy", "sqlengine") and module not in _CLASS_MODULES:
            from sqlengine.functions_python import user_packages

            # (checked before the module is imported: importing runs its code)
            if module in _ONLY or top not in user_packages():
                raise _ForeignClass(f"{module}.{name}")
        try:
            obj = super().find_class(module, name)
        except (ImportError, AttributeError):
            raise _ForeignClass(f"{module}.{name}") from None
        if not _allowed(module, name, obj):
            raise _ForeignClass(f"{module}.{name}")
        return obj


def load_checkpoint(path: Path) -> Checkpoint:
    """The checkpoint whose directory is ``path`` (it holds ``_metadata``)."""
    meta = path / METADATA
    try:
        text = meta.read_text()
    except FileNotFoundError:
        raise CheckpointError(f"{str(path)!r} is not a completed checkpoint or savepoint (it "
                              f"has no {METADATA} file)") from None
    except OSError as e:
        raise CheckpointError(f"checkpoint {str(path)!r}: {e.strerror or e}") from None
    try:
        metadata = json.loads(text)
        if not isinstance(metadata, dict) or metadata.get("format") != FORMAT:
            raise ValueError("unknown format")
        int(metadata["checkpoint"])
        if not isinstance(metadata["subtasks"], dict):
            raise ValueError("no subtasks")
    except (ValueError, KeyError, TypeError) as e:
        raise CheckpointError(f"checkpoint {str(path)!r}: its {METADATA} file is corrupt "
                              f"({e})") from None
    return Checkpoint(path, metadata)


def completed_under(root: Path) -> list[Checkpoint]:
    """The completed checkpoints and savepoints in ``root`` (itself one, or up to two levels
    below: ``<job id>/chk-<n>``), oldest first."""
    if (root / METADATA).exists():
        return [load_checkpoint(root)]
    found: list[Checkpoint] = []
    for meta in [*root.glob(f"*/{METADATA}"), *root.glob(f"*/*/{METADATA}")]:
        # (a corrupt one is an error, not skipped: restoring an older checkpoint than the
        # newest would write again what the newest had committed)
        found.append(load_checkpoint(meta.parent))
    found.sort(key=lambda c: (float(c.metadata.get("completed_at", 0)), c.id))
    return found
