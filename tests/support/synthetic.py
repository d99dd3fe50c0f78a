"""Synthetic judged tables in the schema of ``outputs/<run>/06_judge/judged.parquet``.

The analysis, figures and paper are built and tested against these frames before (and besides) a
real run: one row per response, the columns the judge stage writes, labels drawn from known
probabilities so tests can check directions (retrieval raises abstention, iterative RAG lowers it,
thinking turns abstentions into premise denials without retrieval) and the benchmark can time a
paper-sized table (40 configurations x 3 conditions x 1,000 questions).

Nothing here is ever written into a run's outputs.
"""

from __future__ import annotations

import numpy as np
import polars as pl

#: Logit of abstaining on an unanswerable question, per retrieval condition (before model effects).
ABSTAIN_LOGIT = {"no_rag": -1.6, "single": 0.3, "iterative": -0.2}
#: Probability of attempting an answerable question, per condition.
ATTEMPT_P = {"no_rag": 0.9, "single": 0.97, "iterative": 0.98}
#: Logit of a correct answer, per condition (before model effects).
CORRECT_LOGIT = {"no_rag": -1.2, "single": 0.8, "iterative": 0.85}
#: Ablation pipelines (Table 7) besides the default hybrid retriever.
ABLATION_PIPELINES = ("bm25", "dense", "hybrid+rerank", "hybrid+rewrite", "hybrid+rewrite+rerank")
#: Extra retrieval depths of the k sweep (Table 6) besides k=5.
SWEEP_K = (1, 2, 3, 10)


def _split(n_configs: int) -> tuple[int, int]:
    """Return (models, switchable models) so that models + switchable == n_configs."""
    if n_configs < 1:
        raise ValueError(f"synthetic_judged needs at least one configuration, got {n_configs}")
    switchable = n_configs // 3
    return n_configs - switchable, switchable


def synthetic_models(n_configs: int, seed: int = 0) -> pl.DataFrame:
    """Model facts for the models of :func:`synthetic_judged` (the columns of ``model_facts``).

    Families hold two or three models; about a third of the models are closed (no parameter
    count); the last model has no release date, as some registry entries do.
    """
    n_models, n_switch = _split(n_configs)
    rng = np.random.default_rng(seed + 1)
    total = np.round(np.exp(rng.uniform(np.log(1.0), np.log(250.0), n_models)), 1)
    active = np.where(rng.random(n_models) < 0.3, np.round(total / 8, 1), total)
    closed = (np.arange(n_models) % 3 == 2) & (np.arange(n_models) >= n_switch)
    months = rng.integers(0, 26, n_models)
    release = [f"{2024 + m // 12}-{m % 12 + 1:02d}" for m in months]
    release[-1] = None  # a model whose release month is unknown
    ids = [f"syn-{i:02d}" for i in range(n_models)]
    return pl.DataFrame(
        {
            "model": ids,
            "family": [f"Family {i // 3}" for i in range(n_models)],
            "display_name": [f"Synthetic {i:02d}" for i in range(n_models)],
            "params_total_b": [None if c else float(t) for c, t in zip(closed, total, strict=True)],
            "params_active_b": [None if c else float(a) for c, a in zip(closed, active, strict=True)],
            "release": release,
            "knowledge_cutoff": ["not published"] * n_models,
            "precision": ["API" if c else "FP8" for c in closed],
            "thinking_mode": ["switchable" if i < n_switch else "none" for i in range(n_models)],
            "roles": [""] * n_models,
        },
        schema_overrides={"params_total_b": pl.Float64, "params_active_b": pl.Float64},
    )


