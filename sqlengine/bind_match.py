"""MATCH_RECOGNIZE: the clause after a FROM item, bound into a MatchRecognize node.

Flink's subset of SQL:2016 row pattern recognition (its documentation lists what it leaves
out, and each of those is refused here by name): PARTITION BY columns, ORDER BY a rowtime
attribute ascending, MEASURES (FINAL), ONE ROW PER MATCH, AFTER MATCH SKIP (PAST LAST ROW, TO
NEXT ROW, TO FIRST / LAST v), a PATTERN of variables with quantifiers (``*``, ``+``, ``?``,
``{n}``, ``{n,}``, ``{n,m}``, ``{,m}``, each reluctant with a trailing ``?`` except ``??``),
Flink's ``WITHIN INTERVAL``, and DEFINE. In DEFINE and MEASURES: ``A.col`` (the last row
mapped to A), ``LAST(A.expr, n)`` / ``FIRST(A.expr, n)``, aggregates over a variable's rows
(SUM, AVG, MIN, MAX, COUNT), and, in MEASURES, ``MATCH_ROWTIME()``.
"""

from __future__ import annotations

import itertools
import re

import pyarrow as pa
from sqlglot import exp

from sqlengine import types as T
from sqlengine.bind_common import ClauseBinder, Relation, scope_of
from sqlengine.bind_expr import Scope, ScopeColumn, coerce
from sqlengine.bind_windows import interval_ms
from sqlengine.errors import BindError, NotSupportedError, ParseError, Span
from sqlengine.plan.expressions import ColumnRef, Expr
from sqlengine.plan.match import UNBOUNDED, Bound, MatchSpec, Navigation, PatternVar
from sqlengine.plan.nodes import MatchRecognize

_AGGS = {exp.Sum: "sum", exp.Avg: "avg", exp.Min: "min", exp.Max: "max", exp.Count: "count"}
_REFUSED_FUNCS = {
    "PREV": "physical offsets (PREV / NEXT) are not supported, as in Flink: use LAST(v.col, n)",
    "NEXT": "physical offsets (PREV / NEXT) are not supported, as in Flink: use LAST(v.col, n)",
    "CLASSIFIER": "CLASSIFIER() is not supported, as in Flink",
    "MATCH_NUMBER": "MATCH_NUMBER() is not supported, as in Flink",
    "MATCH_PROCTIME": "MATCH_PROCTIME() is not supported yet",
}


