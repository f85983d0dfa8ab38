"""The vectorised text of DOUBLE / FLOAT values (CAST to STRING, the json writer) is Java's
Double.toString / Float.toString, value by value (cast.java_double_text), at every
magnitude: plain from 10^-3 to 10^7, E notation outside, NaN and the infinities."""

from __future__ import annotations

import math

import numpy as np
import pyarrow as pa

from sqlengine.cast import java_double_text, java_double_texts


def test_every_magnitude_matches_the_value_by_value_text() -> None:
    rng = np.random.default_rng(7)
    edges = [0.0, -0.0, 1.0, 100.0, 1e7, 9999999.0, 1e-3, 0.00099, 1e-5, 123456.7,
             math.nan, math.inf, -math.inf, 5e-324, 1.7976931348623157e308]
    values = np.concatenate([rng.random(20000) * 10.0 ** rng.integers(-9, 13, 20000),
                             -rng.random(500) * 1e4, edges])
    with np.errstate(over="ignore"):  # (the largest doubles are FLOAT infinities)
        floats = values.astype(np.float32)
    for arr, single in ((pa.array(values), False), (pa.array(floats), True)):
        got = java_double_texts(arr).to_pylist()
        want = [java_double_text(v, single) for v in arr.to_pylist()]
        assert got == want
    assert java_double_texts(pa.array([1.5, None, 1e20])).to_pylist() == ["1.5", None,
                                                                          "1.0E20"]
