"""Analysis tables at the paper's size: 27 models in 40 configurations, named as the paper names them.

The labels are drawn as in :mod:`tests.support.synthetic`; the models are the paper's
(``params/paper.yaml``'s ``answer.models`` and the three further models of ``params/models.yaml``
that make 27), with their registry display names and families, so the figures and tables meet
the paper's longest labels and its number of legend entries. Few questions and resamples keep it
quick, and the Wilcoxon test over models takes scipy's normal approximation (with ties among 27
models its exact p is a permutation test of seconds per comparison): it tests layout, not
statistics.
"""

from __future__ import annotations

from unittest import mock

import numpy as np
import polars as pl
import scipy.stats as st
from numpy.typing import ArrayLike

from declinecraft.analysis import analyze
from declinecraft.core import config, registry, stats
from tests.support import projects, synthetic

#: Models of ``params/models.yaml`` that complete the paper's 24 named models to 27.
FURTHER_MODELS = ("qwen3.8-27b", "laguna-s-2.1", "deepseek-v4.1-flash")
#: The fine-tuned models of ``params/models.yaml`` (Figure 7), in place of :data:`FURTHER_MODELS`.
FINETUNED_MODELS = ("trust-align-3b", "trust-align-7b", "abstain-r1-3b")
#: Configurations of the paper's main grid: 27 models, 13 of them with thinking switched on too.
CONFIGS = 40


def _approximate_wilcoxon(differences: ArrayLike) -> tuple[float, float]:
    """:func:`stats.wilcoxon_signed_rank` with the normal approximation (same drops, same NaNs)."""
    d = np.asarray(differences, dtype=np.float64).ravel()
    d = d[~np.isnan(d)]
    if not np.any(d != 0):
        return float("nan"), float("nan")
    res = st.wilcoxon(d, method="approx")
    return float(res.statistic), float(res.pvalue)


def paper_models(further: tuple[str, ...] = FURTHER_MODELS) -> list[tuple[str, str, str]]:
    """(id, display name, family) of the 27 models: ``params/paper.yaml``'s and ``further``."""
    cfg = config.load(projects.REPO / "params" / "paper.yaml")
    specs = registry.load_models(projects.REPO / "params" / "models.yaml")
    ids = [*cfg.answer.models, *further]
    return [(m, specs[m].display_name or m, specs[m].family or m) for m in ids]


def paper_size_results(
    n_questions: int = 30, seed: int = 7, further: tuple[str, ...] = FURTHER_MODELS
) -> dict[str, pl.DataFrame]:
    """The analysis tables of a synthetic run of :data:`CONFIGS` configurations of the 27 models
    of :func:`paper_models` (with ablations), as the paper stage reads them."""
    judged = synthetic.synthetic_judged(CONFIGS, n_questions, seed=seed, ablations=True)
    facts = synthetic.synthetic_models(CONFIGS, seed=seed)
    models = paper_models(further)
    if facts.height != len(models):
        raise ValueError(f"{CONFIGS} configurations make {facts.height} models, not the paper's {len(models)}")
    facts = facts.with_columns(
        display_name=pl.Series([name for _, name, _ in models]),
        family=pl.Series([family for _, _, family in models]),
    )
    with mock.patch.object(stats, "wilcoxon_signed_rank", _approximate_wilcoxon):
        out = analyze.analyze(judged, facts, analyze.Design(n_resamples=10))
    out["facts"] = analyze.with_derived_facts(facts)
    return out
