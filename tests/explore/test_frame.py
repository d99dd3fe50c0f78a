"""Tests for declinecraft.explore.frame: the joined frame of a hand-built run, and of the real stages' outputs."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from declinecraft import explore
from declinecraft.core import config
from tests.support import explorer_run, projects, synthetic


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
        _, judged, _, _ = explorer_run.build_tables()
        judged.head(3).write_parquet(k10.stage_dir("judge") / "judged.parquet")
        assert explore.load("k10", root=run.root).height == 3
        assert k10.stage_dir("verify") == run.stage_dir("verify")

    def test_missing_benchmark(self, tmp_path: Path) -> None:
        """A run without a benchmark is a clear error naming the file."""
        (tmp_path / "params").mkdir()
        shutil.copy(projects.REPO / "pyproject.toml", tmp_path / "pyproject.toml")
        shutil.copy(projects.REPO / "params" / "default.yaml", tmp_path / "params" / "default.yaml")
        with pytest.raises(FileNotFoundError, match=r"04_verify/benchmark.parquet.*04_verify"):
            explore.load(tmp_path / "params" / "default.yaml")


class TestJoinTables:
    def test_unknown_question(self) -> None:
        """A response to a question the benchmark lacks is an error naming the question."""
        bench, judged, refs, _ = explorer_run.build_tables()
        with pytest.raises(ValueError, match="q-panda"):
            explore.join_tables(bench.filter(pl.col("id") != "q-panda"), judged, refs)

    def test_missing_column(self) -> None:
        """A response table without ``model`` is an error naming the column."""
        bench, judged, _, _ = explorer_run.build_tables()
        with pytest.raises(ValueError, match="responses: missing column 'model'"):
            explore.join_tables(bench, judged.drop("model"))

    def test_references_fill_in(self) -> None:
        """Without a reference column, references.parquet supplies it."""
        bench, judged, refs, _ = explorer_run.build_tables()
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
        assert chunks.height == len(explorer_run.CHUNKS) + len(explorer_run.POST)
        assert set(chunks.filter(pl.col("corpus") == "post")["chunk_id"]) == set(explorer_run.POST)


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

        cfg = explorer_run.write_project(tmp_path)
        for name in ("judged", "references"):
            (cfg.stage_dir("judge") / f"{name}.parquet").unlink()
        (tmp_path / "params" / "e2e.yaml").write_text(
            "base: default\nanswer:\n  models: [m1]\n  limit_questions: 0\n"
            'judge:\n  response_judge: rj\n  oracle: o\n  accuracy_judges: [j1, j2]\n  check_file: ""\n'
        )
        e2e = config.load(tmp_path / "params" / "e2e.yaml")
        _, _, _, chunks = explorer_run.build_tables()
        table = {r["chunk_id"]: Chunk(r["chunk_id"], r["title"], r["url"], r["text"]) for r in chunks.to_dicts()}

        def search(queries: Any, pipeline: str, k: int) -> list[list[Hit]]:
            return [
                [
                    Hit(c, {"bm25": i + 1})
                    for i, c in enumerate(
                        ["Magma_Cube#0"]
                        if q == "magma cube"
                        else explorer_run.RETRIEVED["q-panda"]
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
            True: {q["target_title"]: "page" for q in explorer_run.QUESTIONS},
            False: {q["target_title"]: "page" for q in explorer_run.QUESTIONS},
        }
        judge_stage.run(e2e, models=StageModels(), lookup=lookup, pages=pages)
        frame = explore.load(e2e)
        assert frame.height == 4 * 3 and set(frame["setting"]) == {"no_rag", "single", "iterative"}
        assert set(explore.transitions(frame)["question_id"]) == {"q-copper", "q-spider", "q-sulfur"}
        panda = frame.filter(pl.col("question_id") == "q-panda", pl.col("setting") == "single").row(0, named=True)
        assert panda["target_rank"] == 2 and panda["score_j1"] == 0.0 and panda["label"] == "ABSTAIN"
        view = explore.show("q-sulfur", frame, chunks=chunks)
        assert "Round 1" in view._repr_html_() and "magma cube" in str(view)
