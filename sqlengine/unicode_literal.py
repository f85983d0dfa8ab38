"""``U&'...' [UESCAPE 'c']`` string literals, as Calcite reads them."""

from __future__ import annotations

import re

from sqlglot import exp

from sqlengine.errors import BindError


def unicode_text(node: exp.UnicodeString) -> str:
    """The text of ``U&'...' [UESCAPE 'c']`` (Calcite's): ``\\XXXX`` is a code point in hex,
    ``\\\\`` a backslash (with the escape character given, that one)."""
    escape_node = node.args.get("escape")
    esc = "\\" if not isinstance(escape_node, exp.Literal) else str(escape_node.this)
    if len(esc) != 1 or esc in "+'\"" or esc.isspace() or esc in "0123456789abcdefABCDEF":
        raise BindError(f"UESCAPE {esc!r}: the escape must be one character other than a hex "
                        "digit, '+', a quote or white space")
    text = str(node.this)
    out, i = [], 0
    while i < len(text):
        c = text[i]
        if c != esc:
            out.append(c)
            i += 1
            continue
        if text[i + 1:i + 2] == esc:
            out.append(esc)
            i += 2
            continue
        # (the next 4 characters as Java's Integer.parseInt(s, 16) reads them, as Calcite
        # does: a '+' sign counts among them, '\+0041x' is U+0004 then '1x')
        digits = text[i + 1:i + 5]
        if not re.fullmatch(r"\+?[0-9a-fA-F]+", digits) or len(digits) != 4:
            raise BindError(f"U&'{text}': the escape at position {i + 1} is not followed by "
                            "4 hex digits or the escape again")
        out.append(chr(int(digits, 16)))
        i += 5
    return "".join(out)
