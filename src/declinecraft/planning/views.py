"""The views' calls: Know2Guess's decisions (stage 08) and ESB's evidence levels (stage 09).

A mixin of :class:`declinecraft.planning.counts.Counter`, which supplies the run, its questions
and the template lengths.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl

from declinecraft.core import catalogue
from declinecraft.core.config import RunConfig
from declinecraft.evaluation import answer
from declinecraft.planning.part import (
    OUTPUT_TOKENS,
    QUESTION_CHARS,
    REFERENCE_CHARS,
    Part,
    Sizes,
    chunk_chars,
    distinct_queries,
    halves,
    output_of,
)
from declinecraft.views.evidence.stage import Settings as EvidenceSettings
from declinecraft.views.know2guess import protocol


class ViewCounts:
    """Counts of the two views' calls (the attributes are the counter's)."""

    cfg: RunConfig
    template: Callable[[str], int]
    thinks: Callable[[str], str]
    sizes: Sizes
    chunk: int

    def questions(self) -> pl.DataFrame:  # pragma: no cover - the counter's
        raise NotImplementedError

    def default_thinking(self, model: str) -> bool:  # pragma: no cover - the counter's
        raise NotImplementedError

    def know2guess(self) -> list[Part]:
        """One decision call per question and run (model, thinking, condition, prompt); accuracy
        scores of the distinct answered (question, answer) pairs of answerable questions."""
        p, a = self.cfg.know2guess, self.cfg.answer
        if not p.enabled:
            return []
        qs = answer.select_questions(self.questions(), p.limit_questions, self.cfg.seed)
        n_k = distinct_queries(qs, True)
        n_ans, _ = halves(qs)
        runs = protocol.plan(p, a, self.thinks)
        out = []
        chunk = chunk_chars(self.chunk, a.context_chars)
        for run in runs:
            template = protocol.template(run.prompt, run.condition)
            prompt = self.template(template) + QUESTION_CHARS + (a.k * chunk if run.condition == "single" else 0)
            out.append(
                Part(
                    catalogue.notebook("know2guess"),
                    run.model,
                    f"{template} ({run.thinking})",
                    n_k,
                    n_k,
                    prompt,
                    output_of("k2g", p.max_tokens, run.thinking != "off"),
                    p.max_tokens,
                )
            )
        j = self.cfg.judge
        score = self.template("judge_accuracy") + QUESTION_CHARS + 400 + REFERENCE_CHARS
        for scorer in dict.fromkeys(j.accuracy_judges):
            out.append(
                Part(
                    catalogue.notebook("know2guess"),
                    scorer,
                    "judge_accuracy",
                    0,
                    2 * n_ans * len(runs),
                    score,
                    output_of("judge_accuracy", j.max_tokens, self.default_thinking(scorer)),
                    j.max_tokens,
                )
            )
        return out

    def evidence(self) -> list[Part]:
        """ESB's levels: at most six instances per answerable question (L1-L4, L5 in two orders)
        and one (T) per unanswerable one, each asked under every prompt; conflict calls, labels, scores."""
        p = self.cfg.evidence
        if not p.enabled:
            return []
        s = EvidenceSettings.of(self.cfg)
        qs = answer.select_questions(self.sizes.frame, p.limit_questions, self.cfg.seed)
        n_ans, n_un = halves(qs)
        instances = 6 * n_ans + n_un
        chunk = chunk_chars(self.chunk, s.context_chars)
        out, responses, scored = [], 0, 0
        if s.conflict_model:
            out.append(
                Part(
                    catalogue.notebook("evidence"),
                    s.conflict_model,
                    "esb_conflict",
                    0,
                    n_ans,
                    self.template("esb_conflict") + chunk,
                    output_of("esb_conflict", p.conflict_max_tokens, self.default_thinking(s.conflict_model)),
                    p.conflict_max_tokens,
                )
            )
        for model in s.models:
            for mode in answer.thinking_modes(p.thinking, self.thinks(model)):
                for prompt in s.prompts:
                    out.append(
                        Part(
                            catalogue.notebook("evidence"),
                            model,
                            f"esb {prompt} ({mode})",
                            0,
                            instances,
                            self.template("esb_sufficiency") + QUESTION_CHARS + s.k * chunk,
                            output_of("esb", s.max_tokens, mode != "off"),
                            s.max_tokens,
                        )
                    )
                    responses += instances
                    scored += 4 * n_ans
        j = self.cfg.judge
        label = self.template("judge_response") + QUESTION_CHARS + min(j.truncate_chars, OUTPUT_TOKENS["esb"] * 4)
        out.append(
            Part(
                catalogue.notebook("evidence"),
                j.response_judge,
                "judge_response",
                0,
                2 * responses,
                label,
                output_of("judge_response", j.max_tokens, self.default_thinking(j.response_judge)),
                j.max_tokens,
            )
        )
        score = label + REFERENCE_CHARS
        for scorer in s.accuracy_judges:
            out.append(
                Part(
                    catalogue.notebook("evidence"),
                    scorer,
                    "judge_accuracy",
                    0,
                    2 * scored,
                    score,
                    output_of("judge_accuracy", j.max_tokens, self.default_thinking(scorer)),
                    j.max_tokens,
                )
            )
        return out
