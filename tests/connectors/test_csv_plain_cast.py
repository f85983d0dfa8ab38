"""csv columns whose values are all in the plainest text of their type are cast by Arrow's
parser directly (cast.plain_cast): the same values as the general path, which trims,
pads and judges each value; any other text goes the general way."""

from __future__ import annotations

import pyarrow as pa
import pytest

from sqlengine.cast import cast_array, plain_cast

PLAIN = {
    pa.int64(): ["-42", "0", "007", "9223372036854775", None],
    pa.int32(): ["2147483647", "-2147483648", "12"],
    pa.int8(): ["127", "-128"],
    pa.date32(): ["2024-01-02", "1969-12-31", "2000-02-29", None],
    pa.timestamp("ms"): ["2024-01-02 03:04:05", "2024-01-02 03:04:05.6",
                         "1960-06-30 23:59:59.999", None],
    pa.timestamp("us"): ["2024-01-02 03:04:05.123456"],
}


@pytest.mark.parametrize("t", list(PLAIN), ids=str)
def test_plain_text_is_read_as_the_general_path_reads_it(t: pa.DataType) -> None:
    col = pa.array(PLAIN[t], pa.string())
    fast = plain_cast(col, t)
    assert fast is not None
    assert fast.equals(cast_array(col, t, safe=True, checked=True))


@pytest.mark.parametrize(("t", "kind", "values"), [
    (pa.int64(), "int", ["+42"]),  # (a sign Arrow may not take: the general path)
    (pa.int64(), "int", [" 42"]),
    (pa.int64(), "int", ["42.5"]),  # (Flink drops the fraction)
    (pa.int32(), "int", ["2147483648"]),  # (past INT: the general path names it)
    (pa.int8(), "int", ["300"]),
    (pa.date32(), "date", ["2024-1-2"]),
    (pa.date32(), "date", ["2024-02-30"]),
    (pa.date32(), "date", ["2024-13-01"]),
    (pa.timestamp("ms"), "timestamp", ["2024-01-02 03:04:05.6789"]),  # (digits to cut)
    (pa.timestamp("ms"), "timestamp", ["2024-01-02T03:04:05"]),
    (pa.timestamp("ms"), "timestamp", ["2024-01-02"]),
    (pa.timestamp("ms"), "timestamp", ["2024-01-02 03:04:05Z"]),
])
def test_other_text_goes_the_general_way(t: pa.DataType, kind: str, values: list[str]) -> None:
    assert plain_cast(pa.array(["1" if kind == "int" else "2024-01-02" if kind == "date"
                                 else "2024-01-02 00:00:00", *values]), t) is None
