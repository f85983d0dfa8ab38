"""The orc, avro and raw formats of the filesystem connector: round trips through INSERT in
batch and streaming mode, files written by pyarrow.orc / fastavro / hand read back and
compared (with DuckDB where it reads the file: raw lines; else with the pyarrow table or the
records written), Avro's types mapped to the table's, column pruning, parallel subtasks, and
what is refused by name."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from decimal import Decimal
from pathlib import Path

import duckdb
import fastavro
import pyarrow as pa
import pyarrow.orc as po
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError

COLUMNS = ("id INT, name STRING, price DECIMAL(10, 2), ts TIMESTAMP(3), d DATE, "
           "flag BOOLEAN, big BIGINT, ratio DOUBLE, tags ARRAY<STRING>, "
           "attrs MAP<STRING, INT>, r ROW<a INT, b STRING>, bin BYTES")
ROWS = [
    {"id": 1, "name": "alpha", "price": Decimal("1.25"),
     "ts": dt.datetime(2020, 1, 1, 10, 11, 12, 345000), "d": dt.date(2020, 2, 3),
     "flag": True, "big": 2**40, "ratio": 0.5, "tags": ["x", "y"], "attrs": [("k", 1)],
     "r": {"a": 1, "b": "z"}, "bin": b"\x01\x02"},
    {"id": 2, "name": None, "price": None, "ts": None, "d": None, "flag": None, "big": None,
     "ratio": None, "tags": None, "attrs": None, "r": None, "bin": None},
    {"id": 3, "name": "gamma", "price": Decimal("-99999999.99"),
     "ts": dt.datetime(1969, 12, 31, 23, 59, 59, 999000), "d": dt.date(1900, 1, 1),
     "flag": False, "big": -1, "ratio": -1e300, "tags": ["w"], "attrs": [("n", -5)],
     "r": {"a": None, "b": None}, "bin": b""},
]
VALUES = ("(1, 'alpha', 1.25, TIMESTAMP '2020-01-01 10:11:12.345', DATE '2020-02-03', TRUE, "
          "1099511627776, 0.5, ARRAY['x', 'y'], MAP['k', 1], "
          "CAST(ROW(1, 'z') AS ROW<a INT, b STRING>), X'0102'), "
          "(2, CAST(NULL AS STRING), NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
          "NULL), "
          "(3, 'gamma', -99999999.99, TIMESTAMP '1969-12-31 23:59:59.999', DATE '1900-01-01', "
          "FALSE, -1, -1e300, ARRAY['w'], MAP['n', -5], "
          "CAST(ROW(NULL, NULL) AS ROW<a INT, b STRING>), X'')")


def _session(mode: str = "batch", parallelism: int = 1) -> sqlengine.Session:
    return sqlengine.connect({"execution.runtime-mode": mode,
                              "parallelism.default": str(parallelism)})


def _table(s: sqlengine.Session, name: str, path: Path, fmt: str, columns: str = COLUMNS,
           extra: str = "") -> None:
    s.execute(f"CREATE TABLE {name} ({columns}) WITH ('connector' = 'filesystem', "
              f"'path' = '{path}', 'format' = '{fmt}'{extra})")


def _sorted(rows: list[dict], key: str = "id") -> list[dict]:
    return sorted(rows, key=lambda r: r[key])


# -- orc and avro round trips ------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["batch", "streaming"])
@pytest.mark.parametrize("fmt", ["orc", "avro"])
def test_round_trip_through_insert(tmp_path: Path, fmt: str, mode: str) -> None:
    s = _session(mode)
    _table(s, "t", tmp_path / "t", fmt)
    s.execute(f"INSERT INTO t VALUES {VALUES}")
    got = s.sql("SELECT * FROM t").collect().to_pylist()
    assert _sorted(got) == ROWS
    # pruning: one column read, the others never decoded
    assert sorted(r["name"] or "" for r in s.sql("SELECT name FROM t").collect().to_pylist()
                  ) == ["", "alpha", "gamma"]
    # a second INSERT adds a part file; both are read
    s.execute(f"INSERT INTO t VALUES {VALUES}")
    assert s.sql("SELECT COUNT(*) AS n FROM t").collect().to_pylist() == [{"n": 6}]


def test_orc_written_file_is_plain_orc(tmp_path: Path) -> None:
    s = _session()
    _table(s, "t", tmp_path / "t", "orc", extra=", 'orc.compress' = 'snappy'")
    s.execute(f"INSERT INTO t VALUES {VALUES}")
    (part,) = (tmp_path / "t").iterdir()
    f = po.ORCFile(str(part))
    assert f.compression == "SNAPPY"
    table = f.read()
    assert table.column("id").to_pylist() == [1, 2, 3]
    assert table.column("price").to_pylist() == [r["price"] for r in ROWS]
    assert table.column("ts").cast(pa.timestamp("ms")).to_pylist() == [r["ts"] for r in ROWS]
    # ORC's own default compression (ZLIB) without the option
    _table(s, "z", tmp_path / "z", "orc", columns="id INT")
    s.execute("INSERT INTO z VALUES (1)")
    assert po.ORCFile(str(next((tmp_path / "z").iterdir()))).compression == "ZLIB"


@pytest.mark.parametrize("parallelism", [1, 3])
def test_orc_file_from_pyarrow_by_stripe(tmp_path: Path, parallelism: int) -> None:
    """A file written by pyarrow.orc with several stripes, read by parallel subtasks (a stripe
    each), compared with the pyarrow table; the query reading a column the file lacks fails
    naming it, one reading only the others does not (column pruning)."""
    n = 30_000
    table = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "grp": pa.array([f"g{i % 7}" for i in range(n)]),
        "v": pa.array([i * 0.5 for i in range(n)]),
        "at": pa.array([dt.datetime(2021, 1, 1) + dt.timedelta(seconds=i) for i in range(n)],
                       pa.timestamp("us")),
    })
    path = tmp_path / "data.orc"
    with po.ORCWriter(str(path), stripe_size=4096, batch_size=1000, compression="zstd") as w:
        for start in range(0, n, 5000):
            w.write(table.slice(start, 5000))
    assert po.ORCFile(str(path)).nstripes > 1
    s = _session("batch", parallelism)
    _table(s, "o", path, "orc", columns="id BIGINT, grp STRING, v DOUBLE, at TIMESTAMP(3), "
           "missing INT")
    got = s.sql("SELECT id, grp, v, at FROM o").collect()
    assert got.num_rows == n
    by_id = sorted(got.to_pylist(), key=lambda r: r["id"])
    assert by_id == table.cast(pa.schema([("id", pa.int64()), ("grp", pa.string()),
                                          ("v", pa.float64()),
                                          ("at", pa.timestamp("ms"))])).to_pylist()
    agg = s.sql("SELECT grp, COUNT(*) AS c, SUM(v) AS t FROM o GROUP BY grp").collect()
    want = {}
    for r in table.to_pylist():
        c, t = want.get(r["grp"], (0, 0.0))
        want[r["grp"]] = (c + 1, t + r["v"])
    assert {r["grp"]: (r["c"], r["t"]) for r in agg.to_pylist()} == want
    with pytest.raises(SqlEngineError, match="orc file has no column 'missing'"):
        s.sql("SELECT missing FROM o").collect()


def test_orc_partitioned_round_trip(tmp_path: Path) -> None:
    s = _session()
    s.execute(f"CREATE TABLE p (id INT, name STRING, k STRING) PARTITIONED BY (k) WITH ("
              f"'connector' = 'filesystem', 'path' = '{tmp_path / 'p'}', 'format' = 'orc')")
    s.execute("INSERT INTO p VALUES (1, 'a', 'x'), (2, 'b', 'y'), (3, 'c', 'x')")
    assert sorted((tmp_path / "p").iterdir()) == [tmp_path / "p" / "k=x", tmp_path / "p" / "k=y"]
    got = s.sql("SELECT id, name, k FROM p WHERE k = 'x'").collect().to_pylist()
    assert _sorted(got) == [{"id": 1, "name": "a", "k": "x"}, {"id": 3, "name": "c", "k": "x"}]


AVRO_SCHEMA = {
    "type": "record", "name": "Product", "namespace": "com.example", "fields": [
        {"name": "id", "type": "long"},
        {"name": "small", "type": "int"},
        {"name": "name", "type": ["null", "string"], "default": None},
        {"name": "kind", "type": {"type": "enum", "name": "Kind",
                                  "symbols": ["TOOL", "PART"]}},
        {"name": "code", "type": {"type": "fixed", "name": "Code", "size": 2}},
        {"name": "price", "type": {"type": "bytes", "logicalType": "decimal",
                                   "precision": 9, "scale": 3}},
        {"name": "day", "type": ["null", {"type": "int", "logicalType": "date"}]},
        {"name": "at", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "local", "type": {"type": "long", "logicalType": "local-timestamp-millis"}},
        {"name": "uid", "type": {"type": "string", "logicalType": "uuid"}},
        {"name": "tags", "type": {"type": "array", "items": "string"}},
        {"name": "attrs", "type": {"type": "map", "values": ["null", "double"]}},
        {"name": "dims", "type": ["null", {"type": "record", "name": "Dims", "fields": [
            {"name": "w", "type": "float"}, {"name": "h", "type": "float"}]}]},
        {"name": "again", "type": ["null", "Dims"]},
        {"name": "flag", "type": "boolean"},
        {"name": "ignored", "type": "string"},
    ]}
UID = uuid.UUID("12345678-1234-5678-1234-567812345678")
AVRO_RECORDS = [
    {"id": 1, "small": 7, "name": "hammer", "kind": "TOOL", "code": b"ab",
     "price": Decimal("12.500"), "day": dt.date(2021, 3, 4),
     "at": dt.datetime(2021, 3, 4, 5, 6, 7, 123456, tzinfo=dt.UTC),
     "local": dt.datetime(2021, 3, 4, 5, 6, 7, 123000), "uid": str(UID), "tags": ["a", "b"],
     "attrs": {"w": 1.5, "x": None}, "dims": {"w": 1.5, "h": 2.0}, "again": None,
     "flag": True, "ignored": "x"},
    {"id": 2, "small": -1, "name": None, "kind": "PART", "code": b"\x00\xff",
     "price": Decimal("-0.001"), "day": None,
     "at": dt.datetime(1970, 1, 1, tzinfo=dt.UTC),
     "local": dt.datetime(1999, 12, 31, 23, 59, 59), "uid": str(UID), "tags": [],
     "attrs": {}, "dims": None, "again": {"w": 0.25, "h": 0.5}, "flag": False,
     "ignored": "y"},
]
AVRO_COLUMNS = ("id BIGINT, small INT, name STRING, kind STRING, code BYTES, "
                "price DECIMAL(9, 3), day DATE, at TIMESTAMP(6), local TIMESTAMP(3), "
                "uid STRING, tags ARRAY<STRING>, attrs MAP<STRING, DOUBLE>, "
                "dims ROW<w FLOAT, h FLOAT>, again ROW<w FLOAT, h FLOAT>, flag BOOLEAN")


def _expected_avro_rows() -> list[dict]:
    out = []
    for r in AVRO_RECORDS:
        row = {k: v for k, v in r.items() if k != "ignored"}
        row["at"] = r["at"].replace(tzinfo=None)  # (the session's time zone is UTC)
        row["attrs"] = list(r["attrs"].items())
        out.append(row)
    return out


@pytest.mark.parametrize("codec", ["null", "deflate", "snappy"])
@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_avro_file_from_fastavro(tmp_path: Path, codec: str, mode: str) -> None:
    """Avro's types as Flink maps them, from a file fastavro wrote (named types reused,
    logical types, nullable unions, a field the table does not declare)."""
    path = tmp_path / "products.avro"
    with open(path, "wb") as f:
        fastavro.writer(f, fastavro.parse_schema(AVRO_SCHEMA), AVRO_RECORDS, codec=codec)
    s = _session(mode)
    _table(s, "a", path, "avro", columns=AVRO_COLUMNS)
    assert _sorted(s.sql("SELECT * FROM a").collect().to_pylist()) == _expected_avro_rows()
    got = s.sql("SELECT id, price * 2 AS p2, CARDINALITY(tags) AS n FROM a").collect()
    assert _sorted(got.to_pylist()) == [{"id": 1, "p2": Decimal("25.000"), "n": 2},
                                        {"id": 2, "p2": Decimal("-0.002"), "n": 0}]


def test_avro_written_file_has_flinks_schema(tmp_path: Path) -> None:
    s = _session()
    _table(s, "t", tmp_path / "t", "avro", extra=", 'avro.codec' = 'deflate'")
    s.execute(f"INSERT INTO t VALUES {VALUES}")
    (part,) = (tmp_path / "t").iterdir()
    with open(part, "rb") as f:
        reader = fastavro.reader(f)
        schema = reader.writer_schema
        records = list(reader)
    assert reader.codec == "deflate"
    assert schema["name"] == "org.apache.flink.avro.generated.record"
    fields = {f["name"]: f["type"] for f in schema["fields"]}
    assert fields["id"] == ["null", "int"]
    assert fields["big"] == ["null", "long"]
    assert fields["price"] == ["null", {"type": "bytes", "logicalType": "decimal",
                                        "precision": 10, "scale": 2}]
    assert fields["ts"] == ["null", {"type": "long", "logicalType": "timestamp-millis"}]
    assert fields["d"] == ["null", {"type": "int", "logicalType": "date"}]
    assert fields["r"][1]["type"] == "record"
    assert fields["r"][1]["name"].endswith("record_r")
    assert [r["id"] for r in records] == [1, 2, 3]
    # the instants fastavro reads are the TIMESTAMPs' wall clock in UTC
    assert records[0]["ts"] == dt.datetime(2020, 1, 1, 10, 11, 12, 345000,
                                           tzinfo=dt.UTC)
    assert records[0]["attrs"] == {"k": 1}
    assert records[0]["price"] == Decimal("1.25")
    # 'avro.timestamp_mapping.legacy' = 'false': TIMESTAMP as local-timestamp-millis
    _table(s, "l", tmp_path / "l", "avro", columns="ts TIMESTAMP(3)",
           extra=", 'avro.timestamp_mapping.legacy' = 'false'")
    s.execute("INSERT INTO l VALUES (TIMESTAMP '2020-01-01 10:11:12.345')")
    with open(next((tmp_path / "l").iterdir()), "rb") as f:
        reader = fastavro.reader(f)
        assert reader.writer_schema["fields"][0]["type"][1]["logicalType"] == \
            "local-timestamp-millis"
        assert list(reader) == [{"ts": dt.datetime(2020, 1, 1, 10, 11, 12, 345000)}]
    assert s.sql("SELECT ts FROM l").collect().to_pylist() == [
        {"ts": dt.datetime(2020, 1, 1, 10, 11, 12, 345000)}]


def test_avro_empty_result_is_a_readable_file(tmp_path: Path) -> None:
    s = _session()
    _table(s, "t", tmp_path / "t", "avro", columns="id INT")
    s.execute("INSERT INTO t SELECT * FROM (VALUES (1)) AS v(id) WHERE id > 5")
    assert s.sql("SELECT * FROM t").collect().num_rows == 0


@pytest.mark.parametrize(("schema", "columns", "message"), [
    ({"name": "u", "type": ["null", "int", "string"]}, "u INT",
     r"field 'u': the Avro union \[\"null\", \"int\", \"string\"\] .* is not supported"),
    ({"name": "s", "type": "string"}, "s INT",
     "column 's': the file's Avro field is STRING, which cannot be read as INT"),
    ({"name": "s", "type": "string"}, "other INT", "avro file has no field 'other'"),
])
def test_avro_types_refused_by_name(tmp_path: Path, schema: dict, columns: str,
                                    message: str) -> None:
    path = tmp_path / "x.avro"
    value = 1 if "int" in json.dumps(schema["type"]) and schema["name"] == "u" else "v"
    with open(path, "wb") as f:
        fastavro.writer(f, fastavro.parse_schema({"type": "record", "name": "x",
                                                  "fields": [schema]}),
                        [{schema["name"]: value}])
    s = _session()
    _table(s, "a", path, "avro", columns=columns)
    with pytest.raises(SqlEngineError, match=message):
        s.sql("SELECT * FROM a").collect()


def test_not_an_avro_or_orc_file_is_named(tmp_path: Path) -> None:
    path = tmp_path / "junk.bin"
    path.write_bytes(b"this is not a binary format\n")
    s = _session()
    _table(s, "a", path, "avro", columns="id INT")
    _table(s, "o", path, "orc", columns="id INT")
    with pytest.raises(SqlEngineError, match=r"junk\.bin: not a readable avro file"):
        s.sql("SELECT * FROM a").collect()
    with pytest.raises(SqlEngineError, match=r"junk\.bin: not a readable orc file"):
        s.sql("SELECT * FROM o").collect()


# -- raw ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_raw_lines_compared_with_duckdb(tmp_path: Path, mode: str) -> None:
    """Each line one value: CRLF endings lose their \\r, an empty line is an empty value, the
    last line needs no line break; DuckDB splits the same file into the same lines."""
    path = tmp_path / "log.txt"
    path.write_bytes(b"first line\r\nsecond, with \"quotes\" and , commas\n\n  spaced  \n"
                     b"{\"json\": true}\nunicode \xc3\xa9\xe2\x82\xac\nlast without break")
    s = _session(mode)
    _table(s, "r", path, "raw", columns="line STRING")
    got = [r["line"] for r in s.sql("SELECT line FROM r").collect().to_pylist()]
    text = duckdb.sql(f"SELECT content FROM read_text('{path}')").fetchone()[0]
    lines = [x.removesuffix("\r") for x in text.split("\n")]
    assert got == lines
    assert got[2] == "" and got[0] == "first line" and got[-1] == "last without break"
    n = s.sql("SELECT COUNT(*) AS n, SUM(CHAR_LENGTH(line)) AS c FROM r").collect().to_pylist()
    assert n == [{"n": len(lines), "c": sum(len(x) for x in lines)}]


@pytest.mark.parametrize("parallelism", [1, 4])
def test_raw_large_file_split_between_subtasks(tmp_path: Path, parallelism: int) -> None:
    path = tmp_path / "big.txt"
    lines = [f"line {i} " + "x" * (i % 50) for i in range(50_000)]
    path.write_text("\n".join(lines) + "\n")
    s = _session("batch", parallelism)
    _table(s, "r", path, "raw", columns="line STRING")
    got = s.sql("SELECT line FROM r").collect().column("line").to_pylist()
    assert sorted(got) == sorted(lines)


def test_raw_bytes_charset_and_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "latin.txt"
    path.write_bytes("café\nnaïve\n".encode("latin-1") + b"\xff\xfe\n")
    s = _session()
    _table(s, "l", path, "raw", columns="v STRING", extra=", 'raw.charset' = 'ISO-8859-1'")
    assert [r["v"] for r in s.sql("SELECT v FROM l").collect().to_pylist()] == [
        "café", "naïve", "ÿþ"]
    _table(s, "b", path, "raw", columns="v BYTES")
    assert [r["v"] for r in s.sql("SELECT v FROM b").collect().to_pylist()] == [
        "café".encode("latin-1"), "naïve".encode("latin-1"), b"\xff\xfe"]
    # the same bytes read as UTF-8: the bad line is named
    _table(s, "u", path, "raw", columns="v STRING")
    with pytest.raises(SqlEngineError, match=r"latin.txt:1: the line b'caf\\xe9' is not valid "
                       "UTF-8"):
        s.sql("SELECT v FROM u").collect()
    # written back as latin-1 and as bytes, read again
    _table(s, "w", tmp_path / "w", "raw", columns="v STRING",
           extra=", 'raw.charset' = 'ISO-8859-1'")
    s.execute("INSERT INTO w SELECT v FROM l")
    (part,) = (tmp_path / "w").iterdir()
    assert part.read_bytes() == path.read_bytes()
    _table(s, "wb", tmp_path / "wb", "raw", columns="v BYTES")
    s.execute("INSERT INTO wb SELECT v FROM b")
    assert next((tmp_path / "wb").iterdir()).read_bytes() == path.read_bytes()


@pytest.mark.parametrize("mode", ["batch", "streaming"])
def test_raw_insert_round_trip(tmp_path: Path, mode: str) -> None:
    s = _session(mode)
    _table(s, "t", tmp_path / "t", "raw", columns="msg STRING")
    s.execute("INSERT INTO t VALUES ('a'), (''), ('ünï'), ('tab\there')")
    assert sorted(r["msg"] for r in s.sql("SELECT msg FROM t").collect().to_pylist()) == \
        sorted(["a", "", "ünï", "tab\there"])


def test_raw_write_refusals(tmp_path: Path) -> None:
    s = _session()
    _table(s, "t", tmp_path / "t", "raw", columns="msg STRING")
    with pytest.raises(SqlEngineError, match="column 'msg': the raw format cannot write NULL"):
        s.execute("INSERT INTO t VALUES ('a'), (CAST(NULL AS STRING))")
    with pytest.raises(SqlEngineError, match="holds a line break"):
        s.execute("INSERT INTO t VALUES ('two' || CHR(10) || 'lines')")
    # (it read back without its "\r", a line's "\r\n" ending it; one inside is kept)
    with pytest.raises(SqlEngineError, match="ends in a carriage return"):
        s.execute("INSERT INTO t VALUES ('a' || CHR(13) || 'b'), ('c' || CHR(13))")
    s.execute("INSERT INTO t VALUES ('a' || CHR(13) || 'b')")
    assert s.sql("SELECT msg FROM t").collect().to_pylist() == [{"msg": "a\rb"}]


# -- refusals at CREATE TABLE --------------------------------------------------------------------
@pytest.mark.parametrize(("fmt", "columns", "extra", "message"), [
    ("raw", "a STRING, b STRING", "",
     "the raw format reads and writes a single physical column; this table has 2: 'a', 'b'"),
    ("raw", "n INT", "", "the raw format holds one STRING or BYTES value per line, not INT"),
    ("raw", "s STRING", ", 'raw.charset' = 'UTF-16'",
     "'UTF-16' does not write a line break as the byte 0x0a"),
    ("raw", "s STRING", ", 'raw.charset' = 'no-such-charset'", "unknown charset"),
    ("raw", "s STRING", ", 'raw.endianness' = 'middle'", "'raw.endianness' must be one of"),
    ("raw", "s STRING", ", 'raw.format' = 'x'", "unsupported option 'raw.format'"),
    ("csv", "s STRING", ", 'raw.charset' = 'UTF-8'",
     "option 'raw.charset' is an option of the raw format; this table's format is 'csv'"),
    ("orc", "t TIME", "", "the orc format cannot hold TIME"),
    ("orc", "a INT", ", 'orc.compress' = 'LZO'", "'LZO' is not supported"),
    ("orc", "a INT", ", 'orc.compress' = 'brotli'", "'orc.compress' must be one of"),
    ("orc", "a INT", ", 'orc.bloom.filter.columns' = 'b'", "names 'b', which is not a column"),
    ("orc", "a INT", ", 'orc.stripes' = '2'", "unsupported option 'orc.stripes'"),
    # (it failed on the first INSERT, leaving an empty part file every read then met)
    ("orc", "a INT", ", 'orc.compress.size' = '1024'", "takes a multiple of 65536"),
    ("avro", "t TIME(6)", "", "the avro format holds TIME up to precision 3"),
    ("avro", "t TIMESTAMP(9)", "", "the avro format holds TIMESTAMP up to precision 6"),
    ("avro", "m MAP<INT, STRING>", "", "MAPs with STRING keys only"),
    ("avro", "`my col` INT", "", "'my col' is not a valid Avro field name"),
    ("avro", "a INT", ", 'avro.codec' = 'gzip'", "'avro.codec' must be one of"),
    ("avro", "a INT", ", 'avro.encoding' = 'json'", "unsupported option 'avro.encoding'"),
])
def test_refused_at_create_table(tmp_path: Path, fmt: str, columns: str, extra: str,
                                 message: str) -> None:
    s = _session()
    with pytest.raises(SqlEngineError, match=message):
        _table(s, "t", tmp_path / "t", fmt, columns=columns, extra=extra)


@pytest.mark.parametrize("fmt", ["orc", "avro", "raw"])
def test_checkpointed_job_reads_and_commits(tmp_path: Path, fmt: str) -> None:
    """A checkpointing job reads the formats (orc by stripe, avro by file, raw by line
    positions) and writes them through the exactly-once committing sink."""
    s = _session("streaming")
    s.set("execution.checkpointing.interval", "1 s")
    s.set("execution.checkpointing.dir", str(tmp_path / "chk"))
    columns = "v STRING" if fmt == "raw" else "id INT, v STRING"
    _table(s, "src", tmp_path / "src", fmt, columns=columns)
    _table(s, "dst", tmp_path / "dst", fmt, columns=columns)
    chosen = "v" if fmt == "raw" else "id, v"
    s.execute(f"INSERT INTO src SELECT {chosen} FROM (VALUES (1, 'a'), (2, 'b')) AS x(id, v)")
    s.execute("INSERT INTO dst SELECT * FROM src")
    (part,) = (tmp_path / "dst").iterdir()
    assert not part.name.startswith(".")
    got = sorted(r["v"] for r in s.sql("SELECT v FROM dst").collect().to_pylist())
    assert got == ["a", "b"]
