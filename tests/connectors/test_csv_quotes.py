"""Where csv records end, reading quotes as a csv reader does (sqlengine/connectors/csv_quotes.py):
a quote opens a quoted field only at a field's start (``5" screen`` is a value), an escaped
escape character before a quote leaves the quote a quote, and a '#' line inside a quoted value
is a line of the value. Each of these split records wrongly: a stray quote lost the next
multi-line row, ``"a\\\\"`` cut the next quoted value in two, a comment-like line was dropped
from a value. The scanner is checked against a byte-at-a-time state machine written here,
whole and fed in chunks; files end to end against Python's csv module."""

from __future__ import annotations

import csv
import io
import random
from pathlib import Path

import pytest

import sqlengine
from sqlengine.connectors import text_blocks
from sqlengine.connectors.csv_quotes import QuoteScan

PIECES = ['"', "a", ",", "\n", '""', '5"', "\r\n", "\\", "\\\\", "#", "\n#"]


def _reference(text: str, escape: str | None, comments: bool) -> list[int]:
    """Record-ending line breaks, one byte at a time."""
    ends: list[int] = []
    inside, field_start, line_start = False, True, True
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if escape is not None and c == escape and i + 1 < n and text[i + 1] in ('"', escape):
            i, field_start, line_start = i + 2, False, False
            continue
        if inside:
            if c == '"':
                if i + 1 < n and text[i + 1] == '"':
                    i += 2
                    continue
                inside = False
            i += 1
            continue
        if comments and line_start and c == "#":
            j = text.find("\n", i)
            if j < 0:
                break
            ends.append(j)
            i, field_start, line_start = j + 1, True, True
            continue
        line_start = False
        if c == '"' and field_start:
            inside, field_start = True, False
        elif c == "\n":
            ends.append(i)
            field_start = line_start = True
        else:
            field_start = c in (",", "\r")
        i += 1
    return ends


@pytest.mark.parametrize(("escape", "comments"), [(None, False), ("\\", False),
                                                  (None, True), ("\\", True)])
def test_the_scanner_matches_a_byte_at_a_time_reader(escape: str | None,
                                                     comments: bool) -> None:
    rng = random.Random(f"{escape}{comments}")
    for _ in range(1500):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 40)))
        want = _reference(text, escape, comments)
        data = text.encode()
        assert list(QuoteScan('"', escape, ",", comments).record_ends(data)) == want, text
        scan, got, pos = QuoteScan('"', escape, ",", comments), [], 0
        while pos < len(data):  # (the same text in chunks: a file read in blocks)
            part = data[pos:pos + rng.randint(1, 7)]
            got += [int(e) + pos for e in scan.record_ends(part)]
            pos += len(part)
        assert got == want, text


def _field(rng: random.Random) -> str:
    if rng.random() < 0.5:  # (unquoted: quotes inside are characters of the value)
        return rng.choice(["x", "5", "ab"]) + "".join(
            rng.choice(['"', "y", " ", '""']) for _ in range(rng.randint(0, 4)))
    value = "".join(rng.choice(["a", "\n", '"', ",", "#", " "]) for _ in range(rng.randint(0, 6)))
    return '"' + value.replace('"', '""') + '"'


@pytest.mark.parametrize("parallelism", [1, 3])
def test_stray_quotes_and_multi_line_values_read_as_pythons_csv(tmp_path: Path, monkeypatch,
                                                                parallelism: int) -> None:
    monkeypatch.setattr(text_blocks, "BLOCK_BYTES", 61)
    rng = random.Random(parallelism)
    text = "".join(f"{i},{_field(rng)}\n" for i in range(400))
    f = tmp_path / "t.csv"
    f.write_text(text)
    want = [(int(k), v) for k, v in csv.reader(io.StringIO(text, newline=""))]
    s = sqlengine.connect({"execution.runtime-mode": "batch",
                           "parallelism.default": str(parallelism)})
    s.execute(f"CREATE TABLE t (k INT, v STRING) WITH ('connector' = 'filesystem', "
              f"'path' = '{f}', 'format' = 'csv', 'csv.ignore-parse-errors' = 'true')")
    got = sorted((r["k"], r["v"] if r["v"] is not None else "")
                 for r in s.sql("SELECT k, v FROM t").collect().to_pylist())
    assert got == want


@pytest.mark.parametrize(("text", "options", "want"), [
    # A value ending in an escaped escape character, then a multi-line quoted value.
    ('"a\\\\"\n"x\ny"\n', "'csv.escape-character' = '\\'", ["a\\", "x\ny"]),
    # A line of a quoted value that starts with '#', comments on.
    ('"x\n#y\nz"\n# a comment\n"w"\n', "'csv.allow-comments' = 'true'", ["x\n#y\nz", "w"]),
    # A comment line holding a quote: its quote does not open a field.
    ('# it\'s "quoted\n"a\nb"\nc\n', "'csv.allow-comments' = 'true'", ["a\nb", "c"]),
    # A quote inside an unquoted value, then a multi-line quoted value.
    ('5" screen\n"a\nb"\n', "'csv.ignore-parse-errors' = 'true'", ['5" screen', "a\nb"]),
])
def test_records_as_flinks_reader_splits_them(tmp_path: Path, text: str, options: str,
                                              want: list[str]) -> None:
    f = tmp_path / "t.csv"
    f.write_text(text)
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE t (v STRING) WITH ('connector' = 'filesystem', 'path' = '{f}', "
              f"'format' = 'csv', {options})")
    assert [r["v"] for r in s.sql("SELECT v FROM t").collect().to_pylist()] == want
