"""The formats of the message connectors (nats, mqtt): one message is one record (as a Kafka
record is in Flink's formats), decoded a batch of messages at a time by the file formats'
readers, and rows encoded one message each.

- json, debezium-json: the messages as the lines of one JSON-lines block (a line break in a
  message, JSON whitespace, becomes a space once the message is checked to be JSON); an empty
  message is a parse error for json and a tombstone (skipped, as Flink skips them) for
  debezium-json.
- csv: one row per message (Flink's csv format, no header). Messages without a line break are
  parsed together; one with a line break (inside a quoted value) alone, and it must hold one
  row. If the rows parsed together are fewer than their messages (an unbalanced quote joined a
  message with the next), each is parsed alone, so the bad one is named.
- raw: a message is the value of the single column, as it is (a line break is part of it).
A bad message is named by its place (``nats <subject>:seq:<stream sequence>``, ``mqtt
<topic>:msg:<n-th message read>``) in the error, or, with the
format's '<format>.ignore-parse-errors', skipped and counted in the read's skipped rows (the
job's metrics), named in its ``skipped_at``.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Sequence

import pyarrow as pa

from sqlengine.connectors import raw_format
from sqlengine.connectors.base import Fail, OptionSpec, ReadStats
from sqlengine.errors import ConnectorError

FORMATS = ("json", "csv", "raw", "debezium-json")
SINK_FORMATS = ("json", "csv", "raw")
# The formats' option prefixes: an option of another format than the table's is refused.
PREFIXES = {f: f + "." for f in FORMATS}
_BREAKS = re.compile(rb"[\r\n]")
# The formats' own options (as the filesystem connector's formats take them).
_FORMAT_OPTIONS = {
    "json": (OptionSpec("json.ignore-parse-errors", "bool"),
             OptionSpec("json.fail-on-missing-field", "bool"),
             OptionSpec("json.encode.decimal-as-plain-number", "bool")),
    "csv": (OptionSpec("csv.field-delimiter", "char"), OptionSpec("csv.quote-character", "char"),
            OptionSpec("csv.disable-quote-character", "bool"),
            OptionSpec("csv.allow-comments", "bool"), OptionSpec("csv.ignore-parse-errors", "bool"),
            OptionSpec("csv.null-literal"), OptionSpec("csv.escape-character", "char")),
    "debezium-json": (OptionSpec("debezium-json.schema-include", "bool"),
                      OptionSpec("debezium-json.ignore-parse-errors", "bool")),
    "raw": (OptionSpec("raw.charset"),),
}


def format_options(formats: tuple[str, ...]) -> tuple[OptionSpec, ...]:
    """'format' (one of ``formats``) and the options of those formats."""
    return (OptionSpec("format", "enum", formats),
            *(o for f in formats for o in _FORMAT_OPTIONS[f]))


def check_format_options(options: dict[str, str], fail: Fail) -> None:
    """An option of another format than the table's is refused (it would be ignored); a
    'raw.charset' Python cannot encode is refused."""
    fmt = options.get("format", "json")
    for key in options:
        owner = next((f for f, prefix in PREFIXES.items() if key.startswith(prefix)), None)
        if owner is not None and owner != fmt:
            raise fail(key, f"option {key!r} is an option of the {owner} format; this "
                       f"table's format is {fmt!r}, so it would be ignored")
    from sqlengine.connectors.json_format import options_refusal

    why_json = options_refusal(options)
    if why_json is not None:
        raise fail("json.ignore-parse-errors", why_json)
    if "raw.charset" in options:
        why = raw_format.charset_refusal(options["raw.charset"], lines=False)
        if why is not None:
            raise fail("raw.charset", why)


def ignoring(fmt: str, options: dict[str, str]) -> bool:
    return options.get(f"{fmt}.ignore-parse-errors", "false").lower() == "true"


class Messages:
    """A batch of messages: their payloads and numbers (a stream sequence, a count)."""

    def __init__(self, where: str, data: list[bytes], seqs: list[int]) -> None:
        self.where = where  # ('nats <subject>:seq': a message is named where:<number>)
        self.data = data
        self.seqs = seqs

    def name(self, i: int) -> str:
        return f"{self.where}:{self.seqs[i]}"

    def subset(self, keep: Sequence[int]) -> Messages:
        return Messages(self.where, [self.data[i] for i in keep], [self.seqs[i] for i in keep])


def _bad(msgs: Messages, i: int, why: str, fmt: str, ignore: bool, stats: ReadStats) -> None:
    """Message ``i`` cannot be read: an error naming it, or (ignoring) a skipped row."""
    if not ignore:
        msg = (f"{msgs.name(i)}: {why}; set '{fmt}.ignore-parse-errors' = 'true' to skip such "
               "messages")
        raise ConnectorError(msg)
    stats.skipped += 1
    if len(stats.skipped_at) < 10:
        stats.skipped_at.append(msgs.name(i))


def _renumbered(msgs: Messages, text: str) -> str:
    """A format reader's ``<where>:<line>`` as ``<where>:<stream sequence>`` (the messages
    were its lines 1, 2, ...; a message read alone may span lines, all of it)."""
    prefix = msgs.where + ":"
    if text.startswith(prefix):
        m = re.match(r"\d+", text[len(prefix):])
        if m is not None and int(m.group()) >= 1:
            seq = msgs.seqs[min(int(m.group()), len(msgs.seqs)) - 1]
            return prefix + str(seq) + text[len(prefix) + m.end():]
    return text


def _as_lines(msgs: Messages, options: dict[str, str], schema: pa.Schema, stats: ReadStats,
              columns: list[int] | None, fmt: str) -> list[pa.RecordBatch]:
    """The messages (one line each) read by the format's file reader, its errors and skipped
    rows named by stream sequence."""
    from sqlengine.connectors.csv_format import read_csv
    from sqlengine.connectors.debezium_format import read_debezium
    from sqlengine.connectors.json_format import read_json

    if not msgs.data:
        return []
    data = b"\n".join(msgs.data) + b"\n"
    noted = len(stats.skipped_at)
    try:
        if fmt == "json":
            out = list(read_json(msgs.where, options, schema, stats, data=data))
        elif fmt == "debezium-json":
            out = list(read_debezium(msgs.where, options, schema, stats, data=data))
        else:
            out = list(read_csv(msgs.where, options, schema, stats, data=data,
                                columns=columns))
    except ConnectorError as e:
        raise ConnectorError(_renumbered(msgs, e.message)) from None
    stats.skipped_at[noted:] = [_renumbered(msgs, s) for s in stats.skipped_at[noted:]]
    return out


def _json_messages(msgs: Messages, options: dict[str, str], schema: pa.Schema,
                   stats: ReadStats, columns: list[int] | None, fmt: str
                   ) -> list[pa.RecordBatch]:
    """The messages read as one line each: a line break (JSON whitespace) becomes a space in
    a message that is JSON; one that is not, or is empty, is bad (a debezium-json tombstone,
    empty, is dropped). Without ignore-parse-errors the first bad message in stream order is
    the one named: those before a bad one found here are read first."""
    ignore = ignoring(fmt, options)
    keep: list[int] = []
    data = list(msgs.data)
    for i, raw in enumerate(data):
        why = None
        if not raw.strip():
            if fmt == "json":
                why = "empty message (not a JSON object)"
        elif _BREAKS.search(raw) is not None:
            try:
                json.loads(raw)
                data[i] = _BREAKS.sub(b" ", raw)
            except ValueError as e:
                why = f"cannot parse JSON message: {e}"
        else:
            keep.append(i)
            continue
        if why is not None:
            if not ignore:
                _as_lines(Messages(msgs.where, data, msgs.seqs).subset(keep), options,
                          schema, stats, columns, fmt)
            _bad(msgs, i, why, fmt, ignore, stats)
            continue
        if raw.strip():
            keep.append(i)
    lines = Messages(msgs.where, data, msgs.seqs)
    return _as_lines(lines if len(keep) == len(data) else lines.subset(keep), options, schema,
                     stats, columns, fmt)


def _unbalanced(raw: bytes, quote: bytes | None, escape: bytes | None) -> bool:
    """Whether a csv message leaves a quoted value open (Arrow would take the rest of the
    input, or the end of the message, as its text)."""
    if quote is None or quote not in raw:
        return False
    if escape is not None and escape in raw:
        raw = re.sub(re.escape(escape) + b".", b"", raw, flags=re.DOTALL)
    return raw.count(quote) % 2 == 1


def _csv(msgs: Messages, options: dict[str, str], schema: pa.Schema, stats: ReadStats,
         columns: list[int] | None) -> list[pa.RecordBatch]:
    """Runs of one-line messages parsed together, a message with a line break alone; in
    stream order."""
    ignore = ignoring("csv", options)
    out: list[pa.RecordBatch] = []
    run: list[int] = []

    def flush() -> None:
        if not run:
            return
        part = msgs.subset(run)
        skipped, noted = stats.skipped, len(stats.skipped_at)
        got = _as_lines(part, options, schema, stats, columns, "csv")
        if sum(b.num_rows for b in got) + stats.skipped - skipped == len(run):
            out.extend(got)
        else:  # (a quote open at a message's end joined it with the next: one by one)
            stats.skipped, stats.skipped_at[noted:] = skipped, []
            for i in run:
                alone(i)
        run.clear()

    def alone(i: int) -> None:
        one = msgs.subset([i])
        skipped = stats.skipped
        try:
            got = _as_lines(one, options, schema, stats, columns, "csv")
        except ConnectorError as e:  # (malformed beyond what the reader skips)
            if not ignore:
                raise
            stats.skipped = skipped
            _bad(msgs, i, e.message, "csv", ignore, stats)
            return
        rows = sum(b.num_rows for b in got) + stats.skipped - skipped
        if rows != 1:
            stats.skipped = skipped
            _bad(msgs, i, f"a csv message must hold one row, this one holds {rows}", "csv",
                 ignore, stats)
            return
        out.extend(got)

    from sqlengine.connectors.csv_format import csv_quoting

    quote, escape = (c.encode() if c else None for c in csv_quoting(options))
    comments = options.get("csv.allow-comments", "false").lower() == "true"
    for i, raw in enumerate(msgs.data):
        if comments and all(line.startswith(b"#") or not line.strip()
                            for line in raw.split(b"\n")) and raw.strip():
            continue  # (a comment: no row, as Flink's format reads none from it; it was bad)
        if not raw.strip():
            flush()
            _bad(msgs, i, "empty message (no row)", "csv", ignore, stats)
        elif _unbalanced(raw, quote, escape):
            flush()
            _bad(msgs, i, "malformed CSV message: a quoted value is not closed", "csv", ignore,
                 stats)
        elif _BREAKS.search(raw) is not None:
            flush()
            alone(i)
        else:
            run.append(i)
    flush()
    return out


def _raw(msgs: Messages, options: dict[str, str], schema: pa.Schema) -> list[pa.RecordBatch]:
    field = schema.field(0)
    column = pa.array(msgs.data, pa.binary())
    if pa.types.is_string(field.type):
        name = raw_format.charset(options)
        if codecs.lookup(name).name == "utf-8":
            try:
                column = column.cast(pa.string())
            except pa.ArrowInvalid:
                column = None
        else:
            column = None
        if column is None:
            values = []
            for i, raw in enumerate(msgs.data):
                try:
                    values.append(raw.decode(name))
                except UnicodeDecodeError as e:
                    msg = (f"{msgs.name(i)}: the message is not valid {name} (byte "
                           f"{e.start + 1}); declare the column BYTES to read it as it is")
                    raise ConnectorError(msg) from None
            column = pa.array(values, pa.string())
    return [pa.RecordBatch.from_arrays([column], schema=schema)]


def decode(msgs: Messages, options: dict[str, str], schema: pa.Schema, stats: ReadStats,
           columns: list[int] | None = None) -> pa.RecordBatch | None:
    """The messages' rows as one batch, laid out as ``schema`` (and, for debezium-json, the
    changelog column of row kinds); None when every message was skipped."""
    fmt = options.get("format", "json")
    if fmt == "raw":
        batches = _raw(msgs, options, schema)
    elif fmt == "csv":
        batches = _csv(msgs, options, schema, stats, columns)
    else:
        batches = _json_messages(msgs, options, schema, stats, columns, fmt)
    batches = [b for b in batches if b.num_rows]
    if not batches:
        return None
    return batches[0] if len(batches) == 1 else pa.concat_batches(batches)


def encode(table: str, options: dict[str, str], batch: pa.RecordBatch) -> pa.Array:
    """The batch's rows as messages (one binary value per row) in the table's format."""
    fmt = options.get("format", "json")
    if fmt == "json":
        from sqlengine.connectors.json_format import json_bytes, plain_decimals

        text = json_bytes(batch, plain_decimals=plain_decimals(options, "json"))
        return pa.array(text.split(b"\n")[:-1] if text else [], pa.binary())
    if fmt == "csv":
        from sqlengine.connectors.csv_format import csv_rows

        # (a row's csv text per message: a value's line break stays inside its quotes)
        rows = csv_rows(batch, options)
        return pa.array([], pa.binary()) if rows is None else rows.cast(pa.binary())
    if fmt == "raw":
        col = batch.column(0)
        if col.null_count:
            msg = (f"table {table!r}: column {batch.schema.field(0).name!r}: the raw format "
                   "cannot write NULL (a message holds a value; filter the NULLs out or "
                   "COALESCE them)")
            raise ConnectorError(msg)
        if pa.types.is_string(col.type):
            cs = raw_format.charset(options)
            if codecs.lookup(cs).name == "utf-8":
                return col.cast(pa.binary())
            try:
                return pa.array([v.encode(cs) for v in col.to_pylist()], pa.binary())
            except UnicodeEncodeError as e:
                msg = (f"table {table!r}: column {batch.schema.field(0).name!r}: a value "
                       f"cannot be written in {cs}: {e.reason}")
                raise ConnectorError(msg) from None
        return col.cast(pa.binary())
    msg = f"table {table!r}: the {fmt} format cannot be written as messages"
    raise ConnectorError(msg)
