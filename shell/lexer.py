"""Syntax highlighting: Pygments' SQL lexer, knowing Flink's streaming keywords too."""

from __future__ import annotations

from pygments.lexer import inherit, words
from pygments.lexers.sql import SqlLexer
from pygments.token import Keyword, Name

STREAMING_KEYWORDS = (
    "WATERMARK", "TUMBLE", "HOP", "CUMULATE", "SESSION", "DESCRIPTOR", "PROCTIME",
    "CURRENT_WATERMARK", "TUMBLE_START", "TUMBLE_END", "TUMBLE_ROWTIME", "HOP_START", "HOP_END",
    "SESSION_START", "SESSION_END", "WINDOW_START", "WINDOW_END", "WINDOW_TIME", "EXPLAIN",
    "DESCRIBE", "SHOW", "RESET", "OVERWRITE", "TEMPORARY", "ENFORCED", "STRING", "BIGINT",
)


class FlinkSqlLexer(SqlLexer):
    """SQL with Flink's streaming keywords highlighted as keywords."""

    name = "FlinkSQL"
    aliases = ["flinksql"]
    tokens = {
        "root": [
            (words(STREAMING_KEYWORDS, suffix=r"\b"), Keyword),
            (r"`[^`]*`", Name),
            inherit,
        ],
    }