def synthetic_judged(
    n_configs: int = 6,
    n_questions: int = 100,
    seed: int = 0,
    *,
    n_judges: int = 3,
    answerable_share: float = 0.7,
    ablations: bool = False,
    exhausted_share: float = 0.015,
) -> pl.DataFrame:
    """A judged table: ``n_configs`` configurations x 3 conditions x ``n_questions`` questions.

    The first ``n_configs // 3`` models have switchable thinking and appear twice (thinking "off"
    and "on"). With ``ablations=True``, the first (up to) 12 models with thinking off also get
    single-shot rows for the five other pipelines, the k sweep and the no-scenario variant.
    Per-judge scores are in columns ``score_judge0`` ... and ``accuracy`` is their mean.
    """
    n_models, n_switch = _split(n_configs)
    rng = np.random.default_rng(seed)
    n_ans = int(round(n_questions * answerable_share))
    qid = np.array([f"q{i:04d}" for i in range(n_questions)])
    answerable = np.arange(n_questions) < n_ans
    difficulty = rng.normal(0.0, 0.8, n_questions)
    ability = rng.normal(0.0, 0.6, n_models)
    skill = rng.normal(0.0, 0.5, n_models)
    leniency = np.linspace(-0.4, 0.4, n_judges) if n_judges > 1 else np.zeros(1)

    runs: list[tuple[int, str, str, str | None, int | None, bool]] = []
    for m in range(n_models):
        for thinking in ("off", "on") if m < n_switch else ("off",):
            for condition in ("no_rag", "single", "iterative"):
                pipeline, k = (None, None) if condition == "no_rag" else ("hybrid", 5)
                runs.append((m, thinking, condition, pipeline, k, True))
    if ablations:
        for m in range(min(12, n_models)):
            runs += [(m, "off", "single", p, 5, True) for p in ABLATION_PIPELINES]
            runs += [(m, "off", "single", "hybrid", k, True) for k in SWEEP_K]
            runs.append((m, "off", "single", "hybrid", 5, False))

    n_runs = len(runs)
    m_idx = np.array([r[0] for r in runs])
    think = np.array([r[1] == "on" for r in runs])
    cond = np.array([r[2] for r in runs])
    no_scenario = np.array([not r[5] for r in runs])
    rerank = np.array([r[3] is not None and "rerank" in r[3] for r in runs])

    base = np.vectorize(ABSTAIN_LOGIT.get)(cond) + ability[m_idx]
    # Thinking without retrieval turns abstentions into premise denials (App. A.5).
    base = base - 0.8 * (think & (cond == "no_rag")) + 0.4 * no_scenario - 0.2 * rerank
    logit = base[:, None] - 0.5 * difficulty[None, :]
    p_abstain = 1.0 / (1.0 + np.exp(-logit))
    p_deny = np.where(think & (cond == "no_rag"), 0.55, 0.3)[:, None]
    u = rng.random((n_runs, n_questions))
    unans_label = np.where(
        u < p_abstain, "ABSTAIN", np.where(u < p_abstain + (1 - p_abstain) * p_deny, "DENY", "ANSWER")
    )
    p_attempt = np.vectorize(ATTEMPT_P.get)(cond)[:, None]
    ans_label = np.where(rng.random((n_runs, n_questions)) < p_attempt, "ANSWER", "ABSTAIN")
    label = np.where(answerable[None, :], ans_label, unans_label).astype(object)
    exhausted = rng.random((n_runs, n_questions)) < exhausted_share
    label[exhausted] = None

    correct = np.vectorize(CORRECT_LOGIT.get)(cond)[:, None] + skill[m_idx][:, None] - difficulty
    p_correct = 1.0 / (1.0 + np.exp(-correct))
    scored = (label == "ANSWER") | (label == "DENY")
    judges = {}
    latent = rng.random((n_runs, n_questions))
    for j, shift in enumerate(leniency):
        noisy = np.clip(p_correct + shift * 0.3 + rng.normal(0, 0.08, (n_runs, n_questions)), 0, 1)
        score = np.where(latent < noisy * 0.8, 1.0, np.where(latent < noisy, 0.5, 0.0))
        judges[f"score_judge{j}"] = np.where(scored, score, np.where(label == "ABSTAIN", 0.0, np.nan))
    stacked = np.stack(list(judges.values()))
    counted = (~np.isnan(stacked)).sum(axis=0)
    accuracy = np.where(counted > 0, np.nansum(stacked, axis=0) / np.maximum(counted, 1), np.nan)

    models = [f"syn-{i:02d}" for i in range(n_models)]
    meta = pl.DataFrame(
        {
            "_run": np.arange(n_runs),
            "model": [models[r[0]] for r in runs],
            "thinking": ["on" if r[1] == "on" else "off" for r in runs],
            "condition": [r[2] for r in runs],
            "pipeline": [r[3] for r in runs],
            "k": [r[4] for r in runs],
            "scenario": [r[5] for r in runs],
        },
        schema_overrides={"pipeline": pl.String, "k": pl.Int64},
    )
    labels = pl.Series("label", label.ravel().tolist(), dtype=pl.String)
    frame = pl.DataFrame(
        {
            "question_id": np.tile(qid, n_runs),
            "answerable": np.tile(answerable, n_runs),
            "_run": np.repeat(np.arange(n_runs), n_questions),
            "label": labels,
            "budget_exhausted": exhausted.ravel(),
            "accuracy": accuracy.ravel(),
            **{name: values.ravel() for name, values in judges.items()},
        },
        nan_to_null=True,
    )
    frame = frame.join(meta, on="_run", how="left").with_columns(prompt_variant=pl.lit("default"))
    order = ["question_id", "answerable", "model", "thinking", "condition", "pipeline", "k"]
    order += ["scenario", "prompt_variant", "label", "budget_exhausted", "accuracy", *judges]
    return frame.select(order)
