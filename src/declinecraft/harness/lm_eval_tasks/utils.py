"""The functions ``declinecraft_no_rag.yaml`` names with ``!function``: dataset, prompt, scoring.

lm-evaluation-harness loads this file by path. The questions come from a run folder or a release
file (``--metadata '{"benchmark": "..."}'``, default ``outputs/default``); each prompt is the answer
stage's no-retrieval template; each response is labelled with the rule labels, and CAR and attempt
rate are computed by :mod:`declinecraft.evaluation.metrics`. lm-eval returns no finish reason, so
no response counts as budget-exhausted (the same for models without thinking).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from declinecraft.harness import samples, scoring

#: The benchmark read when ``--metadata`` names none (relative to the working folder).
DEFAULT_BENCHMARK = "outputs/default"


def load_questions(benchmark: str = DEFAULT_BENCHMARK, ids: str = "", limit: int = 0, **_: Any) -> dict[str, Any]:
    """The benchmark's questions as a ``test`` split (``custom_dataset``; ``--metadata`` fills the arguments)."""
    import datasets  # lm-eval's own dependency, only present with the harness extra

    rows = [
        {"id": q.id, "answerable": q.answerable, "query": q.query}
        for q in samples.read_questions(benchmark, ids=[i for i in ids.split(",") if i], limit=int(limit))
    ]
    return {"test": datasets.Dataset.from_list(rows)}


def doc_to_text(doc: dict[str, Any]) -> str:
    """The answer stage's no-retrieval prompt for one question."""
    return samples.prompt(doc["query"], "no_rag")


def process_results(doc: dict[str, Any], results: Sequence[str]) -> dict[str, tuple[bool, str | None, bool]]:
    """Rule-label one response; each metric gets (answerable, label, budget exhausted)."""
    o = scoring.outcome(results[0], None, answerable=bool(doc["answerable"]))
    item = (o.answerable, o.label, o.budget_exhausted)
    return {"car": item, "attempt_rate": item}


def _outcomes(items: Sequence[tuple[bool, str | None, bool]]) -> list[scoring.Outcome]:
    return [scoring.Outcome(bool(a), label, bool(x), "") for a, label, x in items]


def car(items: Sequence[tuple[bool, str | None, bool]]) -> float:
    """Correct Abstention Rate over the responses (strict: ABSTAIN on unanswerable questions)."""
    return scoring.rates(_outcomes(items))["car"].rate


def attempt_rate(items: Sequence[tuple[bool, str | None, bool]]) -> float:
    """Answerable attempt rate over the responses (ANSWER or DENY on answerable questions)."""
    return scoring.rates(_outcomes(items))["attempt_rate"].rate
