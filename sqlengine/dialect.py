"""A sqlglot dialect for Flink SQL query bodies (backtick identifiers, window TVF arguments)."""

from __future__ import annotations

import decimal
from collections.abc import Collection, Sequence
from typing import Any

from sqlglot import exp, generator, parser, tokens
from sqlglot.dialects.dialect import Dialect
from sqlglot.tokens import TokenType


class TableArg(exp.Expression):
    """``TABLE t [PARTITION BY c, ...]`` (or ``(query) PARTITION BY ...``) as the first
    argument of a window table function."""

    arg_types = {"this": True, "partition_by": False}


class Percentile(exp.Expression, exp.AggFunc):
    """Flink's PERCENTILE(value, percentage [, frequency]): the continuous percentile."""

    arg_types = {"this": True, "expression": True, "frequency": False}


class JsonCall(exp.Expression):
    """JSON_VALUE / JSON_QUERY / JSON_EXISTS / JSON_ARRAY with their SQL/JSON clauses:
    ``returning`` a type, ``wrapper`` (JSON_QUERY), the behaviour ``on_empty`` / ``on_error``
    (a keyword text, or a DEFAULT expression) and ``on_null`` (JSON_ARRAY)."""

    arg_types = {"this": True, "expressions": False, "returning": False, "wrapper": False,
                 "on_empty": False, "on_error": False, "on_null": False}


_BEHAVIOURS = (("EMPTY", "ARRAY"), ("EMPTY", "OBJECT"), ("NULL",), ("ERROR",), ("TRUE",),
               ("FALSE",), ("UNKNOWN",))


