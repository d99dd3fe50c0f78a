"""Tests of the explorer (``declinecraft.explore``): the joined frame, every filter, the question view,
the widgets, the report page and its command line, and the notebook (papermill)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import jinja2
import polars as pl
import pytest
from tests.support import synthetic

from declinecraft import explore
from declinecraft.core import config
from declinecraft.explore import markup
from declinecraft.explore.__main__ import main

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = (("m1", "off"), ("m1", "on"), ("m2", "off"))
SETTINGS = {"no_rag": ("none", 0), "single": ("hybrid", 5), "iterative": ("hybrid", 5)}

# --- a hand-built run with known answers ------------------------------------------------------------

QUESTIONS = [
    {
        "id": "q-sulfur",
        "answerable": False,
        "scenario": "I am flying with my Elytra and boost with a firework rocket.",
        "asked_question": "What are the distinct archetypes of the Sulfur Cube entity?",
        "fact": "Twelve archetypes.",
        "target_chunk_id": "Sulfur_Cube#0",
        "target_title": "Sulfur Cube",
        "scenario_chunk_ids": ["Elytra#0", "Firework#0"],
    },
    {
        "id": "q-copper",
        "answerable": False,
        "scenario": "I ride my horse across the plains.",
        "asked_question": "How many armor points does copper horse armor give?",
        "fact": "Four points.",
        "target_chunk_id": "Copper_Horse_Armor#0",
        "target_title": "Copper Horse Armor",
        "scenario_chunk_ids": ["Horse#0"],
    },
    {
        "id": "q-panda",
        "answerable": True,
        "scenario": "I am breeding pandas in the bamboo jungle.",
        "asked_question": "How do main and hidden genes decide a playful panda?",
        "fact": "Dominant main gene.",
        "target_chunk_id": "Panda#0",
        "target_title": "Panda",
        "scenario_chunk_ids": ["Bamboo#0"],
    },
    {
        "id": "q-spider",
        "answerable": True,
        "scenario": "I sneak on a slime block while a cave spider attacks.",
        "asked_question": "Which mob makes a cave spider run away?",
        "fact": "Armadillos scare spiders.",
        "target_chunk_id": "Cave_Spider#0",
        "target_title": "Cave Spider",
        "scenario_chunk_ids": ["Slime_Block#0"],
    },
]
CHUNKS = [
    "Elytra#0",
    "Firework#0",
    "Horse#0",
    "Horse_Armor#0",
    "Magma_Cube#0",
    "Panda#0",
    "Bamboo#0",
    "Cave_Spider#0",
    "Slime_Block#0",
    "Leather#0",
]
POST = ["Sulfur_Cube#0", "Copper_Horse_Armor#0"]
RETRIEVED = {
    "q-sulfur": ["Elytra#0", "Firework#0", "Leather#0"],
    "q-copper": ["Horse#0", "Horse_Armor#0", "Leather#0"],
    "q-panda": ["Bamboo#0", "Panda#0", "Leather#0"],
    "q-spider": ["Slime_Block#0", "Leather#0", "Horse#0"],
}
#: (question, model, thinking, setting) -> (label, score_j1, score_j2); everything else takes the default.
DEFAULT = {
    "q-sulfur": ("ABSTAIN", None, None),
    "q-copper": ("ABSTAIN", None, None),
    "q-panda": ("ANSWER", 1.0, 1.0),
    "q-spider": ("ABSTAIN", 0.0, 0.0),
}
SPECIAL = {
    ("q-sulfur", "m1", "off", "no_rag"): ("ANSWER", None, None),
    ("q-sulfur", "m1", "off", "iterative"): ("ANSWER", None, None),  # the Sulfur Cube: A single -> X iterative
    ("q-copper", "m1", "on", "no_rag"): ("DENY", None, None),  # thinking off -> on: A -> D
    ("q-copper", "m2", "off", "iterative"): (None, None, None),  # budget exhausted
    ("q-panda", "m1", "off", "iterative"): ("ANSWER", 1.0, 0.0),  # judges disagree
}
RULE_DIFFERS = ("q-panda", "m2", "off", "single")  # LLM judge ANSWER, rule_label ABSTAIN


def _rounds(qid: str) -> str:
    first = {
        "index": 0,
        "queries": [qid],
        "chunk_ids": RETRIEVED[qid],
        "stop": None,
        "reflection": {
            "status": "insufficient",
            "assessment": "Insufficient",
            "missing_info": "what it is",
            "follow_ups": ["Magma Cube sizes"],
        },
    }
    return json.dumps(
        [
            first,
            {
                "index": 1,
                "queries": ["Magma Cube sizes"],
                "chunk_ids": ["Magma_Cube#0"],
                "reflection": None,
                "stop": "max_rounds",
            },
        ]
    )


def build_tables() -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(benchmark, judged, references, chunks) of the hand-built run."""
    bench = pl.DataFrame(
        [
            {
                **q,
                "question": f"{q['scenario']} {q['asked_question']}",
                "target_url": f"https://wiki.test/{q['target_title']}",
            }
            for q in QUESTIONS
        ]
    )
    rows = []
    answerable = {q["id"]: q["answerable"] for q in QUESTIONS}
    plan = [(c, *SETTINGS[c]) for c in SETTINGS] + [("single", "bm25", 5)]
    for q in QUESTIONS:
        qid = q["id"]
        for model, thinking in CONFIGS:
            for condition, pipeline, k in plan:
                if pipeline == "bm25" and model != "m2":
                    continue  # an ablation row: single-shot BM25 for m2 only
                setting = condition if pipeline != "bm25" else "single/bm25/k5"
                label, j1, j2 = SPECIAL.get((qid, model, thinking, setting), DEFAULT[qid])
                ids = (
                    []
                    if condition == "no_rag"
                    else RETRIEVED[qid] + (["Magma_Cube#0"] if condition == "iterative" else [])
                )
                text = {
                    "ABSTAIN": "The provided context does not contain the answer.",
                    "DENY": "There is no such thing.",
                    "ANSWER": f"It is answered ({qid}).",
                }.get(label or "", "")
                if (qid, model, thinking, setting) == ("q-sulfur", "m1", "off", "iterative"):
                    text = "The Magma Cube (sometimes called a 'Sulfur Cube') comes in three size-based archetypes."
                rows.append(
                    {
                        "response_id": f"{qid}/{model}/{thinking}/{setting}",
                        "question_id": qid,
                        "answerable": answerable[qid],
                        "model": model,
                        "thinking": thinking,
                        "condition": condition,
                        "pipeline": pipeline,
                        "k": k,
                        "scenario": True,
                        "prompt_variant": "default",
                        "query": qid,
                        "response": text,
                        "thinking_trace": "hmm, let me think" if thinking == "on" else "",
                        "finish_reason": "length" if label is None else "stop",
                        "budget_exhausted": label is None,
                        "cache_key": "k",
                        "retrieved_chunk_ids": ids,
                        "component_ranks": json.dumps([{"bm25": i + 1, "dense": len(ids) - i} for i in range(len(ids))])
                        if ids
                        else None,
                        "rounds": _rounds(qid) if condition == "iterative" else None,
                        "n_rounds": 2 if condition == "iterative" else None,
                        "completion_tokens": 10,
                        "error": None,
                        "label": label,
                        "label_unparsable": False,
                        "label_source": "llm",
                        "rule_label": "ABSTAIN" if (qid, model, thinking, setting) == RULE_DIFFERS else label,
                        "score_j1": j1,
                        "score_j2": j2,
                        "accuracy": None if j1 is None else (j1 + j2) / 2,
                        "accuracy_complete": j1 is not None,
                        "question": "joined by the judge stage",
                        "reference": f"reference of {qid}",
                    }
                )
    judged = pl.DataFrame(
        rows,
        schema_overrides={"score_j1": pl.Float64, "score_j2": pl.Float64, "accuracy": pl.Float64, "label": pl.String},
    )
    refs = pl.DataFrame(
        {"question_id": [q["id"] for q in QUESTIONS], "reference": [f"ref {q['id']}" for q in QUESTIONS]}
    )
    chunks = pl.DataFrame(
        {
            "chunk_id": CHUNKS + POST,
            "title": [c.split("#")[0].replace("_", " ") for c in CHUNKS + POST],
            "url": [f"https://wiki.test/{c.split('#')[0]}" for c in CHUNKS + POST],
            "text": [f"[Page: {c.split('#')[0]}] text of {c}" for c in CHUNKS + POST],
            "corpus": ["pre"] * len(CHUNKS) + ["post"] * len(POST),
        }
    )
    return bench, judged, refs, chunks


