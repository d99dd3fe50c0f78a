"""Our own answers beside the outside harnesses': the default run's no-retrieval responses of its
smallest model to the first questions, which ``inspect eval`` and ``lm_eval`` must reproduce."""

from __future__ import annotations

import importlib.util
import math
import sys
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest

from declinecraft.core import config, registry
from declinecraft.harness import scoring
from tests.support import projects

RUN = projects.REPO / "outputs" / "default"
RESPONSES = RUN / "05_answer" / "responses.parquet"


def _smallest_model() -> str:
    """The default run's model under test with the fewest parameters (the quickest to serve)."""
    cfg = config.load(projects.REPO / "params" / "default.yaml")
    specs = registry.load_models(cfg.resolve(cfg.models_file))
    return min(cfg.answer.models, key=lambda m: specs[m].params_total_b or 0.0)


MODEL = _smallest_model()
N_QUESTIONS = 3
#: The folder of the harnesses' command-line tools (this interpreter's).
BIN = Path(sys.executable).parent


def skip_unless_ready() -> None:
    """Skip the calling test without the harness extra or without the default run's answers."""
    if importlib.util.find_spec("inspect_ai") is None or importlib.util.find_spec("lm_eval") is None:
        pytest.skip("the harness extra (inspect-ai, lm-eval) is not installed: `make setup` installs it")
    if not RESPONSES.is_file():
        pytest.skip(f"needs the default run's answers ({RESPONSES}): run `make all` first")


@dataclass(frozen=True)
class Ours:
    """Our no-retrieval responses of the model to the first questions, by question id."""

    texts: dict[str, str]
    labels: dict[str, str | None]
    car: float


def ours() -> Ours:
    """Our responses, rule labels and CAR for the model without retrieval on the first questions."""
    frame = pl.read_parquet(RESPONSES).filter(
        pl.col("model") == MODEL,
        pl.col("condition") == "no_rag",
        pl.col("thinking") == "off",
        pl.col("prompt_variant") == "default",
    )
    frame = frame.sort("question_id").head(N_QUESTIONS)
    outcomes = {
        r["question_id"]: scoring.outcome(r["response"], r["finish_reason"], answerable=r["answerable"])
        for r in frame.to_dicts()
    }
    return Ours(
        {r["question_id"]: r["response"] for r in frame.to_dicts()},
        {i: o.label for i, o in outcomes.items()},
        scoring.rates(outcomes.values())["car"].rate,
    )


def same(a: float, b: float) -> bool:
    """Equal rates, NaN (no unanswerable question) equal to NaN."""
    return (math.isnan(a) and math.isnan(b)) or a == pytest.approx(b)