class MatchBinder(ClauseBinder):
    def bind(self, rel: Relation, node: exp.MatchRecognize) -> Relation:
        scope = rel.scope
        rows = node.args.get("rows")
        if rows is not None and "ALL" in rows.name.upper():
            raise self.error(NotSupportedError, "ALL ROWS PER MATCH is not supported (Flink "
                             "supports ONE ROW PER MATCH only)", node)
        if node.args.get("pattern") is None:
            raise self.error(ParseError, "MATCH_RECOGNIZE needs a PATTERN", node)
        partition = self._partition(node, scope)
        time_index, then_by = self._order(node, scope)
        pattern = self._pattern(node)
        names = {v.name for v in pattern}
        # Variables DEFINE names that the PATTERN does not use: their conditions are checked
        # and left out, and MEASURES read them as variables no row maps to (NULL, a COUNT
        # of 0), as Flink does.
        unused = {d.alias_or_name for d in node.args.get("define") or []
                  if _var(d.alias_or_name, names) is None}
        known = names | unused
        defines: dict[str, Bound] = {}
        for d in node.args.get("define") or []:
            name = d.alias_or_name
            var = _var(name, names)
            if var is None:
                self._expr(d.this, scope, known, name)
                continue
            if var in defines:
                raise self.error(BindError, f"DEFINE defines {var!r} twice", d)
            bound = self._expr(d.this, scope, names, var)
            if bound.expr.dtype not in (T.BOOLEAN, T.NULL):
                raise self.error(BindError, f"the condition of {var!r} is "
                                 f"{T.type_name(bound.expr.dtype)}, not BOOLEAN", d)
            defines[var] = Bound(coerce(bound.expr, T.BOOLEAN), bound.navigations)
        measures: list[tuple[str, Bound]] = []
        for m in node.args.get("measures") or []:
            frame = m.args.get("window_frame")
            if frame == "RUNNING":
                raise self.error(NotSupportedError, "RUNNING measures are not supported (only "
                                 "FINAL, as in Flink)", m)
            item = m.this
            if not isinstance(item, exp.Alias):
                raise self.error(BindError, "a MEASURES expression needs a name (expr AS "
                                 "name)", m)
            measures.append((item.alias, self._expr(item.this, scope, known, None)))
        skip, skip_var = self._skip(node, names)
        within = None
        w = node.meta.get("within")
        if w is not None:
            if not isinstance(w, exp.Interval):
                raise self.error(BindError, "WITHIN takes an INTERVAL", w)
            within = interval_ms(w, self.exprs)
            if within <= 0:
                raise self.error(BindError, "WITHIN needs a positive interval", w)
        spec = MatchSpec(partition, time_index, pattern, tuple(defines.items()),
                         tuple(measures), skip, skip_var, within, then_by)
        plan = MatchRecognize(rel.plan, spec)
        alias = node.alias or None
        return Relation(plan, scope_of(plan, alias))

    # -- clauses ---------------------------------------------------------------------------
    def _partition(self, node: exp.MatchRecognize, scope: Scope) -> tuple[int, ...]:
        out = []
        for p in node.args.get("partition_by") or []:
            e = self.exprs.bind(p, scope)
            if not isinstance(e, ColumnRef):
                raise self.error(NotSupportedError, "MATCH_RECOGNIZE partitions by columns "
                                 "only", p)
            out.append(e.index)
        return tuple(out)

    def _order(self, node: exp.MatchRecognize, scope: Scope
               ) -> tuple[int, tuple[tuple[int, bool, bool], ...]]:
        """ORDER BY: the rowtime column, then the columns ordering rows of one time."""
        order = node.args.get("order")
        if order is None or not order.expressions:
            raise self.error(BindError, "MATCH_RECOGNIZE needs ORDER BY a time attribute",
                             node)
        first = order.expressions[0]
        e = self.exprs.bind(first.this, scope)
        col = scope.columns[e.index] if isinstance(e, ColumnRef) else None
        if col is not None and col.proctime:
            raise self.error(NotSupportedError, "MATCH_RECOGNIZE ordered by a processing-"
                             "time attribute is not supported yet", first)
        if col is None or not col.rowtime or first.args.get("desc"):
            raise self.error(BindError, "MATCH_RECOGNIZE must be ordered first by a rowtime "
                             "attribute (a column with a WATERMARK), ascending", first)
        then_by = []
        for key in order.expressions[1:]:
            k = self.exprs.bind(key.this, scope)
            if not isinstance(k, ColumnRef):
                raise self.error(NotSupportedError, "MATCH_RECOGNIZE orders the rows of one "
                                 "time by columns only", key)
            # (the dialect sets Flink's default NULLs order: first ascending, last descending)
            then_by.append((k.index, bool(key.args.get("desc")),
                            bool(key.args.get("nulls_first"))))
        return e.index, tuple(then_by)

    def _skip(self, node: exp.MatchRecognize, names: set[str]) -> tuple[str, str | None]:
        after = node.args.get("after")
        text = after.name.upper() if after is not None else "AFTER MATCH SKIP TO NEXT ROW"
        if text.endswith("PAST LAST ROW"):
            return "past_last_row", None
        if text.endswith("TO NEXT ROW"):
            return "next_row", None
        m = re.search(r"TO (FIRST|LAST) (\S+)$", after.name if after is not None else "")
        assert m is not None
        var = _var(m.group(2), names)
        if var is None:
            raise self.error(BindError, f"AFTER MATCH SKIP TO {m.group(1)} names "
                             f"{m.group(2)!r}, which the PATTERN does not use", node)
        return m.group(1).lower(), var

    def _pattern(self, node: exp.MatchRecognize) -> tuple[PatternVar, ...]:
        text = self._ungrouped(node.args["pattern"].name, node.meta.get("pattern_at"))
        base = node.meta.get("pattern_at")
        out: list[PatternVar] = []
        pos = 0
        token = re.compile(r"\s*(?:(?P<name>[A-Za-z_][A-Za-z0-9_$]*|`[^`]+`)"
                           r"(?P<q>\*|\+|\?|\{\s*\d*\s*(?:,\s*\d*\s*)?\})?(?P<r>\?)?)")
        while pos < len(text.rstrip()):
            m = token.match(text, pos)
            if m is None or not m.group("name"):
                ch = text[pos:].strip()[:1]
                what = {"(": "pattern groups", "|": "alternations", "^": "anchors",
                        "$": "anchors", "{": "exclusions"}.get(ch, f"{ch!r}")
                raise self._at(base, pos + len(text[pos:]) - len(text[pos:].lstrip()),
                               f"{what} in a PATTERN are not supported (as in Flink)")
            name = m.group("name").strip("`")
            if name.upper() == "PERMUTE":
                raise self._at(base, m.start("name"), "PERMUTE is not supported (as in Flink)")
            low, high = _quantifier(m.group("q"))
            if high != UNBOUNDED and (high < low or high == 0):
                raise self._at(base, m.start("q"), f"bad quantifier {m.group('q')!r}")
            reluctant = m.group("r") is not None
            if reluctant and (low, high) == (0, 1):
                raise self._at(base, m.start("r"), "the reluctant optional quantifier (??) is "
                               "not supported (as in Flink)")
            if reluctant and m.group("q") is None:
                raise self._at(base, m.start("r"), "'?' after a variable without a quantifier")
            if any(v.name.upper() == name.upper() for v in out):
                raise self._at(base, m.start("name"), f"pattern variable {name!r} appears "
                               "twice (not supported yet)")
            out.append(PatternVar(name, low, high, greedy=not reluctant))
            pos = m.end()
        if not out:
            raise self.error(ParseError, "an empty PATTERN", node)
        if all(v.low == 0 for v in out):
            raise self._at(base, 0, "a PATTERN that can match no rows at all is not supported "
                           "(as in Flink)")
        for before, after in itertools.pairwise(out):
            if after.low == 0 and before.greedy and before.low != before.high and \
                    (before.low, before.high) != (0, 1):  # (B? is a plain optional)
                raise self._at(base, text.find(after.name), f"the optional variable "
                               f"{after.name!r} cannot follow the greedy variable "
                               f"{before.name!r} (Flink: optional pattern cannot be preceded "
                               "by greedy pattern)")
        last = out[-1]
        # (a trailing B? runs, as in Flink 2.3, which never takes its row: the match
        # completes without it; see the operator's empty tail)
        if last.greedy and last.low != last.high and (last.low, last.high) != (0, 1):
            raise self._at(base, text.rstrip().rfind(last.name), "a greedy quantifier on the "
                           "last variable of a PATTERN is not supported (as in Flink; add a "
                           "variable after it, or make it reluctant)")
        return tuple(out)

    def _ungrouped(self, text: str, base: object) -> str:
        """The PATTERN with its unquantified parentheses blanked out: ``((A B) C)`` is
        ``A B C``, as Flink reads it. A quantified group, ``(A B)+``, stays (refused)."""
        chars = list(text)
        opened: list[int] = []
        for i, ch in enumerate(text):
            if ch == "(":
                opened.append(i)
            elif ch == ")" and opened:
                start = opened.pop()
                if re.match(r"\s*[*+?{]", text[i + 1:]) is None:
                    chars[start] = chars[i] = " "
            elif ch == ")":
                raise self._at(base, i, "an unbalanced ')' in the PATTERN")
        return "".join(chars)

    def _at(self, base: object, offset: int, msg: str) -> ParseError:
        script = self.binder.script
        start = self.binder.query_text.offset + (base if isinstance(base, int) else 0) + offset
        return ParseError(msg, span=Span.from_offset(script, start, start + 1), sql=script)

    # -- DEFINE / MEASURES expressions -----------------------------------------------------
    def _expr(self, node: exp.Expression, scope: Scope, names: set[str],
              var: str | None) -> Bound:
        """``node`` with every navigation replaced by a placeholder column, bound over the
        input's columns and then the placeholders. ``var``: the variable being defined (None
        in MEASURES, where a plain column is the match's last row)."""
        navs: list[Navigation] = []
        extra: list[ScopeColumn] = []

        def place(nav: Navigation) -> exp.Expression:
            navs.append(nav)
            name = f"$mr{len(navs) - 1}"
            extra.append(ScopeColumn(None, name, nav.type))
            return exp.column(name)

        def rewrite(n: exp.Expression) -> exp.Expression:
            if isinstance(n, exp.Anonymous):
                fname = n.name.upper()
                if fname in _REFUSED_FUNCS:
                    raise self.error(NotSupportedError, _REFUSED_FUNCS[fname], n)
                if fname == "MATCH_ROWTIME":
                    if var is not None:
                        raise self.error(NotSupportedError, "MATCH_ROWTIME() belongs to "
                                         "MEASURES", n)
                    return place(Navigation("rowtime", None, 0, None, None,
                                            pa.timestamp("ms")))
                if fname in ("TIMESTAMPADD", "TIMESTAMPDIFF") and n.expressions:
                    # (the unit keyword is no column: TIMESTAMPDIFF(SECOND, A.ts, B.ts))
                    unit, *rest = n.expressions
                    n.set("expressions", [unit, *(rewrite(a) for a in rest)])
                    return n
            if isinstance(n, exp.First | exp.Last):
                kind = "first" if isinstance(n, exp.First) else "last"
                offset = self._offset(n.args.get("expression"))
                v, inner = self._inner(n.this, scope, names)
                return place(Navigation(kind, v, offset, None, inner, inner.dtype))
            agg = next((f for cls, f in _AGGS.items() if type(n) is cls), None)
            if agg is not None:
                arg = n.this
                if isinstance(arg, exp.Distinct):
                    raise self.error(NotSupportedError, "DISTINCT aggregates are not "
                                     "supported in MATCH_RECOGNIZE (as in Flink)", n)
                if agg == "count" and (arg is None or isinstance(arg, exp.Star)):
                    return place(Navigation("agg", None, 0, "count", None, T.BIGINT))
                v, inner = self._inner(arg, scope, names)
                t = inner.dtype
                if agg in ("sum", "avg"):
                    if not T.is_numeric(t):
                        raise self.error(BindError, f"{agg.upper()} needs a numeric "
                                         f"argument, got {T.type_name(t)}", n)
                    t = T.sum_type(t) if agg == "sum" else T.avg_type(t)
                elif agg == "count":
                    t = T.BIGINT
                return place(Navigation("agg", v, 0, agg, inner, t))
            if isinstance(n, exp.Column) and n.table:
                v = _var(n.table, names)
                if v is None:
                    return n  # (a table qualifier: bound as usual)
                inner = self.exprs.bind(exp.column(n.name), scope)
                return place(Navigation("last", v, 0, None, inner, inner.dtype))
            if isinstance(n, exp.Column) and var is None:
                inner = self.exprs.bind(n, scope)
                return place(Navigation("last", None, 0, None, inner, inner.dtype))
            return _map(n, rewrite)

        rewritten = rewrite(node.copy())
        full = Scope((*scope.columns, *extra))
        return Bound(self.exprs.bind(rewritten, full), tuple(navs))

    def _offset(self, node: exp.Expression | None) -> int:
        if node is None:
            return 0
        if isinstance(node, exp.Literal) and not node.is_string and node.this.isdigit():
            return int(node.this)
        raise self.error(BindError, "the offset of FIRST / LAST must be a non-negative "
                         "integer literal", node)

    def _inner(self, node: exp.Expression, scope: Scope, names: set[str]
               ) -> tuple[str | None, Expr]:
        """The variable a navigation's argument reads (one at most, as Flink requires) and
        the argument bound over one input row."""
        found: set[str] = set()
        stripped = node.copy()
        for col in stripped.find_all(exp.Column):
            v = _var(col.table, names) if col.table else None
            if v is not None:
                found.add(v)
                col.set("table", None)
        if len(found) > 1:
            raise self.error(BindError, "a navigation or aggregate reads one pattern variable "
                             f"only, not {', '.join(sorted(found))}", node)
        for bad in stripped.find_all(exp.AggFunc):
            raise self.error(NotSupportedError, "nested aggregates or navigations are not "
                             "supported", bad)
        return (next(iter(found)) if found else None), self.exprs.bind(stripped, scope)


def _map(n: exp.Expression, fn) -> exp.Expression:  # type: ignore[no-untyped-def]
    """``n`` with ``fn`` applied to each direct child expression (a copy-free rebuild)."""
    for key, value in list(n.args.items()):
        if isinstance(value, exp.Expression):
            n.set(key, fn(value))
        elif isinstance(value, list):
            n.set(key, [fn(v) if isinstance(v, exp.Expression) else v for v in value])
    return n


def _var(name: str | None, names: set[str]) -> str | None:
    if not name:
        return None
    for v in names:
        if v.upper() == name.upper():
            return v
    return None


def _quantifier(q: str | None) -> tuple[int, int]:
    if q is None:
        return 1, 1
    if q == "*":
        return 0, UNBOUNDED
    if q == "+":
        return 1, UNBOUNDED
    if q == "?":
        return 0, 1
    inner = q.strip("{} ").replace(" ", "")
    if "," not in inner:
        n = int(inner)
        return n, n
    lo, hi = inner.split(",")
    return int(lo or 0), int(hi) if hi else UNBOUNDED