def write_project(folder: Path) -> config.RunConfig:
    """A throwaway project whose default run holds the hand-built run's outputs (k10 derives from it)."""
    (folder / "params").mkdir(parents=True)
    shutil.copy(ROOT / "pyproject.toml", folder / "pyproject.toml")
    for name in ("default.yaml", "k10.yaml"):
        shutil.copy(ROOT / "params" / name, folder / "params" / name)
    cfg = config.load(folder / "params" / "default.yaml")
    bench, judged, refs, chunks = build_tables()
    for stage, name, frame in (
        ("verify", "benchmark", bench),
        ("judge", "judged", judged),
        ("judge", "references", refs),
    ):
        cfg.stage_dir(stage).mkdir(parents=True, exist_ok=True)
        frame.write_parquet(cfg.stage_dir(stage) / f"{name}.parquet")
    cfg.stage_dir("corpus").mkdir(parents=True)
    for corpus in ("pre", "post"):
        chunks.filter(pl.col("corpus") == corpus).drop("corpus").write_parquet(
            cfg.stage_dir("corpus") / f"chunks_{corpus}.parquet"
        )
    return cfg


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> config.RunConfig:
    """The hand-built run written into a throwaway project."""
    return write_project(tmp_path_factory.mktemp("explore"))


@pytest.fixture(scope="module")
def frame(run: config.RunConfig) -> pl.DataFrame:
    """The hand-built run, loaded."""
    return explore.load(run)


