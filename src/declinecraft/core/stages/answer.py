"""05_answer: the models under test answer the benchmark (§4, Appendix A.2-A.4, E, H)."""

from __future__ import annotations

from declinecraft.core.declaration import SEVERAL_GENERATORS, Stage, writer
from declinecraft.core.params import AnswerParams
from declinecraft.core.stages.index import INDEX_MANIFEST, INDEX_VERSION
from declinecraft.core.stages.verify import VERIFY_BENCHMARK, VERIFY_COMPARISON_CANDIDATES

_write = writer("answer", "05_answer")

ANSWER_RESPONSES = _write(
    "responses.parquet",
    "one row per (question, model, thinking, condition, pipeline, k, scenario, prompt_variant): response, "
    "thinking trace, finish reason, budget flag, cache key, retrieved chunks and ranks, rounds",
)
ANSWER_RETRIEVAL = _write("retrieval.parquet", "Hit@k and scenario-chunk overlap per pipeline, k, scenario")
ANSWER_RETRIEVED = _write("retrieved.parquet", "the ranked chunk ids per question and retrieval setting")
ANSWER_COMPARISON_RESPONSES = _write(
    "comparison_responses.parquet",
    "Table 9's CAR responses on the compared generators' questions (declinecraft.evaluation.comparison)",
    SEVERAL_GENERATORS,
)
ANSWER_MANIFEST = _write("manifest.json", "settings, counts and seconds per model")

STAGE = Stage(
    block="answer",
    notebook="05_answer",
    params=AnswerParams,
    run="declinecraft.evaluation.answer_stage:run",
    about="no RAG, single-shot and iterative RAG, thinking, ablations (§4, App. A.2-A.4, E, H)",
    reads=(INDEX_MANIFEST, INDEX_VERSION, VERIFY_BENCHMARK, VERIFY_COMPARISON_CANDIDATES),
    prompts=(
        "answer_no_context",
        "answer_with_context",
        "answer_with_context_temporal",
        "reflect",
        "rewrite_query",
        "think_prompted",
    ),
    models=("answer.models", "answer.rewriter"),
)
