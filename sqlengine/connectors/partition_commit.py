"""Partition commit of the filesystem sink, as Flink's ('sink.partition-commit.*'): once a
partition is complete, a policy tells its readers so. The one policy a filesystem table has
is 'success-file': an empty file (option 'sink.partition-commit.success-file.name',
'_SUCCESS') in the partition's directory. 'metastore' is refused as Flink refuses it for a
filesystem table; 'custom' (a Java class) is refused.

When a partition is complete:
- batch mode: when the job has written every row, each partition it wrote (and the table's
  directory, for a table without PARTITIONED BY, as Flink's batch sink does);
- streaming mode (a PARTITIONED BY table; refused for others, where Flink ignores it): when
  a checkpoint completes, each partition written up to it that the trigger lets through, and
  every one still pending when the input ends:
  - 'process-time' (the trigger by default): the machine's clock has passed the time the
    partition was first written plus 'sink.partition-commit.delay' (0: at once);
  - 'partition-time': the watermark the sink had at the checkpoint has passed the time read
    from the partition's values plus the delay. The time is the first partition value, or
    'partition.time-extractor.timestamp-pattern' with '$key' replaced by each key's value,
    read as 'yyyy-M-d[ H:m:s[.f]]' or with 'partition.time-extractor.timestamp-formatter'
    (a Java DateTimeFormatter pattern; a date alone is midnight), and taken in
    'sink.partition-commit.watermark-time-zone' (UTC); these options with the other
    trigger are refused, as they would be ignored.
  A partition written again after its commit is committed again (its success file written
  anew), as in Flink. Without checkpoints a streaming job commits at its end only, so an
  unbounded one is refused.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa

from sqlengine.errors import ConnectorError
from sqlengine.options import check_time_zone, parse_duration

PREFIX = "sink.partition-commit."
KIND = PREFIX + "policy.kind"
TRIGGER = PREFIX + "trigger"
DELAY = PREFIX + "delay"
SUCCESS_NAME = PREFIX + "success-file.name"
ZONE = PREFIX + "watermark-time-zone"
EXTRACTOR_KIND = "partition.time-extractor.kind"
PATTERN = "partition.time-extractor.timestamp-pattern"
FORMATTER = "partition.time-extractor.timestamp-formatter"
TRIGGERS = ("process-time", "partition-time")
# (their values: a Java class, which cannot run here)
CLASS_KEYS = (PREFIX + "policy.class", PREFIX + "policy.class.parameters",
              "partition.time-extractor.class")
# The keys that only act with a policy: without one they would be ignored (as in Flink).
_NEED_POLICY = (TRIGGER, DELAY, SUCCESS_NAME, ZONE, EXTRACTOR_KIND, PATTERN, FORMATTER)

Fail = Callable[[str, str], Exception]


def check_options(options: dict[str, str], keys: tuple[str, ...], fail: Fail) -> None:
    """CREATE TABLE's checks of the partition commit options (each one's value was checked
    against its kind already)."""
    for key in CLASS_KEYS:
        if key in options:
            raise fail(key, f"option {key!r} names a Java class, which sqlengine cannot run; "
                       "the filesystem table's partition commit policy is 'success-file'")
    kind = options.get(KIND)
    if kind is None:
        for key in _NEED_POLICY:
            if key in options:
                raise fail(key, f"option {key!r} acts only with a partition commit policy "
                           f"(option {KIND!r} = 'success-file'); without one it would be "
                           "ignored")
        return
    kinds = [k.strip() for k in kind.split(",")]
    for k in kinds:
        if k.lower() == "metastore":
            raise fail(KIND, "Can not configure a 'metastore' partition commit policy for a "
                       "file system table. You can only configure 'metastore' partition "
                       "commit policy for a hive table.")
        if k.lower() == "custom":
            raise fail(KIND, f"option {KIND!r}: the 'custom' policy runs a Java class, which "
                       "sqlengine cannot run; the filesystem table's policy is "
                       "'success-file'")
        if k.lower() != "success-file":
            raise fail(KIND, f"option {KIND!r}: unknown partition commit policy {k!r} "
                       "(the filesystem table's policy is 'success-file')")
    if options.get(TRIGGER, "process-time").lower() != "partition-time":
        for key in (ZONE, EXTRACTOR_KIND, PATTERN, FORMATTER):
            if key in options:
                raise fail(key, f"option {key!r} acts only with {TRIGGER!r} = "
                           "'partition-time' (the partition's time is read for nothing else); "
                           "it would be ignored")
    name = options.get(SUCCESS_NAME)
    if name is not None and (not name or "/" in name or name in (".", "..")):
        raise fail(SUCCESS_NAME, f"option {SUCCESS_NAME!r} must be a file name, got {name!r}")
    if options.get(EXTRACTOR_KIND, "default").lower() != "default":
        raise fail(EXTRACTOR_KIND, f"option {EXTRACTOR_KIND!r}: only 'default' is supported "
                   f"(got {options[EXTRACTOR_KIND]!r}; 'custom' runs a Java class)")
    if ZONE in options:
        try:
            check_time_zone(options[ZONE], ZONE)
        except Exception as e:
            raise fail(ZONE, str(e)) from None
    if FORMATTER in options:
        why = _formatter_refusal(options[FORMATTER])
        if why is not None:
            raise fail(FORMATTER, f"option {FORMATTER!r}: {why}")
    pattern = options.get(PATTERN)
    if pattern is not None:
        # (each '$name' a partition key: any other would stay in the text, unreadable)
        for m in re.finditer(r"\$(\w+)", pattern):
            if not any(m.group(1).startswith(k) for k in keys):
                raise fail(PATTERN, f"option {PATTERN!r}: '${m.group(1)}' is not a partition "
                           f"key (the keys: {', '.join(keys) or 'none'})")


@dataclass(frozen=True, slots=True)
class CommitPolicy:
    """What a table's options say of its partition commits."""

    success_file: str = "_SUCCESS"
    trigger: str = "process-time"
    delay_ms: int = 0
    zone: str = "UTC"
    pattern: str | None = None
    formatter: str | None = None
    keys: tuple[str, ...] = ()

    @classmethod
    def of(cls, options: dict[str, str], keys: tuple[str, ...]) -> CommitPolicy | None:
        """The table's policy (None: no 'sink.partition-commit.policy.kind')."""
        if KIND not in options:
            return None
        return cls(options.get(SUCCESS_NAME, "_SUCCESS"),
                   options.get(TRIGGER, "process-time").lower(),
                   parse_duration(options[DELAY], DELAY) if options.get(DELAY) else 0,
                   options.get(ZONE, "UTC"), options.get(PATTERN), options.get(FORMATTER),
                   keys)

    def commit(self, directory: Path) -> None:
        """The partition (or table) directory is complete: its success file, empty."""
        path = directory / self.success_file
        try:
            with open(path, "wb") as f:
                os.fsync(f.fileno())
        except OSError as e:
            msg = f"partition commit: cannot write {str(path)!r}: {e.strerror or e}"
            raise ConnectorError(msg) from None

    def partition_ms(self, partition: str) -> int:
        """The partition's time (``partition``: its directory, 'k1=v1/k2=v2'), as epoch
        milliseconds in the watermark's time zone."""
        from sqlengine.cast import from_local
        from sqlengine.connectors.filesystem_partitions import unescape

        values = [unescape(part.partition("=")[2]) for part in partition.split("/")]
        if self.pattern is None:
            text = values[0]
        else:
            text = self.pattern
            for key, value in zip(self.keys, values, strict=False):
                text = text.replace("$" + key, value)
        local = _read_time(text, self.formatter)
        if local is None:
            how = f"the format {self.formatter!r}" if self.formatter else "'yyyy-M-d H:m:s'"
            msg = (f"partition {partition!r}: cannot read the partition time {text!r} with "
                   f"{how} (options {PATTERN!r} and {FORMATTER!r})")
            raise ConnectorError(msg)
        stamp = pa.array([local], pa.timestamp("us"))
        return int(from_local(stamp, self.zone)[0].value) // 1000