class Flink(Dialect):
    """Flink SQL as sqlglot should read it."""

    NORMALIZE_FUNCTIONS = "upper"

    class Tokenizer(tokens.Tokenizer):
        IDENTIFIERS = ["`"]
        QUOTES = ["'"]
        HEX_STRINGS = [("X'", "'"), ("x'", "'")]  # X'616263': a BINARY literal
        UNICODE_STRINGS = [("U&'", "'"), ("u&'", "'")]  # U&'\00e9': escaped code points
        STRING_ESCAPES = ["'"]
        # SESSION is a window table function in Flink, not a keyword.
        # (and type names of other engines whose meaning is not one: PostgreSQL's INT8 is
        # 8 bytes, sqlglot's 8 bits, CAST(300 AS INT8) gave 44; Oracle's NUMBER keeps any
        # scale, sqlglot's a DECIMAL(10, 0): names Flink does not have, now unknown types)
        KEYWORDS = {**{k: v for k, v in tokens.Tokenizer.KEYWORDS.items()
                       if k not in ("SESSION", "INT8", "NUMBER", "FIXED", "HUGEINT",
                                    "UHUGEINT")},
                    "MATCH_RECOGNIZE": TokenType.MATCH_RECOGNIZE}

    class Parser(parser.Parser):
        def _parse_interval(self, require_interval: bool = True,
                            parse_function_unit: bool = True) -> exp.Expr | None:
            """Flink's INTERVAL literal: the unit after the string, ``INTERVAL '3' DAY``.
            (sqlglot read a unit inside the string, PostgreSQL's ``INTERVAL '3 days
            4:05:06'``, as its first part: '3' DAY, the rest dropped without a word.)"""
            start = self._index
            interval = super()._parse_interval(require_interval, parse_function_unit)
            if isinstance(interval, exp.Interval) and interval.args.get("unit") is not None:
                taken = self._tokens[start:self._index]
                values = [t for t in taken if t.token_type == TokenType.STRING]
                if values and taken[-1] is values[-1]:  # (no unit after the string)
                    self.raise_error(f"INTERVAL {values[-1].text!r} needs its unit after the "
                                     "string, as INTERVAL '3' DAY or INTERVAL '1 02:00:00' "
                                     "DAY TO SECOND", values[-1])
            return interval

        def _parse_csv(self, parse_method: Any, sep: TokenType = TokenType.COMMA) -> list:
            """A separated list whose every item is there: ``f(1,,2)``, ``(VALUES (1,,2))``,
            ``SELECT 1, FROM t`` are errors at the separator, as in Flink (sqlglot dropped
            the empty item without a word, so later values moved left)."""
            item = parse_method()
            items = [item] if item is not None else []
            while self._match(sep):
                separator = self._prev
                if item is None:
                    self.raise_error(f"unexpected {separator.text!r}: an item is missing "
                                     "before it", separator)
                if isinstance(item, exp.Expr):
                    self._add_comments(item)
                item = parse_method()
                if item is None:
                    self.raise_error(f"unexpected {separator.text!r}: an item is missing "
                                     "after it", separator)
                items.append(item)
            return items

        def _parse_table_alias(self, alias_tokens: Collection[TokenType] | None = None
                               ) -> exp.TableAlias | None:
            """An alias's column list holds names only, as in Flink: sqlglot read ``t SAMPLE
            (2)`` as table t named SAMPLE with a column named 2 (its rows all kept, without a
            word), a string or a number as a name, and ``x (a INT)`` with the type dropped."""
            start = self._index
            alias = super()._parse_table_alias(alias_tokens)
            if alias is None or not alias.columns:
                return alias
            for token in self._tokens[start:self._index]:
                if token.token_type in (TokenType.NUMBER, TokenType.STRING):
                    self.raise_error(f"a column alias must be a name, not {token.text!r}",
                                     token)
            for column in alias.columns:
                if not isinstance(column, exp.Identifier):
                    self.raise_error(f"a column alias is a name only, not "
                                     f"{column.sql(dialect=Flink)!r}", self._prev)
            return alias

        def _parse_in(self, this: exp.Expr | None, alias: bool = False) -> exp.In:
            """``x IN ()`` is an error, as in Flink and DuckDB (sqlglot read an empty list,
            which matched no row without a word)."""
            if self._curr is not None and self._next is not None and \
                    self._curr.token_type == TokenType.L_PAREN and \
                    self._next.token_type == TokenType.R_PAREN:
                self.raise_error("IN () is empty: it needs at least one value", self._next)
            return super()._parse_in(this, alias)

        def _parse_group(self, skip_group_by_token: bool = False) -> exp.Group | None:
            """A GROUP BY with nothing after it is an error (sqlglot read an empty GROUP BY,
            reported later as a column 'not in GROUP BY')."""
            group = super()._parse_group(skip_group_by_token)
            if group is not None and not any(group.args.values()):
                self.raise_error("GROUP BY is missing its expressions", self._prev)
            return group

        def _parse_named_window(self) -> exp.Expr | None:
            """``WINDOW w AS (...)``: the name, AS and the parenthesised definition are all
            needed (sqlglot read ``WINDOW w`` and ``WINDOW w AS`` as an empty window)."""
            name = self._parse_id_var()
            if name is None:
                self.raise_error("WINDOW is missing a window's name")
            if self._curr is None or self._next is None or \
                    self._curr.token_type != TokenType.ALIAS or \
                    self._next.token_type != TokenType.L_PAREN:
                self.raise_error(f"WINDOW {name.name} is missing its definition: AS "
                                 "(PARTITION BY ... ORDER BY ...)", self._prev)
            return self._parse_window(name, alias=True)

        def _parse_json_key_value(self) -> exp.JSONKeyValue | None:
            """JSON_OBJECT's ``KEY k VALUE v``: a VALUE is any expression (Calcite's), ``'b'
            VALUE k > 2`` too (sqlglot stopped at the comparison); ``JSON_OBJECT(ABSENT ON
            NULL)`` has no pair (ABSENT was read as a key)."""
            if self._curr is not None and self._curr.text.upper() in ("NULL", "ABSENT") and \
                    self._next is not None and self._next.text.upper() == "ON":
                return None
            self._match_text_seq("KEY")
            key = self._parse_column()
            self._match_set(self.JSON_KEY_VALUE_SEPARATOR_TOKENS)
            self._match_text_seq("VALUE")
            value = self._parse_disjunction()
            if not key and not value:
                return None
            return self.expression(exp.JSONKeyValue(this=key, expression=value))

        # IS [NOT] NULL / TRUE / FALSE / UNKNOWN / DISTINCT FROM bind after the comparisons
        # (Calcite's precedence: a > 100 IS NOT TRUE is (a > 100) IS NOT TRUE; it was read as
        # a > (100 IS NOT TRUE) and refused)
        IS_PREDICATE_PRECEDENCE = parser.IsPredicatePrecedence.LOW
        # TIMESTAMPADD / TIMESTAMPDIFF(unit, a, b) keep their arguments in order (sqlglot's
        # own builders take another dialect's order and turn a column into a unit keyword).
        FUNCTIONS = {
            **parser.Parser.FUNCTIONS,
            "TIMESTAMPADD": lambda args: exp.Anonymous(this="TIMESTAMPADD", expressions=args),
            "TIMESTAMPDIFF": lambda args: exp.Anonymous(this="TIMESTAMPDIFF", expressions=args),
            # LOG10(x) / LOG2(x): their own kernels (sqlglot reads them as LOG(10, x), which
            # is ln(x) / ln(10): LOG10(1000) gave 2.9999999999999996, Flink says 3.0)
            "LOG10": lambda args: exp.Anonymous(this="LOG10", expressions=args),
            "LOG2": lambda args: exp.Anonymous(this="LOG2", expressions=args),
            # LOWER(HEX(x)) stays LOWER of HEX (sqlglot folds it into a LowerHex node, which
            # failed as an unknown function LOWER_HEX)
            "LOWER": lambda args: exp.Lower(this=args[0]) if len(args) == 1 else
            exp.Anonymous(this="LOWER", expressions=args),
            # INSTR(s, sub, position [, occurrence]): its own function (sqlglot's StrPosition
            # is LOCATE's, which dropped the occurrence and searched forward from a negative
            # position); INSTR(s, sub) is POSITION(sub IN s)
            "INSTR": lambda args: exp.StrPosition(this=args[0], substr=args[1])
            if len(args) == 2 else exp.Anonymous(this="INSTR", expressions=args),
            # MEDIAN(x): PERCENTILE(x, 0.5)
            "MEDIAN": lambda args: Percentile(this=args[0], expression=exp.Literal.number(
                "0.5")) if len(args) == 1 else exp.Anonymous(this="MEDIAN", expressions=args),
            # EVERY(b): the standard's name of BOOL_AND
            "EVERY": lambda args: exp.LogicalAnd(this=args[0]) if len(args) == 1 else
            exp.Anonymous(this="EVERY", expressions=args),
            # LISTAGG(s [, separator]): an aggregate (sqlglot's GROUP_CONCAT node)
            "LISTAGG": lambda args: exp.GroupConcat(
                this=args[0] if args else None,
                separator=args[1] if len(args) > 1 else None),
        }

        # TIMESTAMP '...' / TIME '...' literals are typed by their fraction's digits, as
        # Flink's: TIMESTAMP '2020-01-02 10:11:12' is a TIMESTAMP(0), '... .5' a TIMESTAMP(1).
        TYPE_LITERAL_PARSERS = {
            **parser.Parser.TYPE_LITERAL_PARSERS,
            exp.DataType.Type.TIMESTAMP: lambda self, this, to: _temporal_literal(this, to),
            exp.DataType.Type.TIME: lambda self, this, to: _temporal_literal(this, to),
        }

        # LOCALTIME is CURRENT_TIME (the session's time zone is UTC).
        NO_PAREN_FUNCTIONS = {**parser.Parser.NO_PAREN_FUNCTIONS,
                              TokenType.LOCALTIME: exp.CurrentTime}

        # (s1, e1) OVERLAPS (s2, e2), an end an instant or an interval after the start.
        RANGE_PARSERS = {
            **parser.Parser.RANGE_PARSERS,
            TokenType.OVERLAPS: lambda self, this: _overlaps(self, this, self._parse_bitwise()),
        }

        # X'616263' as CAST('616263' AS BYTES) marked as hex (bind_scalar.cast reads it).
        PRIMARY_PARSERS = {
            **parser.Parser.PRIMARY_PARSERS,
            TokenType.HEX_STRING: lambda self, token: _hex_literal(token),
        }

        FUNCTION_PARSERS = {
            **parser.Parser.FUNCTION_PARSERS,
            **{name: (lambda self, name=name: self._parse_json_call(name))
               for name in ("JSON_VALUE", "JSON_QUERY", "JSON_EXISTS", "JSON_ARRAY")},
            "JSON_ARRAYAGG": lambda self: self._parse_json_arrayagg(),
            "PERCENTILE": lambda self: self._parse_percentile(),
        }

        def _parse_percentile(self) -> exp.Expression:
            # PERCENTILE([DISTINCT] value, percentage [, frequency]); DISTINCT marks the
            # value as for the other aggregates (it was "missing an argument")
            distinct = self._match(TokenType.DISTINCT)
            args = self._parse_csv(self._parse_assignment)
            if distinct and args:
                args[0] = self.expression(exp.Distinct(expressions=[args[0]]))
            return self.expression(Percentile(**dict(zip(("this", "expression", "frequency"),
                                                         args))))

        def _parse_join(self, skip_join_token: bool = False, parse_bracket: bool = False,
                        alias_tokens: Any = None) -> exp.Join | None:
            # A join written with JOIN (not a comma) is marked: sqlglot gives `a JOIN b` and
            # `a, b` one shape, and the binder refuses a JOIN without ON or USING (Flink does;
            # it was a cross join).
            comma = self._curr is not None and self._curr.token_type == TokenType.COMMA
            join = super()._parse_join(skip_join_token, parse_bracket, alias_tokens)
            if join is not None and not comma:
                join.meta["keyword"] = True
            return join

        def _parse_placeholder(self) -> exp.Expression | None:
            # (a ? or :name where it is written, for its errors: "no value given for
            # parameter :b" was located at the statement's start)
            first = self._curr
            node = super()._parse_placeholder()
            if isinstance(node, exp.Placeholder) and first is not None and \
                    self._prev is not None:
                node.meta.update(line=self._prev.line, col=self._prev.col,
                                 start=first.start, end=self._prev.end)
            return node

        def _parse_position(self, haystack_first: bool = False) -> exp.StrPosition:
            """``POSITION(needle IN haystack [FROM start])`` (Flink's, the SQL standard's
            start position), besides sqlglot's forms."""
            index = self._index
            needle = self._parse_bitwise()
            if needle is not None and self._match(TokenType.IN):
                haystack = self._parse_bitwise()
                start = self._parse_bitwise() if self._match(TokenType.FROM) else None
                return self.expression(exp.StrPosition(this=haystack, substr=needle,
                                                       position=start))
            self._retreat(index)
            return super()._parse_position(haystack_first)

        def _parse_cast(self, strict: bool, safe: bool | None = None) -> exp.Expression:
            """CAST(s AS DATE / TIMESTAMP FORMAT f), which sqlglot makes a STR_TO_DATE /
            STR_TO_TIME call, marked so that the binder refuses the clause by its name."""
            node = super()._parse_cast(strict, safe)
            if isinstance(node, exp.StrToDate | exp.StrToTime):
                node.meta["cast_format"] = True
            return node

        def _parse_window(self, this: exp.Expression | None, alias: bool = False
                          ) -> exp.Expression | None:
            """The standard's PERCENTILE_CONT(f) WITHIN GROUP (ORDER BY x [DESC]) as
            Flink's PERCENTILE(x, f) (DESC: 1 - f, for a constant f)."""
            window = super()._parse_window(this, alias)
            return window.transform(_percentile_cont) if window is not None else None

        def _parse_types(self, check_func: bool = False, schema: bool = False,
                         allow_identifiers: bool = True, with_collation: bool = False
                         ) -> exp.Expression | None:
            """Flink's ROW<name type, ...> and ROW(name type, ...) as a STRUCT type (in CAST);
            anything else as sqlglot reads it."""
            row = self._row_type()
            if row is not None:
                return row
            if self._curr and self._curr.text.upper() == "MULTISET" and self._next and \
                    self._next.token_type == TokenType.LT:
                # Flink's MULTISET<T> (types.parse_type reads the text)
                start = self._index
                self._advance(2)
                element = self._parse_types()
                if element is not None and self._match(TokenType.GT):
                    return _multiset(element)
                self._retreat(start)
            kind = super()._parse_types(check_func=check_func, schema=schema,
                                        allow_identifiers=allow_identifiers,
                                        with_collation=with_collation)
            if isinstance(kind, exp.DataType) and self._curr and \
                    self._curr.text.upper() == "MULTISET" and self._next and \
                    self._next.token_type in (TokenType.R_PAREN, TokenType.GT,
                                              TokenType.COMMA):
                self._advance()  # (Flink's postfix form: INT MULTISET)
                return _multiset(kind)
            return kind

        def _row_type(self) -> exp.Expression | None:
            if not (self._curr and self._curr.text.upper() == "ROW" and self._next and
                    self._next.token_type in (TokenType.LT, TokenType.L_PAREN)):
                return None
            start = self._index
            close = TokenType.GT if self._next.token_type == TokenType.LT else TokenType.R_PAREN
            self._advance(2)
            fields: list[exp.Expression] = []
            while True:
                name = self._parse_id_var(any_token=True)
                kind = self._parse_types() if name is not None else None
                if kind is None:
                    self._retreat(start)
                    return None
                fields.append(exp.ColumnDef(this=name, kind=kind))
                if not self._match(TokenType.COMMA):
                    break
            if not self._match(close):
                self._retreat(start)
                return None
            return exp.DataType(this=exp.DataType.Type.STRUCT, expressions=fields, nested=True)

        def _parse_json_arrayagg(self) -> exp.Expression:
            """JSON_ARRAYAGG([DISTINCT] value [NULL | ABSENT ON NULL]), after its '('."""
            distinct = self._match(TokenType.DISTINCT)
            value = self._parse_assignment()
            if distinct:
                value = exp.Distinct(expressions=[value])
            handling = None
            if self._match_text_seq("NULL", "ON", "NULL"):
                handling = "NULL ON NULL"
            elif self._match_text_seq("ABSENT", "ON", "NULL"):
                handling = "ABSENT ON NULL"
            return self.expression(exp.JSONArrayAgg(this=value, null_handling=handling))

        def _parse_case(self) -> exp.Expression | None:
            """CASE, where a simple CASE may list several values in a WHEN
            (``CASE x WHEN 1, 2 THEN ...``, as Flink): such a CASE reads as a searched one,
            ``CASE WHEN x = 1 OR x = 2 THEN ...``."""
            if self._match(TokenType.DOT, advance=False):
                self._retreat(self._index - 1)  # (case.*: not a CASE)
                return None
            comments = self._prev_comments
            subject = self._parse_disjunction()
            whens: list[tuple[list[exp.Expression], exp.Expression]] = []
            while self._match(TokenType.WHEN):
                values = [self._parse_disjunction()]
                while subject is not None and self._match(TokenType.COMMA):
                    values.append(self._parse_disjunction())
                if not self._match(TokenType.THEN):
                    self.raise_error("Expected THEN after WHEN")
                whens.append((values, self._parse_disjunction()))
            default = self._parse_disjunction() if self._match(TokenType.ELSE) else None
            if not self._match(TokenType.END):
                self.raise_error("Expected END after CASE", self._prev)
            if subject is not None and any(len(v) > 1 for v, _ in whens):
                ifs = [exp.If(this=exp.or_(*(exp.EQ(this=subject.copy(), expression=v)
                                             for v in values)), true=then)
                       for values, then in whens]
                subject = None
            else:
                ifs = [exp.If(this=values[0], true=then) for values, then in whens]
            return self.expression(exp.Case(this=subject, ifs=ifs, default=default),
                                   comments=comments)

        def _parse_json_call(self, name: str) -> exp.Expression:
            """The arguments and clauses of a SQL/JSON function, after its '('."""
            args: list[exp.Expression] = []
            node = JsonCall(this=name)
            while self._curr and self._curr.token_type != TokenType.R_PAREN:
                if self._json_clause(node):
                    continue
                if args and not self._match(TokenType.COMMA):
                    self.raise_error(f"Expecting , or a clause of {name}")
                arg = self._parse_assignment()
                if arg is None:
                    self.raise_error(f"Expecting an argument of {name}")
                args.append(arg)
            node.set("expressions", args)
            return node

        def _json_clause(self, node: JsonCall) -> bool:
            if self._match_text_seq("RETURNING"):
                node.set("returning", self._parse_types())
                return True
            if self._match_text_seq("WITHOUT"):
                self._match_text_seq("ARRAY")
                if not self._match_text_seq("WRAPPER"):
                    self.raise_error("Expecting WRAPPER")
                node.set("wrapper", exp.var("WITHOUT"))
                return True
            if self._curr and self._curr.text.upper() == "WITH" and self._next and \
                    self._next.text.upper() in ("CONDITIONAL", "UNCONDITIONAL", "ARRAY",
                                                "WRAPPER"):
                self._advance()
                kind = "UNCONDITIONAL"
                if self._match_text_seq("CONDITIONAL"):
                    kind = "CONDITIONAL"
                else:
                    self._match_text_seq("UNCONDITIONAL")
                self._match_text_seq("ARRAY")
                if not self._match_text_seq("WRAPPER"):
                    self.raise_error("Expecting WRAPPER")
                node.set("wrapper", exp.var(kind))
                return True
            if self._match_text_seq("ABSENT", "ON", "NULL"):
                node.set("on_null", exp.var("ABSENT"))
                return True
            if self._match_text_seq("NULL", "ON", "NULL"):
                node.set("on_null", exp.var("NULL"))
                return True
            start = self._index
            behaviour: exp.Expression | None = None
            if self._match(TokenType.DEFAULT):
                behaviour = self._parse_bitwise()
            else:
                for words in _BEHAVIOURS:
                    if self._match_text_seq(*words):
                        behaviour = exp.var(" ".join(words))
                        break
            if behaviour is None:
                return False
            if self._match_text_seq("ON", "EMPTY"):
                node.set("on_empty", behaviour)
                return True
            if self._match_text_seq("ON", "ERROR"):
                node.set("on_error", behaviour)
                return True
            self._retreat(start)
            return False

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

        def _parse_cube_or_rollup(self, with_prefix: bool = False
                                  ) -> exp.Cube | exp.Rollup | None:
            # Any expression in ROLLUP (...) / CUBE (...), as in a GROUP BY (sqlglot's
            # parser stops at a comparison: ROLLUP(k, v > 50) failed)
            if with_prefix:
                return super()._parse_cube_or_rollup(with_prefix)
            if self._match(TokenType.CUBE):
                kind: type[exp.Cube | exp.Rollup] = exp.Cube
            elif self._match(TokenType.ROLLUP):
                kind = exp.Rollup
            else:
                return None
            return self.expression(kind(
                expressions=self._parse_wrapped_csv(self._parse_disjunction)))

        def _parse_grouping_set(self) -> exp.Expr | None:
            return (self._parse_grouping_sets() or self._parse_cube_or_rollup()
                    or self._parse_disjunction())

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
                return self.expression(TableArg(this=table,
                                                partition_by=self._parse_table_partition()))
            unary = super()._parse_unary()
            if isinstance(unary, exp.Subquery) and self._curr is not None and \
                    self._curr.token_type == TokenType.PARTITION_BY:
                # ``(query) PARTITION BY k``: a query as a table argument (Calcite's grammar)
                return self.expression(TableArg(this=unary,
                                                partition_by=self._parse_table_partition()))
            return unary

        def _parse_table_partition(self) -> Sequence[exp.Expr | None] | None:
            """A table argument's ``PARTITION BY c`` or ``PARTITION BY (a, b)``, if there."""
            if not self._match(TokenType.PARTITION_BY):
                return None
            if self._match(TokenType.L_PAREN):
                partition = self._parse_csv(self._parse_column)
                self._match_r_paren()
                return partition
            return [self._parse_column()]

    class Generator(generator.Generator):
        # Flink's names of the types (SHOW CREATE TABLE prints computed columns through
        # this: CAST(a AS TEXT) would not read back in Flink)
        TYPE_MAPPING = {**generator.Generator.TYPE_MAPPING,
                        exp.DataType.Type.TEXT: "STRING",
                        exp.DataType.Type.TIMESTAMPLTZ: "TIMESTAMP_LTZ",
                        exp.DataType.Type.STRUCT: "ROW"}
        # ``TABLE t [PARTITION BY ...]`` back as text (for messages).
        TRANSFORMS = {**generator.Generator.TRANSFORMS,
                      TableArg: lambda self, e: _table_arg(self, e),
                      JsonCall: lambda self, e: f"{e.this}("
                      f"{', '.join(self.sql(a) for a in e.expressions)})"}


