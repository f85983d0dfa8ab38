"""What ``sqlengine run`` prints, value by value, in each --format: a TIMESTAMP_LTZ in the session
time zone (it was shown in UTC), DOUBLE / FLOAT as Flink's client (Java's text: NaN,
Infinity, 1.0E-300, a FLOAT's 0.1; they came as Python's nan, inf, 1e-300,
0.10000000149011612), BYTES as x'..' (they were decoded as text), JSON that a JSON reader
takes (TIME, INTERVAL, BYTES and nested DECIMALs failed with an internal error; NaN was
bare). And the command line's doors: -D without -c / -f reaches the shell, a missing file in
a multi-file run leaves the others running."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from sqlengine.shell.cli import main

ROOT = Path(__file__).resolve().parents[2]

SQL = """SET 'table.local-time-zone' = 'Asia/Tokyo';
SELECT TO_TIMESTAMP_LTZ(0, 3) AS ltz, CAST('NaN' AS DOUBLE) AS n,
       CAST('-Infinity' AS DOUBLE) AS ni, 1e-300 AS small, CAST(0.1 AS FLOAT) AS f,
       X'DEADBEEF' AS b, TIME '12:34:56' AS t, INTERVAL '2' DAY AS i,
       ARRAY[CAST(1.5 AS DECIMAL(4, 2))] AS ad, CAST(1.50 AS DECIMAL(5, 2)) AS d;
"""


def _run(tmp_path: Path, fmt: str) -> str:
    path = tmp_path / "v.sql"
    path.write_text(SQL)
    result = CliRunner().invoke(main, ["run", str(path), "--format", fmt])
    assert result.exit_code == 0, result.stderr
    return result.stdout


def test_table(tmp_path: Path) -> None:
    out = _run(tmp_path, "table")
    cells = [c.strip() for c in out.splitlines()[3].strip("|").split("|")]
    assert cells == ["1970-01-01 09:00:00.000", "NaN", "-Infinity", "1.0E-300", "0.1",
                     "x'deadbeef'", "12:34:56", "+2 00:00:00.000", "[1.50]", "1.50"]


def test_csv(tmp_path: Path) -> None:
    lines = _run(tmp_path, "csv").splitlines()
    assert lines[1] == ("1970-01-01 09:00:00.000,NaN,-Infinity,1.0E-300,0.1,x'deadbeef',"
                        "12:34:56,+2 00:00:00.000,[1.50],1.50")


def test_json_is_json(tmp_path: Path) -> None:
    def no_constants(name: str) -> float:
        raise AssertionError(f"bare {name} is no JSON")

    row = json.loads(_run(tmp_path, "json").splitlines()[0], parse_constant=no_constants)
    assert row == {"ltz": "1970-01-01 09:00:00.000", "n": "NaN", "ni": "-Infinity",
                   "small": 1e-300, "f": 0.1, "b": "3q2+7w==", "t": "12:34:56",
                   "i": "+2 00:00:00.000", "ad": ["1.50"], "d": "1.50"}


def test_d_options_reach_the_piped_shell() -> None:
    """-D without -c / -f was dropped without a word (an unknown key too)."""
    def piped(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "sqlengine.shell.cli", *args],
                              input="SET;\n", cwd=ROOT, capture_output=True, text=True,
                              timeout=120, check=False)

    bad = piped("-D", "bogus.key=2")
    assert bad.returncode == 2 and "unknown option 'bogus.key'" in bad.stderr
    good = piped("-D", "parallelism.default=2")
    assert good.returncode == 0
    assert any(line.replace(" ", "") == "|parallelism.default|2|"
               for line in good.stdout.splitlines())
    fmt = piped("--format", "csv")
    assert fmt.returncode == 2 and "--format is for -c and -f" in fmt.stderr


@pytest.mark.parametrize("bad", ["missing.sql", "latin1.sql"])
def test_a_file_that_cannot_be_read_leaves_the_others_running(tmp_path: Path,
                                                             bad: str) -> None:
    a, b = tmp_path / "a.sql", tmp_path / "b.sql"
    a.write_text("SELECT 1 AS one;\n")
    b.write_text("SELECT 2 AS two;\n")
    if bad == "latin1.sql":
        (tmp_path / bad).write_bytes("SELECT 'é';\n".encode("latin-1"))
    result = CliRunner().invoke(main, ["run", str(a), str(tmp_path / bad), str(b),
                                       "--format", "csv"])
    assert result.exit_code == 1
    assert result.stdout == "one\n1\ntwo\n2\n"
    assert "Error: " in result.stderr and bad in result.stderr


def test_csv_tells_an_empty_string_from_null(tmp_path: Path) -> None:
    """'' is written "" and NULL as an empty field, as PostgreSQL's CSV has them (both were an
    empty field, and a row of one NULL or '' a blank line); DuckDB reads them apart."""
    import duckdb

    path = tmp_path / "e.sql"
    path.write_text("SELECT * FROM (VALUES ('a', 1), ('', 2), (CAST(NULL AS STRING), 3), "
                    "('x,y', 4)) AS v(s, n);\n")
    result = CliRunner().invoke(main, ["run", str(path), "--format", "csv"])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == 's,n\na,1\n"",2\n,3\n"x,y",4\n'
    out = tmp_path / "out.csv"
    out.write_text(result.stdout)
    got = duckdb.sql(f"SELECT * FROM read_csv('{out}', header = true, columns = "
                     "{'s': 'VARCHAR', 'n': 'INT'}, allow_quoted_nulls = false)").fetchall()
    assert got == [("a", 1), ("", 2), (None, 3), ("x,y", 4)]


def test_table_tells_null_from_the_string_null(tmp_path: Path) -> None:
    """A NULL is <NULL>, as Flink's client shows one; the string 'NULL' stays NULL (both were
    NULL). Inside an ARRAY a NULL stays NULL, as in Flink's client."""
    path = tmp_path / "n.sql"
    path.write_text("SELECT CAST(NULL AS STRING) AS a, 'NULL' AS b, CAST(NULL AS INT) AS c, "
                    "ARRAY[CAST(NULL AS INT), 1] AS d;\n")
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code == 0, result.stderr
    cells = [c.strip() for c in result.stdout.splitlines()[3].strip("|").split("|")]
    assert cells == ["<NULL>", "NULL", "<NULL>", "[NULL, 1]"]


