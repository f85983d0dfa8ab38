"""The avro format (Flink's, through fastavro): Avro object container files, read by file and
written with a schema derived from the table's columns as Flink's AvroSchemaConverter does
(a record named ``record``, nested rows ``record_<field>``, nullable columns as unions with
"null", DECIMAL as bytes with the decimal logical type, DATE / TIME(0..3) / TIMESTAMP(0..6)
with Avro's logical types); codec 'avro.codec' (snappy by default, as Flink).

Reading maps each table column to the file's field of the same name and its Avro type to
Arrow: boolean, int, long, float, double, string, bytes, fixed (BYTES), enum (STRING),
array, map (string keys), record (ROW), the logical types decimal, date, time-millis /
-micros, timestamp-millis / -micros, local-timestamp-millis / -micros and uuid (STRING); a
union of "null" and one type is that type. Any other Avro type (a union of several types) is
refused naming the column."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa

from sqlengine.cast import cast_array
from sqlengine.connectors.parquet_format import null_column
from sqlengine.connectors.text_rows import BATCH_ROWS
from sqlengine.errors import ConnectorError, ExecutionError
from sqlengine.types import type_name

CODECS = ("null", "deflate", "snappy", "bzip2", "xz", "zstandard")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class _Unsupported(Exception):
    pass


def _fastavro() -> Any:
    try:
        import fastavro
    except ImportError:  # pragma: no cover - a dependency of the package
        msg = "the avro format needs the fastavro package (pip install fastavro)"
        raise ConnectorError(msg) from None
    return fastavro


# -- reading ---------------------------------------------------------------------------------
def _describe(s: object) -> str:
    import json

    return json.dumps(s) if not isinstance(s, str) else repr(s)


def avro_arrow_type(s: object, named: dict[str, pa.DataType]) -> pa.DataType:
    """The Arrow type of Avro schema ``s`` (``named``: the named types seen so far).

    Raises:
        _Unsupported: naming the Avro type sqlengine cannot read.
    """
    if isinstance(s, str):
        simple = {"null": pa.null(), "boolean": pa.bool_(), "int": pa.int32(),
                  "long": pa.int64(), "float": pa.float32(), "double": pa.float64(),
                  "bytes": pa.binary(), "string": pa.string()}
        if s in simple:
            return simple[s]
        found = named.get(s) or named.get(s.rsplit(".", 1)[-1])
        if found is None:
            raise _Unsupported(f"the Avro type {s!r}")
        return found
    if isinstance(s, list):
        members = [m for m in s if m != "null"]
        if not members:
            return pa.null()
        if len(members) > 1:
            raise _Unsupported(f"the Avro union {_describe(s)} (only a union of \"null\" and "
                               "one type is read)")
        return avro_arrow_type(members[0], named)
    if not isinstance(s, dict):
        raise _Unsupported(f"the Avro schema {_describe(s)}")
    base = s.get("type")
    logical = s.get("logicalType")
    if logical == "decimal" and base in ("bytes", "fixed"):
        p, sc = int(s.get("precision", 0)), int(s.get("scale", 0))
        if not 0 < p <= 38:
            raise _Unsupported(f"the Avro decimal of precision {p} (at most 38)")
        t: pa.DataType = pa.decimal128(p, sc)
    else:
        t = {("date", "int"): pa.date32(), ("time-millis", "int"): pa.time32("ms"),
             ("time-micros", "long"): pa.time64("us"),
             ("timestamp-millis", "long"): pa.timestamp("ms"),
             ("timestamp-micros", "long"): pa.timestamp("us"),
             ("local-timestamp-millis", "long"): pa.timestamp("ms"),
             ("local-timestamp-micros", "long"): pa.timestamp("us"),
             ("uuid", "string"): pa.string()}.get((logical, base))  # type: ignore[arg-type]
    if t is None:
        if base == "record":
            fields = [pa.field(f["name"], avro_arrow_type(f["type"], named))
                      for f in s.get("fields", [])]
            t = pa.struct(fields)
        elif base == "enum":
            t = pa.string()
        elif base == "fixed":
            t = pa.binary()
        elif base == "array":
            t = pa.list_(avro_arrow_type(s.get("items"), named))
        elif base == "map":
            t = pa.map_(pa.string(), avro_arrow_type(s.get("values"), named))
        elif base is not None:
            # (an unknown logical type is read as its underlying type, as Avro says)
            t = avro_arrow_type(base, named)
        else:
            raise _Unsupported(f"the Avro schema {_describe(s)}")
    if base in ("record", "enum", "fixed") and "name" in s:
        name = str(s["name"])
        named[name] = t
        if s.get("namespace"):
            named[f"{s['namespace']}.{name}"] = t
    return t


def _family(t: pa.DataType) -> str:
    if pa.types.is_null(t):
        return "null"
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
        return "number"
    for name, test in (("bool", pa.types.is_boolean), ("string", pa.types.is_string),
                       ("binary", pa.types.is_binary), ("date", pa.types.is_date),
                       ("time", pa.types.is_time), ("timestamp", pa.types.is_timestamp),
                       ("list", pa.types.is_list), ("map", pa.types.is_map),
                       ("struct", pa.types.is_struct)):
        if test(t):
            return name
    return str(t)


def _fits(src: pa.DataType, dst: pa.DataType) -> bool:
    """Whether a value of the file's type reads as the column's (same kind of value; numbers
    as any number type, as Avro's promotions and Flink's casts)."""
    if _family(src) == "null":
        return True
    if _family(src) != _family(dst):
        return pa.types.is_fixed_size_binary(src) and pa.types.is_binary(dst)
    if pa.types.is_list(src):
        return _fits(src.value_type, dst.value_type)
    if pa.types.is_map(src):
        return _fits(src.item_type, dst.item_type)
    if pa.types.is_struct(src):
        names = {f.name: f.type for f in src}
        return all(f.name not in names or _fits(names[f.name], f.type) for f in dst)
    return True


def _plain_values(values: list[object], t: pa.DataType) -> list[object]:
    """fastavro's values as Arrow takes them (uuid objects as their text)."""
    if pa.types.is_string(t) and any(v is not None and not isinstance(v, str)
                                     for v in values):
        return [None if v is None else str(v) for v in values]
    return values


