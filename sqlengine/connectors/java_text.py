"""Values as Java's ``toString`` writes them, which is how Flink's print connector shows a row
(``Row.toString`` of the row's external values): ``null``, ``true``, a TIMESTAMP as
``LocalDateTime`` (``2020-01-01T10:20``, ``2020-01-01T10:20:30.500``), a TIMESTAMP_LTZ as
``Instant`` (``1970-01-01T00:00:01.500Z``), a TIME as ``LocalTime`` (``10:00``), BYTES as a
Java byte array (``[0, -1, 16]``), an ARRAY as ``[a, null]``, a MAP as ``{k=1}``, a ROW as
``+I[1, x]``, a DECIMAL as ``BigDecimal`` (``12.30``, ``1E-10``). Numbers, dates and strings
are written as CAST to STRING writes them, which is Java's text already. Vectorised per
column; nested values through their children."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.cast import cast_array

NULL = "null"


def java_strings(col: pa.Array) -> pa.Array:
    """``col``'s values as Java's ``toString`` writes them (a null as ``null``)."""
    t = col.type
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _joined(col, col.offsets, java_strings(col.values), "[", "]")
    if pa.types.is_map(t):
        entries = pc.binary_join_element_wise(java_strings(col.keys), java_strings(col.items),
                                              "=")
        return _joined(col, col.offsets, entries, "{", "}")
    if pa.types.is_struct(t):
        fields = [java_strings(col.field(i)) for i in range(t.num_fields)]
        body = pc.binary_join_element_wise(*fields, ", ") if fields else \
            pa.array([""] * len(col), pa.string())
        text = pc.binary_join_element_wise("+I[", body, "]", "")
        return pc.if_else(col.is_null(), NULL, text)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or \
            pa.types.is_fixed_size_binary(t):
        return _bytes(col)
    if pa.types.is_boolean(t):
        return pc.fill_null(pc.if_else(col, "true", "false"), NULL)
    if pa.types.is_timestamp(t):
        instant = t.tz is not None
        naive = col.cast(pa.timestamp(t.unit)) if instant else col
        text = pc.replace_substring(cast_array(naive, pa.string()), " ", "T")
        text = _java_fraction(text, keep_seconds=instant)
        return pc.fill_null(pc.binary_join_element_wise(text, "Z", "") if instant else text,
                            NULL)
    if pa.types.is_decimal(t):  # (Arrow's text is BigDecimal.toString's: '12.30', '1E-10')
        return pc.fill_null(pc.cast(col, pa.string()), NULL)
    if pa.types.is_time(t):
        return pc.fill_null(_java_fraction(cast_array(col, pa.string()), keep_seconds=False),
                            NULL)
    text = col if pa.types.is_string(t) else cast_array(col, pa.string())
    return pc.fill_null(text, NULL)


def _joined(col: pa.Array, offsets: pa.Array, items: pa.Array, open_: str,
            close: str) -> pa.Array:
    """Each list of ``items`` (by ``offsets``) joined with ', ' between ``open_`` and
    ``close``; a null list is ``null``."""
    lists = pa.ListArray.from_arrays(offsets, items, mask=col.is_null())
    text = pc.binary_join_element_wise(open_, pc.binary_join(lists, ", "), close, "")
    return pc.fill_null(text, NULL)


def _java_fraction(text: pa.Array, keep_seconds: bool) -> pa.Array:
    """A time of day written ``HH:mm:ss[.fff...]`` as Java writes it: the fraction in 3, 6 or
    9 digits, as few as hold it, none when zero; without it, ``:00`` seconds dropped too
    (``LocalTime``; ``Instant`` keeps them)."""
    text = pc.replace_substring_regex(text, r"\.0+$", "")
    text = pc.replace_substring_regex(text, r"(\.\d{3})(?:000)+$", r"\1")
    text = pc.replace_substring_regex(text, r"(\.\d{6})000$", r"\1")
    if not keep_seconds:
        text = pc.replace_substring_regex(text, r"(\d\d:\d\d):00$", r"\1")
    return text


def _bytes(col: pa.Array) -> pa.Array:
    """BYTES as Java writes a byte array: ``[0, -1, 16]``, each byte signed. The values'
    bytes are read as a list of INT8 each, over the array's own buffers."""
    if pa.types.is_fixed_size_binary(col.type):
        col = col.cast(pa.binary())
    large = pa.types.is_large_binary(col.type)
    _validity, offsets_buffer, data = col.buffers()
    offsets = pa.Array.from_buffers(pa.int64() if large else pa.int32(), len(col) + 1,
                                    [None, offsets_buffer], offset=col.offset)
    signed = pa.Array.from_buffers(pa.int8(), 0 if data is None else data.size, [None, data])
    lists = (pa.LargeListArray if large else pa.ListArray).from_arrays(
        offsets, pc.cast(signed, pa.string()))
    text = pc.binary_join_element_wise("[", pc.binary_join(lists, ", "), "]", "")
    return pc.if_else(col.is_null(), NULL, text)
