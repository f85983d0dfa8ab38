"""A sqlglot dialect for Flink SQL query bodies (backtick identifiers, window TVF arguments)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlglot import exp, generator, parser, tokens
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
        KEYWORDS = {**{k: v for k, v in tokens.Tokenizer.KEYWORDS.items() if k != "SESSION"},
                    "MATCH_RECOGNIZE": TokenType.MATCH_RECOGNIZE}

    class Parser(parser.Parser):
        # TIMESTAMPADD / TIMESTAMPDIFF(unit, a, b) keep their arguments in order (sqlglot's
        # own builders take another dialect's order and turn a column into a unit keyword).
        FUNCTIONS = {
            **parser.Parser.FUNCTIONS,
            "TIMESTAMPADD": lambda args: exp.Anonymous(this="TIMESTAMPADD", expressions=args),
            "TIMESTAMPDIFF": lambda args: exp.Anonymous(this="TIMESTAMPDIFF", expressions=args),
        }

        def _parse_match_recognize(self) -> exp.MatchRecognize | None:
            """sqlglot's MATCH_RECOGNIZE, plus Flink's ``WITHIN INTERVAL ...`` after PATTERN
            and where the PATTERN's text starts (both kept in the node's meta)."""
            if not self._match(TokenType.MATCH_RECOGNIZE):
                return None
            self._match_l_paren()
            partition = self._parse_partition_by()
            order = self._parse_order()
            measures = (self._parse_csv(self._parse_match_recognize_measure)
                        if self._match_text_seq("MEASURES") else None)
            rows = None
            if self._match_text_seq("ONE", "ROW", "PER", "MATCH"):
                rows = exp.var("ONE ROW PER MATCH")
            elif self._match_text_seq("ALL", "ROWS", "PER", "MATCH"):
                rows = exp.var("ALL ROWS PER MATCH")
            after = None
            if self._match_text_seq("AFTER", "MATCH", "SKIP"):
                text = "AFTER MATCH SKIP"
                if self._match_text_seq("PAST", "LAST", "ROW"):
                    text += " PAST LAST ROW"
                elif self._match_text_seq("TO", "NEXT", "ROW"):
                    text += " TO NEXT ROW"
                elif self._match_text_seq("TO", "FIRST") or self._match_text_seq("TO", "LAST"):
                    direction = self._prev.text.upper()
                    var = self._advance_any()
                    if not var:
                        self.raise_error(f"Expecting a pattern variable after AFTER MATCH "
                                         f"SKIP TO {direction}")
                    text += f" TO {direction} {var.text if var else ''}"
                else:
                    self.raise_error("Expecting PAST LAST ROW, TO NEXT ROW, TO FIRST v or "
                                     "TO LAST v after AFTER MATCH SKIP")
                after = exp.var(text)
            pattern = None
            meta: dict[str, object] = {}
            if self._match_text_seq("PATTERN"):
                self._match_l_paren()
                if not self._curr:
                    self.raise_error("Expecting )", self._curr)
                paren, start, end = 1, self._curr, self._curr
                meta["pattern_at"] = start.start
                while self._curr and paren > 0:
                    if self._curr.token_type == TokenType.L_PAREN:
                        paren += 1
                    if self._curr.token_type == TokenType.R_PAREN:
                        paren -= 1
                    end = self._prev
                    self._advance()
                if paren > 0:
                    self.raise_error("Expecting )", self._curr)
                pattern = exp.var(self._find_sql(start, end))
                if self._match_text_seq("WITHIN"):
                    meta["within"] = self._parse_bitwise()
            define = (self._parse_csv(self._parse_name_as_expression)
                      if self._match_text_seq("DEFINE") else None)
            self._match_r_paren()
            node = self.expression(exp.MatchRecognize(
                partition_by=partition, order=order, measures=measures, rows=rows,
                after=after, pattern=pattern, define=define,
                alias=self._parse_table_alias()))
            node.meta.update(meta)
            return node

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

    class Generator(generator.Generator):
        # ``TABLE t [PARTITION BY ...]`` back as text (for messages).
        TRANSFORMS = {**generator.Generator.TRANSFORMS, TableArg: lambda self, e: _table_arg(
            self, e)}


def _table_arg(gen: generator.Generator, e: TableArg) -> str:
    text = f"TABLE {gen.sql(e, 'this')}"
    part = e.args.get("partition_by")
    if part:
        text += " PARTITION BY " + ", ".join(gen.sql(p) for p in part)
    return text
