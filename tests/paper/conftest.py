"""Fixtures of the paper tests: the analysis tables of two synthetic runs (once per session, one read
back from CSV) and of one at the paper's size (27 models, 40 configurations), a hand-built main
grid with known values, and no figure left open after a test."""

from __future__ import annotations

from collections.abc import Iterator

import matplotlib.pyplot as plt
import polars as pl
import pytest

from declinecraft.analysis import analyze
from declinecraft.analysis.results import read_tables, write_csv
from tests.support import figure_values, paper_size, synthetic


@pytest.fixture(scope="session")
def tables(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pl.DataFrame]:
    """Analysis tables of a synthetic run with ablations, written and read back as CSV."""
    judged = synthetic.synthetic_judged(12, 120, seed=2, ablations=True)
    facts = synthetic.synthetic_models(12, seed=2)
    out = analyze.analyze(judged, facts, analyze.Design(n_resamples=50))
    out["facts"] = facts
    folder = tmp_path_factory.mktemp("tables")
    for name, table in out.items():
        write_csv(table, folder / f"{name}.csv")
    return read_tables(folder)


@pytest.fixture(autouse=True)
def _close() -> Iterator[None]:
    yield
    plt.close("all")


@pytest.fixture()
def g() -> pl.DataFrame:
    """The hand-built main grid of :func:`tests.support.figure_values.known_grid`."""
    return figure_values.known_grid()


@pytest.fixture(scope="session")
def results() -> dict[str, pl.DataFrame]:
    """Analysis tables of a small synthetic run (with ablations)."""
    judged = synthetic.synthetic_judged(9, 80, seed=4, ablations=True)
    facts = synthetic.synthetic_models(9, seed=4)
    out = analyze.analyze(judged, facts, analyze.Design(n_resamples=50))
    out["facts"] = analyze.with_derived_facts(facts)
    return out


@pytest.fixture(scope="session")
def paper_sized() -> dict[str, pl.DataFrame]:
    """Analysis tables of a synthetic run at the paper's size: its 27 models by their display names
    and families, in 40 configurations (:mod:`tests.support.paper_size`)."""
    return paper_size.paper_size_results()
