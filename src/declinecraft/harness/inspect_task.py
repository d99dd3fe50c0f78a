"""The benchmark as an inspect_ai task: ``inspect eval src/declinecraft/harness/inspect_task.py``.

One :func:`declinecraft` task per condition: no retrieval (``condition=no_rag``) or single-shot RAG
(``condition=single``: our retriever over the run's ``02_index`` supplies the context, at the
run's pipeline and k, each chunk cut to ``context_chars`` as in ``05_answer``). The user message is
the answer stage's template (:func:`.samples.prompt`); sampling is temperature 0 with an explicit
output budget. Two scorers: :func:`rule_labels` (always) and :func:`response_judge` (when a judge
model is named), each with CAR, attempt rate and answer accuracy as metrics. Answer accuracy needs
the oracle references and the accuracy judges of stage 06, which this task does not run: it is
reported as NaN (unavailable), never as a number.

inspect_ai is the optional ``harness`` extra; this module is imported only by ``inspect eval``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, cast

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageUser, GenerateConfig, get_model
from inspect_ai.scorer import Metric, SampleScore, Score, Scorer, Target, metric, scorer
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver

from declinecraft.core import catalogue, paths, prompts
from declinecraft.evaluation.context import chunks_by_id, format_context
from declinecraft.harness import samples, scoring
from declinecraft.retrieval.pipelines import Pipeline
from declinecraft.retrieval.retrieve import Retriever

#: Sampling of the model under test and of the judge: temperature 0, as in every stage.
TEMPERATURE = 0.0
#: The response judge's output budget (``judge.max_tokens`` of the default run).
JUDGE_TOKENS = 16


@task
def declinecraft(
    benchmark: str = "outputs/default",
    condition: str = "no_rag",
    *,
    pipeline: str = "hybrid",
    k: int = 5,
    context_chars: int = 800,
    max_tokens: int = 256,
    judge: str = "",
    judge_base_url: str = "",
    ids: str = "",
    limit: int = 0,
) -> Task:
    """DeclineCraft under one condition, scored by the rule labels (and a response judge if named).

    Args:
        benchmark: a run folder (``outputs/<run>``), a release ``.jsonl`` or a benchmark ``.parquet``,
            relative to the project root or absolute; single-shot RAG needs a run folder (its ``02_index``).
        condition: ``no_rag`` or ``single``.
        pipeline, k, context_chars: retrieval of single-shot RAG (the default run's ``answer`` block).
        max_tokens: output budget of the model under test (tokens).
        judge: an inspect model name for the response judge (e.g. ``llama-cpp-python/<served name>``);
            empty: rule labels only.
        judge_base_url: the judge's endpoint when it is not the provider's default (a second local server).
        ids: comma-separated question ids to keep; empty keeps all.
        limit: the first ``limit`` questions by id; 0 keeps all.
    """
    benchmark = str(paths.find_root(Path(__file__)) / benchmark)  # inspect runs tasks from their own folder
    questions = samples.read_questions(benchmark, ids=[i for i in ids.split(",") if i], limit=limit)
    dataset = MemoryDataset(
        [
            Sample(
                id=q.id,
                input=q.query,
                target="ABSTAIN" if not q.answerable else "ATTEMPT",
                metadata={"answerable": q.answerable, "query": q.query},
            )
            for q in questions
        ]
    )
    steps = [answer_prompt(condition, benchmark, pipeline=pipeline, k=k, context_chars=context_chars), generate()]
    scorers = [rule_labels()] + ([response_judge(judge, judge_base_url)] if judge else [])
    return Task(
        dataset=dataset,
        solver=steps,
        scorer=scorers,
        config=GenerateConfig(temperature=TEMPERATURE, max_tokens=max_tokens),
    )


@solver
def answer_prompt(condition: str, benchmark: str, *, pipeline: str, k: int, context_chars: int) -> Solver:
    """Replace the sample's input with the answer stage's prompt, retrieving its context for RAG."""
    if condition not in ("no_rag", "single"):
        raise ValueError(f"condition must be 'no_rag' or 'single', got {condition!r}")
    opened: list[Retriever] = []

    def context(query: str) -> str:
        if not opened:
            index = Path(benchmark) / catalogue.notebook("index")
            if not index.is_dir():
                raise ValueError(f"single-shot RAG needs a run folder with {index.name}; {benchmark!r} has none")
            opened.append(Retriever.open(index, cache_dir=paths.cache_dir(paths.find_root(Path(__file__)))))
        retriever = opened[0]
        hits = retriever.search_many([query], cast(Pipeline, pipeline), k)[0]
        ids = [h.chunk_id for h in hits]
        table = chunks_by_id(retriever.chunks(ids).iter_rows(named=True))
        return format_context([table[i] for i in ids], context_chars)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        query = str(state.metadata["query"])
        text = samples.prompt(query, condition, context(query) if condition == "single" else None)
        state.messages = [ChatMessageUser(content=text)]
        return state

    return solve


# --- metrics -------------------------------------------------------------------------------------


def _outcomes(scores: list[SampleScore]) -> list[scoring.Outcome]:
    out = []
    for s in scores:
        m: dict[str, Any] = s.score.metadata or {}
        out.append(scoring.Outcome(bool(m["answerable"]), m["label"], bool(m["budget_exhausted"]), ""))
    return out


@metric
def car() -> Metric:
    """Correct Abstention Rate (strict: ABSTAIN on unanswerable questions, exhausted budgets left out)."""

    def compute(scores: list[SampleScore]) -> float:
        return scoring.rates(_outcomes(scores))["car"].rate

    return compute


@metric
def attempt_rate() -> Metric:
    """Answerable attempt rate (ANSWER or DENY on answerable questions, exhausted budgets left out)."""

    def compute(scores: list[SampleScore]) -> float:
        return scoring.rates(_outcomes(scores))["attempt_rate"].rate

    return compute


@metric
def answer_accuracy() -> Metric:
    """Answer accuracy: NaN here (it needs stage 06's oracle references and accuracy judges)."""

    def compute(scores: list[SampleScore]) -> float:
        return math.nan

    return compute


def _score(o: scoring.Outcome, source: str, raw: str | None = None) -> Score:
    right = (o.label == "ABSTAIN") if not o.answerable else (o.label in ("ANSWER", "DENY"))
    return Score(
        value=1.0 if right else 0.0,
        answer=o.label or "",
        explanation=raw,
        metadata={
            "label": o.label,
            "answerable": o.answerable,
            "budget_exhausted": o.budget_exhausted,
            "source": source,
        },
    )


# --- scorers -------------------------------------------------------------------------------------


def _finish(state: TaskState) -> str | None:
    """The OpenAI finish reason our LLM layer records ("length" when the output budget ran out)."""
    return "length" if state.output.stop_reason == "max_tokens" else state.output.stop_reason


@scorer(metrics=[car(), attempt_rate(), answer_accuracy()])
def rule_labels() -> Scorer:
    """Label each response with the project's deterministic rule labels (ABSTAIN / DENY / ANSWER)."""

    async def score(state: TaskState, target: Target) -> Score:
        o = scoring.outcome(state.output.completion, _finish(state), answerable=bool(state.metadata["answerable"]))
        return _score(o, "rule")

    return score


@scorer(metrics=[car(), attempt_rate(), answer_accuracy()])
def response_judge(model: str, base_url: str = "") -> Scorer:
    """Label each response with a response judge (App. J.3's prompt), re-asked once when unparsable."""
    template = prompts.load(scoring.RESPONSE_PROMPT, paths.find_root(Path(__file__)))
    config = GenerateConfig(temperature=TEMPERATURE, max_tokens=JUDGE_TOKENS)

    async def score(state: TaskState, target: Target) -> Score:
        answerable = bool(state.metadata["answerable"])
        o = scoring.outcome(state.output.completion, _finish(state), answerable=answerable)
        if o.budget_exhausted:
            return _score(o, "budget_exhausted")
        if not o.answer.strip():
            return _score(scoring.Outcome(answerable, "ANSWER", False, ""), "empty")
        judge = get_model(model, base_url=base_url or None)
        asked: list[ChatMessage] = [
            ChatMessageUser(content=template.render(**scoring.judge_fields(str(state.metadata["query"]), o.answer)))
        ]
        raw = (await judge.generate(asked, config=config)).completion
        label = scoring.judge_label(raw)
        if label is None:
            asked += [ChatMessageAssistant(content=raw), ChatMessageUser(content=scoring.REASK_LABEL)]
            raw = (await judge.generate(asked, config=config)).completion
            label = scoring.judge_label(raw)
        return _score(scoring.Outcome(answerable, label, False, o.answer), "judge", raw)

    return score
