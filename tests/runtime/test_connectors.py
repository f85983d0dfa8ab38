"""Connectors: csv / json / parquet read and write, bad rows as file:line, datagen, print."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import sqlengine
from sqlengine.connectors.datagen import DatagenReader
from sqlengine.errors import ConnectorError, PlanError, SqlEngineError


def session_with(tmp_path: Path, ddl: str, files: dict[str, str]) -> sqlengine.Session:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    s = sqlengine.connect()
    s.execute(ddl.replace("DIR", str(tmp_path)))
    return s


CSV_DDL = """CREATE TABLE t (id INT, name STRING, score DOUBLE, day DATE) WITH (
  'connector' = 'filesystem', 'path' = 'DIR/t.csv', 'format' = 'csv' OPTS)"""


def test_csv_bad_row_fails_with_file_and_line(tmp_path: Path) -> None:
    s = session_with(tmp_path, CSV_DDL.replace("OPTS", ""), {
        "t.csv": "1,a,1.5,2024-01-01\n2,b,2.5,2024-01-02\n3,c,oops,2024-01-03\n\n"})
    with pytest.raises(ConnectorError) as info:
        s.sql("SELECT * FROM t").collect()
    assert f"{tmp_path}/t.csv:3:" in str(info.value)
    assert "csv.ignore-parse-errors" in str(info.value)
    # (a blank line is a malformed row of its own, as in Flink; it was skipped)
    (tmp_path / "t.csv").write_text("1,a,1.5,2024-01-01\n\n2,b,2.5,2024-01-02\n")
    with pytest.raises(ConnectorError, match=rf"{tmp_path}/t\.csv:2: .*a blank line"):
        s.sql("SELECT * FROM t").collect()


@pytest.mark.parametrize(("text", "expected"), [
    ("\n", [(None, None)]), ("\n\n", [(None, None)] * 2), ("  \n", [("  ", None)]),
    ("# note\n\n", [(None, None)])])
def test_a_file_of_blank_lines_holds_rows(tmp_path: Path, text: str,
                                          expected: list[tuple]) -> None:
    """A one-column table's blank line is a row (NULL for an INT, '' for a STRING, read
    back as the sink wrote them); a file holding nothing else was read as no rows (its text
    was stripped first), losing a single NULL a sink had written, or a row of spaces."""
    for column, kind in (("s", "STRING"), ("n", "INT")):
        ddl = (f"CREATE TABLE t ({column} {kind}) WITH ('connector' = 'filesystem', 'path' = "
               "'DIR/t.csv', 'format' = 'csv', 'csv.allow-comments' = 'true')")
        s = session_with(tmp_path, ddl, {"t.csv": text})
        got = [r[column] for r in s.sql("SELECT * FROM t").collect().to_pylist()]
        want = [e[0] if kind == "STRING" else e[1] for e in expected]
        if kind == "STRING":
            want = ["" if v is None else v for v in want]
        assert got == want, (kind, text)


def test_csv_ignore_parse_errors_nulls_bad_fields(tmp_path: Path) -> None:
    # As Flink's csv format (PyFlink 2.3 on the same files): a value that does not read as
    # its type is NULL, a row with too few fields has the missing ones NULL, a row with too
    # many is skipped and counted.
    s = session_with(tmp_path, CSV_DDL.replace("OPTS", ", 'csv.ignore-parse-errors' = 'true'"),
                     {"t.csv": "1,a,1.5,2024-01-01\n2,b,oops,2024-01-02\nx,y\n"
                               "3,\"c, quoted\",,2024-01-03\n4,d,1e3,not-a-date\n"
                               "5,e,2,2024-01-05,extra\n"})
    q = s.sql("SELECT id, name, score, day FROM t")
    assert [tuple(r.values()) for r in q.collect().to_pylist()] == [
        (1, "a", 1.5, dt.date(2024, 1, 1)), (2, "b", None, dt.date(2024, 1, 2)),
        (None, "y", None, None), (3, "c, quoted", None, dt.date(2024, 1, 3)),
        (4, "d", 1000.0, None)]
    assert q.skipped_rows == 1


def test_csv_options(tmp_path: Path) -> None:
    ddl = """CREATE TABLE t (a STRING, b INT) WITH ('connector' = 'filesystem',
      'path' = 'DIR/t.csv', 'format' = 'csv', 'csv.field-delimiter' = ';',
      'csv.null-literal' = 'n/a', 'csv.allow-comments' = 'true')"""
    s = session_with(tmp_path, ddl, {"t.csv": "# comment\nx;1\nn/a;2\n'q';n/a\n"})
    assert s.sql("SELECT * FROM t").collect().to_pylist() == [
        {"a": "x", "b": 1}, {"a": None, "b": 2}, {"a": "'q'", "b": None}]


def test_directory_of_files_and_hidden_files(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "part-1").write_text("1\n2\n")
    (tmp_path / "d" / "part-2").write_text("3\n")
    (tmp_path / "d" / ".hidden").write_text("99\n")
    (tmp_path / "d" / "_SUCCESS").write_text("")
    s = sqlengine.connect()
    s.execute(f"CREATE TABLE t (a INT) WITH ('connector' = 'filesystem', 'path' = "
              f"'{tmp_path}/d', 'format' = 'csv')")
    assert s.sql("SELECT SUM(a) AS s FROM t").collect().to_pylist() == [{"s": 6}]


JSON_DDL = """CREATE TABLE j (id BIGINT, tags STRING, amount DECIMAL(6, 2),
  ts TIMESTAMP(3), ok BOOLEAN) WITH ('connector' = 'filesystem', 'path' = 'DIR/j.json',
  'format' = 'json' OPTS)"""


def test_json_lines(tmp_path: Path) -> None:
    s = session_with(tmp_path, JSON_DDL.replace("OPTS", ""), {"j.json": (
        '{"id": 1, "tags": "x", "amount": "12.50", "ts": "2024-01-01 10:00:00.123", '
        '"ok": true}\n\n{"id": 2, "extra": [1, 2]}\n')})
    rows = s.sql("SELECT id, tags, CAST(amount AS STRING) AS amount, "
                 "CAST(ts AS STRING) AS ts, ok FROM j").collect().to_pylist()
    assert rows == [
        {"id": 1, "tags": "x", "amount": "12.50", "ts": "2024-01-01 10:00:00.123", "ok": True},
        {"id": 2, "tags": None, "amount": None, "ts": None, "ok": None}]


def test_json_bad_line_names_file_and_line(tmp_path: Path) -> None:
    s = session_with(tmp_path, JSON_DDL.replace("OPTS", ""), {"j.json": (
        '{"id": 1}\n{"id": 2\n{"id": 3}\n')})
    with pytest.raises(ConnectorError) as info:
        s.sql("SELECT * FROM j").collect()
    assert f"{tmp_path}/j.json:2:" in str(info.value)


def test_json_ignore_parse_errors(tmp_path: Path) -> None:
    s = session_with(tmp_path, JSON_DDL.replace("OPTS", ", 'json.ignore-parse-errors' = 'true'"),
                     {"j.json": '{"id": 1}\n{"id": "two"}\nnot json\n{"id": 4}\n'})
    q = s.sql("SELECT id FROM j")
    # ("two" is no INT: NULL, its row kept, as Flink's format; "not json" is skipped)
    assert q.collect().column("id").to_pylist() == [1, None, 4]
    assert q.skipped_rows == 1


def test_parquet_sink_and_source_round_trip(tmp_path: Path) -> None:
    s = sqlengine.connect()
    s.execute(f"""
      CREATE TABLE src (a INT, b STRING) WITH ('connector' = 'datagen', 'number-of-rows' = '50',
        'rows-per-second' = '0', 'fields.a.kind' = 'sequence', 'fields.a.start' = '1',
        'fields.a.end' = '50', 'fields.b.length' = '4');
      CREATE TABLE dst (a INT, b STRING, doubled BIGINT) WITH ('connector' = 'filesystem',
        'path' = '{tmp_path}/out', 'format' = 'parquet');
      INSERT INTO dst SELECT a, b, CAST(a AS BIGINT) * 2 FROM src;
    """)
    files = list((tmp_path / "out").iterdir())
    assert [f.name for f in files] == ["part-0-0"]
    written = pq.read_table(files[0])
    assert written.num_rows == 50
    assert written.schema.field("doubled").type == pa.int64()
    assert s.sql("SELECT SUM(doubled) AS s FROM dst").collect().to_pylist() == [{"s": 2550}]


def test_csv_and_json_sinks(tmp_path: Path) -> None:
    s = sqlengine.connect()
    s.execute(f"""
      CREATE TABLE c (a INT, b STRING, t TIMESTAMP(3)) WITH ('connector' = 'filesystem',
        'path' = '{tmp_path}/c', 'format' = 'csv');
      CREATE TABLE j (a INT, b STRING, t TIMESTAMP(3)) WITH ('connector' = 'filesystem',
        'path' = '{tmp_path}/j', 'format' = 'json');
      INSERT INTO c VALUES (1, 'x,y', CAST('2024-01-01 00:00:00' AS TIMESTAMP(3))), (2, NULL, NULL);
      INSERT INTO j SELECT * FROM c;
    """)
    # (as PyFlink 2.3 writes it: a timestamp quoted for its space, without a fraction of
    # zeros)
    assert (tmp_path / "c" / "part-0-0").read_text() == \
        '1,"x,y","2024-01-01 00:00:00"\n2,,\n'
    # As in Flink's csv format, a NULL string is written as an empty field and an empty
    # field of a STRING column reads back as '' (set 'csv.null-literal' to keep NULLs).
    # (the json text as Flink's json format writes it: compact, no fraction of zeros)
    assert (tmp_path / "j" / "part-0-0").read_text() == (
        '{"a":1,"b":"x,y","t":"2024-01-01 00:00:00"}\n'
        '{"a":2,"b":"","t":null}\n')
    # What was written reads back the same.
    assert s.sql("SELECT * FROM j").collect() == s.sql("SELECT * FROM c").collect()


def test_datagen_is_repeatable_and_in_bounds() -> None:
    schema = pa.schema([("i", pa.int32()), ("s", pa.string()), ("d", pa.float64()),
                        ("q", pa.int64())])
    opts = {"number-of-rows": "1000", "rows-per-second": "0", "seed": "3",
            "fields.i.min": "5", "fields.i.max": "9", "fields.s.length": "7",
            "fields.d.null-rate": "0.5", "fields.q.kind": "sequence",
            "fields.q.start": "10", "fields.q.end": "2000"}
    first = pa.Table.from_batches(list(DatagenReader("g", opts, schema).batches()))
    again = pa.Table.from_batches(list(DatagenReader("g", opts, schema).batches()))
    assert first.equals(again)
    assert first.num_rows == 1000
    assert min(first["i"].to_pylist()) >= 5 and max(first["i"].to_pylist()) <= 9
    assert set(map(len, first["s"].to_pylist())) == {7}
    assert 350 < first["d"].null_count < 650
    assert first["q"].to_pylist() == list(range(10, 1010))


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept += seconds
        self.now += seconds


def test_datagen_rows_per_second_throttles() -> None:
    clock = FakeClock()
    reader = DatagenReader("g", {"rows-per-second": "100", "number-of-rows": "250"},
                           pa.schema([("a", pa.int32())]), clock=clock)
    assert sum(b.num_rows for b in reader.batches()) == 250
    assert clock.slept == pytest.approx(2.5)


def test_unbounded_datagen_streams_and_refuses_collect() -> None:
    s = sqlengine.connect()
    s.execute("CREATE TABLE g (a INT) WITH ('connector' = 'datagen', "
              "'rows-per-second' = '100000')")
    q = s.sql("SELECT a FROM g WHERE a IS NOT NULL")
    with pytest.raises(PlanError):
        q.collect()
    stream = q.stream()
    seen = 0
    for b in stream:
        seen += b.num_rows
        if seen >= 20000:
            break
    stream.close()
    assert seen >= 20000


def test_print_sink_writes_flink_style_rows(capsys: pytest.CaptureFixture[str]) -> None:
    s = sqlengine.connect()
    s.execute("""
      CREATE TABLE p (k STRING, n BIGINT) WITH ('connector' = 'print', 'print-identifier' = 'out');
      INSERT INTO p SELECT k, COUNT(*) FROM (VALUES ('a'), ('b'), ('a')) AS v (k) GROUP BY k;
    """)
    lines = capsys.readouterr().out.splitlines()
    assert sorted(lines) == ["out> +I[a, 2]", "out> +I[b, 1]"]


def test_datagen_null_rate_on_a_not_null_column_is_refused() -> None:
    # (it was taken, and SELECT gave NULLs from the NOT NULL column)
    s = sqlengine.connect()
    with pytest.raises(ConnectorError, match=r"1:71: table .c.: option 'fields\.a\.null-rate' "
                       r"would put NULLs in the NOT NULL column 'a'"):
        s.execute("CREATE TABLE c (a INT NOT NULL, b INT) WITH ('connector' = 'datagen', "
                  "'fields.a.null-rate' = '0.9', 'number-of-rows' = '5')")
    s.execute("CREATE TABLE d (a INT NOT NULL, b INT) WITH ('connector' = 'datagen', "
              "'fields.a.null-rate' = '0', 'fields.b.null-rate' = '1', 'number-of-rows' = '5')")
    got = s.sql("SELECT COUNT(a) AS a, COUNT(b) AS b FROM d").collect().to_pylist()
    assert got == [{"a": 5, "b": 0}]


def test_datagen_makes_time_and_bytes_and_refuses_what_it_cannot_make() -> None:
    """As Flink's datagen: a TIME is the time of day now, BYTES 'length' random bytes (a
    VARBINARY(n)'s n, a BINARY(n) exactly n). A TIME column was taken by CREATE TABLE and
    then failed the query with "cannot generate column 't' of time32[s]"."""
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute("CREATE TABLE g (t TIME, t3 TIME(3), b BYTES, bb BINARY(3), vb VARBINARY(5)) "
              "WITH ('connector' = 'datagen', 'number-of-rows' = '50', "
              "'fields.b.length' = '4')")
    before = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    rows = s.sql("SELECT * FROM g").collect().to_pylist()
    after = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    assert len(rows) == 50
    low = (before - dt.timedelta(seconds=1)).time()
    for r in rows:
        if before.date() == after.date():
            assert low <= r["t3"] <= after.time()
            assert r["t"].microsecond == 0 and low.replace(microsecond=0) <= r["t"]
        assert [len(r["b"]), len(r["bb"]), len(r["vb"])] == [4, 3, 5]
    assert len({r["b"] for r in rows}) > 40
    with pytest.raises(SqlEngineError, match=r"1:17: table 'h': column 'a': connector "
                                             r"'datagen' does not generate ARRAY<INT> columns"):
        s.execute("CREATE TABLE h (a ARRAY<INT>) WITH ('connector' = 'datagen')")