def test_table_keeps_control_characters_in_their_cell(tmp_path: Path) -> None:
    """A value with newlines takes a line of the table per line (as psql shows it), a tab is
    expanded, ESC is escaped: the table's columns stay lined up. (They were written raw: a
    newline broke the row, ESC reached the terminal.)"""
    path = tmp_path / "c.sql"
    path.write_text("SELECT 'x' || CHR(10) || 'yy' AS a, 'p' || CHR(9) || 'q' AS b, "
                    "'e' || CHR(27) || '[31m' AS c, 7 AS n;\n")
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[3:6] == ["| x  | p       q | e\\x1b[31m | 7 |",
                          "| yy |           |           |   |",
                          "+----+-----------+-----------+---+"]
    assert "\x1b" not in result.stdout and "\t" not in result.stdout
    assert len({len(line) for line in lines[:6]}) == 1


def test_streaming_tableau_escapes_control_characters() -> None:
    """Rows as they come stay one line each: a newline or ESC is escaped."""
    import io

    import pyarrow as pa

    from sqlengine.shell.results import show_changelog, show_tableau

    batch = pa.record_batch({"op": ["+I", "+I"], "s": ["a\nb", None],
                             "t": ["\x1b[2J", "NULL"]})
    out = io.StringIO()
    assert show_tableau(iter([batch]), out, False) == 2
    rows = out.getvalue().splitlines()[3:5]
    assert [[c.strip() for c in r.strip("|").split("|")] for r in rows] == \
        [["a\\nb", "\\x1b[2J"], ["<NULL>", "NULL"]]
    out = io.StringIO()
    show_changelog(iter([batch]), out)
    assert out.getvalue() == "+I[a\\nb, \\x1b[2J]\n+I[<NULL>, NULL]\n"


def test_describe_shows_an_empty_cell_blank(tmp_path: Path) -> None:
    """A statement's table (DESCRIBE, SHOW) shows NULL as a blank cell, as Flink's client
    prints it (PyFlink 2.3's DESCRIBE of this table, but the type of PROCTIME(), Flink's
    TIMESTAMP_LTZ(3)); a query's NULL is <NULL>."""
    path = tmp_path / "d.sql"
    path.write_text("CREATE TABLE s (a INT NOT NULL, b STRING, pt AS PROCTIME(), PRIMARY KEY (a)"
                    " NOT ENFORCED) WITH ('connector' = 'datagen');\nDESCRIBE s;\n")
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code == 0, result.stderr
    rows = [[c.strip() for c in line.strip("|").split("|")]
            for line in result.stdout.splitlines()[3:6]]
    assert rows == [["a", "INT", "FALSE", "PRI(a)", "", ""],
                    ["b", "STRING", "TRUE", "", "", ""],
                    ["pt", "TIMESTAMP(3) *PROCTIME*", "FALSE", "", "AS PROCTIME()", ""]]
