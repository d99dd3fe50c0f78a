"""Run health's warnings read from the analysis' tables and the run's params, beside the counted
measures of :mod:`declinecraft.paper.run_health`: how far the accuracy judges agree, models that score
above chance on unanswerable questions, and why a view ran on fewer models or questions.
"""

from __future__ import annotations

import polars as pl

from declinecraft.core.config import RunConfig
from declinecraft.paper import deviations
from declinecraft.paper.latex import listed

#: The roles of :func:`declinecraft.paper.deviations.roles` in which a model judges responses.
JUDGE_ROLES = ("response judge", "oracle", "accuracy judge")


def judge_agreement_sentence(agreement: pl.DataFrame | None, min_kappa: float) -> str:
    """How far the accuracy judges agree (Table 5: exact agreement and weighted kappa per pair),
    with a warning for each pair below ``min_kappa`` (``analysis.min_judge_kappa``); '' with fewer
    than two judges."""
    if agreement is None or agreement.height == 0:
        return ""
    pairs = agreement.filter(pl.col("judge_a") != "all").drop_nulls("kappa")
    if pairs.height == 0:
        return ""
    name = lambda j: str(j).removeprefix("score_")  # noqa: E731
    said, low = [], []
    for r in pairs.iter_rows(named=True):
        pair = f"{name(r['judge_a'])} and {name(r['judge_b'])}"
        said.append(
            f"{pair} agree exactly on {100 * r['exact']:.0f}% of {r['rows']} answers (weighted kappa {r['kappa']:.3f})"
        )
        if r["kappa"] < min_kappa:
            low.append(pair)
    text = "The accuracy judges: " + "; ".join(said) + "."
    if low:
        text += (
            f" Warning: {' and '.join(low)} fall below the run's level of kappa {min_kappa:g} "
            "(analysis.min_judge_kappa): their scores barely agree, so an accuracy number depends on which "
            "judge is asked."
        )
    return text


def leakage_sentence(
    leakage: pl.DataFrame | None,
    grid: pl.DataFrame | None,
    facts: pl.DataFrame | None = None,
    *,
    cutoff: str = "",
    max_leakage: float = 1.0,
) -> str:
    """Each model whose accuracy on unanswerable questions without retrieval no knowledge can
    explain, flagged before any accuracy is read: above its own accuracy on answerable ones, or,
    for a model released before the corpus ``cutoff`` (``facts``' ``release``, YYYY-MM), above
    ``max_leakage`` (``analysis.max_leakage``). Such a score points to a judge, an oracle or
    questions that are not unanswerable; '' when none."""
    if leakage is None or leakage.height == 0:
        return ""
    frame = leakage.with_columns(pl.col("thinking").cast(pl.String)).drop_nulls("accuracy")
    if grid is not None and "accuracy" in grid.columns:
        known = grid.filter(pl.col("condition") == "no_rag").select(
            "model", pl.col("thinking").cast(pl.String), answerable=pl.col("accuracy").cast(pl.Float64)
        )
        frame = frame.join(known, on=["model", "thinking"], how="left")
    else:
        frame = frame.with_columns(answerable=pl.lit(None, pl.Float64))
    released = {}
    if facts is not None and {"model", "release"} <= set(facts.columns):
        released = {m: str(r or "") for m, r in facts.select("model", "release").iter_rows()}
    said = []
    for r in frame.iter_rows(named=True):
        before = bool(cutoff) and bool(released.get(r["model"])) and released[r["model"]] < cutoff[:7]
        above_known = r["answerable"] is not None and r["accuracy"] > r["answerable"]
        if not (above_known or (before and r["accuracy"] > max_leakage)):
            continue
        text = f"{r['model']} scores {100 * r['accuracy']:.1f}% on unanswerable questions ({r['n']} answers)"
        if r["answerable"] is not None:
            text += f" against {100 * r['answerable']:.1f}% on answerable ones"
        if before:
            text += f", released {released[r['model']]}, before the corpus cut-off"
        said.append(text)
    if not said:
        return ""
    return (
        "Flagged before any accuracy is read: without retrieval, "
        + "; ".join(said)
        + ". A model cannot know what postdates its training, nor know it better than what it was trained on, "
        "so this points to a judge, an oracle or questions that are not unanswerable, not to knowledge."
    )


def scope_sentence(cfg: RunConfig) -> str:
    """Why a view ran on fewer models or questions than the answer stage (its params), or ''."""
    models = list(cfg.answer.models)
    said = []
    for block, name in (("know2guess", "Know2Guess's protocol"), ("evidence", "the evidence view")):
        params = cfg.block(block)
        if not params.enabled:
            continue
        own = [m for m in (params.models or models) if m in models] or list(params.models)
        parts = []
        if len(own) < len(models):
            parts.append(f"{len(own)} of the {len(models)} models under test ({', '.join(own)}; {block}.models)")
        limit = getattr(params, "limit_questions", 0)
        if limit:
            parts.append(
                f"at most {limit} of the benchmark's questions, a seeded subset of both halves "
                f"({block}.limit_questions)"
            )
        controls = getattr(params, "control_models", ())
        if controls:
            parts.append(f"its control prompts only for {', '.join(controls)} ({block}.control_models)")
        if parts:
            said.append(f"{name} ran on " + " and ".join(parts))
    if not said:
        return ""
    text = "; ".join(said)
    return text[0].upper() + text[1:] + ", as the run's params set to keep its time within the budget."


def self_judge_sentence(cfg: RunConfig) -> str:
    """Which models under test also judge (response judge, oracle or accuracy judge), so label or
    score their own responses, or ''. The original kept its judges apart from most of the models
    it evaluated (App. A.1); a run that does not says so here."""
    held = deviations.roles(cfg)
    said = []
    for model in cfg.answer.models:
        own = [role for role in held[model] if role in JUDGE_ROLES]
        if own:
            said.append(f"{model} ({listed(own)})")
    if not said:
        return ""
    who, each = (
        ("Models under test that also judge: ", "Each")
        if len(said) > 1
        else ("A model under test that also judges: ", "It")
    )
    return (
        who + "; ".join(said) + f". {each} judges its own responses (set in the run's params; the original kept "
        "its judges apart from most of the models it evaluated)."
    )