def read_avro(path: Path, schema: pa.Schema, columns: list[int] | None
              ) -> Iterator[pa.RecordBatch]:
    """The records of ``path`` as batches of the table's ``schema``: the ``columns`` read (all
    by default), the others NULL."""
    fastavro = _fastavro()
    with open(path, "rb") as fo:
        try:
            reader = fastavro.reader(fo)
            writer_schema = reader.writer_schema
        except (ValueError, TypeError, EOFError, OSError) as e:
            msg = f"{path}: not a readable avro file: {e}"
            raise ConnectorError(msg) from None
        if not isinstance(writer_schema, dict) or writer_schema.get("type") != "record":
            msg = (f"{path}: the avro file's schema is {_describe(writer_schema)}, not a "
                   "record (a table reads records)")
            raise ConnectorError(msg)
        named: dict[str, pa.DataType] = {}
        file_fields = {}
        for f in writer_schema.get("fields", []):
            try:
                file_fields[f["name"]] = avro_arrow_type(f["type"], named)
            except _Unsupported as e:
                msg = f"{path}: field {f['name']!r}: {e} is not supported"
                raise ConnectorError(msg) from None
        wanted = [schema.field(i).name for i in (columns if columns is not None
                                                  else range(len(schema)))]
        for name in wanted:
            if name not in file_fields:
                msg = f"{path}: avro file has no field {name!r}"
                raise ConnectorError(msg)
            target = schema.field(name).type
            if not _fits(file_fields[name], target):
                msg = (f"{path}: column {name!r}: the file's Avro field is "
                       f"{type_name(file_fields[name])}, which cannot be read as "
                       f"{type_name(target)}")
                raise ConnectorError(msg)
        rows: list[dict[str, object]] = []
        try:
            for record in reader:
                rows.append(record)
                if len(rows) == BATCH_ROWS:
                    yield _batch(path, rows, schema, wanted, file_fields)
                    rows = []
        except (ValueError, TypeError, EOFError, OSError) as e:
            msg = f"{path}: cannot read avro records: {e}"
            raise ConnectorError(msg) from None
        if rows:
            yield _batch(path, rows, schema, wanted, file_fields)


