"""A filesystem table's 'path' may be a file: URI, as Flink's documentation writes them
('file:///path/to/t'): on main INSERT wrote under a directory named 'file:' in the working
directory, and a query read nothing ("does not exist"). Another scheme is refused by name by
the native runtime, where INSERT wrote under a directory named 's3:'."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import sqlengine
from sqlengine.errors import ConnectorError


@pytest.mark.parametrize("uri", ["file://{p}", "file:{p}", "file://localhost{p}"])
def test_a_file_uri_is_its_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                uri: str) -> None:
    monkeypatch.chdir(tmp_path)
    target = tmp_path / "out dir"
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    text = uri.format(p=str(target).replace(" ", "%20"))
    s.execute(f"CREATE TABLE o (a INT) WITH ('connector' = 'filesystem', 'path' = '{text}', "
              "'format' = 'csv')")
    s.execute("INSERT INTO o VALUES (1), (2)")
    assert sorted(os.listdir(tmp_path)) == ["out dir"]
    assert [f.read_text() for f in target.iterdir()] == ["1\n2\n"]
    assert s.sql("SELECT a FROM o").collect().to_pylist() == [{"a": 1}, {"a": 2}]


def test_another_scheme_is_refused_by_name(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    s = sqlengine.connect({"execution.runtime-mode": "batch"})
    s.execute("CREATE TABLE o (a INT) WITH ('connector' = 'filesystem', 'path' = "
              "'s3://bucket/t', 'format' = 'csv')")
    for sql in ("INSERT INTO o VALUES (1)", "SELECT * FROM o"):
        with pytest.raises(ConnectorError, match=r"'s3://bucket/t' .* is a s3: URI"):
            s.execute(sql) if sql.startswith("INSERT") else s.sql(sql).collect()
    assert os.listdir(tmp_path) == []
