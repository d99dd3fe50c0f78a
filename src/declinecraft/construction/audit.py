"""Benchmark audits (Appendix D, F): wording separability, candidate fates, verifier rejections,
page/chunk spread, the generator comparison (Table 9) and the datasheet.

Style AUC (App. F): TF-IDF over words of at least three letters that occur in at least three
questions, an L2-regularised logistic regression, ROC AUC under stratified k-fold
cross-validation (0.5 is chance). The style-only variant first removes every word of a C_pre or
C_post page title (plurals folded), never a novelty word, so what is left is phrasing.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, cast

import numpy as np
import polars as pl

from declinecraft.construction.verify import MONTHS
from declinecraft.core.config import RunConfig

_TOKEN = r"(?u)\b[^\W\d_]{3,}\b"
#: Words the style-only AUC never removes, even when a page title holds them (App. F): the cue
#: words of Appendix D in every form the cue filter matches, and the month names.
NOVELTY_WORDS = frozenset(
    """wonder wonders wondered wondering suddenly notice notices noticed heard announced announcement
    announcements new newly recent recently latest update updates updated added introduced change
    changes changed longer nowadays snapshot snapshots release releases prerelease prereleases beta
    build builds live""".split()
) | frozenset(m.lower() for m in MONTHS)


def fold_plural(word: str) -> str:
    """Return a lower-case word with a regular English plural folded (pandas → panda)."""
    word = word.lower()
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and re.search(r"(s|x|z|ch|sh)es$", word):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def title_words(titles: Iterable[str]) -> frozenset[str]:
    """Return the folded words of page titles, minus the novelty words (which always stay)."""
    words = {fold_plural(w) for t in titles for w in re.findall(r"[^\W\d_]+", t)}
    return frozenset(words - {fold_plural(w) for w in NOVELTY_WORDS})


def strip_words(text: str, words: frozenset[str]) -> str:
    """Remove from ``text`` every word whose folded form is in ``words``."""
    return re.sub(r"[^\W\d_]+", lambda m: "" if fold_plural(m.group()) in words else m.group(), text)


@dataclass(frozen=True)
class StyleAUC:
    """One style-AUC measurement."""

    auc: float
    """Mean ROC AUC over the folds (NaN when it cannot be computed; see ``note``)."""
    folds: int
    """Folds used: the requested number, fewer when a half is smaller."""
    n_answerable: int
    n_unanswerable: int
    n_features: int
    """Vocabulary size after the min_df rule."""
    note: str = ""


@dataclass(frozen=True)
class StyleProbe:
    """The probe of :func:`style_auc` with what Know2Guess's separability audit also reports (its §3.5)."""

    style: StyleAUC
    """The cross-validated ROC AUC, exactly as :func:`style_auc` returns it."""
    auprc: float
    """Mean average precision over the same folds, unanswerable as the positive class (K2G's Zone D)."""
    top_features: tuple[tuple[str, float], ...] = ()
    """``(word, coefficient)`` of the probe refit on every question: up to ``top`` words with the most
    negative coefficients (unanswerable-weighted), then up to ``top`` with the most positive."""


def style_auc(
    texts: Sequence[str], answerable: Sequence[bool], *, folds: int = 10, seed: int = 0, min_df: int = 3
) -> StyleAUC:
    """Cross-validated ROC AUC of a bag-of-words classifier that predicts a question's half."""
    return style_probe(texts, answerable, folds=folds, seed=seed, min_df=min_df).style


