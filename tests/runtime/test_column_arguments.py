"""String functions whose positions, widths, needles and patterns are columns: the kernels
against a row-by-row Python rendering of Flink's rules (BinaryStringDataUtil.substringSQL,
BinaryStringData.indexOf), on batches of ASCII and of other characters, sliced and not.
Flink's own answers on a smaller table: tests/conformance (calls.py, _COLUMN_ARGS)."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

import sqlengine
from sqlengine.runtime.kernels import kernel_for

ASCII = "ab ,x%_"
OTHER = "ab ,\u00c4\u00df\u20ac\U0001f600"


def _strings(rng: random.Random, n: int, alphabet: str) -> list[str | None]:
    out: list[str | None] = []
    for _ in range(n):
        r = rng.random()
        out.append(None if r < 0.07 else "" if r < 0.12 else
                   "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 14))))
    return out


def _ints(rng: random.Random, n: int, low: int, high: int) -> list[int | None]:
    return [None if rng.random() < 0.07 else rng.randint(low, high) for _ in range(n)]


def flink_substring(s: str | None, pos: int | None, length: int | None,
                    has_length: bool) -> str | None:
    if s is None or pos is None or (has_length and length is None):
        return None
    if has_length and length < 0:
        return None
    if s == "":
        return ""
    chars = len(s)
    if pos > 0:
        start = pos - 1
        if start >= chars:
            return ""
    elif pos < 0:
        start = chars + pos
        if start < 0:
            return ""
    else:
        start = 0
    end = chars if not has_length or chars - start < length else start + length
    return s[start:end]


def flink_locate(needle: str | None, s: str | None, start: int | None) -> int | None:
    if needle is None or s is None or start is None:
        return None
    if needle == "":
        return 1
    skip = max(start - 1, 0)
    at = s.find(needle, skip)
    return at + 1 if at >= 0 else 0


@pytest.mark.parametrize("alphabet", [ASCII, OTHER], ids=["ascii", "other"])
@pytest.mark.parametrize("offset", [0, 37])
def test_substring_with_columns_is_flinks_row_by_row(alphabet: str, offset: int) -> None:
    rng = random.Random(len(alphabet) + offset)
    n = 3000
    strings = _strings(rng, n + offset, alphabet)
    pos = _ints(rng, n + offset, -16, 16)
    lengths = _ints(rng, n + offset, -3, 16)
    s = pa.array(strings, pa.string()).slice(offset)
    p = pa.array(pos, pa.int32()).slice(offset)
    m = pa.array(lengths, pa.int32()).slice(offset)
    substring = kernel_for("substring")
    two = substring([s, p], [None, None], pa.string())
    three = substring([s, p, m], [None, None, None], pa.string())
    fixed_pos = substring([s, pa.array([2] * n, pa.int32()), m], [None, 2, None], pa.string())
    rows = list(zip(strings[offset:], pos[offset:], lengths[offset:]))
    assert two.to_pylist() == [flink_substring(a, b, None, False) for a, b, _ in rows]
    assert three.to_pylist() == [flink_substring(a, b, c, True) for a, b, c in rows]
    assert fixed_pos.to_pylist() == [flink_substring(a, 2, c, True) for a, _, c in rows]


@pytest.mark.parametrize("alphabet", [ASCII, OTHER], ids=["ascii", "other"])
def test_locate_with_a_needle_and_a_start_per_row(alphabet: str) -> None:
    rng = random.Random(7)
    n = 2000
    hay = _strings(rng, n, alphabet)
    needles = [rng.choice([None, "", "a", "b ", ",", alphabet[-1], "x%"]) for _ in range(n)]
    starts = _ints(rng, n, -4, 12)
    locate = kernel_for("position")
    got = locate([pa.array(needles, pa.string()), pa.array(hay, pa.string()),
                  pa.array(starts, pa.int32())], [None, None, None], pa.int32())
    assert got.to_pylist() == [flink_locate(a, b, c) for a, b, c in zip(needles, hay, starts)]
    one_needle = locate([pa.array(["a"] * n), pa.array(hay, pa.string()),
                         pa.array(starts, pa.int32())], ["a", None, None], pa.int32())
    assert one_needle.to_pylist() == [flink_locate("a", b, c) for b, c in zip(hay, starts)]


def test_a_pattern_per_row_gives_each_row_its_patterns_answer() -> None:
    """LIKE with the pattern a column: ~150 distinct patterns over 6,000 rows, each row's
    answer the one its pattern gives as a constant."""
    rng = random.Random(3)
    n = 6000
    hay = _strings(rng, n, ASCII)
    patterns = [None if rng.random() < 0.05 else
                f"%{rng.choice(ASCII)}{rng.choice(ASCII)}%{'_' * rng.randint(0, 2)}"
                for _ in range(n)]
    like = kernel_for("like")
    got = like([pa.array(hay, pa.string()), pa.array(patterns, pa.string())], [None, None],
               pa.bool_())
    want = [None if p is None else
            like([pa.array([h], pa.string()), pa.array([p])], [None, p], pa.bool_())[0].as_py()
            for h, p in zip(hay, patterns)]
    assert len(set(patterns)) > 100
    assert got.to_pylist() == want


def test_sql_substring_after_the_first_comma_on_every_row() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    rng = random.Random(11)
    texts = _strings(rng, 5000, OTHER[:-1])  # (Flink's LPAD counts UTF-16 units: no emoji)
    s.register("t", pa.table({"id": list(range(len(texts))), "s": pa.array(texts, pa.string())}))
    got = s.sql("SELECT id, SUBSTRING(s, POSITION(',' IN s) + 1) AS rest, "
                "LPAD(s, CHAR_LENGTH(s) + MOD(id, 4), '.') AS padded FROM t").collect()
    rows = {r["id"]: (r["rest"], r["padded"]) for r in got.to_pylist()}
    for i, text in enumerate(texts):
        rest = None if text is None else text[text.find(",") + 1:]
        padded = None if text is None else "." * (i % 4) + text
        assert rows[i] == (rest, padded), (i, text)
