"""SQL/JSON path expressions as Flink (Calcite, over Jayway JsonPath) evaluates them: an
optional mode ('lax' or 'strict', strict by default), '$', then member steps ('.name', '.*',
"['name']", '["name"]') and element steps ('[0]', '[0, 2]', '[*]').

Lax mode unwraps arrays for member steps and makes missing members empty; strict mode raises
``PathError`` for what is not there (the SQL/JSON functions turn that into their ON ERROR
behaviour).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from sqlengine.errors import ExecutionError


class PathError(Exception):
    """A structural error while following a path in strict mode (or a bad document)."""


@dataclass(frozen=True, slots=True)
class Step:
    kind: str  # "member" | "members" (.*) | "index" | "all" ([*])
    names: tuple[str, ...] = ()
    indexes: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Path:
    strict: bool
    steps: tuple[Step, ...]


_TOKEN = re.compile(r"""\s*(?:
    \.\s*(?P<star>\*)
  | \.\s*(?P<name>[A-Za-z_$][\w$]*)
  | \.\s*"(?P<quoted>(?:[^"\\]|\\.)*)"
  | \.?\s*\[\s*(?P<brackets>[^\]]*)\]
)""", re.VERBOSE)


@functools.lru_cache(maxsize=256)
def parse_path(text: str) -> Path:
    """The parsed path (an ExecutionError naming it when it is not one)."""
    s = text.strip()
    strict = True
    m = re.match(r"(?i)(lax|strict)\s+", s)
    if m:
        strict = m.group(1).lower() == "strict"
        s = s[m.end():]
    if not s.startswith("$"):
        raise ExecutionError(f"invalid JSON path {text!r}: it must start with '$'")
    pos, steps = 1, []
    while pos < len(s):
        if s[pos:].strip() == "":
            break
        t = _TOKEN.match(s, pos)
        if t is None:
            raise ExecutionError(f"invalid JSON path {text!r} at position {pos + 1}")
        pos = t.end()
        if t.group("star"):
            steps.append(Step("members"))
        elif t.group("name") is not None:
            steps.append(Step("member", (t.group("name"),)))
        elif t.group("quoted") is not None:
            steps.append(Step("member", (t.group("quoted").replace('\\"', '"'),)))
        else:
            steps.append(_bracket(t.group("brackets"), text))
    return Path(strict, tuple(steps))


def _bracket(inner: str, text: str) -> Step:
    inner = inner.strip()
    if inner == "*":
        return Step("all")
    parts = [p.strip() for p in inner.split(",")]
    if all(re.fullmatch(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"", p) for p in parts):
        return Step("member", tuple(p[1:-1] for p in parts))
    if all(re.fullmatch(r"-?\d+", p) for p in parts):
        return Step("index", indexes=tuple(int(p) for p in parts))
    raise ExecutionError(f"invalid JSON path {text!r}: [{inner}]")


def path_is_indefinite(path: Path) -> bool:
    """Whether the path may select several items ('.*', '[*]', '[0, 1]', "['a', 'b']"):
    Jayway, which Flink's JSON functions use, gives such a path's items as one JSON array."""
    return any(step.kind in ("members", "all") or len(step.names) > 1 or
               len(step.indexes) > 1 for step in path.steps)


def evaluate(path: Path, doc: object) -> list[object]:
    """The items ``path`` selects in the parsed document."""
    items = [doc]
    for step in path.steps:
        out: list[object] = []
        for item in items:
            out.extend(_step(step, item, path.strict))
        items = out
    return items


def _step(step: Step, item: object, strict: bool) -> list[object]:
    if step.kind in ("member", "members"):
        if isinstance(item, list) and not strict:
            return [v for x in item for v in _step(step, x, strict)]
        if not isinstance(item, dict):
            if strict:
                raise PathError("a member of a value that is not an object")
            return []
        if step.kind == "members":
            return list(item.values())
        out = []
        for name in step.names:
            if name in item:
                out.append(item[name])
            elif strict:
                raise PathError(f"no member {name!r}")
        return out
    if not isinstance(item, list):
        if strict:
            raise PathError("an element of a value that is not an array")
        item = [item]  # (lax: a value is an array of itself)
    if step.kind == "all":
        return list(item)
    out = []
    for i in step.indexes:
        if -len(item) <= i < len(item):
            out.append(item[i])
        elif strict:
            raise PathError(f"no element {i}")
    return out
