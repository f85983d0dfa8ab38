"""csv and json files are read block by block (bounded memory) and, at parallelism > 1, a file
is split by byte ranges: every record read once, line numbers in errors still right."""

from __future__ import annotations

import random
from pathlib import Path

import duckdb
import pytest

import sqlengine
from sqlengine.connectors import text_blocks
from sqlengine.connectors.text_blocks import record_blocks
from sqlengine.errors import ConnectorError


def _random_csv(rng: random.Random, rows: int, blanks: bool = True) -> bytes:
    out = []
    for i in range(rows):
        kind = rng.random()
        if kind < 0.2:
            text = f'"multi\nline {i}, with ""quotes"""'
        elif kind < 0.3:
            text = '"\n\n"'
        elif kind < 0.35 and blanks:
            out.append("")  # a blank line
            text = f"plain{i}"
        else:
            text = f"plain{i}"
        out.append(f"{i},{text}")
    return ("\n".join(out) + ("\n" if rng.random() < 0.5 else "")).encode()


@pytest.mark.parametrize("seed", range(6))
def test_blocks_of_all_ranges_are_the_file_cut_at_record_ends(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    data = _random_csv(rng, rng.randint(0, 60))
    f = tmp_path / "t.csv"
    f.write_bytes(data)
    for block in (1, 3, 7, 64, 1 << 20):
        for n in (1, 2, 3, 5):
            pieces = [b for i in range(n) for b in record_blocks(f, '"', None, (i, n), block)]
            assert b"".join(p for p, _, _ in pieces) == data, (block, n)
            offset = 0
            for piece, first_line, at in pieces:
                assert at == offset
                assert first_line == data.count(b"\n", 0, offset) + 1
                # A block ends where a record ends: outside quotes, at a line break (or EOF).
                assert data[:offset + len(piece)].count(b'"') % 2 == 0
                assert piece.endswith(b"\n") or offset + len(piece) == len(data)
                offset += len(piece)


def test_escaped_quotes_do_not_open_a_field(tmp_path: Path) -> None:
    f = tmp_path / "t.csv"
    data = b'1,a\\"b\n2,"x\ny"\n3,c\n'
    f.write_bytes(data)
    pieces = list(record_blocks(f, '"', "\\", (0, 1), 2))
    assert [p for p, _, _ in pieces] == [b'1,a\\"b\n', b'2,"x\ny"\n', b"3,c\n"]
    assert [line for _, line, _ in pieces] == [1, 2, 4]
    assert [at for _, _, at in pieces] == [0, 7, 15]


@pytest.mark.parametrize("seed", range(4))
def test_resuming_at_a_block_start_reads_the_rest(tmp_path: Path, seed: int) -> None:
    """A checkpointed position (offset and line of a block's first record) resumes there: the
    blocks read from it are the rest of the file, lines numbered as in a whole read."""
    rng = random.Random(seed)
    data = _random_csv(rng, rng.randint(5, 60))
    f = tmp_path / "t.csv"
    f.write_bytes(data)
    for n in (1, 2, 3):
        for i in range(n):
            whole = list(record_blocks(f, '"', None, (i, n), 5))
            for k, (_, line, at) in enumerate(whole):
                rest = list(record_blocks(f, '"', None, (i, n), 7, start=(at, line)))
                assert b"".join(p for p, _, _ in rest) == b"".join(p for p, _, _ in whole[k:])
                for piece, first_line, offset in rest:
                    assert first_line == data.count(b"\n", 0, offset) + 1
                    assert data[offset:offset + len(piece)] == piece


def _session(path: Path, fmt: str, parallelism: int, columns: str,
             extra: str = "") -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": "batch",
                           "parallelism.default": str(parallelism)})
    s.execute(f"CREATE TABLE t ({columns}) WITH ('connector' = 'filesystem', 'path' = "
              f"'{path}', 'format' = '{fmt}'{extra})")
    return s


@pytest.mark.parametrize("parallelism", [1, 2, 3])
def test_csv_in_small_blocks_and_ranges_matches_duckdb(tmp_path: Path, monkeypatch,
                                                       parallelism: int) -> None:
    monkeypatch.setattr(text_blocks, "BLOCK_BYTES", 97)
    rng = random.Random(parallelism)
    f = tmp_path / "t.csv"
    f.write_bytes(_random_csv(rng, 400, blanks=False))  # (DuckDB skips blank lines)
    q = ("SELECT COUNT(*) AS n, SUM(id) AS s, COUNT(DISTINCT v) AS d, MAX(LENGTH(v)) AS l "
         "FROM t")
    got = _session(f, "csv", parallelism, "id INT, v STRING").sql(q).collect().to_pylist()
    want = duckdb.sql(
        q.replace("FROM t", f"FROM read_csv('{f}', header = false, columns = "
                  "{'id': 'INTEGER', 'v': 'VARCHAR'}, quote = '\"', escape = '\"')")
    ).fetchall()
    assert [tuple(r.values()) for r in got] == want


