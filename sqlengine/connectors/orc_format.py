"""The orc format (Flink's, through pyarrow.orc): read by stripe (the unit parallel subtasks
share, as parquet's row groups), only the columns a query reads decoded, cast to the table's
types; written with ORC's writer properties under Flink's 'orc.*' keys (ZLIB compression by
default, as ORC's own writer)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

from sqlengine.connectors.parquet_format import conform_columns, file_columns
from sqlengine.connectors.text_rows import BATCH_ROWS
from sqlengine.errors import ConnectorError
from sqlengine.types import type_name

# ORC's 'orc.compress' values and pyarrow's names for them (LZO: pyarrow has no writer).
_COMPRESS = {"NONE": "uncompressed", "ZLIB": "zlib", "SNAPPY": "snappy", "LZ4": "lz4",
             "ZSTD": "zstd"}
COMPRESS_CHOICES = (*_COMPRESS, "LZO")


def _orc() -> Any:
    import pyarrow.orc as po

    return po


def open_orc(path: Path) -> Any:
    """``path`` open for reading (an error naming it when it is not an ORC file)."""
    try:
        return _orc().ORCFile(str(path))
    except (pa.ArrowInvalid, OSError) as e:
        msg = f"{path}: not a readable orc file: {e}"
        raise ConnectorError(msg) from None


def stripes(path: Path) -> int:
    return max(1, open_orc(path).nstripes)


def read_orc(path: Path, schema: pa.Schema, columns: list[int] | None,
             stripe: int | None = None, opened: Any = None) -> Iterator[pa.RecordBatch]:
    """The rows of ``path`` (of one stripe), with the table's ``schema``: the ``columns`` read
    (all by default), the others NULL."""
    of = opened if opened is not None else open_orc(path)
    wanted = [schema.field(i).name for i in (columns if columns is not None
                                              else range(len(schema)))]
    named = file_columns(of.schema.names, wanted)
    missing = [n for n in wanted if n not in named]
    if missing:
        msg = f"{path}: orc file has no column {missing[0]!r}"
        raise ConnectorError(msg)
    if of.nstripes == 0:
        return
    # (ORC decodes a selection of columns by name; an empty one would read them all)
    names = [named[n] for n in wanted] or [of.schema.names[0]]
    for s in ([stripe] if stripe is not None else range(of.nstripes)):
        try:
            table = pa.Table.from_batches([of.read_stripe(s, columns=names)])
        except (pa.ArrowInvalid, OSError) as e:
            msg = f"{path}: stripe {s}: cannot read: {e}"
            raise ConnectorError(msg) from None
        if wanted:
            table = table.rename_columns(wanted)
        for batch in table.to_batches(max_chunksize=BATCH_ROWS):
            yield conform_columns(batch, schema, wanted, path)


def orc_rows(path: Path) -> int | None:
    try:
        return int(_orc().ORCFile(str(path)).nrows)
    except (pa.ArrowInvalid, OSError):
        return None


def orc_type_refusal(t: pa.DataType) -> str | None:
    """ORC has no TIME and no INTERVAL (as Flink's orc format)."""
    if pa.types.is_time(t) or pa.types.is_duration(t) or pa.types.is_interval(t):
        return f"the orc format cannot hold {type_name(t)}"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return orc_type_refusal(t.value_type)
    if pa.types.is_map(t):
        return orc_type_refusal(t.key_type) or orc_type_refusal(t.item_type)
    if pa.types.is_struct(t):
        for f in t:
            why = orc_type_refusal(f.type)
            if why is not None:
                return why
    return None


class OrcWriter:
    """Batches into one ORC file (stripes as ORC's writer cuts them)."""

    def __init__(self, file: Any, schema: pa.Schema, options: dict[str, str]) -> None:
        kwargs: dict[str, Any] = {
            "compression": _COMPRESS[options.get("orc.compress", "ZLIB").upper()]}
        if "orc.stripe.size" in options:
            kwargs["stripe_size"] = int(options["orc.stripe.size"])
        if "orc.compress.size" in options:
            kwargs["compression_block_size"] = int(options["orc.compress.size"])
        if "orc.row.index.stride" in options:
            kwargs["row_index_stride"] = int(options["orc.row.index.stride"])
        if "orc.bloom.filter.columns" in options:
            names = [n.strip() for n in options["orc.bloom.filter.columns"].split(",")
                     if n.strip()]
            kwargs["bloom_filter_columns"] = [schema.names.index(n) for n in names]
        if "orc.bloom.filter.fpp" in options:
            kwargs["bloom_filter_fpp"] = float(options["orc.bloom.filter.fpp"])
        if "orc.dictionary.key.threshold" in options:
            kwargs["dictionary_key_size_threshold"] = \
                float(options["orc.dictionary.key.threshold"])
        self._writer = _orc().ORCWriter(file, **kwargs)
        self.schema = schema

    def write(self, batch: pa.RecordBatch) -> None:
        self._writer.write(pa.Table.from_batches([batch], schema=self.schema))

    def close(self) -> None:
        self._writer.close()


def check_orc_options(options: dict[str, str], columns: set[str],
                      fail: Any) -> None:
    """Cross-checks of the 'orc.*' writer properties (each key's kind is checked as an
    option): LZO has no writer here, bloom filter columns must be the table's, the false
    positive rate and threshold are fractions."""
    if options.get("orc.compress", "").upper() == "LZO":
        raise fail("orc.compress", "option 'orc.compress' = 'LZO' is not supported (no LZO "
                   "codec in pyarrow's ORC writer); use ZLIB, SNAPPY, LZ4, ZSTD or NONE")
    size = options.get("orc.compress.size")
    if size is not None and size.strip().isdigit() and int(size) % (64 << 10):
        # (Flink's ORC writer takes any size; pyarrow's fails on the first file written)
        raise fail("orc.compress.size", f"option 'orc.compress.size' = {size!r} is not "
                   "supported: pyarrow's ORC writer takes a multiple of 65536 bytes")
    for n in options.get("orc.bloom.filter.columns", "").split(","):
        if n.strip() and n.strip() not in columns:
            raise fail("orc.bloom.filter.columns", "option 'orc.bloom.filter.columns' names "
                       f"{n.strip()!r}, which is not a column of the table")
    for key in ("orc.bloom.filter.fpp", "orc.dictionary.key.threshold"):
        if key in options:
            try:
                v = float(options[key])
                ok = 0.0 <= v <= 1.0
            except ValueError:
                ok = False
            if not ok:
                raise fail(key, f"option {key!r} must be a number from 0 to 1, got "
                           f"{options[key]!r}")
