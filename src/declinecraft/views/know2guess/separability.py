"""The shallow separability audit (K2G §3.5) on our questions: can wording alone tell the halves apart?

The probe is the benchmark's own style probe (App. F, :func:`construction.audit.style_probe`:
TF-IDF words, L2 logistic regression, stratified k-fold), run on every benchmark question with
unanswerable as the positive class, as K2G's Zone D. K2G fits once on a development split and
scores a frozen test split; our benchmark has no such split, so "held out" means the folds, and
AUROC / AUPRC are fold means. The chance level of AUPRC is the unanswerable share, reported
beside it. The top features are the probe's coefficients refit on every question.
"""

from __future__ import annotations

import polars as pl

from declinecraft.construction import audit

#: The texts probed: App. F's question sentence, and what the model under test reads.
TEXTS: dict[str, str] = {
    "asked_question": "the question sentence alone (App. F's style AUC text)",
    "question": "scenario and question: the text the model under test reads",
}

SUMMARY_SCHEMA = {
    "text": pl.String, "auroc": pl.Float64, "auprc": pl.Float64, "auprc_chance": pl.Float64, "folds": pl.Int64,
    "n_answerable": pl.Int64, "n_unanswerable": pl.Int64, "n_features": pl.Int64, "note": pl.String,
}  # fmt: skip
FEATURE_SCHEMA = {"text": pl.String, "half": pl.String, "rank": pl.Int64, "feature": pl.String,
                  "coefficient": pl.Float64}  # fmt: skip


def separability(
    bench: pl.DataFrame, *, folds: int, seed: int, min_df: int, top: int
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """AUROC and AUPRC of the probe per text (:data:`TEXTS`), and its ``top`` words per half.

    ``folds`` and ``min_df`` are the verify stage's (``verify.audit_folds``, ``audit_min_df``) so
    the probe is App. F's; a half too small for two folds gives NaN with a note, never an error.
    """
    rows, features = [], []
    labels = [bool(v) for v in bench["answerable"].to_list()]
    for text in TEXTS:
        probe = audit.style_probe(bench[text].fill_null("").to_list(), labels, folds=folds, seed=seed,
                                  min_df=min_df, top=top)  # fmt: skip
        s = probe.style
        total = s.n_answerable + s.n_unanswerable
        rows.append({"text": text, "auroc": s.auc, "auprc": probe.auprc,
                     "auprc_chance": s.n_unanswerable / total if total else float("nan"), "folds": s.folds,
                     "n_answerable": s.n_answerable, "n_unanswerable": s.n_unanswerable,
                     "n_features": s.n_features, "note": s.note})  # fmt: skip
        ranks = {"unanswerable": 0, "answerable": 0}
        for word, weight in probe.top_features:
            half = "unanswerable" if weight < 0 else "answerable"
            ranks[half] += 1
            features.append({"text": text, "half": half, "rank": ranks[half], "feature": word, "coefficient": weight})
    return pl.DataFrame(rows, schema=SUMMARY_SCHEMA), pl.DataFrame(features, schema=FEATURE_SCHEMA)