@dataclass
class PartitionCommitter:
    """The partitions a streaming sink wrote and has not committed, and when each may be
    (Flink's PartitionCommitter with its trigger)."""

    policy: CommitPolicy
    root: Path
    # partition -> first written (epoch ms, the machine's clock)
    written: dict[str, int] = field(default_factory=dict)
    # partition -> the checkpoint after which it was written (None: not at one yet)
    since: dict[str, int | None] = field(default_factory=dict)
    pending: dict[str, int] = field(default_factory=dict)  # partition -> creation time
    watermarks: dict[int, int] = field(default_factory=dict)  # checkpoint -> watermark

    def wrote(self, partitions: Iterable[str], now_ms: int) -> None:
        for p in partitions:
            if p not in self.written:
                self.written[p] = now_ms
                self.since[p] = None

    def checkpoint(self, checkpoint: int, watermark: int) -> None:
        """A checkpoint barrier: the partitions written before it are its, and so is the
        watermark."""
        for p, c in self.since.items():
            if c is None:
                self.since[p] = checkpoint
        self.watermarks[checkpoint] = watermark

    def completed(self, checkpoint: int, now_ms: int) -> list[str]:
        """The checkpoint completed (its files are committed): the partitions to commit."""
        for p in [p for p, c in self.since.items() if c is not None and c <= checkpoint]:
            self.pending.setdefault(p, self.written.pop(p))
            del self.since[p]
        watermark = self.watermarks.get(checkpoint, -(2**63))
        for c in [c for c in self.watermarks if c <= checkpoint]:
            del self.watermarks[c]
        ready = [p for p, created in self.pending.items() if self._due(p, created, now_ms,
                                                                        watermark)]
        for p in ready:
            del self.pending[p]
            self.policy.commit(self.root / p)
        return ready

    def _due(self, partition: str, created: int, now_ms: int, watermark: int) -> bool:
        delay = self.policy.delay_ms
        if self.policy.trigger == "process-time":
            return delay == 0 or now_ms > created + delay
        return watermark > self.policy.partition_ms(partition) + delay

    def end_input(self) -> list[str]:
        """The input ended and its last checkpoint completed: every partition pending."""
        ready = [*self.pending, *self.written]
        self.pending.clear()
        self.written.clear()
        self.since.clear()
        for p in ready:
            self.policy.commit(self.root / p)
        return ready

    def snapshot(self) -> dict[str, object]:
        return {"written": dict(self.written), "since": dict(self.since),
                "pending": dict(self.pending), "watermarks": dict(self.watermarks)}

    def restore(self, state: dict[str, object]) -> None:
        """What a checkpoint held: partitions written after it are written again (their rows
        come again), so only its own are kept."""
        self.pending = dict(state.get("pending", {}))  # type: ignore[call-overload]
        since = dict(state.get("since", {}))  # type: ignore[call-overload]
        written = dict(state.get("written", {}))  # type: ignore[call-overload]
        for p, c in since.items():  # (at the checkpoint: committed with it on restore)
            if c is not None:
                self.pending.setdefault(p, written[p])
        self.watermarks = dict(state.get("watermarks", {}))  # type: ignore[call-overload]


