"""``sqlengine run`` / ``sqlengine explain``: results on stdout, messages on stderr, exit codes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from sqlengine.shell.cli import main

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
CREATE TABLE t (k STRING, v INT) WITH ('connector' = 'filesystem', 'path' = '{path}',
  'format' = 'csv');
SELECT k, SUM(v) AS total FROM t GROUP BY k ORDER BY k;
"""


def _files(tmp_path: Path) -> Path:
    (tmp_path / "t.csv").write_text("a,1\nb,2\na,3\n")
    sql = tmp_path / "q.sql"
    sql.write_text(SCRIPT.format(path=tmp_path / "t.csv"))
    return sql


def test_run_csv_goes_to_stdout_and_messages_to_stderr(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["run", str(_files(tmp_path)), "--format", "csv"])
    assert result.exit_code == 0, result.output
    assert result.stdout == "k,total\na,4\nb,2\n"
    assert "[INFO]" in result.stderr and "2 rows in set" in result.stderr


def test_run_json_and_table(tmp_path: Path) -> None:
    sql = _files(tmp_path)
    out = CliRunner().invoke(main, ["run", str(sql), "--format", "json"]).stdout
    assert out == '{"k": "a", "total": 4}\n{"k": "b", "total": 2}\n'
    table = CliRunner().invoke(main, ["run", str(sql)]).stdout
    assert "| k | total |" in table and "| a |     4 |" in table


def test_define_sets_options(tmp_path: Path) -> None:
    sql = tmp_path / "m.sql"
    sql.write_text("SET;")
    out = CliRunner().invoke(main, ["run", str(sql), "--format", "csv", "-D",
                                    "execution.runtime-mode=batch"]).stdout
    assert "execution.runtime-mode,batch" in out
    bad = CliRunner().invoke(main, ["run", str(sql), "-D", "execution.runtime-mode=fast"])
    assert bad.exit_code == 2 and "must be one of" in bad.stderr


def test_error_exit_code_and_location(tmp_path: Path) -> None:
    sql = tmp_path / "bad.sql"
    sql.write_text("SET 'parallelism.default' = '1';\n\nSELECT nope FROM missing;\n")
    result = CliRunner().invoke(main, ["run", str(sql)])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert f"{sql}:3:18: unknown table 'missing'\n" in result.stderr
    assert "^" in result.stderr


def test_missing_file(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["run", str(tmp_path / "none.sql")])
    assert result.exit_code != 0 and "none.sql" in result.stderr


def test_explain_prints_the_job_graph(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["explain", str(_files(tmp_path))])
    assert result.exit_code == 0
    assert "== Job Graph ==" in result.stdout and "--HASH(k)--> v2" in result.stdout


