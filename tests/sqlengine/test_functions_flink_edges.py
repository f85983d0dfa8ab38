"""Built-in functions at their edges, against PyFlink 2.3's answers for the same csv rows
(values read from a file, so that neither engine folds them as constants)."""

from __future__ import annotations

from pathlib import Path

import pytest

import sqlengine


def _rows(tmp_path: Path, columns: str, lines: list[str], select: str) -> list[tuple]:
    (tmp_path / "t.csv").write_text("".join(line + "\n" for line in lines))
    s = sqlengine.connect({"execution.runtime-mode": "batch", "table.local-time-zone": "UTC"})
    s.execute(f"CREATE TABLE t ({columns}) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 't.csv'}', 'format' = 'csv')")
    return [tuple(r.values()) for r in s.sql(f"SELECT {select} FROM t").collect().to_pylist()]


def _raw_rows(tmp_path: Path, lines: list[str], select: str) -> list[tuple]:
    """The rows of ``select`` over a table of one STRING column ``s``, one line each, read
    raw (no csv quoting nor trimming)."""
    (tmp_path / "s.txt").write_text("".join(line + "\n" for line in lines))
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute(f"CREATE TABLE h (s STRING) WITH ('connector' = 'filesystem', "
              f"'path' = '{tmp_path / 's.txt'}', 'format' = 'raw')")
    return [tuple(r.values()) for r in s.sql(f"SELECT {select} FROM h").collect().to_pylist()]


def test_instr_with_a_position_and_an_occurrence(tmp_path: Path) -> None:
    # (INSTR was LOCATE: the occurrence ignored, a negative position searched forward:
    # INSTR('hello world', 'o', 1, 2) gave 5, INSTR('abcabc', 'bc', -1) 2)
    got = _rows(tmp_path, "s STRING, a STRING", ["hello world,o", "abcabc,bc"],
                "INSTR(s, 'o', 1, 2), INSTR(s, 'bc', -1), INSTR(s, 'bc', 1, 3), INSTR(s, a, 0),"
                " INSTR(s, a), INSTR(s, a, 2), INSTR(s, a, -3, 2), INSTR(s, 'b', -2), "
                "INSTR(s, a, 99), INSTR(s, a, -99), LOCATE(a, s, 3)")
    assert got == [(8, 0, 0, 0, 5, 5, 5, 0, 0, 0, 5), (0, 5, 0, 0, 2, 2, 0, 5, 0, 0, 5)]


def test_date_format_and_convert_tz_at_the_calendars_ends(tmp_path: Path) -> None:
    # (the US week of 9999-12-31 ends in year 10000 and that of 0001-01-01 starts before
    # year 1: OverflowError "date value out of range" failed the query; CONVERT_TZ past
    # 9999 the same; five pattern letters are Java's narrow form, 'MMMMM' gave 'December')
    got = _rows(tmp_path, "ts TIMESTAMP(3), s STRING",
                ["9999-12-31 00:00:00,9999-12-31 23:59:59.999",
                 "0001-01-01 00:00:00,0001-01-01 00:00:00",
                 "2024-03-05 10:00:00,2024-03-05 10:00:00"],
                "DATE_FORMAT(ts, 'EEE'), DATE_FORMAT(ts, 'D'), DATE_FORMAT(ts, 'w'), "
                "DATE_FORMAT(ts, 'K'), DATE_FORMAT(ts, 'yyyy-M-d'), DATE_FORMAT(ts, 'MMMMM'), "
                "DATE_FORMAT(ts, 'EEEEE'), CONVERT_TZ(s, 'UTC', 'Asia/Kolkata')")
    assert got[0] == ("Fri", "365", "1", "0", "9999-12-31", "D", "F", "10000-01-01 05:29:59")
    assert got[1][:7] == ("Mon", "1", "1", "0", "0001-1-1", "J", "M")
    assert got[2] == ("Tue", "65", "10", "10", "2024-3-5", "M", "T", "2024-03-05 15:30:00")
    # (L, the stand-alone month, was refused as an unsupported pattern letter)
    assert _rows(tmp_path, "ts TIMESTAMP(3)", ["2024-03-05 10:00:00"],
                 "DATE_FORMAT(ts, 'LLL'), DATE_FORMAT(ts, 'LLLL L LL LLLLL')") == [
        ("Mar", "March 3 03 M")]
    # (Flink gives 0001-01-01 05:30:00: Java's zone rules have no local mean time there;
    # Python's give 05:53:28, as the IANA database says)
    assert got[1][7] in ("0001-01-01 05:30:00", "0001-01-01 05:53:28")