def keys(rows: pl.DataFrame, *cols: str) -> set[tuple[Any, ...]]:
    return set(rows.select(cols).iter_rows())


# --- loading ----------------------------------------------------------------------------------------


class TestResolve:
    def test_name_path_and_config(self, run: config.RunConfig) -> None:
        """A run name, a relative or absolute params path and a config resolve to the same run."""
        assert explore.resolve("default", root=run.root).params_file == run.params_file
        assert explore.resolve("params/k10.yaml", root=run.root).run == "k10"
        assert explore.resolve(run.params_file).run == "default"
        assert explore.resolve(run) is run


class TestLoad:
    def test_one_row_per_response(self, frame: pl.DataFrame) -> None:
        """Every response is one row, joined with its question, with run and params file."""
        assert frame.height == 4 * (3 * 3 + 1)
        assert frame.select("question_id", "model", "thinking", "setting").is_duplicated().sum() == 0
        row = frame.filter(pl.col("question_id") == "q-panda").row(0, named=True)
        assert row["asked_question"].startswith("How do main") and row["scenario_text"].startswith("I am breeding")
        assert row["scenario"] is True and row["run"] == "default" and row["params_file"].endswith("default.yaml")
        assert row["reference"] == "reference of q-panda"  # the judge stage's column wins over references.parquet

    def test_settings_and_main(self, frame: pl.DataFrame) -> None:
        """The main grid's settings are the conditions; the BM25 ablation is named and not main."""
        assert set(frame["setting"]) == {"no_rag", "single", "iterative", "single/bm25/k5"}
        assert frame.filter(pl.col("setting") == "single/bm25/k5")["main"].to_list() == [False] * 4
        assert frame.filter(pl.col("setting") != "single/bm25/k5")["main"].all()

    def test_retrieval_columns(self, frame: pl.DataFrame) -> None:
        """Target rank (1-based) and scenario hits come from the retrieved ids."""
        row = frame.filter(pl.col("question_id") == "q-panda", pl.col("setting") == "single").row(0, named=True)
        assert (row["target_retrieved"], row["target_rank"], row["scenario_hits"]) == (True, 2, 1)
        sulfur = frame.filter(pl.col("question_id") == "q-sulfur", pl.col("setting") == "iterative").row(0, named=True)
        assert (sulfur["target_retrieved"], sulfur["target_rank"], sulfur["scenario_hits"]) == (False, None, 2)

    def test_derived_run_reads_base(self, run: config.RunConfig) -> None:
        """A derived run reads its base's benchmark and its own judged table."""
        k10 = config.load(run.root / "params" / "k10.yaml")
        with pytest.raises(FileNotFoundError, match=r"outputs/k10/05_answer/responses.parquet"):
            explore.load(k10)
        k10.stage_dir("judge").mkdir(parents=True, exist_ok=True)
        _, judged, _, _ = build_tables()
        judged.head(3).write_parquet(k10.stage_dir("judge") / "judged.parquet")
        assert explore.load("k10", root=run.root).height == 3
        assert k10.stage_dir("verify") == run.stage_dir("verify")

    def test_missing_benchmark(self, tmp_path: Path) -> None:
        """A run without a benchmark is a clear error naming the file."""
        (tmp_path / "params").mkdir()
        shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
        shutil.copy(ROOT / "params" / "default.yaml", tmp_path / "params" / "default.yaml")
        with pytest.raises(FileNotFoundError, match=r"04_verify/benchmark.parquet.*04_verify"):
            explore.load(tmp_path / "params" / "default.yaml")


class TestJoinTables:
    def test_unknown_question(self) -> None:
        """A response to a question the benchmark lacks is an error naming the question."""
        bench, judged, refs, _ = build_tables()
        with pytest.raises(ValueError, match="q-panda"):
            explore.join_tables(bench.filter(pl.col("id") != "q-panda"), judged, refs)

    def test_missing_column(self) -> None:
        """A response table without ``model`` is an error naming the column."""
        bench, judged, _, _ = build_tables()
        with pytest.raises(ValueError, match="responses: missing column 'model'"):
            explore.join_tables(bench, judged.drop("model"))

    def test_references_fill_in(self) -> None:
        """Without a reference column, references.parquet supplies it."""
        bench, judged, refs, _ = build_tables()
        frame = explore.join_tables(bench, judged.drop("reference"), refs)
        assert set(frame.filter(pl.col("question_id") == "q-copper")["reference"]) == {"ref q-copper"}

    def test_synthetic_judged(self) -> None:
        """The synthetic judged table (null pipeline without retrieval) joins; its main grid is found."""
        judged = synthetic.synthetic_judged(3, 20, seed=1, ablations=True)
        bench = pl.DataFrame({"id": [f"q{i:04d}" for i in range(20)], "answerable": [i < 14 for i in range(20)]})
        frame = explore.join_tables(bench, judged)
        assert frame.height == judged.height
        assert set(frame.filter("main")["setting"]) == {"no_rag", "single", "iterative"}
        assert "single/bm25/k5" in set(frame["setting"]) and "single/hybrid/k5/no-scenario" in set(frame["setting"])


