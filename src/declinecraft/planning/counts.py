"""What each stage of a run will ask each model: calls (exact or bounded), prompt sizes, budgets.

Counts are *distinct calls*, the cache lookups a stage makes (what its ledger
``outputs/<run>/calls/<stage>.tsv`` records): two calls with the same request are one lookup.
A count is exact where the design fixes it (the answer stage's no-RAG and single-shot calls, one
per question and setting; the oracle's one per question; the views' decision calls) and a pair of
bounds where it depends on answers (iterative rounds, which drafts survive generation and
verification, judge calls on responses the response judge labels ANSWER, re-asks of unparsable
labels). Iterative RAG's answer call is the single-shot call when the first reflection says the
context suffices, so its lower bound does not count it where single-shot runs too.

Question counts come from the run's benchmark when stage 04 has written it; before that, from the
verify stage's targets (``verify.target_answerable`` / ``target_unanswerable``), which the plan then
says it assumed. Prompt sizes are estimated from the templates and the params (chunk size, cuts,
word limits), never from model output.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import polars as pl

from declinecraft.construction import generate
from declinecraft.core import artifacts, catalogue
from declinecraft.core.config import RunConfig
from declinecraft.evaluation import answer
from declinecraft.evaluation.answer import Setting
from declinecraft.planning.part import (
    OUTPUT_TOKENS,
    PAGE_CHARS,
    QUESTION_CHARS,
    REFERENCE_CHARS,
    Part,
    Sizes,
    chunk_chars,
    distinct_queries,
    halves,
    output_of,
    sizes,
)
from declinecraft.planning.views import ViewCounts


def _constant(fields: list[dict[str, str]]) -> Callable[[], list[dict[str, str]]]:
    return lambda: fields


class Counter(ViewCounts):
    """Builds a run's :class:`Part` list, stage by stage (see :func:`parts`)."""

    def __init__(self, cfg: RunConfig, template_chars: Callable[[str], int], thinks: Callable[[str], str]) -> None:
        self.cfg, self.template, self.thinks = cfg, template_chars, thinks
        self.sizes = sizes(cfg)
        self.chunk = cfg.corpus.chunk_size

    def default_thinking(self, model: str) -> bool:
        """Whether a call with the model's default mode thinks (``always`` models)."""
        return self.thinks(model) == "always"

    # --- 03 generate, 04 verify -----------------------------------------------------------------

    def generate(self) -> list[Part]:
        """Three calls per candidate and generator; only the scenario call reaches every candidate."""
        g, out = self.cfg.generate, []
        n = g.n_answerable + g.n_unanswerable
        cut = g.prompt_chunk_chars
        for model in dict.fromkeys((g.generator, *g.generators)):
            t = self.default_thinking(model)
            s_budget, q_budget = g.scenario_max_tokens or g.max_tokens, g.question_max_tokens or g.max_tokens
            scenario = self.template("generate_scenario") + g.scenario_chunks * chunk_chars(self.chunk, cut)
            facts = self.template("generate_facts") + (g.comparison_chunks + 1) * chunk_chars(self.chunk, cut)
            question = self.template("generate_question") + QUESTION_CHARS + chunk_chars(self.chunk, 0)
            # Two candidates may draw the same scenario chunks in a small corpus: one lookup. With
            # the corpus on disk the draws are replayed, so the count is exact and the keys known.
            fields = self._scenario_fields()
            low, high = (len({f["context"] for f in fields}),) * 2 if fields is not None else (min(n, 1), n)
            out.append(
                Part(
                    catalogue.notebook("generate"),
                    model,
                    "generate_scenario",
                    low,
                    high,
                    scenario,
                    output_of("generate_scenario", s_budget, t),
                    s_budget,
                    requests=None if fields is None else _constant(fields),
                    template="generate_scenario",
                    temperature=g.temperature,
                )
            )
            out.append(
                Part(
                    catalogue.notebook("generate"),
                    model,
                    "generate_facts",
                    0,
                    n,
                    facts,
                    output_of("generate_facts", g.max_tokens, t),
                    g.max_tokens,
                )
            )
            out.append(
                Part(
                    catalogue.notebook("generate"),
                    model,
                    "generate_question",
                    0,
                    n,
                    question,
                    output_of("generate_question", q_budget, t),
                    q_budget,
                )
            )
        return out

    def _scenario_fields(self) -> list[dict[str, str]] | None:
        """The scenario calls' fields as :func:`generate.generate_drafts` draws them (same seeds),
        when the corpus stage's chunks are on disk; else None."""
        g = self.cfg.generate
        try:
            chunks = artifacts.read_chunks(self.cfg)
        except (FileNotFoundError, ValueError):
            return None
        pre = chunks.filter((pl.col("corpus") == "pre") & (pl.col("text").str.strip_chars() != ""))
        text = dict(zip(pre["chunk_id"], pre["text"], strict=True))
        ids = pre["chunk_id"].to_list()
        k = min(g.scenario_chunks, len(ids))
        fields = []
        for answerable, n in ((True, g.n_answerable), (False, g.n_unanswerable)):
            for i in range(n):
                rng = generate.candidate_rng(self.cfg.seed, answerable, i)
                picked = [ids[j] for j in rng.choice(len(ids), size=k, replace=False)] if k else []
                if picked:
                    fields.append({"context": generate.join_chunks(picked, text, g.prompt_chunk_chars)})
        return fields

    def verify(self) -> list[Part]:
        """Two checks (Stated, Answers) per drafted candidate that survives the one before."""
        g, v = self.cfg.generate, self.cfg.verify
        n = g.n_answerable + g.n_unanswerable
        prompt = (
            self.template("verify_answers") + QUESTION_CHARS + v.retrieve_k * chunk_chars(self.chunk, v.context_chars)
        )
        out = [
            Part(
                catalogue.notebook("verify"),
                v.verifier,
                "verify",
                0,
                2 * n,
                prompt,
                output_of("verify", v.max_tokens, self.default_thinking(v.verifier)),
                v.max_tokens,
            )
        ]
        if g.generators:
            checker = v.comparison_verifier or v.verifier
            n_all = n * len(dict.fromkeys((g.generator, *g.generators)))
            t = self.default_thinking(checker)
            out.append(
                Part(
                    catalogue.notebook("verify"),
                    checker,
                    "verify (Table 9)",
                    0,
                    2 * n_all,
                    prompt,
                    output_of("verify", v.max_tokens, t),
                    v.max_tokens,
                )
            )
        return out

    # --- 05 answer ------------------------------------------------------------------------------

    def questions(self) -> pl.DataFrame:
        """The questions the answer stage asks (``answer.limit_questions`` applied)."""
        return answer.select_questions(self.sizes.frame, self.cfg.answer.limit_questions, self.cfg.seed)

    def answer(self) -> list[Part]:
        """Every model's (thinking mode, setting) pairs; rewrites of the +rewrite pipelines; Table 9's CAR calls."""
        a, out = self.cfg.answer, []
        qs = self.questions()
        n_q = qs.height
        distinct = {True: distinct_queries(qs, True), False: distinct_queries(qs, False)}
        chunk = chunk_chars(self.chunk, a.context_chars)
        for model in a.models:
            pairs = answer.plan(a, self.thinks(model), model)
            singles = {(m, s.pipeline, s.k, s.scenario, s.prompt_variant) for m, s in pairs if s.condition == "single"}
            for mode, s in pairs:
                t = mode != "off"
                name = answer.ablation_name(s, a) or "main"
                budget = a.max_tokens
                if s.condition == "no_rag":
                    fields = self._no_rag_fields(qs, s) if self.sizes.from_benchmark else None
                    out.append(
                        Part(
                            catalogue.notebook("answer"),
                            model,
                            f"answer_no_context ({mode})",
                            distinct[s.scenario],
                            distinct[s.scenario],
                            self.template("answer_no_context") + QUESTION_CHARS,
                            output_of("answer", budget, t),
                            budget,
                            n_q,
                            name,
                            fields,
                            answer.NO_CONTEXT,
                            mode,
                            a.temperature,
                        )
                    )
                    continue
                template = answer.TEMPLATES[s.prompt_variant]
                if s.condition == "single":
                    out.append(
                        Part(
                            catalogue.notebook("answer"),
                            model,
                            f"{template} k={s.k} ({mode})",
                            distinct[s.scenario],
                            distinct[s.scenario],
                            self.template(template) + QUESTION_CHARS + s.k * chunk,
                            output_of("answer", budget, t),
                            budget,
                            n_q,
                            name,
                        )
                    )
                    continue
                rounds = a.max_rounds
                gathered = s.k * (1 + rounds)
                out.append(
                    Part(
                        catalogue.notebook("answer"),
                        model,
                        f"reflect ({mode})",
                        distinct[s.scenario] * min(1, rounds),
                        n_q * rounds,
                        self.template("reflect") + QUESTION_CHARS + gathered * chunk,
                        output_of("reflect", budget, t),
                        budget,
                    )
                )
                shared = (mode, s.pipeline, s.k, s.scenario, s.prompt_variant) in singles
                out.append(
                    Part(
                        catalogue.notebook("answer"),
                        model,
                        f"{template} iterative ({mode})",
                        0 if shared else distinct[s.scenario],
                        n_q,
                        self.template(template) + QUESTION_CHARS + gathered * chunk,
                        output_of("answer", budget, t),
                        budget,
                        n_q,
                        name,
                    )
                )
        out += self._rewrites(n_q, distinct)
        out += self._comparison(chunk)
        return out

    def _no_rag_fields(self, qs: pl.DataFrame, s: Setting) -> Callable[[], list[dict[str, str]]]:
        def build() -> list[dict[str, str]]:
            return [{"question": answer.query_of(r, s.scenario)} for r in qs.to_dicts()]

        return build

    def _rewrites(self, n_q: int, distinct: dict[bool, int]) -> list[Part]:
        a = self.cfg.answer
        rewriting = [s for s in answer.settings(a) if "rewrite" in s.pipeline]
        if not rewriting:
            return []
        queries = sum(distinct[scenario] for scenario in {s.scenario for s in rewriting})
        follow_ups = (
            n_q * a.max_rounds * 5 * len(a.models) * 2 if any(s.condition == "iterative" for s in rewriting) else 0
        )
        t = self.default_thinking(a.rewriter)
        return [
            Part(
                catalogue.notebook("answer"),
                a.rewriter,
                "rewrite_query",
                queries,
                queries + follow_ups,
                self.template("rewrite_query") + QUESTION_CHARS,
                output_of("rewrite_query", 128, t),
                128,
            )
        ]

    def _comparison(self, chunk: int) -> list[Part]:
        g, v, a = self.cfg.generate, self.cfg.verify, self.cfg.answer
        if not g.generators or not a.models:
            return []
        n = v.comparison_unanswerable * len(dict.fromkeys((g.generator, *g.generators)))
        model = a.models[0]
        mode = answer.thinking_modes(("off",), self.thinks(model))[0]
        prompt = self.template("answer_with_context") + QUESTION_CHARS + a.k * chunk
        return [
            Part(
                catalogue.notebook("answer"),
                model,
                f"answer_with_context (Table 9, {mode})",
                0,
                n,
                prompt,
                output_of("answer", a.max_tokens, mode != "off"),
                a.max_tokens,
            )
        ]

    # --- 06 judge -------------------------------------------------------------------------------

    def judge(self, answered: list[Part]) -> list[Part]:
        """Labels (one per response that has text, one re-ask each at most), the oracle (one per
        question that needs a reference), accuracy scores (responses labelled ANSWER)."""
        j, a = self.cfg.judge, self.cfg.answer
        responses = sum(p.responses for p in answered)
        compared = sum(p.calls_max for p in answered if "Table 9" in p.what)
        n_ans, n_un = halves(self.questions())
        answerable_responses = round(responses * n_ans / max(1, n_ans + n_un))
        leak = (
            sum(p.responses for p in answered if p.what.startswith("answer_no_context")) * n_un // max(1, n_ans + n_un)
        )
        response_chars = min(j.truncate_chars, OUTPUT_TOKENS["answer"] * 4)
        label = self.template("judge_response") + QUESTION_CHARS + response_chars
        out = [
            Part(
                catalogue.notebook("judge"),
                j.response_judge,
                "judge_response",
                0,
                2 * (responses + compared),
                label,
                output_of("judge_response", j.max_tokens, self.default_thinking(j.response_judge)),
                j.max_tokens,
            )
        ]
        sample = min(j.second_judge_sample, responses) if j.second_judge_sample else responses
        for other in j.second_judges:
            out.append(
                Part(
                    catalogue.notebook("judge"),
                    other,
                    "judge_response (second)",
                    0,
                    2 * sample,
                    label,
                    output_of("judge_response", j.max_tokens, self.default_thinking(other)),
                    j.max_tokens,
                )
            )
        refs = n_ans + (n_un if "no_rag" in a.conditions else 0)
        page = j.oracle_page_chars or PAGE_CHARS
        oracle = (
            self.template("oracle_answerable")
            + QUESTION_CHARS
            + page
            + 3 * chunk_chars(self.chunk, j.oracle_chunk_chars)
        )
        o_budget = j.oracle_max_tokens or j.max_tokens
        out.append(
            Part(
                catalogue.notebook("judge"),
                j.oracle,
                "oracle",
                refs,
                refs,
                oracle,
                output_of("oracle", o_budget, self.default_thinking(j.oracle)),
                o_budget,
            )
        )
        score = self.template("judge_accuracy") + QUESTION_CHARS + response_chars + REFERENCE_CHARS
        for scorer in dict.fromkeys(j.accuracy_judges):
            out.append(
                Part(
                    catalogue.notebook("judge"),
                    scorer,
                    "judge_accuracy",
                    0,
                    2 * (answerable_responses + leak),
                    score,
                    output_of("judge_accuracy", j.max_tokens, self.default_thinking(scorer)),
                    j.max_tokens,
                )
            )
        return out


def parts(
    cfg: RunConfig, template_chars: Callable[[str], int], thinks: Callable[[str], str]
) -> tuple[list[Part], Sizes, list[str]]:
    """Every call the run's own stages make, with the question sizes used and the stages left out.

    ``template_chars(name)`` is a template's length; ``thinks(model)`` the registry's thinking
    field. A stage whose outputs a base run owns (``cfg.owner``) sends nothing and is left out,
    named in the third item.
    """
    counter = Counter(cfg, template_chars, thinks)
    out: list[Part] = []
    skipped = []
    answered = counter.answer()
    stages: list[tuple[str, Callable[[], list[Part]]]] = [
        ("generate", counter.generate),
        ("verify", counter.verify),
        ("answer", lambda: answered),
        ("judge", lambda: counter.judge(answered)),
        ("know2guess", counter.know2guess),
        ("evidence", counter.evidence),
    ]
    for block, build in stages:
        if cfg.owner(block) != cfg.run:
            skipped.append(f"{catalogue.notebook(block)}: read from outputs/{cfg.owner(block)}/ (sends nothing)")
            continue
        out += build()
    return [replace(p) for p in out], counter.sizes, skipped
