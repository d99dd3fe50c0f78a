"""Know2Guess's shallow separability audit (its §3.5) on our questions: can wording alone tell the halves apart?

Know2Guess's probe, as its §3.5 defines it: the union of character TF-IDF 3-5-grams and word
TF-IDF 1-2-grams, each with minimum document frequency 2, sublinear term frequency and feature
caps of 50,000 and 30,000; a class-balanced logistic regression fit on the development split and
scored once on the test split, Zone D (here: unanswerable) the positive class. It reports
accuracy, macro-F1, the positive class's recall and the false-positive rate at the 0.5
threshold; AUROC and AUPRC are extras (Know2Guess gives them too).

The integrity audit's length test (K2G §3.4) sits beside it: whitespace-token counts of the
two halves and the two-sample Kolmogorov-Smirnov test between them (:func:`length_test`; K2G
compares Zone D with Zones A-C, we compare the unanswerable half with the answerable one).

Our benchmark has no development/test split. :func:`separability_probe` draws one, stratified by
half and seeded, with Know2Guess's development share (120 of 1,200 items: 10 %) by default; the
probe never sees the test questions before it is scored. Two deviations, declared in the paper's
reproduction notes and docs/views.md: Know2Guess assigns whole template families to development or
test (27 of its 240 Zone D items in development, §3.3), but our questions have no template family
(the generator writes each one for its own scenario), so the split is by question; and it is
drawn under the run's seed (the stage passes ``cfg.seed``), not Know2Guess's 20260820.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

#: Know2Guess's development share: 120 of its 1,200 items.
DEV_SHARE = 0.1
#: Its feature caps: character 3-5-grams, word 1-2-grams.
CHAR_CAP, WORD_CAP = 50_000, 30_000
#: Its minimum document frequency (both vectorizers).
MIN_DF = 2
#: The texts probed: App. F's question sentence, and what the model under test reads.
TEXTS: dict[str, str] = {
    "asked_question": "the question sentence alone (App. F's style AUC text)",
    "question": "scenario and question: the text the model under test reads",
}
METRICS = ("accuracy", "macro_f1", "recall_unanswerable", "false_positive_rate", "auroc", "auprc")
SUMMARY_SCHEMA = {
    "text": pl.String,
    **{m: pl.Float64 for m in METRICS},
    "auprc_chance": pl.Float64,
    "n_dev": pl.Int64,
    "n_test": pl.Int64,
    "n_answerable": pl.Int64,
    "n_unanswerable": pl.Int64,
    "n_test_answerable": pl.Int64,
    "n_test_unanswerable": pl.Int64,
    "n_features": pl.Int64,
    "note": pl.String,
    "tokens_answerable": pl.Float64,
    "tokens_unanswerable": pl.Float64,
    "ks_statistic": pl.Float64,
    "ks_p": pl.Float64,
}
FEATURE_SCHEMA = {
    "text": pl.String,
    "half": pl.String,
    "rank": pl.Int64,
    "feature": pl.String,
    "coefficient": pl.Float64,
}


def decision_metrics(
    unanswerable: Sequence[bool], probability: Sequence[float], threshold: float = 0.5
) -> dict[str, float]:
    """Know2Guess's four numbers at ``threshold`` (unanswerable predicted when p >= threshold):
    accuracy, macro-F1 over both classes, unanswerable recall, and the false-positive rate (the
    answerable share predicted unanswerable). A class with no item gives NaN where it divides."""
    y = np.asarray(unanswerable, dtype=bool)
    pred = np.asarray(probability, dtype=float) >= threshold
    tp, fp = int(np.sum(pred & y)), int(np.sum(pred & ~y))
    fn, tn = int(np.sum(~pred & y)), int(np.sum(~pred & ~y))

    def f1(t: int, f_pos: int, f_neg: int) -> float:
        return 2 * t / (2 * t + f_pos + f_neg) if t + f_pos + f_neg else math.nan

    n = y.size
    return {
        "accuracy": (tp + tn) / n if n else math.nan,
        "macro_f1": (f1(tp, fp, fn) + f1(tn, fn, fp)) / 2,
        "recall_unanswerable": tp / (tp + fn) if tp + fn else math.nan,
        "false_positive_rate": fp / (fp + tn) if fp + tn else math.nan,
    }


def split(unanswerable: Sequence[bool] | np.ndarray, *, dev_share: float = DEV_SHARE, seed: int = 0) -> np.ndarray:
    """A seeded development mask, stratified by half: round(dev_share * n) of each half, at
    least one, leaving at least one in test (a half of one item stays in test)."""
    y = np.asarray(unanswerable, dtype=bool)
    rng = np.random.default_rng(seed)
    dev = np.zeros(y.size, dtype=bool)
    for half in (True, False):
        idx = np.flatnonzero(y == half)
        take = min(max(1, round(dev_share * idx.size)), idx.size - 1)
        if take > 0:
            dev[rng.permutation(idx)[:take]] = True
    return dev


def length_test(texts: Sequence[str], unanswerable: Sequence[bool]) -> dict[str, float]:
    """K2G §3.4's length check: mean whitespace tokens per half and the two-sided two-sample
    Kolmogorov-Smirnov statistic and p between the halves' token counts (NaN when a half is empty)."""
    from scipy.stats import ks_2samp

    counts = np.asarray([len((t or "").split()) for t in texts], dtype=float)
    y = np.asarray(unanswerable, dtype=bool)
    a, u = counts[~y], counts[y]
    if not a.size or not u.size:
        return {
            "tokens_answerable": math.nan,
            "tokens_unanswerable": math.nan,
            "ks_statistic": math.nan,
            "ks_p": math.nan,
        }
    res = ks_2samp(u, a)
    return {
        "tokens_answerable": float(a.mean()),
        "tokens_unanswerable": float(u.mean()),
        "ks_statistic": float(res.statistic),
        "ks_p": float(res.pvalue),
    }