class TestFailedExpr:
    @pytest.mark.parametrize(
        ("answerable", "label", "accuracy", "exhausted", "strict", "expected"),
        [
            (False, "ANSWER", None, False, False, True),
            (False, "DENY", None, False, False, False),
            (False, "DENY", None, False, True, True),
            (False, "ABSTAIN", None, False, False, False),
            (False, None, None, True, False, None),
            (True, "ABSTAIN", 0.0, False, False, True),
            (True, "ANSWER", 0.5, False, False, False),
            (True, "ANSWER", 0.25, False, False, True),
            (True, "ANSWER", None, False, False, None),
            (True, None, None, True, False, True),
        ],
    )
    def test_cases(
        self,
        answerable: bool,
        label: str | None,
        accuracy: float | None,
        exhausted: bool,
        strict: bool,
        expected: bool | None,
    ) -> None:
        """Each (answerability, label, accuracy, budget) case fails or not as documented."""
        row = pl.DataFrame(
            {"answerable": [answerable], "label": [label], "accuracy": [accuracy], "budget_exhausted": [exhausted]},
            schema_overrides={"label": pl.String, "accuracy": pl.Float64},
        )
        assert row.select(explore.failed_expr(strict=strict)).item() == expected


class TestLoadChunks:
    def test_both_corpora(self, run: config.RunConfig) -> None:
        """Chunks of C_pre and C_post, with their corpus."""
        chunks = explore.load_chunks(run)
        assert chunks.height == len(CHUNKS) + len(POST)
        assert set(chunks.filter(pl.col("corpus") == "post")["chunk_id"]) == set(POST)


# --- filters ----------------------------------------------------------------------------------------


class TestTransitions:
    def test_sulfur_cube(self, frame: pl.DataFrame) -> None:
        """Abstained single-shot, answered iterative: exactly the planted Sulfur Cube response."""
        rows = explore.transitions(frame)
        assert keys(rows, "question_id", "model", "thinking") == {("q-sulfur", "m1", "off")}
        assert rows["response_to"][0].startswith("The Magma Cube")

    def test_codes_and_any(self, frame: pl.DataFrame) -> None:
        """Codes equal label names; '*' matches any label; '-' matches a missing label."""
        assert explore.transitions(frame, "no_rag", "single", from_label="X", to_label="A").height == 1
        assert explore.transitions(frame, from_label="*", to_label="-").height == 1  # q-copper m2 exhausted
        assert explore.transitions(frame, from_label=None, to_label=None).height == 4 * 3

    def test_bad_label(self, frame: pl.DataFrame) -> None:
        """An unknown label is an error naming it."""
        with pytest.raises(ValueError, match="unknown label 'MAYBE'"):
            explore.transitions(frame, from_label="MAYBE")


class TestThinkingChanges:
    def test_abstain_to_deny(self, frame: pl.DataFrame) -> None:
        """Thinking turns m1's no-RAG abstention on q-copper into a premise denial, and nothing else."""
        rows = explore.thinking_changes(frame)
        assert keys(rows, "question_id", "model", "setting") == {("q-copper", "m1", "no_rag")}

    def test_other_setting(self, frame: pl.DataFrame) -> None:
        """In single-shot RAG, no label changes with thinking."""
        assert (
            explore.thinking_changes(frame, "single", from_label=None, to_label=None)
            .filter(pl.col("label_from") != pl.col("label_to"))
            .height
            == 0
        )


class TestAllFailed:
    def test_spider(self, frame: pl.DataFrame) -> None:
        """Only q-spider is failed by every response, in every setting."""
        rows = explore.all_failed(frame)
        assert set(rows["question_id"]) == {"q-spider"}
        assert set(rows["setting"]) == {"no_rag", "single", "iterative", "single/bm25/k5"}
        assert rows.filter(pl.col("setting") == "single")["n_responses"].item() == 3

    def test_strict_counts_denial(self, frame: pl.DataFrame) -> None:
        """Strict scoring fails DENY too; still no unanswerable question is failed by everyone."""
        assert set(explore.all_failed(frame, strict=True)["question_id"]) == {"q-spider"}


class TestJudgeRuleDisagreements:
    def test_planted(self, frame: pl.DataFrame) -> None:
        """The one response whose rule label differs from the LLM label is found."""
        rows = explore.judge_rule_disagreements(frame)
        assert keys(rows, "question_id", "model", "thinking", "setting", "label", "rule_label") == {
            ("q-panda", "m2", "off", "single", "ANSWER", "ABSTAIN")
        }


