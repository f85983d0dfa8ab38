"""A sqlglot dialect for Flink SQL query bodies (backtick identifiers, window TVF arguments)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp, parser, tokens
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import TokenType


class TableArg(exp.Expression):
    """``TABLE t [PARTITION BY c, ...]`` as the first argument of a window table function."""

    arg_types = {"this": True, "partition_by": False}


class Flink(Dialect):
    """Flink SQL as sqlglot should read it."""

    NORMALIZE_FUNCTIONS = "upper"

    class Tokenizer(tokens.Tokenizer):
        IDENTIFIERS = ["`"]
        QUOTES = ["'"]
        STRING_ESCAPES = ["'"]
        # SESSION is a window table function in Flink, not a keyword.
        KEYWORDS = {k: v for k, v in tokens.Tokenizer.KEYWORDS.items() if k != "SESSION"}

    class Parser(parser.Parser):
        # TIMESTAMPADD / TIMESTAMPDIFF(unit, a, b) keep their arguments in order (sqlglot's
        # own builders take another dialect's order and turn a column into a unit keyword).
        FUNCTIONS = {
            **parser.Parser.FUNCTIONS,
            "TIMESTAMPADD": lambda args: exp.Anonymous(this="TIMESTAMPADD", expressions=args),
            "TIMESTAMPDIFF": lambda args: exp.Anonymous(this="TIMESTAMPDIFF", expressions=args),
        }

        def _parse_unary(self) -> exp.Expr | None:
            curr, nxt = self._curr, self._next
            if (
                curr is not None
                and curr.token_type == TokenType.TABLE
                and nxt is not None
                and nxt.token_type in (TokenType.VAR, TokenType.IDENTIFIER)
            ):
                self._advance()
                table = self._parse_table_parts()
                partition: Sequence[exp.Expr | None] | None = None
                if self._match(TokenType.PARTITION_BY):
                    # One column, or several in parentheses: PARTITION BY (a, b).
                    if self._match(TokenType.L_PAREN):
                        partition = self._parse_csv(self._parse_column)
                        self._match_r_paren()
                    else:
                        partition = [self._parse_column()]
                return self.expression(TableArg(this=table, partition_by=partition))
            return super()._parse_unary()
