"""Flink's STATE_TTL hint: ``SELECT /*+ STATE_TTL('o' = '3d', 'l' = '1d') */ ...`` gives the
regular joins and the GROUP BY of its query block a state TTL of their own, over
'table.exec.state.ttl' (streaming mode; batch mode keeps no state), as PyFlink 2.3 applies it
(its EXPLAIN's stateTtlHints):

- a join takes the TTL of each input the hint names: a table by its name or alias, a view or
  a subquery by its name; an input that is itself a join has no name (of ``o JOIN l JOIN c``
  the first join takes o's and l's, the second c's only);
- the GROUP BY takes the TTL of its FROM item when that is one named input (over a join it
  takes none: the join does);
- '0 s' keeps that input's state for ever, whatever the option says;
- a name no join or GROUP BY input of the block has is refused with Flink's message; names
  are matched as written (case-sensitive, as Flink's).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlengine.bind_expr import Scope
from sqlengine.errors import BindError, Span
from sqlengine.hints import TableOptions
from sqlengine.options import parse_duration


@dataclass
class TtlBlock:
    """The STATE_TTL hint of the query block being bound (None: it has none)."""

    hint: TableOptions | None
    script: str
    used: set[str] = field(default_factory=set)

    def for_input(self, scope: Scope) -> int | None:
        """The TTL (ms) the hint gives the input whose columns ``scope`` holds, None when it
        names no such input."""
        if self.hint is None:
            return None
        name = input_name(scope)
        values = dict(self.hint.options)
        if name is None or name not in values:
            return None
        self.used.add(name)
        return self._ms(name, values[name])

    def _ms(self, name: str, value: str) -> int:
        key = f"STATE_TTL hint's {name!r}"
        try:
            return parse_duration(value, key)
        except Exception:
            off = dict(self.hint.key_offsets)[name] if self.hint else 0
            raise BindError(f"Invalid STATE_TTL hint value {value!r} for {name!r}: a duration "
                            "such as '1 d', '12h' or '360000s'",
                            span=Span.from_offset(self.script, off, off + len(name) + 2),
                            sql=self.script) from None

    def check(self) -> None:
        """Every name the hint gives is an input of the block's joins or GROUP BY."""
        if self.hint is None:
            return
        for name, off in self.hint.key_offsets:
            if name not in self.used:
                raise BindError("The options of following hints cannot match the name of "
                                f"input tables or views: `{name}` in `STATE_TTL`",
                                span=Span.from_offset(self.script, off, off + len(name) + 2),
                                sql=self.script)


def input_name(scope: Scope) -> str | None:
    """The name of a FROM item (its columns' one qualifier), None for a join of several."""
    names = {c.qualifier for c in scope.columns}
    return names.pop() if len(names) == 1 else None