class TestJudgeDisagreements:
    def test_spread(self, frame: pl.DataFrame) -> None:
        """Judges 1.0 vs 0.0 give a spread of 1; a higher threshold finds nothing."""
        rows = explore.judge_disagreements(frame)
        assert keys(rows, "question_id", "model", "setting", "spread") == {("q-panda", "m1", "iterative", 1.0)}
        assert explore.judge_disagreements(frame, min_spread=1.5).height == 0

    def test_one_judge(self, frame: pl.DataFrame) -> None:
        """With one judge nothing can disagree."""
        assert explore.judge_disagreements(frame.drop("score_j2")).height == 0


class TestBudgetExhausted:
    def test_planted(self, frame: pl.DataFrame) -> None:
        """The one exhausted response is found with its finish reason."""
        rows = explore.budget_exhausted(frame)
        assert keys(rows, "question_id", "model", "setting", "finish_reason") == {
            ("q-copper", "m2", "iterative", "length")
        }


class TestSearch:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("copper", {"q-copper"}),
            ("MAGMA cube", {"q-sulfur"}),
            ("armadillos", {"q-spider"}),
            ("nothing-like-this", set()),
        ],
    )
    def test_matches(self, frame: pl.DataFrame, text: str, expected: set[str]) -> None:
        """Case-insensitive search over question fields and responses."""
        assert set(explore.search(frame, text)["question_id"]) == expected


class TestCounts:
    def test_flag_counts(self, frame: pl.DataFrame) -> None:
        """One row with each flag's number of rows."""
        counts = explore.flag_counts(frame)
        assert counts.height == 1 and counts.row(0, named=True) == {
            "all_failed": 4,
            "judge_rule": 1,
            "judges": 1,
            "exhausted": 1,
        }

    def test_label_counts(self, frame: pl.DataFrame) -> None:
        """Responses per setting, answerability and label add up to the frame."""
        counts = explore.label_counts(frame)
        assert counts["len"].sum() == frame.height
        no_rag = counts.filter(pl.col("setting") == "no_rag", pl.col("answerable").not_(), pl.col("label") == "ANSWER")
        assert no_rag["len"].item() == 1  # q-sulfur m1 off


class TestScoreColumns:
    def test_names(self, frame: pl.DataFrame) -> None:
        """The per-judge columns, in order."""
        assert explore.score_columns(frame) == ["score_j1", "score_j2"]


class TestSettingOrder:
    def test_order(self) -> None:
        """Main conditions first, then ablations alphabetically."""
        assert explore.setting_order(["single/bm25/k5", "iterative", "single", "no_rag", "single/a/k1"]) == [
            "no_rag",
            "single",
            "iterative",
            "single/a/k1",
            "single/bm25/k5",
        ]


# --- one question -------------------------------------------------------------------------------------


class TestShow:
    def test_html(self, frame: pl.DataFrame) -> None:
        """The HTML names the question, target page, every response, rounds, ranks and thinking collapsed."""
        page = explore.show("q-sulfur", frame)._repr_html_()
        for text in (
            "Sulfur Cube",
            "archetypes of the Sulfur Cube",
            "Twelve archetypes",
            "reference of q-sulfur",
            "The Magma Cube (sometimes called a &#39;Sulfur Cube&#39;)",
            "Magma Cube sizes",
            "Insufficient",
            "bm25 1 · dense 3",
            "<details><summary>thinking trace",
            "dc-l-ABSTAIN",
            "<style>",
            'data-setting="single/bm25/k5"',
            "scenario chunk",
        ):
            assert text in page, text
        assert page.count('<tr class="dc-row ') == 10 and page.count('<tr class="dc-row" data-config=') == 3  # + grid

    def test_text(self, frame: pl.DataFrame) -> None:
        """The terminal form lists settings, labels, retrieved chunks and hides thinking unless asked."""
        view = explore.show("q-copper", frame)
        text = str(view)
        assert "q-copper · unanswerable" in text and "== iterative ==" in text and "Horse Armor (Horse_Armor#0)" in text
        assert "- m1 (thinking on): DENY" in text and "hmm, let me think" not in text
        assert "hmm, let me think" in view.text(thinking=True) and repr(view) == text

    def test_restrict(self, frame: pl.DataFrame) -> None:
        """Models and settings restrict the responses shown."""
        view = explore.show("q-panda", frame, models=["m2"], settings=["single"])
        assert [(r["model"], r["setting"]) for r in view.rows] == [("m2", "single")]

    def test_escapes(self, frame: pl.DataFrame) -> None:
        """Response text is HTML-escaped."""
        evil = frame.with_columns(response=pl.lit("<script>alert(1)</script>"))
        page = explore.show("q-panda", evil)._repr_html_()
        assert "<script>alert" not in page and "&lt;script&gt;alert(1)" in page

    def test_unknown(self, frame: pl.DataFrame) -> None:
        """An unknown question id is an error naming it."""
        with pytest.raises(ValueError, match="question 'q-nope' is not in the frame"):
            explore.show("q-nope", frame)


