"""A batch session over one json-lines table written to a temporary folder: the fixture of the
tests that read ARRAY / ROW / MAP columns as Flink's json format gives them."""

from __future__ import annotations

import pytest

import sqlengine


def json_table(tmp_path_factory: pytest.TempPathFactory, table: str, columns: str,
               rows: str) -> sqlengine.Session:
    """A batch session (parallelism 1) with ``table`` (``columns``: its DDL column list)
    reading the json lines ``rows``."""
    path = tmp_path_factory.mktemp(table.lower()) / f"{table.lower()}.json"
    path.write_text(rows)
    session = sqlengine.connect({"execution.runtime-mode": "batch",
                                 "parallelism.default": "1"})
    session.execute(f"CREATE TABLE {table} ({columns}) WITH ('connector' = 'filesystem', "
                    f"'path' = '{path}', 'format' = 'json')")
    return session
