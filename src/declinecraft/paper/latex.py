"""Plain text into LaTeX: the one escaper of every generated table, macro and skip reason.

Every character LaTeX treats specially in running text (``\\ { } $ & # ^ _ ~ %``) becomes a
command or an escaped character that prints as itself, in a single pass so that the braces an
escape inserts (``\\textbackslash{}``) are never escaped again. Model names may carry role marks
as a trailing ``^{GVR}``; :func:`escape_marked` prints those as a superscript.
"""

from __future__ import annotations

import re
from typing import Any

#: What each special character of running text becomes.
SPECIAL = {
    "\\": "\\textbackslash{}",
    "{": "\\{",
    "}": "\\}",
    "$": "\\$",
    "&": "\\&",
    "#": "\\#",
    "^": "\\textasciicircum{}",
    "_": "\\_",
    "~": "\\textasciitilde{}",
    "%": "\\%",
}
_PATTERN = re.compile("[" + re.escape("".join(SPECIAL)) + "]")


def escape(text: Any) -> str:
    """``text`` (anything, ``None`` as empty) as LaTeX that prints it literally."""
    return _PATTERN.sub(lambda m: SPECIAL[m[0]], "" if text is None else str(text))


#: Symbols the analysis names in plain text (``C_pre``) and the paper sets as math.
SYMBOLS = {
    "C\\_pre": "$C_{\\mathrm{pre}}$",
    "C\\_post": "$C_{\\mathrm{post}}$",
    "R\\_lambda": "$R_\\lambda$",
    "R\\_λ": "$R_\\lambda$",
}


def escape_symbols(text: Any) -> str:
    """Like :func:`escape`, with the symbols of :data:`SYMBOLS` (``C_pre``, ``R_lambda``) set as
    math subscripts instead of printing their underscore."""
    out = escape(text)
    for plain, math in SYMBOLS.items():
        out = out.replace(plain, math)
    return out


def escape_marked(text: Any) -> str:
    """Like :func:`escape`, but a trailing ``^{marks}`` becomes a math superscript (role marks of
    Table 2: ``Qwen3 4B^{GR}`` prints as Qwen3 4B with superscript GR)."""
    s = "" if text is None else str(text)
    if s.endswith("}") and "^{" in s:
        s, marks = s.rsplit("^{", 1)
        return escape(s) + "$^{\\mathrm{" + escape(marks[:-1]) + "}}$"
    return escape(s)
