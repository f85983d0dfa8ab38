"""Flink's LOOKUP hint: ``SELECT /*+ LOOKUP('table' = 'Customers', ...) */ ...`` gives the
lookup joins of its query block on that table (by its name, not an alias, as Flink's) their
options:

- 'retry-predicate' = 'lookup_miss', 'retry-strategy' = 'fixed_delay', 'fixed-delay' and
  'max-attempts' (all four, as Flink asks): a key the table does not hold is looked up again
  after the delay, up to that many more times, before the join takes it as missing (rows a
  cache holds, missing keys too, are answered at once, as Flink's partial cache does);
- 'async', 'output-mode', 'capacity' and 'timeout' choose and tune an asynchronous lookup.
  The lookups here are synchronous (each batch's distinct keys at once), which is what
  Flink runs for a connector without asynchronous lookups, as its JDBC connector: there the
  options take no effect, and so it is here. Their values are checked.

Any other key, a value that does not read, a hint without 'table', and a hint whose table no
lookup join of the block reads are refused, naming the key.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlengine.errors import BindError, Span
from sqlengine.hints import TableOptions
from sqlengine.options import parse_duration

_RETRY = ("retry-predicate", "retry-strategy", "fixed-delay", "max-attempts")
_ASYNC = ("async", "output-mode", "capacity", "timeout")


@dataclass
class LookupBlock:
    """The LOOKUP hints of the query block being bound."""

    hints: list[TableOptions]
    script: str
    used: set[int] = field(default_factory=set)

    def retry_for(self, table: str) -> tuple[int, int] | None:
        """The (fixed delay ms, max attempts) the first hint naming ``table`` gives its
        lookup join (None: no retry)."""
        for i, hint in enumerate(self.hints):
            options = dict(hint.options)
            if options.get("table") != table:
                continue
            self.used.add(i)
            return self._checked(hint)
        return None

    def check(self) -> None:
        """Every hint is well formed and names a table some lookup join of the block reads."""
        for i, hint in enumerate(self.hints):
            self._checked(hint)
            if i not in self.used:
                table = dict(hint.options)["table"]
                raise self._error(hint, "table", f"LOOKUP hint: no lookup join of this query "
                                  f"block reads table `{table}` (the hint names the table, "
                                  "not its alias)")

    def _checked(self, hint: TableOptions) -> tuple[int, int] | None:
        options = dict(hint.options)
        for key, _ in hint.options:
            if key != "table" and key not in _RETRY and key not in _ASYNC:
                raise self._error(hint, key, f"LOOKUP hint: unknown option {key!r} (known: "
                                  f"'table', {', '.join(map(repr, _ASYNC + _RETRY))})")
        if "table" not in options:
            raise BindError("LOOKUP hint: option 'table' (the lookup table's name) is "
                            "required", span=Span.from_offset(self.script, hint.start,
                                                              hint.end), sql=self.script)
        self._choice(hint, "async", ("true", "false"))
        self._choice(hint, "output-mode", ("ordered", "allow_unordered"))
        self._count(hint, "capacity")
        self._duration(hint, "timeout")
        given = [k for k in _RETRY if k in options]
        if not given:
            return None
        if len(given) < len(_RETRY):
            missing = [k for k in _RETRY if k not in options]
            raise self._error(hint, given[0], "LOOKUP hint: a retry takes all of "
                              f"{', '.join(map(repr, _RETRY))}; {', '.join(map(repr, missing))} "
                              "not given")
        self._choice(hint, "retry-predicate", ("lookup_miss",))
        self._choice(hint, "retry-strategy", ("fixed_delay",))
        return self._duration(hint, "fixed-delay"), self._count(hint, "max-attempts")

    def _choice(self, hint: TableOptions, key: str, values: tuple[str, ...]) -> None:
        value = dict(hint.options).get(key)
        if value is not None and value.lower() not in values:
            raise self._error(hint, key, f"LOOKUP hint: {key!r} must be "
                              f"{' or '.join(map(repr, values))}, got {value!r}")

    def _count(self, hint: TableOptions, key: str) -> int:
        value = dict(hint.options).get(key)
        if value is None:
            return 0
        if not value.strip().isdigit() or int(value) < 1:
            raise self._error(hint, key, f"LOOKUP hint: {key!r} must be a positive integer, "
                              f"got {value!r}")
        return int(value)

    def _duration(self, hint: TableOptions, key: str) -> int:
        value = dict(hint.options).get(key)
        if value is None:
            return 0
        try:
            return parse_duration(value, key)
        except Exception:
            raise self._error(hint, key, f"LOOKUP hint: {key!r} must be a duration such as "
                              f"'10 s' or '500ms', got {value!r}") from None

    def _error(self, hint: TableOptions, key: str, message: str) -> BindError:
        off = dict(hint.key_offsets)[key]
        return BindError(message, span=Span.from_offset(self.script, off, off + len(key) + 2),
                         sql=self.script)
