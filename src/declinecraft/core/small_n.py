"""The small-n rule: whether a number from n questions may be stated as a finding.

One rule for the claims check, the prose, the tables and the views: a number resting on fewer
than ``min_n`` questions (items, models, configurations) is printed with its n and "not
interpretable at this n", never as a finding. :func:`is_finding` is the rule; the threshold is
``analysis.min_n`` of the run's params, and by default (0) the claims check's own minimum: the
smallest n at which an exact two-sided sign-type test can reach p < alpha
(:func:`min_n_sign`, 6 at alpha = 0.05), or a test's own minimum where it has one
(:func:`min_n_rank` for a rank correlation).
"""

from __future__ import annotations

import math
import re

#: What a number below the threshold says after its n.
CAVEAT = "not interpretable at this n"


def min_n_sign(alpha: float) -> int:
    """Smallest n at which an exact two-sided sign-type test (McNemar on paired questions,
    Wilcoxon signed-rank, a sign test) can reach p < alpha: all n in one direction give 2 / 2**n."""
    n = 1
    while 2.0 / 2.0**n >= alpha:
        n += 1
    return n


def min_n_rank(alpha: float) -> int:
    """Smallest n at which a rank correlation can be significant: a perfect ranking has exact
    two-sided permutation p = 2 / n!, which must fall below alpha."""
    n = 2
    while 2.0 / math.factorial(n) >= alpha:
        n += 1
    return n


def threshold(min_n: int, alpha: float, *, floor: int | None = None) -> int:
    """The n a number needs: ``min_n`` (``analysis.min_n``) when set, else ``floor`` (a test's own
    minimum), else the claims check's sign-test minimum at ``alpha``. A set ``min_n`` below a
    test's own minimum does not lower it.

    Raises:
        ValueError: a negative ``min_n``.
    """
    if min_n < 0:
        raise ValueError(f"analysis.min_n must be 0 (the claims check's minimum) or positive, got {min_n}")
    base = min_n_sign(alpha) if floor is None else floor
    return max(min_n, floor or 0) if min_n else base


def is_finding(n: int | float | None, min_n: int) -> bool:
    """Whether a number from ``n`` questions may be stated as a finding: n is known and at least
    ``min_n`` (see :func:`threshold`)."""
    if n is None or (isinstance(n, float) and math.isnan(n)):
        return False
    return n >= min_n


def plural(word: str) -> str:
    """The plural of a unit's noun ("model" -> "models", "family" -> "families")."""
    if word.endswith("y") and word[-2:-1] not in "aeiou":
        return word[:-1] + "ies"
    return word if word.endswith("s") else word + "s"


def counted(n: int, unit: str) -> str:
    """``n`` with its unit, the unit's first word singular when n is 1 ("1 model", "5 models",
    "1 family", "2 families"); ``unit`` is given in the plural, its noun first."""
    if n == 1:
        head, _, rest = unit.partition(" ")
        head = head[:-3] + "y" if head.endswith("ies") else head.removesuffix("s")
        unit = f"{head} {rest}".strip()
    return f"{n} {unit}"


def caveat(n: int | float | None, unit: str = "questions") -> str:
    """ "n = 4 questions, not interpretable at this n" (n unknown: "n unknown, ...")."""
    if n is None or (isinstance(n, float) and math.isnan(n)):
        return f"n unknown, {CAVEAT}"
    return f"n = {counted(int(n), unit)}, {CAVEAT}"


def stated(text: str, n: int | float | None, min_n: int, unit: str = "questions") -> str:
    """``text`` as it may be printed: unchanged when :func:`is_finding`, else followed by its n and
    the caveat in parentheses ("0.25 (n = 6 questions, not interpretable at this n)")."""
    return text if is_finding(n, min_n) else f"{text} ({caveat(n, unit)})"


#: Words that state a difference as a finding ("higher", "most", "raises"); the rule of
#: :func:`comparative_reason` decides when one may be printed.
COMPARATIVES = (
    "higher",
    "lower",
    "more",
    "less",
    "most",
    "least",
    "larger",
    "smaller",
    "better",
    "worse",
    "raises",
    "lowers",
)
_COMPARATIVE = re.compile(r"\b(" + "|".join(COMPARATIVES) + r")\b", re.IGNORECASE)


def comparative_reason(n: int | float | None, min_n: int, p: float | None, alpha: float) -> str:
    """Why a difference from ``n`` items with test p value ``p`` may not be stated with a
    comparative word, or '' when it may: n at least ``min_n`` (:func:`is_finding`) and a test with
    p < ``alpha``. A difference without a test (``p`` None) gets no comparative word either."""
    if not is_finding(n, min_n):
        return f"n = {'unknown' if n is None else int(n)} is below the small-n rule's {min_n}"
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return "no test of the difference"
    if p >= alpha:
        return f"p = {p:.2f} is not below alpha = {alpha:g}"
    return ""


def comparative_words(sentence: str) -> list[str]:
    """The comparative words of ``sentence`` (:data:`COMPARATIVES`), in order."""
    return [m.group(1).lower() for m in _COMPARATIVE.finditer(sentence)]