def _overlaps(parser_: parser.Parser, left: exp.Expression | None,
              right: exp.Expression | None) -> exp.Expression | None:
    """``(s1, e1) OVERLAPS (s2, e2)`` as Calcite rewrites it: with each period's ends in
    order, ``GREATEST(s1, e1) >= LEAST(s2, e2) AND GREATEST(s2, e2) >= LEAST(s1, e1)``; an end
    written as an INTERVAL is the start plus it."""
    periods = []
    for side in (left, right):
        if not isinstance(side, exp.Tuple) or len(side.expressions) != 2:
            parser_.raise_error("OVERLAPS compares two periods: (start, end | interval)")
            return None
        start, end = side.expressions
        if isinstance(end, exp.Interval):
            end = exp.Add(this=start.copy(), expression=end)
        periods.append((start, end))
    (s1, e1), (s2, e2) = periods

    def later(a: exp.Expression, b: exp.Expression) -> exp.Expression:
        return exp.Greatest(this=a.copy(), expressions=[b.copy()])

    def earlier(a: exp.Expression, b: exp.Expression) -> exp.Expression:
        return exp.Least(this=a.copy(), expressions=[b.copy()])

    return exp.Paren(this=exp.And(
        this=exp.GTE(this=later(s1, e1), expression=earlier(s2, e2)),
        expression=exp.GTE(this=later(s2, e2), expression=earlier(s1, e1))))


