"""Fixtures of the analysis tests: every table of a synthetic run, computed once per session."""

from __future__ import annotations

import polars as pl
import pytest

from declinecraft.analysis import analyze
from tests.support import synthetic


@pytest.fixture(scope="session")
def synth() -> dict[str, pl.DataFrame]:
    """Every table of a 15-configuration synthetic run with ablations."""
    judged = synthetic.synthetic_judged(15, 150, seed=1, ablations=True)
    facts = synthetic.synthetic_models(15, seed=1)
    return analyze.analyze(judged, facts, analyze.Design(n_resamples=200))