class TestQuestionHtml:
    def test_trace_cut(self, frame: pl.DataFrame) -> None:
        """With ``trace_chars`` a long thinking trace is cut and says how much is left out."""
        long = frame.with_columns(thinking_trace=pl.lit("x" * 50))
        page = explore.question_html(explore.show("q-panda", long), trace_chars=20)
        assert "x" * 20 + "\n[… 30 more characters" in page and "x" * 21 not in page
        assert "x" * 50 in explore.question_html(explore.show("q-panda", long))


class TestQuestionText:
    def test_rounds_and_ranks(self, frame: pl.DataFrame) -> None:
        """The text form lists each round's reflection and each hit's component ranks."""
        text = explore.question_text(explore.show("q-sulfur", frame, models=["m1"], settings=["iterative"]))
        assert (
            "round 0: queries ['q-sulfur'] -> 3 new; Insufficient: what it is follow-ups ['Magma Cube sizes']" in text
        )
        assert "4. Magma Cube (Magma_Cube#0) bm25 4, dense 1" in text and "Elytra (Elytra#0) [scenario]" in text


class TestHitsOf:
    def test_iterative(self, frame: pl.DataFrame) -> None:
        """Hits carry rank, component ranks, their round and target/scenario marks."""
        row = frame.filter(pl.col("question_id") == "q-panda", pl.col("setting") == "iterative").row(0, named=True)
        hits = explore.hits_of(row)
        assert [h["chunk_id"] for h in hits] == ["Bamboo#0", "Panda#0", "Leather#0", "Magma_Cube#0"]
        assert (
            hits[1]["target"]
            and hits[0]["scenario"]
            and hits[3]["round"] == 1
            and hits[0]["ranks"] == {"bm25": 1, "dense": 4}
        )


class TestRoundsOf:
    def test_malformed(self) -> None:
        """Missing or malformed rounds JSON gives no rounds."""
        assert explore.rounds_of({"rounds": None}) == [] and explore.rounds_of({"rounds": "{oops"}) == []
        assert explore.rounds_of({"rounds": '{"a": 1}'}) == []


class TestBrowse:
    def test_filters_and_paging(self, frame: pl.DataFrame) -> None:
        """The widget's filter, model and search choices select the questions the functions find."""
        b = explore.browse(frame)
        assert b.ids() == ["q-sulfur", "q-copper", "q-panda", "q-spider"]
        b.filter.value = "transition"
        assert b.ids() == ["q-sulfur"] and "Magma Cube" in b.view.value
        b.filter.value, b.from_label.value, b.to_label.value = "thinking", "A", "D"
        assert b.ids() == ["q-copper"]
        b.filter.value = "all_failed"
        assert b.ids() == ["q-spider"]
        b.filter.value, b.model.value = "all", "m2"
        b.go(1)
        assert b.status.value.startswith("2 / 4 · q-copper") and 'data-config="m1|off"' not in b.view.value
        b.search.value = "copper"
        assert b.ids() == ["q-copper"]

    def test_given_questions(self, frame: pl.DataFrame) -> None:
        """A filter's frame starts the view on its questions."""
        b = explore.browse(frame, questions=explore.budget_exhausted(frame))
        assert b.filter.value == "given" and b.ids() == ["q-copper"]


# --- the report ---------------------------------------------------------------------------------------


class TestReportData:
    def test_labels_and_flags(self, frame: pl.DataFrame) -> None:
        """Per question: label codes per configuration and setting, and where each flag holds."""
        data = explore.report_data(frame, None, run="default")
        by_id = {q["id"]: q for q in data["questions"]}
        assert by_id["q-sulfur"]["labels"]["m1|off"] == {"no_rag": "X", "single": "A", "iterative": "X"}
        assert by_id["q-copper"]["labels"]["m2|off"]["iterative"] == "-"
        assert by_id["q-spider"]["flags"]["all_failed"][0] == ["no_rag", None]
        assert by_id["q-copper"]["flags"] == {"exhausted": [["iterative", "m2|off"]]}
        assert data["chunks"] == {} and "data-chunk" not in by_id["q-panda"]["html"]
        assert "copper horse armor" in by_id["q-copper"]["text"] and data["settings"][:3] == [
            "no_rag",
            "single",
            "iterative",
        ]


class TestReportJson:
    def test_cannot_close_script(self, frame: pl.DataFrame) -> None:
        """Text that would end the data's <script> element is escaped there, yet parses back unchanged."""
        evil = "</script><!-- & 'x' -->"
        page = explore.report_html(frame.with_columns(response=pl.lit(evil)), None, run="<r&d>")
        raw = page.split('id="dc-data">', 1)[1].split("</script>", 1)[0]
        assert "<" not in raw and ">" not in raw and "&" not in raw and "'" not in raw
        data = json.loads(raw)
        assert data["run"] == "<r&d>" and all(evil in q["text"] for q in data["questions"])
        assert "<title>DeclineCraft explorer · &lt;r&amp;d&gt;</title>" in page