@pytest.mark.parametrize(("parallelism", "ignore"), [(1, "false"), (3, "true")])
def test_quoted_line_breaks_past_arrows_1_mb_blocks_match_duckdb(tmp_path: Path,
                                                                 parallelism: int,
                                                                 ignore: str) -> None:
    """Arrow's csv reader cuts its input in 1 MB blocks at line breaks unless told that
    values may hold them: a valid file failed ('parser got out of sync') or, with
    ignore-parse-errors, gained an invented row of NULLs."""
    rng = random.Random(7)
    f = tmp_path / "t.csv"
    # (every other line break inside a quoted value: Arrow's blocks end inside one)
    rows = [f'{i},"line one\nline {"two" * rng.randint(0, 3)} {i}"\n' for i in range(120_000)]
    f.write_text("".join(rows))
    assert f.stat().st_size > 3 << 20
    q = ("SELECT COUNT(*) AS n, COUNT(id) AS k, SUM(CAST(id AS BIGINT)) AS s, "
         "COUNT(DISTINCT v) AS d, "
         "MAX(LENGTH(v)) AS l FROM t")
    s = _session(f, "csv", parallelism, "id INT, v STRING")
    s.execute(f"ALTER TABLE t SET ('csv.ignore-parse-errors' = '{ignore}')")
    got = s.sql(q).collect().to_pylist()
    want = duckdb.sql(
        q.replace("FROM t", f"FROM read_csv('{f}', header = false, columns = "
                  "{'id': 'INTEGER', 'v': 'VARCHAR'}, quote = '\"', escape = '\"')")
    ).fetchall()
    assert [tuple(r.values()) for r in got] == want


@pytest.mark.parametrize("parallelism", [1, 2])
def test_blank_lines_in_later_blocks_are_rows_as_flinks(tmp_path: Path, monkeypatch,
                                                        parallelism: int) -> None:
    """A blank line in a table of two columns is a malformed row, as PyFlink 2.3 reads it (an
    error; under ignore-parse-errors a row of NULLs); blank lines inside quoted fields are
    values. They were skipped."""
    monkeypatch.setattr(text_blocks, "BLOCK_BYTES", 64)
    lines = [f'{i},"two\n\nlines"' for i in range(40)]
    lines[25] = "\n25,x"  # (a blank line before row 25: line 3 * 25 + 1 = 76)
    lines[39] += "\n"  # (a blank line at the end: 120 + 1 + 2 + 1)
    f = tmp_path / "t.csv"
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConnectorError, match=rf"{f}:76: malformed CSV row: a blank line"):
        _session(f, "csv", parallelism, "id INT, v STRING").sql("SELECT * FROM t").collect()
    s = _session(f, "csv", parallelism, "id INT, v STRING",
                 ", 'csv.ignore-parse-errors' = 'true'")
    q = s.sql("SELECT COUNT(*) AS n, COUNT(id) AS i, COUNT(v) AS v, SUM(id) AS s, "
              "COUNT(*) FILTER (WHERE v = 'two' || CHR(10) || CHR(10) || 'lines') AS q FROM t")
    assert q.collect().to_pylist() == [{"n": 42, "i": 40, "v": 40, "s": sum(range(40)),
                                        "q": 39}]
    assert q.skipped_rows == 0


def test_bad_row_in_a_later_block_names_its_line(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(text_blocks, "BLOCK_BYTES", 64)
    lines = [f'{i},"two\nlines"' for i in range(50)]
    lines[37] = '37,"two\nlines",extra'
    f = tmp_path / "t.csv"
    f.write_text("\n".join(lines) + "\n")
    with pytest.raises(ConnectorError, match=rf"{f}:75: "):
        _session(f, "csv", 1, "id INT, v STRING").sql("SELECT * FROM t").collect()
    s = _session(f, "csv", 2, "id INT, v STRING", ", 'csv.ignore-parse-errors' = 'true'")
    q = s.sql("SELECT COUNT(*) FROM t")
    assert q.collect().column(0).to_pylist() == [49]
    assert q.skipped_rows == 1


@pytest.mark.parametrize("parallelism", [1, 2])
def test_json_lines_in_blocks_and_ranges(tmp_path: Path, monkeypatch, parallelism: int) -> None:
    monkeypatch.setattr(text_blocks, "BLOCK_BYTES", 50)
    f = tmp_path / "t.json"
    rows = [f'{{"id": {i}, "v": "line {i}"}}' for i in range(300)]
    rows[201] = '{"id": 201, "v": oops}'
    f.write_text("\n".join(rows) + "\n")
    with pytest.raises(ConnectorError, match=rf"{f}:202: "):
        _session(f, "json", parallelism, "id INT, v STRING").sql("SELECT * FROM t").collect()
    rows[201] = '{"id": 201, "v": "line 201"}'
    f.write_text("\n".join(rows) + "\n")
    got = _session(f, "json", parallelism, "id INT, v STRING").sql(
        "SELECT COUNT(*), SUM(id), MIN(v) FROM t").collect().to_pylist()
    assert [tuple(r.values()) for r in got] == [(300, sum(range(300)), "line 0")]


def test_a_range_of_comment_lines_only_reads_nothing(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(text_blocks, "BLOCK_BYTES", 16)
    f = tmp_path / "t.csv"
    f.write_text("a,1\n" + "# a comment line\n" * 20 + "b,2\n")
    s = _session(f, "csv", 3, "k STRING, v INT", ", 'csv.allow-comments' = 'true'")
    got = s.sql("SELECT k, v FROM t ORDER BY k").collect().to_pylist()
    assert [tuple(r.values()) for r in got] == [("a", 1), ("b", 2)]