def test_instr_refuses_a_non_positive_occurrence(tmp_path: Path) -> None:
    with pytest.raises(sqlengine.SqlEngineError, match="INSTR's occurrence must be positive"):
        _rows(tmp_path, "s STRING", ["abc"], "INSTR(s, 'b', 1, 0)")


def test_hash_code_of_a_string_is_flinks_absolute_value(tmp_path: Path) -> None:
    # (Java's String.hashCode of 'xyzxyzxyz' is -1562220487; Flink gives its Math.abs, and
    # Integer.MIN_VALUE stays as it is)
    got = _rows(tmp_path, "s STRING", ["İstanbul", "xyzxyzxyz", "polygenelubricants", "abc"],
                "HASH_CODE(s)")
    assert got == [(363956677,), (1562220487,), (-2147483648,), (96354,)]


def test_regexp_count_of_an_empty_match_steps_by_characters(tmp_path: Path) -> None:
    # (Arrow stepped on by a byte after an empty match: 'ß' gave 3, 'İstanbul' 10)
    got = _rows(tmp_path, "s STRING", ["ß", "İstanbul", "abc", "baaac"],
                "REGEXP_COUNT(s, ''), REGEXP_COUNT(s, 'a*')")
    assert got == [(2, 2), (9, 9), (4, 4), (6, 4)]


def test_url_decode_of_a_broken_escape_is_null(tmp_path: Path) -> None:
    # (Python's unquote kept a broken escape as text: 'hello world%2')
    got = _rows(tmp_path, "s STRING", ["hello+world%2", "a%zz", "ok%41", "%"], "URL_DECODE(s)")
    assert got == [(None,), (None,), ("okA",), (None,)]


def test_parsing_with_single_letter_fields(tmp_path: Path) -> None:
    # (TO_DATE(s, 'yyyy-M-d') was refused: "unsupported DATE_FORMAT pattern letter 'M'")
    import datetime as dt

    got = _rows(tmp_path, "s STRING", ["2024-3-5", "2024-12-31"],
                "TO_DATE(s, 'yyyy-M-d'), TO_TIMESTAMP(s, 'yyyy-M-d'), UNIX_TIMESTAMP(s, 'y-M-d')")
    assert got == [(dt.date(2024, 3, 5), dt.datetime(2024, 3, 5), 1709596800),
                   (dt.date(2024, 12, 31), dt.datetime(2024, 12, 31), 1735603200)]


def test_json_query_inside_json_object_is_a_string(tmp_path: Path) -> None:
    # (JSON_QUERY's text was inserted as JSON: {"k":{"a":1,...}})
    got = _raw_rows(tmp_path, ['{"a":1,"b":[1,2]}'], "JSON_OBJECT('k' VALUE JSON_QUERY(s, '$')),"
                    " JSON_ARRAY(JSON_QUERY(s, '$.b')), JSON_OBJECT('k' VALUE JSON_OBJECT('x' "
                    "VALUE 1))")
    assert got == [
        ('{"k":"{\\"a\\":1,\\"b\\":[1,2]}"}', '["[1,2]"]', '{"k":{"x":1}}')]


def test_unix_timestamp_cuts_its_milliseconds_toward_zero(tmp_path: Path) -> None:
    # (PyFlink 2.3: 0 and -1; the half second before 1970 gave -1, floored)
    got = _rows(tmp_path, "s STRING", ["1969-12-31 23:59:59.5", "1969-12-31 23:59:58.5"],
                "UNIX_TIMESTAMP(s, 'yyyy-MM-dd HH:mm:ss.S')")
    assert got == [(0,), (-1,)]