def _batch(path: Path, rows: list[dict[str, object]], schema: pa.Schema, wanted: list[str],
           file_fields: dict[str, pa.DataType]) -> pa.RecordBatch:
    arrays = []
    for f in schema:
        if f.name not in wanted:
            arrays.append(null_column(f.type, len(rows)))
            continue
        src = file_fields[f.name]
        try:
            values = _plain_values([r.get(f.name) for r in rows], src)
            col = pa.array(values, src)
            arrays.append(col if col.type == f.type else cast_array(col, f.type))
        except (pa.ArrowInvalid, pa.ArrowTypeError, ExecutionError) as e:
            why = e.message if isinstance(e, ExecutionError) else str(e)
            msg = f"{path}: column {f.name!r}: {why}"
            raise ConnectorError(msg) from None
    return pa.RecordBatch.from_arrays(arrays, schema=schema)


# -- writing ---------------------------------------------------------------------------------
def avro_type_refusal(t: pa.DataType) -> str | None:
    """Why a column of type ``t`` has no Avro type (Flink's AvroSchemaConverter's limits)."""
    if pa.types.is_time(t) and t.unit in ("us", "ns"):
        return (f"the avro format holds TIME up to precision 3 (time-millis), not "
                f"{type_name(t)}")
    if pa.types.is_timestamp(t) and t.unit == "ns":
        return (f"the avro format holds TIMESTAMP up to precision 6 (timestamp-micros), not "
                f"{type_name(t)}")
    if pa.types.is_duration(t) or pa.types.is_interval(t) or pa.types.is_null(t):
        return f"the avro format cannot hold {type_name(t)}"
    if pa.types.is_map(t):
        if not pa.types.is_string(t.key_type):
            return f"the avro format holds MAPs with STRING keys only, not {type_name(t)}"
        return avro_type_refusal(t.item_type)
    if pa.types.is_list(t):
        return avro_type_refusal(t.value_type)
    if pa.types.is_struct(t):
        for f in t:
            if not _NAME.fullmatch(f.name):
                return f"ROW field {f.name!r} is not a valid Avro name"
            why = avro_type_refusal(f.type)
            if why is not None:
                return why
    return None


def avro_name_refusal(name: str) -> str | None:
    if not _NAME.fullmatch(name):
        return (f"{name!r} is not a valid Avro field name (letters, digits and _, not "
                "starting with a digit)")
    return None


def avro_schema(schema: pa.Schema, legacy_timestamps: bool = True) -> dict[str, object]:
    """The Avro schema Flink derives from the table's columns."""
    return {"type": "record", "name": "record", "namespace": "org.apache.flink.avro.generated",
            "fields": [{"name": f.name, **_field_type(f.type, f.nullable, f"record_{f.name}",
                                                     legacy_timestamps)}
                       for f in schema]}


def _field_type(t: pa.DataType, nullable: bool, name: str, legacy: bool
                ) -> dict[str, object]:
    avro = _avro_type(t, name, legacy)
    if nullable:
        return {"type": ["null", avro], "default": None}
    return {"type": avro}


