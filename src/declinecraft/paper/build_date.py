"""The date every figure and the PDF carry, taken from the run's inputs so a replay is byte-identical.

Reproducible-build practice (https://reproducible-builds.org/specs/source-date-epoch/): a build
stamps its files with a date its inputs fix, never the clock. Ours is ``SOURCE_DATE_EPOCH`` when
the environment sets it (the standard override, for a packager who wants one date across builds),
else midnight UTC of the run's corpus snapshot day (``corpus.snapshot``: the newest day the run's
data can hold), else of its cut-off day (``corpus.cutoff``) when the snapshot is left to the newest
revision. Matplotlib writes it as each figure PDF's ``CreationDate``; pdfTeX as the paper's
``CreationDate``/``ModDate`` and ``\\today`` (``SOURCE_DATE_EPOCH`` with ``FORCE_SOURCE_DATE=1``),
with no trailer ``/ID`` (it would hash the build folder's random name).
"""

from __future__ import annotations

import datetime as dt
import os

from declinecraft.core.params import CorpusParams

ENV = "SOURCE_DATE_EPOCH"
"""The environment variable that overrides the run's date (seconds since 1970-01-01 UTC)."""


def build_date(corpus: CorpusParams) -> dt.datetime:
    """The build date of a run whose corpus block is ``corpus`` (UTC, see the module docstring).

    Raises:
        ValueError: ``SOURCE_DATE_EPOCH`` is set but not a non-negative integer, or the config's
            day is not ``YYYY-MM-DD``.
    """
    raw = os.environ.get(ENV, "").strip()
    if raw:
        if not raw.isdigit():
            raise ValueError(f"{ENV}={raw!r} is not a whole number of seconds since 1970-01-01 UTC")
        return dt.datetime.fromtimestamp(int(raw), tz=dt.UTC)
    field, day = ("corpus.snapshot", corpus.snapshot) if corpus.snapshot else ("corpus.cutoff", corpus.cutoff)
    try:
        return dt.datetime.combine(dt.date.fromisoformat(day), dt.time(), tzinfo=dt.UTC)
    except ValueError as exc:
        raise ValueError(f"{field}={day!r} is not a day (YYYY-MM-DD), so the paper has no build date") from exc


def epoch(when: dt.datetime) -> int:
    """``when`` as whole seconds since 1970-01-01 UTC (what ``SOURCE_DATE_EPOCH`` holds)."""
    return int(when.timestamp())