def style_probe(
    texts: Sequence[str], answerable: Sequence[bool], *, folds: int = 10, seed: int = 0, min_df: int = 3, top: int = 0
) -> StyleProbe:
    """:func:`style_auc`'s probe, also scored by AUPRC on the same folds, with its ``top`` words per half."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import average_precision_score
    from sklearn.model_selection import StratifiedKFold, cross_validate

    y = np.asarray(answerable, dtype=int)
    n_a, n_u = int(y.sum()), int(len(y) - y.sum())
    k = min(folds, n_a, n_u)
    base = {"n_answerable": n_a, "n_unanswerable": n_u}
    if k < 2:
        return StyleProbe(
            StyleAUC(math.nan, k, n_features=0, note="too few questions in a half for 2 folds", **base), math.nan
        )
    vectorizer = TfidfVectorizer(token_pattern=_TOKEN, min_df=min_df, lowercase=True)
    try:
        # TF-IDF uses no labels, so fitting it on all questions leaks nothing into the folds.
        x = vectorizer.fit_transform(texts)
    except ValueError:
        return StyleProbe(
            StyleAUC(math.nan, k, n_features=0, note=f"no word occurs in {min_df}+ questions", **base), math.nan
        )
    cv = StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
    probe = LogisticRegression(C=1.0, max_iter=1000)

    def auprc(fitted: LogisticRegression, x_test: object, y_test: np.ndarray) -> float:
        # Unanswerable is the positive class: its score is the negated decision function.
        return float(average_precision_score(1 - y_test, -fitted.decision_function(x_test)))

    scores = cross_validate(probe, x, y, cv=cv, scoring={"auc": "roc_auc", "auprc": auprc})
    note = f"{k} folds instead of {folds}: the smaller half has {min(n_a, n_u)} questions" if k < folds else ""
    style = StyleAUC(float(np.mean(scores["test_auc"])), k, n_features=x.shape[1], note=note, **base)
    words: tuple[tuple[str, float], ...] = ()
    if top > 0:
        coef = probe.fit(x, y).coef_[0]
        names = vectorizer.get_feature_names_out()
        order = np.argsort(coef, kind="stable")
        picked = [i for i in order if coef[i] < 0][:top] + [i for i in order[::-1] if coef[i] > 0][:top]
        words = tuple((str(names[i]), float(coef[i])) for i in picked)
    return StyleProbe(style, float(np.mean(scores["test_auprc"])), words)


def style_table(bench: pl.DataFrame, titles: Iterable[str], *, folds: int, seed: int, min_df: int) -> pl.DataFrame:
    """Full-text and style-only AUC of the asked questions (paper: 0.80 and 0.57)."""
    words = title_words(titles)
    asked = bench["asked_question"].to_list()
    rows = []
    for variant, texts in (("full", asked), ("style_only", [strip_words(t, words) for t in asked])):
        rows.append(
            {
                "variant": variant,
                **asdict(style_auc(texts, bench["answerable"].to_list(), folds=folds, seed=seed, min_df=min_df)),
            }
        )
    return pl.DataFrame(rows)


# --- counts -----------------------------------------------------------------------------------


def draft_table(drafts: pl.DataFrame) -> pl.DataFrame:
    """Count drafts by generator, half, status and step (the stage's at-a-glance table)."""
    return (
        drafts.group_by("generator", "answerable", "status", "step")
        .len("n")
        .sort("generator", "answerable", "status", "step", descending=[False, True, False, False])
    )


def fate_table(candidates: pl.DataFrame) -> pl.DataFrame:
    """Candidates by generator, half and fate, with the share of that half's candidates."""
    out = candidates.group_by("generator", "answerable", "fate").len("n")
    # The fate breaks ties in n: group_by's order varies from run to run, and the table is an output.
    return out.with_columns(share=pl.col("n") / pl.col("n").sum().over("generator", "answerable")).sort(
        "generator", "answerable", "n", "fate", descending=[False, True, True, False]
    )


def format_table(candidates: pl.DataFrame) -> pl.DataFrame:
    """Drafts lost to format (and other generation stops) by step and reason."""
    lost = candidates.filter(pl.col("status") != "drafted")
    reason = pl.col("reason").str.replace_all(r"\d+ (words|question marks)", "N $1")
    return (
        lost.group_by("generator", "answerable", "status", "step", reason.alias("reason"))
        .len("n")
        .sort(
            "generator",
            "answerable",
            "n",
            "status",
            "step",
            "reason",
            descending=[False, True, True, False, False, False],
        )
    )


def verifier_table(candidates: pl.DataFrame) -> pl.DataFrame:
    """Per half and check: candidates the verifier saw, rejected, unparsable or failed."""
    rows = []
    for (generator, verifier, answerable), part in candidates.group_by("generator", "verifier", "answerable"):
        for check, rejected in (("stated", "rejected_stated"), ("answers", "rejected_answers")):
            seen = part.filter(pl.col(f"{check}_raw").is_not_null())
            bad = part.filter(pl.col("fate_detail").str.starts_with(f"{check}: "))
            n_rej = part.filter(pl.col("fate") == rejected).height
            rows.append(
                {
                    "generator": generator,
                    "verifier": verifier,
                    "answerable": answerable,
                    "check": check,
                    "evaluated": seen.height,
                    "rejected": n_rej,
                    "rejection_rate": n_rej / seen.height if seen.height else None,
                    "unparsable": bad.filter(pl.col("fate") == "verifier_unparsable").height,
                    "errors": bad.filter(pl.col("fate") == "verifier_error").height,
                }
            )
    schema = {
        "generator": pl.String,
        "verifier": pl.String,
        "answerable": pl.Boolean,
        "check": pl.String,
        "evaluated": pl.Int64,
        "rejected": pl.Int64,
        "rejection_rate": pl.Float64,
        "unparsable": pl.Int64,
        "errors": pl.Int64,
    }
    return pl.DataFrame(rows, schema=schema).sort(
        "generator", "verifier", "answerable", "check", descending=[False, False, True, True]
    )


def spread_table(bench: pl.DataFrame, *, by: str = "target_title") -> pl.DataFrame:
    """Questions per page (``target_title``) or chunk (``target_chunk_id``), most first."""
    return (
        bench.group_by("answerable", by)
        .len("questions")
        .sort("answerable", "questions", by, descending=[True, True, False])
    )


def generator_table(rows: Sequence[dict[str, object]]) -> pl.DataFrame:
    """Table 9: one row per generator (accepted, lost to format, fact in C_pre, style AUC, Hit@5)."""
    return pl.DataFrame(list(rows))


def comparison_row(candidates: pl.DataFrame, style: StyleAUC, hit5: float | None) -> dict[str, object]:
    """Summarise one generator's candidates into its Table 9 row."""
    kept = candidates.filter(pl.col("fate") == "kept")
    unans = candidates.filter(~pl.col("answerable") & pl.col("stated").is_not_null())
    return {
        "generator": candidates["generator"][0],
        "verifier": candidates["verifier"][0],
        "accepted_answerable": kept.filter(pl.col("answerable")).height,
        "accepted_unanswerable": kept.filter(~pl.col("answerable")).height,
        "lost_to_format": candidates.filter(pl.col("status") == "lost_to_format").height,
        "fact_in_cpre_pct": 100 * cast(float, unans["stated"].mean()) if unans.height else None,
        "style_auc": style.auc,
        "hit_at_5_pct": None if hit5 is None else 100 * hit5,
    }


# --- datasheet --------------------------------------------------------------------------------


def _md(frame: pl.DataFrame) -> str:
    """Render a small frame as a Markdown table (floats to 3 decimals)."""
    if frame.is_empty():
        return "_(none)_"

    def cell(v: object) -> str:
        return "" if v is None else f"{v:.3f}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * frame.width]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.iter_rows()]
    return "\n".join(lines)


def _pct(k: int, n: int) -> str:
    return f"{k}/{n} ({100 * k / n:.1f}%)" if n else f"{k}/0"


#: The kinds of repair a draft's notes record (generate.parse_*), as the datasheet names them.
REPAIRS = {
    "scenario: cut": "scenarios cut back to whole sentences",
    "scenario: kept": "scenarios with extra lines dropped",
    "facts:": "fact lists cut to max_facts",
    "question: removed": "questions with a copied scenario removed",
}


def _repairs(cands: pl.DataFrame) -> str:
    """Count the drafts' notes by kind of repair."""
    notes = [n for ns in cands["notes"].to_list() if ns for n in ns]
    counts = {label: sum(n.startswith(prefix) for n in notes) for prefix, label in REPAIRS.items()}
    return ", ".join(f"{n} {label}" for label, n in counts.items() if n) or "none"


def _verdicts(cands: pl.DataFrame) -> str:
    """Say how often the verifier answered YES to each check: a model that says one word to
    everything filters by its bias, not by the text."""
    parts = []
    for check in ("stated", "answers"):
        said = cands[check].drop_nulls() if check in cands.columns else pl.Series([], dtype=pl.Boolean)
        parts.append(f"YES to {_pct(int(said.sum()), said.len())} of its {check.capitalize()} checks")
    return "; ".join(parts)


def datasheet(cfg: RunConfig, out: Mapping[str, Any], *, pre: pl.DataFrame, post: pl.DataFrame) -> str:
    """Write the benchmark's datasheet: sources, cut-off, counts, audits and known limits."""
    c, g, v = cfg.corpus, cfg.generate, cfg.verify
    cands: pl.DataFrame = out["candidates"]
    bench: pl.DataFrame = out["benchmark"]
    n = cands.height
    passed = cands.filter(pl.col("fate").is_in(["kept", "reserve", "capped_chunk", "capped_page", "manual_review"]))
    lost = cands.filter(pl.col("status") == "lost_to_format").height
    drafted = cands.filter(pl.col("status") == "drafted").height
    halves = []
    for half, target in ((True, v.target_answerable), (False, v.target_unanswerable)):
        part = cands.filter(pl.col("answerable") == half)
        kept = bench.filter(pl.col("answerable") == half).height
        short = f" (**{target - kept} short**)" if kept < target else ""
        halves.append(
            f"- {'Answerable' if half else 'Unanswerable'}: {part.height} candidates, "
            f"{kept} kept of {target} targeted{short}"
        )
    source = c.dump if c.source == "dump" else c.api_url
    pages = (pre["title"].n_unique(), post["title"].n_unique())
    sections = [
        f"# Datasheet: DeclineCraft benchmark, run `{cfg.run}`",
        "Generated by notebooks/04_verify.ipynb (`declinecraft.construction.verify_stage.run`); do not edit.",
        "## Sources",
        f"- Wiki: {c.source} `{source}`; corpus cut-off {c.cutoff}.\n"
        f"- C_pre: {pages[0]} pages, {pre.height} chunks (retrievable). C_post: {pages[1]} pages, "
        f"{post.height} chunks (question sources only).\n"
        f"- Generator `{g.generator}`; verifier `{v.verifier}` reading {v.retrieve_k} C_pre chunks from "
        f"`{v.pipeline}`; prompts of Appendix J.1 (params/prompts/); seed {cfg.seed}.",
        "## Counts",
        f"- Candidates: {n}; drafted (all four steps parsed): {_pct(drafted, n)}; "
        f"lost to format: {_pct(lost, n)}.\n"
        f"- Repaired but kept (notes on the draft): {_repairs(cands)}.\n"
        f"- Passed every check (acceptance): {_pct(passed.height, n)}; "
        f"of the drafted: {_pct(passed.height, drafted)}.\n" + "\n".join(halves),
        "### Fates",
        _md(out["audit_fates"]),
        "### Lost to format and other generation stops",
        _md(out["audit_format"]),
        "### Verifier rejections",
        _md(out["audit_verifier"]),
        "## Audits",
        "Style AUC (App. F; paper: 0.80 full text, 0.57 style-only):",
        _md(out["audit_style"]),
        "Retrieval (paper: Hit@5 of target chunks 91.0%, scenario-chunk overlap of unanswerable 71.3%):",
        _md(out["audit_retrieval"]),
        f"Spread: at most {v.max_per_chunk} questions per chunk and {v.max_per_page} per page; "
        f"the benchmark uses {bench['target_title'].n_unique()} pages and "
        f"{bench['target_chunk_id'].n_unique()} chunks.",
        "Manual review (data/manual_review.yaml) and replacements:",
        _md(out["audit_review"]),
    ]
    if "audit_generators" in out:
        sections += ["### Generator comparison (Table 9)", _md(out["audit_generators"])]
    sections += [
        "## Known limits",
        "- Small candidate counts make every rate above uncertain; with few questions the style AUC uses "
        "fewer folds (see `note`) and is not comparable with the paper's.\n"
        "- The cue filter runs before verification, so verifier rejection rates are over cue-free drafts.\n"
        "- Unanswerable facts are compared against the 3 C_pre chunks nearest the target chunk, found by "
        "embedding the chunk text as a query.\n"
        "- The technical-page title patterns are ours (the paper does not list them).\n"
        + (
            f"- Generator prompts cut scenario and comparison chunks to {g.prompt_chunk_chars} characters "
            "(CPU deviation; the target chunk stays whole).\n"
            if g.prompt_chunk_chars
            else ""
        )
        + (
            f"- Verifier prompts cut each chunk to {v.context_chars} characters (CPU deviation).\n"
            if v.context_chars
            else ""
        )
        + (
            f"- Self-verification: the verifier `{v.verifier}` also wrote the questions it checks "
            "(`verify.self_verification`; the paper verifies with a separate model).\n"
            if v.verifier == g.generator
            else ""
        )
        + "- Small offline models write and check these questions: expect malformed facts that a manual "
        "review would drop, and verdicts far noisier than the paper's 31B verifier. The verifier said "
        f"{_verdicts(cands)}.",
    ]
    return "\n\n".join(sections) + "\n"