def _avro_type(t: pa.DataType, name: str, legacy: bool) -> object:
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_integer(t):
        return "long" if t.bit_width == 64 else "int"
    if pa.types.is_float32(t):
        return "float"
    if pa.types.is_floating(t):
        return "double"
    if pa.types.is_string(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_fixed_size_binary(t):
        return "bytes"
    if pa.types.is_decimal(t):
        return {"type": "bytes", "logicalType": "decimal", "precision": t.precision,
                "scale": t.scale}
    if pa.types.is_date(t):
        return {"type": "int", "logicalType": "date"}
    if pa.types.is_time(t):
        return {"type": "int", "logicalType": "time-millis"}
    if pa.types.is_timestamp(t):
        unit = "micros" if t.unit == "us" else "millis"
        kind = "timestamp" if legacy or t.tz is not None else "local-timestamp"
        return {"type": "long", "logicalType": f"{kind}-{unit}"}
    if pa.types.is_list(t):
        return {"type": "array", "items": _nullable(t.value_type, name, legacy)}
    if pa.types.is_map(t):
        return {"type": "map", "values": _nullable(t.item_type, name, legacy)}
    if pa.types.is_struct(t):
        return {"type": "record", "name": name,
                "fields": [{"name": f.name, **_field_type(f.type, f.nullable,
                                                          f"{name}_{f.name}", legacy)}
                           for f in t]}
    msg = f"the avro format cannot hold {type_name(t)}"
    raise ConnectorError(msg)


def _nullable(t: pa.DataType, name: str, legacy: bool) -> object:
    return ["null", _avro_type(t, name, legacy)]


def _writable_type(t: pa.DataType) -> pa.DataType:
    """The type a column is cast to before its values go to fastavro: timestamps, dates and
    times as the integers Avro stores (fastavro would read a naive datetime as local time)."""
    if pa.types.is_timestamp(t):
        return pa.int64()
    if pa.types.is_date(t) or pa.types.is_time(t):
        return pa.int32()
    if pa.types.is_list(t):
        return pa.list_(_writable_type(t.value_type))
    if pa.types.is_map(t):
        return pa.map_(t.key_type, _writable_type(t.item_type))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _writable_type(f.type)) for f in t])
    return t


def _unit_type(t: pa.DataType) -> pa.DataType:
    """``t`` with its timestamps in Avro's units (s -> ms) and times in milliseconds."""
    if pa.types.is_timestamp(t):
        return pa.timestamp("us" if t.unit == "us" else "ms", tz=t.tz)
    if pa.types.is_time(t):
        return pa.time32("ms")
    if pa.types.is_list(t):
        return pa.list_(_unit_type(t.value_type))
    if pa.types.is_map(t):
        return pa.map_(t.key_type, _unit_type(t.item_type))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _unit_type(f.type)) for f in t])
    return t


class AvroWriter:
    """Batches into one Avro container file."""

    def __init__(self, file: Any, schema: pa.Schema, options: dict[str, str]) -> None:
        fastavro = _fastavro()
        legacy = options.get("avro.timestamp_mapping.legacy", "true").lower() == "true"
        codec = options.get("avro.codec", "snappy")
        self.schema = schema
        parsed = fastavro.parse_schema(avro_schema(schema, legacy))
        try:
            self._writer = fastavro.write.Writer(file, parsed, codec=codec)
        except ValueError as e:
            msg = f"option 'avro.codec' = {codec!r}: {e}"
            raise ConnectorError(msg) from None

    def write(self, batch: pa.RecordBatch) -> None:
        columns = []
        for f, col in zip(self.schema, batch.columns):
            unit = _unit_type(f.type)
            if unit != f.type:
                col = col.cast(unit)
            plain = _writable_type(unit)
            if plain != unit:
                col = col.cast(plain)
            columns.append(col.to_pylist(maps_as_pydicts="strict"))
        names = self.schema.names
        for row in zip(*columns):
            self._writer.write(dict(zip(names, row)))
        self._writer.flush()

    def close(self) -> None:
        self._writer.flush()