def test_console_script_runs_the_demo() -> None:
    # The installed entry point, as the README's first command runs it.
    proc = subprocess.run([sys.executable, "-m", "sqlengine", "run", "queries/demo.sql",
                           "--format", "csv"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "customer,orders,revenue,biggest,big_orders"
    assert sum(int(line.split(",")[1]) for line in lines[1:]) == 100000


def test_output_directory_gets_one_file_per_query(tmp_path: Path) -> None:
    sql = _files(tmp_path)
    sql.write_text(sql.read_text() + "SELECT COUNT(*) AS n FROM t;\n")
    result = CliRunner().invoke(main, ["run", str(sql), "--format", "csv", "--output",
                                       str(tmp_path / "out")])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == ""
    assert (tmp_path / "out" / "q-1.csv").read_text() == "k,total\na,4\nb,2\n"
    assert (tmp_path / "out" / "q-2.csv").read_text() == "n\n3\n"


def test_continue_on_error_summarises(tmp_path: Path) -> None:
    sql = tmp_path / "e.sql"
    sql.write_text("SELECT 1 AS a;\nSELECT nope;\nSELECT 2 AS b;\n")
    stop = CliRunner().invoke(main, ["run", str(sql), "--format", "csv"])
    assert stop.exit_code == 1 and stop.stdout == "a\n1\n"
    go_on = CliRunner().invoke(main, ["run", str(sql), "--format", "csv",
                                      "--continue-on-error"])
    assert go_on.exit_code == 1 and go_on.stdout == "a\n1\nb\n2\n"
    assert f"3 statements, 1 failed: {sql}:2" in go_on.stderr


def test_progress_line_only_when_asked_or_on_a_terminal(tmp_path: Path) -> None:
    sql = tmp_path / "p.sql"
    sql.write_text("CREATE TABLE g (a INT) WITH ('connector' = 'datagen', 'number-of-rows' = "
                   "'150', 'rows-per-second' = '100');\nSELECT COUNT(*) AS n FROM g;\n")
    quiet = CliRunner().invoke(main, ["run", str(sql), "--format", "csv"])
    assert "rows/s" not in quiet.stderr  # stderr is not a terminal here
    shown = CliRunner().invoke(main, ["run", str(sql), "--format", "csv", "--progress"])
    assert "rows/s  watermark" in shown.stderr and shown.stdout == "n\n150\n"


def test_ctrl_c_cancels_a_parallel_run_and_leaves_no_worker(tmp_path: Path) -> None:
    import os
    import signal
    import time

    script = tmp_path / "endless.sql"
    script.write_text(
        "SET 'parallelism.default' = '2';\n"
        "CREATE TABLE g (k INT, v BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = "
        "'200000', 'fields.k.min' = '1', 'fields.k.max' = '50');\n"
        "SELECT k, COUNT(*) AS n FROM g GROUP BY k;\n")
    proc = subprocess.Popen(
        [sys.executable, "-m", "sqlengine.shell.cli", "run", "--format", "csv", str(script)],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    workers: list[str] = []
    deadline = time.monotonic() + 20
    while len(workers) < 2 and time.monotonic() < deadline:
        time.sleep(0.1)
        workers = _children(proc.pid)
    assert len(workers) == 2  # the two task slots
    time.sleep(0.5)
    started = time.monotonic()
    proc.send_signal(signal.SIGINT)
    assert proc.wait(10) == 130
    # Cancel takes ~0.1-0.3 s here; the bound leaves 10x headroom for a busy CI machine.
    assert time.monotonic() - started < 5.0
    assert "cancelled" in proc.stderr.read().decode()  # type: ignore[union-attr]
    assert not [w for w in workers if os.path.exists(f"/proc/{w}")]


def _children(pid: int) -> list[str]:
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == str(pid):
            out.append(stat.parent.name)
    return out


def test_explain_draws_the_job_graph_as_dot_mermaid_and_svg(tmp_path: Path) -> None:
    import xml.dom.minidom

    script = tmp_path / "q.sql"
    script.write_text(
        "SET 'parallelism.default' = '2';\n"
        "SET 'table.optimizer.agg-phase-strategy' = 'ONE_PHASE';\n"
        "CREATE TABLE o (k INT, v BIGINT) WITH ('connector' = 'datagen', "
        "'number-of-rows' = '10');\n"
        "SELECT k, SUM(v) AS s FROM o GROUP BY k;\n")
    runner = CliRunner()
    dot = runner.invoke(main, ["explain", "--format", "dot", str(script)])
    assert dot.exit_code == 0, dot.output
    assert "digraph JobGraph" in dot.output and 'v1 -> v2 [label="HASH(k)"]' in dot.output
    mermaid = runner.invoke(main, ["explain", "--format", "mermaid", str(script)])
    assert 'v1 -->|"HASH(k)"| v2' in mermaid.output and "flowchart TD" in mermaid.output
    svg = runner.invoke(main, ["explain", "--format", "svg", str(script)])
    doc = xml.dom.minidom.parseString(svg.output)  # well-formed, self-contained
    texts = [t.firstChild.data for t in doc.getElementsByTagName("text")]
    assert len(doc.getElementsByTagName("rect")) == 3  # source, aggregate, sink vertices
    assert "HASH(k)" in texts and any("GroupAggregate" in t for t in texts)
    assert any("(parallelism 2)" in t for t in texts)


def _cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sqlengine.shell.cli", *args], input=stdin,
                          capture_output=True, text=True, timeout=300)


def test_one_liners_and_their_exit_codes(tmp_path: Path) -> None:
    done = _cli("-c", "SELECT 1 AS one, 'x' AS s", "--format", "csv")
    assert done.returncode == 0 and done.stdout == "one,s\n1,x\n"
    done = _cli("-c", "SELECT nope")
    assert done.returncode == 1 and "<-c>:1:8: unknown column 'nope'" in done.stderr
    init = tmp_path / "init.sql"
    init.write_text("CREATE TABLE t (a INT) WITH ('connector' = 'datagen', "
                    "'number-of-rows' = '3');\n")
    done = _cli("-i", str(init), "-c", "SELECT COUNT(*) AS n FROM t", "--format", "json")
    assert done.returncode == 0 and done.stdout.strip() == '{"n": 3}'
    script = tmp_path / "job.sql"
    script.write_text("SELECT 2 AS two;\nSELECT 3 AS three;\n")
    done = _cli("-f", str(script), "--format", "csv")
    assert done.returncode == 0 and done.stdout == "two\n2\nthree\n3\n"
    done = _cli("-i", str(init), stdin="SELECT COUNT(*) AS n FROM t;\n")  # (then the shell)
    assert done.returncode == 0 and "3" in done.stdout
    done = _cli("-f", str(tmp_path / "missing.sql"))
    assert done.returncode != 0 and "missing.sql" in done.stderr
    done = _cli("-c", "SELECT 1", "run", str(script))
    assert done.returncode != 0 and "without a command" in done.stderr


def test_wide_characters_keep_table_columns_aligned() -> None:
    import pyarrow as pa
    from wcwidth import wcswidth

    from sqlengine.shell.formatting import render_table

    text = render_table(pa.table({"name": ["北京", "ab", "🎉x"], "n": [1, 22, 333]}))
    widths = {wcswidth(line) for line in text.splitlines()}
    assert len(widths) == 1  # (every line as wide on a terminal)
    assert "| 北京 |   1 |" in text


def test_streamed_tableau_aligns_and_cuts_wide_characters() -> None:
    import io

    import pyarrow as pa
    from wcwidth import wcswidth

    from sqlengine.shell.results import _fit, show_tableau

    out = io.StringIO()
    batch = pa.record_batch({"op": ["+I", "+I"], "name": ["北京北京", "ab"], "n": ["1", "22"]})
    show_tableau(iter([batch]), out, False)
    assert len({wcswidth(line) for line in out.getvalue().splitlines()}) == 1
    assert wcswidth(_fit("北京" * 20, 9)) == 9 and _fit("北京" * 20, 9).endswith("...")


def test_the_command_line_does_not_import_pandas_until_a_query_needs_it(tmp_path: Path) -> None:
    """pyarrow imports pandas (~0.17 s) to check Python values on its first array; the command
    line defers that, and a pandas UDF still gets pandas when it runs."""
    probe = ("import sys; sys.argv = ['sqlengine', '-c', 'SELECT 1 + 1 AS two']\n"
             "from sqlengine.shell.cli import main\n"
             "try:\n    main()\nexcept SystemExit:\n    pass\n"
             "print('pandas imported:', 'pandas' in sys.modules)")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert "pandas imported: False" in proc.stdout, proc.stdout + proc.stderr
    (tmp_path / "pudfs.py").write_text(
        "import sqlengine\n\n@sqlengine.udf(result_type='BIGINT', kind='pandas')\n"
        "def plus_one(x):\n    return x + 1\n")
    script = tmp_path / "udf.sql"
    script.write_text("CREATE FUNCTION plus_one AS 'pudfs.plus_one' LANGUAGE PYTHON;\n"
                      "SELECT plus_one(x) AS y FROM (VALUES (1), (2)) AS t(x);\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "sqlengine.shell.cli", "run", str(script),
                           "--format", "csv"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["y", "2", "3"]


def test_an_insert_warns_of_late_rows_and_rows_a_python_function_failed_on(
        tmp_path: Path) -> None:
    """As a query's result does: the INSERT's job counted them (both warnings on stderr)."""
    (tmp_path / "inverse.py").write_text(
        "import sqlengine\n\n@sqlengine.udf(result_type='BIGINT')\n"
        "def inverse(x):\n    return 60 // x\n")
    rows = [(1, 1), (12, 2), (2, 3), (13, 0), (14, 5)]  # (at 2 s: late; v = 0: the call fails)
    (tmp_path / "e.csv").write_text("".join(f"1970-01-01 00:00:{t:02d},{v}\n" for t, v in rows))
    script = tmp_path / "late.sql"
    script.write_text(f"""
SET 'python.udf.on-error' = 'skip';
CREATE FUNCTION inverse AS 'inverse.inverse' LANGUAGE PYTHON;
CREATE TABLE e (ts TIMESTAMP(3), v BIGINT, WATERMARK FOR ts AS ts)
    WITH ('connector' = 'filesystem', 'path' = '{tmp_path / "e.csv"}', 'format' = 'csv');
CREATE TABLE out (ws TIMESTAMP(3), n BIGINT, s BIGINT)
    WITH ('connector' = 'filesystem', 'path' = '{tmp_path / "out"}', 'format' = 'csv');
INSERT INTO out SELECT window_start, COUNT(*), SUM(inverse(v)) FROM TABLE(
    TUMBLE(TABLE e, DESCRIPTOR(ts), INTERVAL '10' SECOND)) GROUP BY window_start, window_end;
""")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "sqlengine.shell.cli", "run", str(script)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "warning: dropped 1 late rows" in proc.stderr, proc.stderr
    assert "warning: skipped 1 rows a Python function failed on" in proc.stderr, proc.stderr
    assert "[INFO] Inserted 2 rows into out" in proc.stderr, proc.stderr
    written = sorted(line for f in (tmp_path / "out").rglob("*") if f.is_file()
                     for line in f.read_text().splitlines())
    # (window 0-10 s: 60 // 1; 10-20 s: 60 // 2 + 60 // 5, the failing row dropped whole)
    # (a timestamp as Flink's csv format writes it: quoted, the fraction's zeros cut)
    assert written == ['"1970-01-01 00:00:00",1,60', '"1970-01-01 00:00:10",2,42']


def test_restore_from_a_directory_that_is_not_there_says_so(tmp_path: Path) -> None:
    """--restore of a missing directory started fresh without a word (a typo looked like a
    resumed job); a file there is an error."""
    sql = tmp_path / "q.sql"
    sql.write_text("SELECT 1 AS x;\n")
    missing = CliRunner().invoke(main, ["run", "--restore", str(tmp_path / "typo"), str(sql),
                                        "--format", "csv"])
    assert missing.exit_code == 0
    assert "does not exist (yet): every job starts fresh" in missing.stderr
    assert missing.stdout.splitlines() == ["x", "1"]
    not_dir = CliRunner().invoke(main, ["run", "--restore", str(sql), str(sql)])
    assert not_dir.exit_code == 2 and "is not a directory" in not_dir.output


def test_a_script_that_cannot_be_split_or_decoded_is_an_error_not_a_traceback(
        tmp_path: Path) -> None:
    """An unterminated comment and a file that is not UTF-8 raised a Python traceback; a
    UTF-8 byte order mark failed as part of the first statement."""
    comment = tmp_path / "c.sql"
    comment.write_text("SELECT 1;\n/* unterminated comment\nSELECT 2;\n")
    out = CliRunner().invoke(main, ["run", str(comment)])
    assert out.exit_code == 1 and "Traceback" not in out.output
    assert f"{comment}:2:1: unterminated comment" in out.stderr
    latin = tmp_path / "l.sql"
    latin.write_bytes(b"SELECT 1;\nSELECT 'caf\xe9' AS a;\n")
    for args in (["run", str(latin)], ["explain", str(latin)], ["-f", str(latin)]):
        out = CliRunner().invoke(main, args)
        assert out.exit_code == 1 and "Traceback" not in out.output, args
        assert f"{latin}:2:12: not UTF-8 text (byte 0xe9)" in out.output, args
    bom = tmp_path / "b.sql"
    bom.write_bytes(b"\xef\xbb\xbfSELECT 1 AS a;\n")
    out = CliRunner().invoke(main, ["run", str(bom), "--format", "csv"])
    assert out.exit_code == 0 and out.stdout.splitlines() == ["a", "1"]


def test_a_stopped_file_says_how_many_statements_did_not_run(tmp_path: Path) -> None:
    sql = tmp_path / "q.sql"
    sql.write_text("SELECT 1 AS a;\nSELECT nope;\nSELECT 2 AS b;\nSELECT 3 AS c;\n")
    out = CliRunner().invoke(main, ["run", str(sql), "--format", "csv"])
    assert out.exit_code == 1 and out.stdout.splitlines() == ["a", "1"]
    assert f"{sql}: the 2 statements after it did not run" in out.stderr


def test_output_that_cannot_be_written_is_named(tmp_path: Path) -> None:
    # (an --output file that is a directory, or a directory under a file, were reported as
    # "unexpected IsADirectoryError ... (this is a bug in sqlengine)" or a traceback)
    sql = tmp_path / "one.sql"
    sql.write_text("SELECT 1 AS a;\n")
    (tmp_path / "out" / "one-1.csv").mkdir(parents=True)
    result = CliRunner().invoke(main, ["run", str(sql), "--format", "csv", "--output",
                                       str(tmp_path / "out")])
    assert result.exit_code == 1
    assert f"--output: cannot write the result to '{tmp_path / 'out' / 'one-1.csv'}': Is a " \
           "directory" in result.stderr
    assert "bug in sqlengine" not in result.stderr
    result = CliRunner().invoke(main, ["run", str(sql), "--output", str(sql / "x")])
    assert result.exit_code == 2 and "Invalid value for --output: cannot make directory" \
        in result.stderr


def test_a_reader_that_stops_reading_ends_the_run_quietly(tmp_path: Path) -> None:
    # (`sqlengine run q.sql | head -2` printed "unexpected BrokenPipeError: [Errno 32] Broken
    # pipe (this is a bug in sqlengine)" under an unbounded query's first rows)
    sql = tmp_path / "u.sql"
    sql.write_text("CREATE TABLE u (a INT) WITH ('connector' = 'datagen', "
                   "'rows-per-second' = '2000');\nSELECT a FROM u;\n")
    for args in (["run", str(sql), "--format", "csv"], ["-f", str(sql), "--format", "csv"]):
        proc = subprocess.Popen([sys.executable, "-m", "sqlengine.shell.cli", *args],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stderr is not None
        lines = [proc.stdout.readline() for _ in range(3)]
        proc.stdout.close()  # (as head does once it has its lines)
        err = proc.stderr.read()
        assert proc.wait(timeout=120) == 1
        assert lines[0] == "op,a\n" and lines[1].startswith("+I,")
        assert "Traceback" not in err and "BrokenPipe" not in err and "bug" not in err
