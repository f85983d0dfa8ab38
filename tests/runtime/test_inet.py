"""INET_ATON / INET_NTOA (Flink 2.3's, after MySQL's): the values PyFlink 2.3 gives for the same
SQL, and generated addresses against a Python transcription of Flink's InetAtonFunction (its
parts loop: digits only, each part at most 255, 1 to 4 parts, short forms a.b -> a.0.0.b and
a.b.c -> a.b.0.c)."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

import sqlengine


def _one(sql: str) -> list[object]:
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    return list(s.sql(sql).collect().to_pylist()[0].values())


@pytest.mark.parametrize(("text", "expected"), [
    ("127.0.0.1", 2130706433), ("127.1", 2130706433), ("1.2.3", 16908291), ("0.0.0.0", 0),
    ("255.255.255.255", 4294967295), ("01.002.3.4", 16909060), ("1", 1),
    ("256.0.0.1", None), ("1.2.3.4.5", None), ("", None), ("a.b.c.d", None),
    (" 1.2.3.4", None), ("1.2.3.4 ", None), ("1..2.3", None), ("-1.2.3.4", None),
    ("1.2.3.", None), ("1.65536", None), ("1.2.65535", None),
])
def test_inet_aton_as_pyflink(text: str, expected: int | None) -> None:
    assert _one(f"SELECT INET_ATON('{text}')") == [expected]


@pytest.mark.parametrize(("value", "expected"), [
    ("2130706433", "127.0.0.1"), ("0", "0.0.0.0"), ("4294967295", "255.255.255.255"),
    ("4294967296", None), ("-1", None), ("CAST(16909060 AS INT)", "1.2.3.4"),
    ("CAST(NULL AS BIGINT)", None),
])
def test_inet_ntoa_as_pyflink(value: str, expected: str | None) -> None:
    assert _one(f"SELECT INET_NTOA({value})") == [expected]


def _flink_aton(ip: str | None) -> int | None:
    if ip is None or ip == "":
        return None
    parts: list[int] = []
    for chunk in ip.split("."):
        if not chunk or len(parts) == 4 or any(c not in "0123456789" for c in chunk):
            return None
        value = 0
        for c in chunk:
            value = value * 10 + int(c)
            if value > 255:
                return None
        parts.append(value)
    shifts = {1: (0,), 2: (24, 0), 3: (24, 16, 0), 4: (24, 16, 8, 0)}[len(parts)]
    return sum(p << s for p, s in zip(parts, shifts))


def test_columns_against_flinks_algorithm() -> None:
    r = random.Random(7)
    pieces = ["0", "1", "9", "10", "99", "127", "255", "256", "300", "000", "0255", "00256",
              "", "a", "-1", " 1", "65535", "1e3"]
    texts: list[str | None] = [None, ""]
    for _ in range(3000):
        texts.append(".".join(r.choice(pieces) for _ in range(r.randint(1, 5))))
    numbers = [None, -1, 0, 1, 255, 256, 2**24, 2**32 - 1, 2**32, 2**40] + \
        [r.randint(-10, 2**32 + 10) for _ in range(3000)]
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.register("t", pa.table({"ip": pa.array(texts, pa.string())}))
    s.register("n", pa.table({"v": pa.array(numbers, pa.int64())}))
    got = [r["a"] for r in s.sql("SELECT INET_ATON(ip) AS a FROM t").collect().to_pylist()]
    assert got == [_flink_aton(t) for t in texts]
    assert sum(g is not None for g in got) > 300  # (the draw has valid addresses too)
    back = s.sql("SELECT v, INET_NTOA(v) AS ip, INET_ATON(INET_NTOA(v)) AS again FROM n"
                 ).collect().to_pylist()
    for row in back:
        v = row["v"]
        if v is None or not 0 <= v < 2**32:
            assert row["ip"] is None and row["again"] is None
        else:
            assert row["ip"] == ".".join(str((v >> k) & 255) for k in (24, 16, 8, 0))
            assert row["again"] == v
