"""Tests for declinecraft.views.know2guess.stage (08_know2guess) with scripted models, and on the
default run's outputs."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from declinecraft.core import catalogue, config
from declinecraft.core.params import Know2GuessParams
from declinecraft.evaluation.answer import select_questions
from declinecraft.evaluation.context import Chunk
from declinecraft.llm.calls import Call, Reply
from declinecraft.paper import caption_check, figure_check, flat_panels
from declinecraft.views.know2guess import STATES, macros, plots, protocol, stage
from declinecraft.views.know2guess.decisions import ANSWER, MODES
from tests.support import default_run, projects

IDS = ["a0", "a1", "u0", "u1"]


DECISIONS = {
    "a0": "DECISION: ANSWER\nCONFIDENCE: 90\nFINAL_ANSWER: right",
    "a1": "DECISION: ANSWER\nCONFIDENCE: 80\nFINAL_ANSWER: wrong",
    "u0": "DECISION: ABSTAIN_DONT_KNOW\nCONFIDENCE: 20\nFINAL_ANSWER: NA",
    "u1": "DECISION: ANSWER\nCONFIDENCE: 70\nFINAL_ANSWER: guess",
}


ANSWER_ONLY = {"a0": "right", "a1": "wrong", "u0": "I don't know", "u1": "guess"}


#: Figure captions of paper/main.tex, which each view figure must match (caption_check).
CAPTIONS = caption_check.captions((projects.REPO / "paper" / "main.tex").read_text(encoding="utf-8"))


class FakeAsk:
    """A scripted model: K2G prompts answer per question, the accuracy judge scores "right" 1.0."""

    def __init__(self) -> None:
        self.calls: list[Call] = []

    def __call__(self, calls: list[Call]) -> list[Reply]:
        self.calls += calls
        out = []
        for call in calls:
            if call.prompt == "judge_accuracy":
                out.append(Reply("1.0" if call.fields["candidate"] == "right" else "0.0"))
                continue
            qid = re.search(r"\b([au]\d)\?", call.fields["question"]).group(1)  # type: ignore[union-attr]
            out.append(Reply(ANSWER_ONLY[qid] if call.prompt.startswith("k2g_answer_only") else DECISIONS[qid]))
        return out


class FakeModels:
    def __init__(self) -> None:
        self.asks: dict[tuple[str, str | None], FakeAsk] = {}
        self.settings: list[tuple[str, str | None, int, float]] = []
        self.released = 0

    def thinking_switch(self, model_id: str) -> str:
        return "none"

    def asker(self, model_id: str, *, thinking: str | None, max_tokens: int, temperature: float = 0.0) -> FakeAsk:
        self.settings.append((model_id, thinking, max_tokens, temperature))
        return self.asks.setdefault((model_id, thinking), FakeAsk())

    def release(self) -> None:
        self.released += 1

    def calls(self, prompt_prefix: str) -> list[Call]:
        return [c for a in self.asks.values() for c in a.calls if c.prompt.startswith(prompt_prefix)]


def lookup(ids: list[str]) -> list[Chunk]:
    return [Chunk(i, f"Page {i}", f"http://wiki/{i}", f"Text of {i}.") for i in ids]


def write_upstream(cfg: config.RunConfig, *, retrieved: bool = True) -> None:
    """Benchmark, responses, retrieved chunks, references and judged labels of four questions."""
    answerable = [i.startswith("a") for i in IDS]
    bench = pl.DataFrame(
        {
            "id": IDS,
            "answerable": answerable,
            "asked_question": [f"What about {i}?" for i in IDS],
            "question": [f"I am in a cave. What about {i}?" for i in IDS],
            "target_chunk_id": ["c1", "c2", None, None],
            "scenario_chunk_ids": [["c3"]] * 4,
        }
    )
    for stage_name, name, frame in (
        ("verify", "benchmark", bench),
        ("answer", "responses", pl.DataFrame({"question_id": IDS + IDS[:1]})),
        (
            "answer",
            "retrieved",
            pl.DataFrame(
                {
                    "question_id": IDS,
                    "pipeline": "hybrid",
                    "k": 5,
                    "scenario": True,
                    "retrieved_ids": [["c1", "c2"]] * 4,
                }
            )
            if retrieved
            else pl.DataFrame(
                {"question_id": IDS, "pipeline": "bm25", "k": 5, "scenario": True, "retrieved_ids": [["c1"]] * 4}
            ),
        ),
        ("judge", "references", pl.DataFrame({"question_id": IDS, "reference": "the reference"})),
        (
            "judge",
            "judged",
            pl.DataFrame(
                {
                    "model": "qwen2.5-coder-0.5b",
                    "thinking": "off",
                    "condition": ["no_rag"] * 4 + ["single"] * 4,
                    "pipeline": ["none"] * 4 + ["hybrid"] * 4,
                    "k": [0] * 4 + [5] * 4,
                    "scenario": True,
                    "prompt_variant": "default",
                    "question_id": IDS * 2,
                    "label": ["ANSWER", "ANSWER", "ABSTAIN", "DENY"] * 2,
                }
            ),
        ),
    ):
        folder = cfg.stage_dir(stage_name)
        folder.mkdir(parents=True, exist_ok=True)
        frame.write_parquet(folder / f"{name}.parquet")


def load(project: Path, block: str = "") -> config.RunConfig:
    # One model under test, as the upstream tables above; every model gets the controls.
    (project / "params" / "t.yaml").write_text(
        f"base: default\nanswer:\n  models: [qwen2.5-coder-0.5b]\n"
        f"know2guess:\n  control_models: []\n{block or '  enabled: true'}\n"
    )
    return config.load(project / "params" / "t.yaml")


class TestRun:
    @pytest.fixture()
    def done(self, project: Path) -> tuple[config.RunConfig, FakeModels, stage.Know2GuessResult]:
        cfg = load(project)
        write_upstream(cfg)
        models = FakeModels()
        return cfg, models, stage.run(cfg, models=models, lookup=lookup)

    def test_outputs(self, done) -> None:
        """Every table is written; one decision row per run (2 conditions x the run's prompts), parser and question."""
        cfg, models, out = done
        folder = cfg.stage_dir("know2guess")
        runs = 2 * len(cfg.know2guess.prompts)
        assert sorted(p.name for p in folder.glob("know2guess_*.csv")) == sorted(a.name for a in stage.FILES.values())
        assert out.decisions.height == 8 * runs and out.manifest["decision_calls"] == 4 * runs
        assert out.manifest["runs"] == runs and (folder / "manifest.json").is_file()
        assert ("qwen2.5-coder-0.5b", "off", 64, 0.0) in models.settings  # default.yaml: max_tokens 64
        assert len(models.calls("k2g_")) == 4 * runs

    def test_rag_context_is_the_answer_stages_chunks(self, done) -> None:
        """Single-shot RAG calls carry the retrieved chunks, formatted as the answer stage formats them."""
        cfg, models, _ = done
        rag = [c for c in models.calls("k2g_") if c.prompt.endswith("_rag")]
        assert len(rag) == 4 * len(cfg.know2guess.prompts) and rag[0].fields["context"].startswith(
            "[1] Page c1 (http://wiki/c1)\nText of c1."
        )
        assert all("context" not in c.fields for c in models.calls("k2g_") if not c.prompt.endswith("_rag"))

    def test_judges_see_each_answer_once(self, done) -> None:
        """Only answers to answerable questions are judged, each (question, answer) once per judge,
        with the judge stage's budget (so identical calls come from the cache)."""
        cfg, models, out = done
        judged = models.calls("judge_accuracy")
        assert sorted(c.fields["candidate"] for c in judged) == ["right", "right", "wrong", "wrong"]
        assert {c.fields["ground_truth"] for c in judged} == {"the reference"}
        assert (cfg.judge.accuracy_judges[0], None, cfg.judge.max_tokens, cfg.judge.temperature) in models.settings
        assert out.manifest["judge_items"] == 2 and out.manifest["unscored"] == 0

    def test_scores(self, done) -> None:
        """Standard prompt, strict, no retrieval: a0 right, a1 wrong, u0 abstains, u1 guesses: reliability 1/2."""
        _, _, out = done
        r = out.summary.filter(
            pl.col("prompt") == "standard", pl.col("parser") == "strict", pl.col("condition") == "no_rag"
        ).row(0, named=True)
        assert (r["reliability"], r["answerable_accuracy"], r["productive_abstention"], r["coverage"]) == (
            0.5,
            0.5,
            0.5,
            0.75,
        )
        only = out.summary.filter(
            pl.col("prompt") == "answer_only", pl.col("parser") == "normalized", pl.col("condition") == "no_rag"
        ).row(0, named=True)
        assert only["productive_abstention"] == 0.5  # "I don't know" read by the phrase list
        issues = out.issues.filter(pl.col("prompt") == "answer_only", pl.col("parser") == "strict")
        assert dict(zip(issues["issue"], issues["n"], strict=True))["no_decision"] == 4

    def test_cross_protocol(self, done) -> None:
        """K2G's declared abstention beside the judge's label of the same model and condition."""
        _, _, out = done
        r = out.cross_protocol.filter(
            pl.col("model") == "all", pl.col("prompt") == "standard", pl.col("condition") == "single"
        ).row(0, named=True)
        assert (r["n_pairs"], r["agreement_abstain"], r["agreement_decline"]) == (4, 1.0, 0.75)
        assert (r["car_k2g"], r["car_judge"], r["car_judge_lenient"]) == (0.5, 0.5, 1.0)
        assert out.decisions["judge_label"].null_count() == 0

    def test_macros_and_figures(self, done) -> None:
        """Macros are letters-only names with printed values; every figure draws from its CSV."""
        cfg, _, _ = done
        folder = cfg.stage_dir("know2guess")
        # min_n=1: every number counts as a finding, so the words can be checked against the data.
        got = {name: value for name, value, _ in macros.macros(folder, min_n=1)}
        assert all(re.fullmatch(r"[A-Za-z]+", name) for name in got)
        assert (got["KgQuestions"], got["KgBestNoRagReliability"], got["KgXAgreeRag"]) == ("4", "50.0", "100.0")
        assert got["KgRagReliabilityDirection"] == "the same" and got["KgXCarShiftRag"] == "+0.0"
        # By default (the claims check's minimum, 6) four questions are no finding.
        small = {name: value for name, value, _ in macros.macros(folder)}
        assert small["KgBestNoRagReliability"] == "\\dcsmall{50.0}{4 questions}"
        assert small["KgRagReliabilityDirection"] == "not comparable at this n" and small["KgQuestions"] == "4"

    def test_figures(self, done) -> None:
        """Each figure draws the run's numbers, worked out by hand from the script (the same replies in
        both conditions, so both panels alike). Standard prompt, strict parser: a0 right at 90, a1
        wrong at 80, u0 abstains, u1 answers at 70.
        R_lambda (K2G 4.4) = (1 correct + lam * 1 abstained) / (2 + lam * 2) = 0.5 at each lambda.
        Outcome profile (K2G 6.7) of 4: correct 1, wrong 1, unnecessary 0, productive 1, missed 1,
        refusal 0, parse error 0.
        Reliability diagram: the answered a0 (0.9, credit 1), a1 (0.8, 0) and u1 (0.7, 0; no answer
        to an unanswerable question earns credit), one per bin.
        Parser scatter, reliability: standard 2/4 under both parsers (every reply well formed);
        answer_only: the strict parser reads u0's "I don't know" as an answer (1 of 4: a0), the
        normalized one as an abstention (2 of 4).
        No figure has a layout problem or a quantity its caption leaves unnamed."""
        cfg, _, _ = done
        folder = cfg.stage_dir("know2guess")
        figs = {stem: draw(pl.read_csv(folder / table.name)) for stem, (draw, table) in plots.FIGURES.items()}
        for stem, fig in figs.items():
            assert [ax.get_title() for ax in fig.axes] == list(plots.CONDITION_NAMES.values()), stem
            checked = plots.FIGURES[stem][0](pl.read_csv(folder / plots.FIGURES[stem][1].name))
            flat_panels.say_flat(checked)  # as the paper stage does before it checks a figure
            assert figure_check.problems(checked, CAPTIONS[stem]) == [], stem
        for ax in figs["k2g_reliability_lambda"].axes:
            (line,) = ax.get_lines()
            assert list(line.get_xdata()) == [0.5, 1.0, 1.5] and list(line.get_ydata()) == [0.5, 0.5, 0.5]
        for ax in figs["k2g_outcome_profile"].axes:
            assert [p.get_width() for p in ax.patches] == [0.25, 0.25, 0.0, 0.25, 0.25, 0.0, 0.0]
        for ax in figs["k2g_reliability_diagram"].axes:
            _, line = ax.get_lines()
            assert list(line.get_xdata()) == pytest.approx([0.7, 0.8, 0.9]) and list(line.get_ydata()) == [0, 0, 1]
        for ax in figs["k2g_parser_scatter"].axes:
            points = {tuple(xy) for c in ax.collections for xy in c.get_offsets().tolist()}
            assert points == {(0.5, 0.5), (0.25, 0.5)}

    def test_rerun_is_identical(self, done) -> None:
        """The same inputs give the same tables (bootstrap seeded by the run)."""
        cfg, _, out = done
        again = stage.run(cfg, models=FakeModels(), lookup=lookup)
        assert again.summary.equals(out.summary) and again.cross_protocol.equals(out.cross_protocol)


class TestRunErrors:
    def test_disabled(self, project: Path) -> None:
        """enabled: false writes DISABLED.md, removes stale tables, asks nothing, returns empty frames."""
        cfg = load(project, "  enabled: false")
        folder = cfg.stage_dir("know2guess")
        folder.mkdir(parents=True)
        (folder / "know2guess_summary.csv").write_text("stale\n")
        models = FakeModels()
        out = stage.run(cfg, models=models, lookup=lookup)
        assert (folder / "DISABLED.md").is_file() and not (folder / "know2guess_summary.csv").exists()
        assert out.decisions.is_empty() and out.manifest["enabled"] is False and not models.settings

    def test_no_retrieval_rows(self, project: Path) -> None:
        """Single-shot RAG needs the answer stage's chunks at its pipeline and k: the error says so."""
        cfg = load(project)
        write_upstream(cfg, retrieved=False)
        with pytest.raises(ValueError, match=r"retrieved.parquet has no chunks for pipeline 'hybrid' at k=5"):
            stage.run(cfg, models=FakeModels(), lookup=lookup)

    def test_missing_judge_outputs(self, project: Path) -> None:
        """Without 06_judge's references the error names the file and the stage to run."""
        cfg = load(project)
        write_upstream(cfg)
        (cfg.stage_dir("judge") / "references.parquet").unlink()
        with pytest.raises(FileNotFoundError, match=r"references.parquet: run 06_judge"):
            stage.run(cfg, models=FakeModels(), lookup=lookup)

    def test_bad_prompt(self, project: Path) -> None:
        """An unknown prompt, or a grid without the standard prompt, stops before any call."""
        cfg = load(project, "  prompts: [standard, chatty]")
        write_upstream(cfg)
        with pytest.raises(ValueError, match="unknown prompt 'chatty'"):
            stage.run(cfg, models=FakeModels(), lookup=lookup)
        with pytest.raises(ValueError, match="must include 'standard'"):
            protocol.check(Know2GuessParams(prompts=("compact",)))


def test_default_run() -> None:
    """Stage 08 of the default run (`make all`): every table written; one decision per question,
    run (model x thinking x condition x prompt, controls to the control models) and parser, each in
    a declared state, null exactly where the call failed; every decision beside the judge's label of
    the same answer-stage response; the summary counting the decisions of each run and parser; and
    every cache key in the stage's call ledger. That a second run replays every call from the cache,
    byte for byte, is tests/runtime/test_bundle.py::test_replay_into_second_checkout (a strict replay
    of the scripted run, which runs 08); that a cached call starts no local server is
    tests/llm/test_client.py::TestConnect::test_server_started_lazily."""
    cfg = default_run.config_or_skip("know2guess", "judge")
    folder = cfg.stage_dir("know2guess")
    assert catalogue.missing(cfg, "know2guess") == []
    assert all((folder / name).is_file() for name in stage.output_files(cfg.know2guess))
    responses = pl.read_parquet(cfg.stage_dir("answer") / "responses.parquet")
    bench = pl.read_parquet(cfg.stage_dir("verify") / "benchmark.parquet")
    asked = bench.filter(pl.col("id").is_in(responses["question_id"].unique().to_list()))
    questions = select_questions(asked, cfg.know2guess.limit_questions, cfg.seed)
    runs = protocol.plan(cfg.know2guess, cfg.answer, default_run.thinking_switch(cfg))
    decisions = pl.read_csv(folder / stage.FILES["decisions"].name, infer_schema_length=None)
    # questions x runs (conditions x prompts per model) x parsers
    assert decisions.height == questions.height * len(runs) * len(MODES)
    assert set(decisions.select(*protocol.RUN_KEY).unique().rows()) == {tuple(vars(r).values()) for r in runs}
    assert set(decisions["parser"]) == set(MODES) and decisions.select(*protocol.KEY, "question_id").is_unique().all()
    assert set(decisions["question_id"]) == set(questions["id"])
    assert set(decisions["state"].drop_nulls()) <= set(STATES)
    assert decisions["state"].is_null().to_list() == decisions["error"].is_not_null().to_list()

    judged = pl.read_parquet(cfg.stage_dir("judge") / "judged.parquet").filter(
        pl.col("scenario"),
        pl.col("prompt_variant") == "default",
        (pl.col("condition") == "no_rag")
        | ((pl.col("pipeline") == cfg.answer.pipeline) & (pl.col("k") == cfg.answer.k)),
    )
    label = {
        (r["model"], r["thinking"], r["condition"], r["question_id"]): r["label"] for r in judged.iter_rows(named=True)
    }
    assert decisions["judge_label"].to_list() == [
        label[(r["model"], r["thinking"], r["condition"], r["question_id"])] for r in decisions.iter_rows(named=True)
    ]
    summary = pl.read_csv(folder / stage.FILES["summary"].name)
    counted = decisions.group_by(protocol.KEY).agg(n=pl.len(), n_answer=(pl.col("state") == ANSWER).sum())
    assert summary.select(*protocol.KEY, "n", "n_answer").sort(protocol.KEY).rows() == counted.sort(protocol.KEY).rows()
    keys = set(decisions["cache_key"].drop_nulls())
    assert keys and keys <= default_run.llm_keys(cfg, "know2guess")
