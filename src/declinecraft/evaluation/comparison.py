"""Table 9's CAR column: each compared generator's unanswerable questions, answered and labelled.

The paper gives, per generator, the CAR of one model (single-shot RAG, thinking disabled) on that
generator's accepted unanswerable questions, labelled by the main response judge. A run with
``generate.generators`` does the same (the decision, so no further params are needed):

- the questions are every generator's accepted unanswerable comparison questions
  (``04_verify/comparison_candidates.parquet``), the main generator's included, so all rows of
  Table 9 are measured the same way; their ids become ``<generator>/<id>`` (candidate ids repeat
  across generators);
- the model is the run's first model under test, in its first thinking mode ("off" where it can
  switch), at the run's main pipeline and k, with the scenario;
- stage 05 writes ``05_answer/comparison_responses.parquet``, stage 06 labels them with the
  response judge into ``06_judge/comparison_labels.parquet``, and :func:`car_by_generator` turns
  the two into Table 9's column (the strict CAR of :mod:`declinecraft.evaluation.metrics`).

A run without compared generators writes neither file.
"""

from __future__ import annotations

import polars as pl

from declinecraft.core import catalogue
from declinecraft.core.config import RunConfig
from declinecraft.evaluation import metrics
from declinecraft.evaluation.answer import Setting

#: The answer stage's comparison responses and the judge stage's labels of them.
RESPONSES = catalogue.ANSWER_COMPARISON_RESPONSES
LABELS = catalogue.JUDGE_COMPARISON_LABELS


def questions(cfg: RunConfig) -> pl.DataFrame:
    """Every generator's accepted unanswerable comparison questions, ids ``<generator>/<id>``
    (empty when the run compares no generators or the verify stage wrote no comparison)."""
    path = catalogue.VERIFY_COMPARISON_CANDIDATES.path(cfg)
    if not cfg.generate.generators or not path.is_file():
        return pl.DataFrame()
    kept = pl.read_parquet(path).filter((pl.col("fate") == "kept") & ~pl.col("answerable"))
    return kept.with_columns(id=pl.col("generator") + "/" + pl.col("id")).sort("generator", "index")


def setting(cfg: RunConfig) -> Setting:
    """The one setting Table 9's CAR is measured in: single-shot RAG, main pipeline and k."""
    return Setting("single", cfg.answer.pipeline, cfg.answer.k)


def model(cfg: RunConfig) -> str:
    """The model whose CAR Table 9 reports: the run's first model under test."""
    return cfg.answer.models[0]


def car_by_generator(responses: pl.DataFrame, labels: pl.DataFrame) -> pl.DataFrame:
    """Per generator: the model, its strict CAR on that generator's questions and the counts
    (``generator, car_model, car, car_k, car_n, car_unlabelled``; CAR in [0, 1], NaN without a
    labelled response). A response the judge left without a label (a failed call) is counted in
    ``car_unlabelled`` and left out, as a budget-exhausted one is."""
    primary = labels.filter(pl.col("role") == "response_judge").select("response_id", "label")
    frame = responses.join(primary, on="response_id", how="left").with_columns(
        generator=pl.col("question_id").str.split("/").list.first(), accuracy=pl.lit(None, pl.Float64)
    )
    unlabelled = pl.col("label").is_null() & ~pl.col("budget_exhausted").fill_null(False)
    rows = []
    for (generator,), part in frame.group_by(["generator"], maintain_order=True):
        rate = metrics.correct_abstention_rate(part.filter(~unlabelled))
        rows.append(
            {
                "generator": generator,
                "car_model": part["model"][0],
                "car": rate.rate,
                "car_k": rate.k,
                "car_n": rate.n,
                "car_unlabelled": part.filter(unlabelled).height,
            }
        )
    schema = {
        "generator": pl.String,
        "car_model": pl.String,
        "car": pl.Float64,
        "car_k": pl.Int64,
        "car_n": pl.Int64,
        "car_unlabelled": pl.Int64,
    }
    return pl.DataFrame(rows, schema=schema)


def read(cfg: RunConfig) -> pl.DataFrame | None:
    """Table 9's CAR per generator from the answer and judge stages' files, or None without them."""
    answered, labelled = RESPONSES.path(cfg), LABELS.path(cfg)
    if not (answered.is_file() and labelled.is_file()):
        return None
    return car_by_generator(pl.read_parquet(answered), pl.read_parquet(labelled))