class TestReportHtml:
    def test_self_contained(self, frame: pl.DataFrame) -> None:
        """One page: inline CSS/JS, data in a JSON script tag, no external resources."""
        page = explore.report_html(frame, explore.load_chunks(explore.resolve(frame["params_file"][0])), run="default")
        assert page.count('<script type="application/json" id="dc-data">') == 1
        assert "<link" not in page and "src=" not in page and "@import" not in page and "//cdn" not in page
        data = json.loads(page.split('id="dc-data">', 1)[1].split("</script>", 1)[0])
        assert (
            len(data["questions"]) == 4 and data["chunks"]["Magma_Cube#0"] == "[Page: Magma_Cube] text of Magma_Cube#0"
        )
        assert "Copper_Horse_Armor#0" in data["chunks"] and "text of" not in data["questions"][0]["html"]


class TestWriteReport:
    def test_writes_index(self, run: config.RunConfig) -> None:
        """The report goes to outputs/<run>/explorer/index.html."""
        path = explore.write_report(run)
        assert path == run.run_dir() / "explorer" / "index.html" and "q-spider" in path.read_text()


class TestMain:
    def test_cli(self, run: config.RunConfig, capsys: pytest.CaptureFixture[str]) -> None:
        """``report PARAMS`` prints the page's path; a run without outputs exits 1 with the reason."""
        assert main(["report", str(run.params_file)]) == 0
        assert capsys.readouterr().out.strip() == str(run.run_dir() / "explorer" / "index.html")
        empty = run.root / "params" / "empty.yaml"
        empty.write_text("base: default\nseed: 7\n")
        assert main(["report", str(empty)]) == 1
        assert "missing" in capsys.readouterr().err

    def test_module(self, run: config.RunConfig, tmp_path: Path) -> None:
        """``python -m declinecraft.explore report PARAMS --out FILE`` (what ``make report`` runs) writes the page."""
        out = tmp_path / "page.html"
        done = subprocess.run(
            [sys.executable, "-m", "declinecraft.explore", "report", str(run.params_file), "--out", str(out)],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == str(out) and '"id":"q-sulfur"' in out.read_text()


class TestMarkup:
    @pytest.mark.parametrize(("value", "shown"), [(None, "–"), (1.0, "1"), (0.0, "0"), (0.5, "0.5"), (0.125, "0.12")])
    def test_number(self, value: float | None, shown: str) -> None:
        """Scores show without trailing zeros; a missing one as a dash."""
        assert markup.number(value) == shown

    def test_environment(self) -> None:
        """Templates escape values, render None as nothing and refuse names they were not given."""
        env = markup.environment()
        assert env.from_string("<b>{{ a }}</b>{{ b }}").render(a="<i>&", b=None) == "<b>&lt;i&gt;&amp;</b>"
        with pytest.raises(jinja2.UndefinedError):
            env.from_string("{{ nope }}").render()

    def test_templates_are_files(self) -> None:
        """The HTML, CSS and JavaScript are package files, none of them markup in Python."""
        names = set(markup.environment().list_templates())
        assert {
            "question.html.j2",
            "parts.html.j2",
            "question.css",
            "report.html.j2",
            "report.css",
            "report.js",
        } <= names


# --- the notebook -------------------------------------------------------------------------------------


def run_notebook(params_file: Path, out: Path) -> dict[str, Any]:
    """Execute notebooks/explore.ipynb with papermill; return the executed notebook."""
    import nbformat
    import papermill

    papermill.execute_notebook(
        str(ROOT / "notebooks" / "explore.ipynb"),
        str(out),
        cwd=str(ROOT / "notebooks"),
        parameters={"params_file": str(params_file)},
        kernel_name="python3",
        progress_bar=False,
    )
    return nbformat.read(out, as_version=4)


class TestNotebook:
    def test_committed_clean(self) -> None:
        """The notebook is committed without outputs and has a parameters cell with the default run."""
        import nbformat

        nb = nbformat.read(ROOT / "notebooks" / "explore.ipynb", as_version=4)
        assert all(not c.get("outputs") and not c.get("execution_count") for c in nb.cells if c.cell_type == "code")
        params = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
        assert len(params) == 1 and 'params_file = "params/default.yaml"' in params[0].source

    @pytest.mark.slow
    def test_hand_built_run(self, run: config.RunConfig, tmp_path: Path) -> None:
        """The notebook runs on the hand-built run and shows a question."""
        start = time.monotonic()
        nb = run_notebook(run.params_file, tmp_path / "explore.ipynb")
        outputs = json.dumps([c.get("outputs", []) for c in nb.cells])
        assert "q-sulfur" in outputs and "dc-q" in outputs and time.monotonic() - start < 120

    @pytest.mark.slow
    def test_default_run(self, tmp_path: Path) -> None:
        """The notebook runs on the default run's outputs (skipped until `make all` made them)."""
        cfg = config.load(ROOT / "params" / "default.yaml")
        needed = [cfg.stage_dir("verify") / "benchmark.parquet", cfg.stage_dir("judge") / "judged.parquet"]
        if missing := [p for p in needed if not p.is_file()]:
            pytest.skip(f"default run not built: {missing[0].relative_to(ROOT)} is missing (run `make all`)")
        nb = run_notebook(ROOT / "params" / "default.yaml", tmp_path / "explore.ipynb")
        assert "dc-q" in json.dumps([c.get("outputs", []) for c in nb.cells])


# --- the real stage code, fake models -------------------------------------------------------------


class StageModels:
    """Fake models for stages 05 and 06: models under test abstain unless a Magma Cube chunk is in
    their context (then they confabulate, as in App. A.9); reflection asks about the Magma Cube."""

    def thinking_switch(self, model_id: str) -> str:
        return "none"

    def asker(self, model_id: str, *, thinking: str | None, max_tokens: int, temperature: float = 0.0) -> Any:
        from declinecraft.evaluation.rule_labels import rule_label
        from declinecraft.llm.calls import Reply

        def reply(call: Any) -> Reply:
            fields = call.fields
            if call.prompt == "reflect" and "panda" in fields["query"]:
                return Reply('{"assessment": "Sufficient", "missing_info": "", "follow_up_questions": []}')
            if call.prompt == "reflect":
                return Reply(
                    '{"assessment": "Insufficient", "missing_info": "what it is", '
                    '"follow_up_questions": ["magma cube"]}'
                )
            if call.prompt == "judge_response":
                return Reply(rule_label(fields["answer"]))
            if call.prompt.startswith("oracle"):
                return Reply(f"reference: {fields['question'][-30:]}")
            if call.prompt == "judge_accuracy":
                return Reply("0.5")
            if "Magma" in fields.get("context", ""):
                return Reply("The Magma Cube (sometimes called a 'Sulfur Cube') comes in three sizes.")
            return Reply("The provided context does not contain the answer.")

        return lambda calls: [reply(c) for c in calls]

    def release(self) -> None:
        pass


class TestRealStages:
    def test_answer_and_judge_outputs_load(self, tmp_path: Path) -> None:
        """Stage 05 and 06 (fake models) write tables that load, and the planted transition is found."""
        from declinecraft.evaluation import answer_stage, judge_stage
        from declinecraft.evaluation.context import Chunk
        from declinecraft.retrieval.fusion import Hit

        cfg = write_project(tmp_path)
        for name in ("judged", "references"):
            (cfg.stage_dir("judge") / f"{name}.parquet").unlink()
        (tmp_path / "params" / "e2e.yaml").write_text(
            "base: default\nanswer:\n  models: [m1]\n  limit_questions: 0\n"
            "judge:\n  response_judge: rj\n  oracle: o\n  accuracy_judges: [j1, j2]\n"
        )
        e2e = config.load(tmp_path / "params" / "e2e.yaml")
        _, _, _, chunks = build_tables()
        table = {r["chunk_id"]: Chunk(r["chunk_id"], r["title"], r["url"], r["text"]) for r in chunks.to_dicts()}

        def search(queries: Any, pipeline: str, k: int) -> list[list[Hit]]:
            return [
                [
                    Hit(c, {"bm25": i + 1})
                    for i, c in enumerate(
                        ["Magma_Cube#0"]
                        if q == "magma cube"
                        else RETRIEVED["q-panda"]
                        if "panda" in q
                        else ["Elytra#0", "Leather#0"]
                    )
                ][:k]
                for q in queries
            ]

        def lookup(ids: Any) -> list[Chunk]:
            return [table[c] for c in ids]

        answer_stage.run(e2e, models=StageModels(), search=search, lookup=lookup)
        pages = {
            True: {q["target_title"]: "page" for q in QUESTIONS},
            False: {q["target_title"]: "page" for q in QUESTIONS},
        }
        judge_stage.run(e2e, models=StageModels(), lookup=lookup, pages=pages)
        frame = explore.load(e2e)
        assert frame.height == 4 * 3 and set(frame["setting"]) == {"no_rag", "single", "iterative"}
        assert set(explore.transitions(frame)["question_id"]) == {"q-copper", "q-spider", "q-sulfur"}
        panda = frame.filter(pl.col("question_id") == "q-panda", pl.col("setting") == "single").row(0, named=True)
        assert panda["target_rank"] == 2 and panda["score_j1"] == 0.0 and panda["label"] == "ABSTAIN"
        view = explore.show("q-sulfur", frame, chunks=chunks)
        assert "Round 1" in view._repr_html_() and "magma cube" in str(view)
