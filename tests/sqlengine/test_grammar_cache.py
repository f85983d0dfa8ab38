"""The statement grammar's LALR tables are cached in the user's cache directory."""

from __future__ import annotations

import os

from sqlengine import parser


def _cache_file() -> str:
    with open(os.path.join(os.path.dirname(parser.__file__), "grammar", "statements.lark"),
              encoding="utf-8") as f:
        return os.path.basename(str(parser._grammar_cache_file(f.read())))


def _parse_with_fresh_grammar(sql: str):
    parser._grammar.cache_clear()
    try:
        return parser.parse_statement(sql)
    finally:
        parser._grammar.cache_clear()


def test_tables_are_written_then_read_back(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = _parse_with_fresh_grammar("SET 'parallelism.default' = '2'")
    cache = tmp_path / "sqlengine" / _cache_file()
    assert cache.name.startswith("statements-grammar-")  # (one file per grammar)
    assert cache.stat().st_size > 1000
    assert oct(os.stat(tmp_path / "sqlengine").st_mode & 0o777) == oct(0o700)
    written = cache.stat().st_mtime_ns
    second = _parse_with_fresh_grammar("SET 'parallelism.default' = '2'")
    assert cache.stat().st_mtime_ns == written  # loaded, not rebuilt
    assert repr(first) == repr(second)


def test_a_damaged_cache_file_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache = tmp_path / "sqlengine" / _cache_file()
    cache.parent.mkdir(exist_ok=True)
    cache.write_bytes(b"not a cache\n\x00\x01")
    statement = _parse_with_fresh_grammar("SET 'parallelism.default' = '2'")
    assert "parallelism.default" in repr(statement)
    assert cache.read_bytes() != b"not a cache\n\x00\x01"


def test_an_unwritable_cache_directory_only_costs_time(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("a file where the directory would go")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert parser._grammar_cache_file("grammar text") is False
    statement = _parse_with_fresh_grammar("SET 'parallelism.default' = '2'")
    assert "parallelism.default" in repr(statement)