# -- partition time -------------------------------------------------------------------------
_DEFAULT = re.compile(r"(\d{1,10})-(\d{1,2})-(\d{1,2})(?: (\d{1,2}):(\d{1,2}):(\d{1,2})"
                      r"(?:\.(\d{1,9}))?)?")
# Java DateTimeFormatter letters a partition time is read with, as strptime's
_LETTERS = {"y": "%Y", "u": "%Y", "M": "%m", "d": "%d", "H": "%H", "m": "%M", "s": "%S"}


def _read_time(text: str, formatter: str | None) -> dt.datetime | None:
    if formatter is not None:  # (a date alone: midnight)
        try:
            return dt.datetime.strptime(text, _strptime_format(formatter))
        except ValueError:
            return None
    m = _DEFAULT.fullmatch(text)
    if m is None:
        return None
    # (LENIENT: fields past their range roll over, month 13 into the next year)
    y, mo, d = int(m.group(1)), int(m.group(2)), int(m.group(3))
    h, mi, s = (int(m.group(i) or 0) for i in (4, 5, 6))
    frac = (m.group(7) or "").ljust(6, "0")[:6]
    y, mo = y + (mo - 1) // 12, (mo - 1) % 12 + 1
    try:
        return dt.datetime(y, mo, 1) + dt.timedelta(days=d - 1, hours=h, minutes=mi,
                                                    seconds=s, microseconds=int(frac))
    except (ValueError, OverflowError):
        return None


def _tokens(pattern: str) -> list[str]:
    """A Java pattern's runs of one letter, quoted text (its text, quotes doubled inside)
    and other characters."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "'":
            j, text = i + 1, ""
            while j < len(pattern):
                if pattern[j] == "'":
                    if pattern[j + 1:j + 2] == "'":
                        text += "'"
                        j += 2
                        continue
                    break
                text += pattern[j]
                j += 1
            if j >= len(pattern):
                msg = f"unclosed quote in {pattern!r}"
                raise ValueError(msg)
            out.append("'" + (text or "'"))
            i = j + 1
        elif c.isascii() and c.isalpha():
            j = i
            while j < len(pattern) and pattern[j] == c:
                j += 1
            out.append(pattern[i:j])
            i = j
        else:
            out.append(c)
            i += 1
    return out


def _formatter_refusal(pattern: str) -> str | None:
    try:
        tokens = _tokens(pattern)
    except ValueError as e:
        return str(e)
    for t in tokens:
        if t[0].isascii() and t[0].isalpha() and t[0] not in _LETTERS:
            return (f"the pattern letter {t[0]!r} of {pattern!r} is not supported (a "
                    "partition time is read with y, u, M, d, H, m and s)")
    return None


def _strptime_format(pattern: str) -> str:
    out = []
    for t in _tokens(pattern):
        if t.startswith("'"):
            out.append(t[1:].replace("%", "%%"))
        elif t[0] in _LETTERS:
            out.append(_LETTERS[t[0]])
        else:
            out.append(t.replace("%", "%%"))
    return "".join(out)
