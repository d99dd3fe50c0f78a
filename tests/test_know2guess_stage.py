"""Tests of the Know2Guess view's stage (09_know2guess) with scripted models, its prompts, plan,
figures and paper macros."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest
from matplotlib.figure import Figure

from declinecraft.core import config, prompts
from declinecraft.core.params import AnswerParams, Know2GuessParams
from declinecraft.evaluation.context import Chunk
from declinecraft.llm.calls import Call, Reply
from declinecraft.paper import caption_check, figure_check
from declinecraft.views import know2guess
from declinecraft.views.know2guess import macros, plots, protocol, stage

IDS = ["a0", "a1", "u0", "u1"]
DECISIONS = {
    "a0": "DECISION: ANSWER\nCONFIDENCE: 90\nFINAL_ANSWER: right",
    "a1": "DECISION: ANSWER\nCONFIDENCE: 80\nFINAL_ANSWER: wrong",
    "u0": "DECISION: ABSTAIN_DONT_KNOW\nCONFIDENCE: 20\nFINAL_ANSWER: NA",
    "u1": "DECISION: ANSWER\nCONFIDENCE: 70\nFINAL_ANSWER: guess",
}
ANSWER_ONLY = {"a0": "right", "a1": "wrong", "u0": "I don't know", "u1": "guess"}

#: Figure captions of paper/main.tex, which each view figure must match (caption_check).
CAPTIONS = caption_check.captions(
    (Path(__file__).resolve().parents[1] / "paper" / "main.tex").read_text(encoding="utf-8")
)


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
        assert sorted(p.name for p in folder.glob("know2guess_*.csv")) == sorted(stage.FILES.values())
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
        for stem, (draw, csv) in plots.FIGURES.items():
            fig = draw(pl.read_csv(folder / csv))
            assert isinstance(fig, Figure) and fig.axes, stem
            assert figure_check.problems(fig, CAPTIONS[stem]) == [], stem

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


class TestPlan:
    def test_controls_and_thinking(self) -> None:
        """Switchable models run each thinking setting; only control models get the control prompts."""
        params = Know2GuessParams(control_models=("a",), conditions=("no_rag",))
        runs = protocol.plan(
            params,
            AnswerParams(models=("a", "b"), thinking=("off", "on")),
            lambda m: "switchable" if m == "a" else "none",
        )
        assert [(r.model, r.thinking, r.prompt) for r in runs if r.model == "b"] == [("b", "off", "standard")]
        assert len([r for r in runs if r.model == "a"]) == 2 * 4

    def test_control_model_must_be_under_test(self) -> None:
        """A control model outside the models under test is an error naming it."""
        with pytest.raises(ValueError, match="'z' is not a model under test"):
            protocol.plan(Know2GuessParams(control_models=("z",)), AnswerParams(models=("a",)), lambda m: "none")


class TestPrompts:
    @pytest.mark.parametrize("name", sorted(protocol.PROMPTS.values()))
    def test_templates(self, root: Path, name: str) -> None:
        """Each K2G template loads and names its source; the RAG variant is the same text with our
        context block, and only that, before the question."""
        base, rag = prompts.load(name, root), prompts.load(f"{name}_rag", root)
        assert base.placeholders == ("question",) and "Know2Guess" in base.section and "Appendix C" in base.section
        assert rag.section.startswith("ours") and "OURS" in rag.meta["note"]
        question = "QUESTION_BEGIN" if name == "k2g_delimiter" else "Question: {question}"
        assert rag.text == base.text.replace(question, "Context:\n{context}\n\n" + question, 1)

    def test_standard_is_appendix_c1(self, root: Path) -> None:
        """The standard prompt asks for the four K2G fields, line by line."""
        text = prompts.load("k2g_standard", root).render(question="Q?")
        assert [line.split(":")[0] for line in text.splitlines()[1:5]] == [
            "DECISION",
            "CONFIDENCE",
            "FINAL_ANSWER",
            "REASON_CODE",
        ]
        assert text.endswith("Do not add any other text.\n\nQuestion: Q?")


class TestMacros:
    def test_direction_follows_printed_precision(self) -> None:
        """A shift that prints as 0.0 points reads "the same"; the sign decides otherwise."""
        assert [macros.direction(v) for v in (0.0004, -0.0004, 0.0006, -0.001)] == [
            "the same",
            "the same",
            "higher",
            "lower",
        ]
        assert macros.direction(float("nan")) == "not comparable"
        assert macros.fmt(-0.0123, "pts") == "\\textminus 1.2" and macros.fmt(1234, "int") == "1{,}234"

    def test_no_tables(self, tmp_path: Path) -> None:
        """A folder without the stage's tables gives n/a for every run number, with the reason; the
        confidence sentence, which the prose appends, is left out."""
        got = macros.macros(tmp_path)
        run = [(n, v, w) for n, v, w in got if not n.startswith("KgPaper") and n != "KgConfidenceNote"]
        assert run and all(v == "n/a" and "n/a:" in w for _, v, w in run)
        assert dict((n, v) for n, v, _ in got)["KgConfidenceNote"] == ""

    def test_lambda_plot_draws_the_table(self) -> None:
        """The R_lambda figure plots the table's values. Know2Guess §4.4: R = (correct + lam * abstained)
        / (n_ans + lam * n_unans); by hand, 3 answerable (2 correct) and 1 unanswerable (abstained):
        R_0.5 = 2.5 / 3.5, R_1.5 = 3.5 / 4.5, and reliability_from_counts agrees."""
        lams = [0.5, 1.5]
        rows = [
            {
                "model": "m",
                "thinking": "off",
                "prompt": "standard",
                "parser": "strict",
                "condition": "no_rag",
                "lam": lam,
                "reliability": know2guess.reliability_from_counts(2, 3, 1, 1, lam),
            }
            for lam in lams
        ]
        fig = plots.plot_reliability_vs_lambda(pl.DataFrame(rows))
        line = fig.axes[0].get_lines()[0]
        assert list(line.get_xdata()) == lams and list(line.get_ydata()) == pytest.approx([2.5 / 3.5, 3.5 / 4.5])

    @pytest.mark.parametrize("draw", [spec[0] for spec in plots.FIGURES.values()])
    def test_empty_figure(self, draw) -> None:  # noqa: ANN001
        """An empty table still gives a figure (saying there is nothing to show)."""
        assert isinstance(draw(pl.DataFrame()), Figure)


class TestConfidenceNote:
    def _decisions(self, confidences: list[float | None]) -> pl.DataFrame:
        return pl.DataFrame(
            {"prompt": "standard", "parser": "strict", "state": "ANSWER", "confidence": confidences},
            schema_overrides={"confidence": pl.Float64},
        )

    def test_one_value_says_little(self) -> None:
        """9 of 10 answered replies at 0.5: counted, and ECE is said to measure little."""
        note = macros.confidence_note(self._decisions([0.5] * 9 + [0.9]))
        assert note.startswith(
            " The 10 answered replies state confidences of 2 distinct values; 9 of them (90%) state a confidence of 50"
        )
        assert "not calibration" in note

    def test_varied(self) -> None:
        """Confidences spread over values get the counts only; no answered reply gives ''."""
        note = macros.confidence_note(self._decisions([0.5, 0.6, 0.7, 0.8, 0.9]))
        assert "1 of them (20%)" in note and "not calibration" not in note
        assert macros.confidence_note(self._decisions([None])) == "" and macros.confidence_note(pl.DataFrame()) == ""
        assert macros.confidence_note(self._decisions([0.8])).startswith(
            " The 1 answered reply states confidences of 1 distinct value;"
        )