def _hex_literal(token: Any) -> exp.Expression:
    node = exp.Cast(this=exp.Literal.string(token.text), to=exp.DataType.build("VARBINARY"))
    node.meta["hex"] = True
    # (where the literal is, for its errors: X'ABC' was located at the statement's start)
    node.meta.update(line=token.line, col=token.col, start=token.start, end=token.end)
    return node


def _temporal_literal(this: exp.Expression, to: exp.DataType) -> exp.Expression:
    """``TIMESTAMP '...'`` / ``TIME '...'`` as a CAST to the precision its text has."""
    if to.expressions or not isinstance(this, exp.Literal) or not this.is_string:
        return exp.Cast(this=this, to=to)
    text = this.name.strip()
    frac = text.rpartition(".")[2] if "." in text.rpartition(":")[2] else ""
    digits = len(frac) if frac.isdigit() else 0
    typed = exp.DataType(this=to.this, expressions=[
        exp.DataTypeParam(this=exp.Literal.number(min(digits, 9)))])
    node = exp.Cast(this=this, to=typed)
    node.meta["type_literal"] = True
    return node


def _table_arg(gen: generator.Generator, e: TableArg) -> str:
    text = gen.sql(e, 'this') if isinstance(e.this, exp.Subquery) else \
        f"TABLE {gen.sql(e, 'this')}"
    part = e.args.get("partition_by")
    if part:
        text += " PARTITION BY " + ", ".join(gen.sql(p) for p in part)
    return text


def _multiset(element: exp.Expression) -> exp.DataType:
    """Flink's MULTISET<element> as a type sqlglot carries by its text."""
    return exp.DataType(this=exp.DataType.Type.USERDEFINED, kind=f"MULTISET<{element.sql()}>")


def _percentile_cont(node: exp.Expression) -> exp.Expression:
    if not (isinstance(node, exp.WithinGroup) and isinstance(node.this, exp.PercentileCont)
            and isinstance(node.expression, exp.Order) and
            len(node.expression.expressions) == 1):
        return node
    key = node.expression.expressions[0]
    fraction = node.this.this
    if key.args.get("desc"):
        if not (isinstance(fraction, exp.Literal) and not fraction.is_string):
            return node  # (refused by the binder, naming WITHIN GROUP)
        fraction = exp.Literal.number(str(1 - decimal.Decimal(fraction.this)))
    return Percentile(this=key.this, expression=fraction)