def _empty(note: str, **counts: int) -> dict[str, Any]:
    return {**{m: math.nan for m in METRICS}, "n_features": 0, "top_features": (), "note": note, **counts}


def separability_probe(
    texts: Sequence[str],
    unanswerable: Sequence[bool],
    *,
    seed: int = 0,
    dev_share: float = DEV_SHARE,
    dev: Sequence[bool] | None = None,
    top: int = 0,
) -> dict[str, Any]:
    """Know2Guess's §3.5 probe: fit on a development split, scored once on the rest.

    ``dev`` marks the development items (default: :func:`split` with ``dev_share`` and ``seed``).
    Returns accuracy, macro_f1, recall_unanswerable and false_positive_rate at 0.5, auroc and
    auprc (unanswerable positive), n_dev, n_test, n_test_unanswerable, n_features, ``top_features``
    (up to ``top`` word features per side, ``(feature, coefficient)``, unanswerable-weighted
    first) and a note; NaN with a note when a split lacks a half or no feature reaches min_df.
    """
    from scipy.sparse import hstack
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import average_precision_score, roc_auc_score

    y = np.asarray(unanswerable, dtype=bool)
    if len(texts) != y.size:
        raise ValueError(f"texts and unanswerable need equal length, got {len(texts)} and {y.size}")
    mask = split(y, dev_share=dev_share, seed=seed) if dev is None else np.asarray(dev, dtype=bool)
    docs = np.asarray([t or "" for t in texts], dtype=object)
    counts = {"n_dev": int(mask.sum()), "n_test": int((~mask).sum()), "n_test_unanswerable": int(y[~mask].sum())}
    if len(set(y[mask].tolist())) < 2 or len(set(y[~mask].tolist())) < 2:
        return _empty("the development or the test split lacks a half", **counts)
    char = TfidfVectorizer(analyzer="char", ngram_range=(3, 5), min_df=MIN_DF, sublinear_tf=True, max_features=CHAR_CAP)
    word = TfidfVectorizer(analyzer="word", ngram_range=(1, 2), min_df=MIN_DF, sublinear_tf=True, max_features=WORD_CAP)
    parts, test_parts, names = [], [], []
    for kind, vectorizer in (("char", char), ("word", word)):
        try:
            parts.append(vectorizer.fit_transform(docs[mask]))
        except ValueError:  # no n-gram in MIN_DF development questions
            continue
        test_parts.append(vectorizer.transform(docs[~mask]))
        names += [(kind, str(f)) for f in vectorizer.get_feature_names_out()]
    if not names:
        return _empty(f"no n-gram occurs in {MIN_DF}+ development questions", **counts)
    x_dev, x_test = hstack(parts).tocsr(), hstack(test_parts).tocsr()
    model = LogisticRegression(class_weight="balanced", max_iter=5000, random_state=seed).fit(x_dev, y[mask])
    p = model.predict_proba(x_test)[:, list(model.classes_).index(True)]
    out: dict[str, Any] = {**decision_metrics(y[~mask], p), **counts, "n_features": len(names), "note": ""}
    out["auroc"] = float(roc_auc_score(y[~mask], p))
    out["auprc"] = float(average_precision_score(y[~mask], p))
    coef = model.coef_[0]  # positive: unanswerable-weighted
    order = [i for i in np.argsort(-coef, kind="stable") if names[i][0] == "word"]
    picked = [i for i in order if coef[i] > 0][:top] + [i for i in order[::-1] if coef[i] < 0][:top]
    out["top_features"] = tuple((names[i][1], float(coef[i])) for i in picked) if top > 0 else ()
    return out


def separability(
    bench: pl.DataFrame, *, seed: int, top: int, dev_share: float = DEV_SHARE
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """:func:`separability_probe` per text (:data:`TEXTS`), unanswerable positive, and its ``top``
    word features per half (the same seeded split for both texts)."""
    rows, features = [], []
    unanswerable = [not bool(v) for v in bench["answerable"].to_list()]
    n_u = sum(unanswerable)
    for text in TEXTS:
        docs = bench[text].fill_null("").to_list()
        r = separability_probe(docs, unanswerable, seed=seed, dev_share=dev_share, top=top)
        test_u = r["n_test_unanswerable"]
        rows.append(
            {
                "text": text,
                **{m: r[m] for m in METRICS},
                "auprc_chance": test_u / r["n_test"] if r["n_test"] else math.nan,
                "n_dev": r["n_dev"],
                "n_test": r["n_test"],
                "n_answerable": len(unanswerable) - n_u,
                "n_unanswerable": n_u,
                "n_test_answerable": r["n_test"] - test_u,
                "n_test_unanswerable": test_u,
                "n_features": r["n_features"],
                "note": r["note"],
                **length_test(docs, unanswerable),
            }
        )
        ranks = {"unanswerable": 0, "answerable": 0}
        for feature, weight in r["top_features"]:
            half = "unanswerable" if weight > 0 else "answerable"
            ranks[half] += 1
            features.append(
                {"text": text, "half": half, "rank": ranks[half], "feature": feature, "coefficient": weight}
            )
    return pl.DataFrame(rows, schema=SUMMARY_SCHEMA), pl.DataFrame(features, schema=FEATURE_SCHEMA)
