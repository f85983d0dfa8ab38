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
    # "member" | "members" (.*) | "index" | "all" ([*]) | "deep" (..name) | "length"
    kind: str
    names: tuple[str, ...] = ()
    indexes: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Path:
    strict: bool
    steps: tuple[Step, ...]


_TOKEN = re.compile(r"""\s*(?:
    \.\.(?P<deep>[^.\[\]\s*]+)
  | \.\s*(?P<star>\*)
  | \.\s*(?P<name>[^.\[\]\s*]+)
  | \.?\s*\[\s*(?P<brackets>[^\]]*)\]
)""", re.VERBOSE)


@functools.lru_cache(maxsize=256)
def parse_path(text: str) -> Path:
    """The parsed path (an ExecutionError naming it when it is not one)."""
    if text[:1].isspace():  # (Calcite: '<lax|strict> $...' or '$...', nothing before)
        raise ExecutionError(f"invalid JSON path {text!r}: it starts with white space")
    s = text.strip()
    strict = True
    m = re.match(r"(?i)(lax|strict)\s+", s)
    if m:
        strict = m.group(1).lower() == "strict"
        s = s[m.end():]
    if not s.startswith("$"):
        if not s or s[0] in ".[":
            raise ExecutionError(f"invalid JSON path {text!r}: it must start with '$'")
        s = "$." + s  # (Jayway: a path without '$' is a member of the document)
    pos, steps = 1, []
    while pos < len(s):
        if s[pos:].strip() == "":
            break
        t = _TOKEN.match(s, pos)
        if t is None:
            raise ExecutionError(f"invalid JSON path {text!r} at position {pos + 1}")
        pos = t.end()
        if t.group("deep") is not None:
            steps.append(Step("deep", (t.group("deep"),)))
        elif t.group("star"):
            steps.append(Step("members"))
        elif t.group("name") is not None:
            name = t.group("name")
            if "(" in name or ")" in name:
                if name not in ("size()", "length()") or s[pos:].strip():
                    raise ExecutionError(f"invalid JSON path {text!r}: the function {name!r} "
                                         "is not supported (only a last .size() / .length())")
                steps.append(Step("length"))
                continue
            # (as written: Jayway takes '."a"' for a member named with its quotes)
            steps.append(Step("member", (name,)))
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
    """Whether the path may select several items ('.*', '[*]', '..name', '[0, 1]',
    "['a', 'b']"): Jayway, which Flink's JSON functions use, gives such a path's items as one
    JSON array."""
    return any(_several(step) for step in path.steps)


def _several(step: Step) -> bool:
    return step.kind in ("members", "all", "deep") or len(step.names) > 1 or \
        len(step.indexes) > 1


def evaluate(path: Path, doc: object) -> list[object]:
    """The items ``path`` selects in the parsed document. Past a step that may select several
    items, an item a later step finds nothing in is left out, in strict mode too (Jayway:
    ``$.b[*].c`` over [{"c": 1}, {"d": 2}] is [1])."""
    items = [doc]
    several = False
    for step in path.steps:
        out: list[object] = []
        for item in items:
            if several and path.strict:
                try:
                    out.extend(_step(step, item, True))
                except PathError:
                    continue
            else:
                out.extend(_step(step, item, path.strict))
        items = out
        several = several or _several(step)
    return items


def _step(step: Step, item: object, strict: bool) -> list[object]:
    if step.kind == "deep":  # (every member of that name, at any depth, parents first)
        return _descendants(step.names[0], item)
    if step.kind == "length":  # (Jayway's length(): of an array or an object)
        if isinstance(item, list | dict):
            return [len(item)]
        if strict:
            raise PathError("length() of a value that is neither an array nor an object")
        return []
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
    if step.kind == "all" and strict and not isinstance(item, list):
        # (Jayway's wildcard: an object's member values, nothing of a scalar)
        return list(item.values()) if isinstance(item, dict) else []
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


def _descendants(name: str, item: object) -> list[object]:
    out: list[object] = []
    stack = [item]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if name in node:
                out.append(node[name])
            stack.extend(reversed(list(node.values())))
        elif isinstance(node, list):
            stack.extend(reversed(node))
    return out
