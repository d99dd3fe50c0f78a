"""Tests for declinecraft.views.know2guess.stage (09_know2guess) with scripted models, and (slow) end
to end with SmolLM2-135M."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from declinecraft.core import config
from declinecraft.core.params import Know2GuessParams
from declinecraft.evaluation import answer_stage, judge_stage
from declinecraft.evaluation.context import Chunk
from declinecraft.llm.cache import open_cache
from declinecraft.llm.calls import Call, Reply
from declinecraft.paper import caption_check, figure_check
from declinecraft.views.know2guess import STATES, macros, plots, protocol, stage
from tests.support import projects, small_model_runs

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
            assert figure_check.problems(fig, CAPTIONS[stem]) == [], stem
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


@pytest.mark.slow
def test_real_model_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    """Every question gets a state under both parsers, every table is written, and a second run
    replays every call from the cache."""
    monkeypatch.setenv("DECLINECRAFT_CACHE", str(tmp_path / "cache"))
    cfg = small_model_runs.tiny_project(tmp_path, root)
    answer_stage.run(cfg)
    judge_stage.run(cfg)
    first = stage.run(cfg)
    assert (
        first.decisions.height == 3 * 2 * len(cfg.know2guess.prompts) * 2
    )  # questions x conditions x prompts x parsers
    assert set(first.decisions["state"].drop_nulls()) <= set(STATES)
    assert first.decisions["state"].null_count() == first.decisions["error"].is_not_null().sum()
    assert all((cfg.stage_dir("know2guess") / name).is_file() for name in stage.output_files(cfg.know2guess))
    with open_cache(tmp_path / "cache") as store:
        stored = store.count()
    again = stage.run(cfg)
    assert again.decisions.equals(first.decisions) and again.summary.equals(first.summary)
    with open_cache(tmp_path / "cache") as store:
        assert store.count() == stored  # the rerun sent no call (its time: benchmarks/bench_views.py)