def test_cast_to_an_integer_trims_only_spaces(tmp_path: Path) -> None:
    # (PyFlink 2.3: a tab is no integer text, but DOUBLE and DECIMAL trim it; it read 42)
    from decimal import Decimal

    got = _raw_rows(tmp_path, ["\t42\t", " 42 ", "\t1.5"],
                    "TRY_CAST(s AS INT), TRY_CAST(s AS BIGINT), TRY_CAST(s AS DOUBLE), "
                    "TRY_CAST(s AS DECIMAL(5, 1)), TRY_CAST(s AS SMALLINT)")
    assert got == [
        (None, None, 42.0, Decimal("42.0"), None), (42, 42, 42.0, Decimal("42.0"), 42),
        (None, None, 1.5, Decimal("1.5"), None)]


def test_parse_url_gives_java_urls_raw_parts(tmp_path: Path) -> None:
    # (PyFlink 2.3. A query value was decoded ('%41' -> 'A'), an empty query or ref after
    # '?' / '#' was NULL, FILE dropped the '?', a host was lowercased and lost its [])
    lines = ["http://h/p?q=%41", "http://h/p?", "http://[::1]:80/x",
             "http://User:pw@EXAMPLE.com:8080/a/b?x=1&y=a+b&z#frag", "http://h/p#"]
    parts = ("HOST", "QUERY", "REF", "FILE", "AUTHORITY", "USERINFO")
    got = _raw_rows(tmp_path, lines, ", ".join(f"PARSE_URL(s, '{p}')" for p in parts) +
                    ", PARSE_URL(s, 'QUERY', 'q'), PARSE_URL(s, 'QUERY', 'y'), "
                    "PARSE_URL(s, 'QUERY', 'z')")
    assert got == [
        ("h", "q=%41", None, "/p?q=%41", "h", None, "%41", None, None),
        ("h", "", None, "/p?", "h", None, None, None, None),
        ("[::1]", None, None, "/x", "[::1]:80", None, None, None, None),
        ("EXAMPLE.com", "x=1&y=a+b&z", "frag", "/a/b?x=1&y=a+b&z", "User:pw@EXAMPLE.com:8080",
         "User:pw", None, "a+b", None),
        ("h", None, "", "/p", "h", None, None, None, None)]


def test_json_numbers_of_doubles_and_floats(tmp_path: Path) -> None:
    # (PyFlink 2.3: BigDecimal's text of Double.toString, a FLOAT widened first; they were
    # Double.toString's: 1.0E-5, 1.23456789E8, 1.0E7, -0.0, and Float.toString's 0.1)
    got = _rows(tmp_path, "d DOUBLE", ["0.00001", "123456789.0", "10000000.0", "-0.0", "1.5"],
                "JSON_OBJECT('k' VALUE d), JSON_ARRAY(d, CAST(d AS FLOAT)), JSON_STRING(d)")
    assert got == [('{"k":0.000010}', "[0.000010,0.000009999999747378752]", "0.000010"),
                   ('{"k":123456789}', "[123456789,123456792]", "123456789"),
                   ('{"k":1.0E+7}', "[1.0E+7,1.0E+7]", "1.0E+7"),
                   ('{"k":0.0}', "[0.0,0.0]", "0.0"), ('{"k":1.5}', "[1.5,1.5]", "1.5")]


def test_date_format_of_a_text_needs_its_time(tmp_path: Path) -> None:
    # (PyFlink 2.3: a date alone is NULL; it was read as midnight, '2024')
    got = _rows(tmp_path, "s STRING", ["2024-03-05", "2024-03-05 10:00:00",
                                       "2024-03-05 10:00:00.123"], "DATE_FORMAT(s, 'yyyy')")
    assert got == [(None,), ("2024",), ("2024",)]


def test_parsing_skips_blanks_before_a_field(tmp_path: Path) -> None:
    # (PyFlink 2.3, SimpleDateFormat's reading: UNIX_TIMESTAMP(' 2024-03-05 ', ...) gave
    # Long.MIN_VALUE)
    import datetime as dt

    got = _raw_rows(tmp_path, [" 2024-03-05 ", "2024- 3-05", "\t2024-03-05"],
                    "UNIX_TIMESTAMP(s, 'yyyy-MM-dd'), TO_DATE(s, 'yyyy-MM-dd')")
    assert got == [(1709596800, dt.date(2024, 3, 5))] * 3
