"""Tests for declinecraft.evaluation.roster and .leaderboard: adding a model to a run (registry id
or OpenAI-compatible endpoint), the other models' calls coming from the cache, the leaderboard."""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
import pytest
from tests.support.projects import REPO, copy_project

from declinecraft.construction import imported
from declinecraft.core import config, registry
from declinecraft.evaluation import leaderboard, roster
from support.keys import planted_key
from test_import import evaluate, fake_model, minimal_rows, tiny_project, write_lines

URL = "http://127.0.0.1:9/v1"


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    """A project with the repository's default params and model registry."""
    return copy_project(tmp_path / "project")


class TestModelId:
    def test_ids(self) -> None:
        """A registry id stays; an endpoint's served name becomes a file-safe id."""
        assert roster.model_id("smollm2-135m") == "smollm2-135m"
        assert roster.model_id("openai:meta-llama/Llama-3.3-70B") == "meta-llama-llama-3.3-70b"


class TestEndpointOf:
    @pytest.mark.parametrize(
        ("model", "url", "env", "message"),
        [
            ("openai:", URL, None, "give the served name"),
            ("openai:m", None, None, "BASE_URL=http"),
            ("openai:m", "ftp://x", None, "BASE_URL=http"),
            ("openai:m", URL, planted_key("123") + " secret", "give the NAME of an environment variable"),
            ("openai:m", URL, "UNSET_KEY_VAR", "UNSET_KEY_VAR: the environment variable is not set"),
            ("smollm2-135m", URL, None, "BASE_URL and API_KEY_ENV are for MODEL=openai:"),
        ],
    )
    def test_errors(self, model: str, url: str | None, env: str | None, message: str) -> None:
        """Each malformed endpoint is an error saying what it needs."""
        with pytest.raises(roster.RosterError, match=message):
            roster.endpoint_of(model, url, env, environ={})


class TestAddModel:
    def test_registry_model(self, root: Path) -> None:
        """A registry model goes into a derived run default-eval (base: default): stages 01-04 stay
        the base's, the views keep the base's model, and default.yaml is untouched."""
        before = (root / "params" / "default.yaml").read_text()
        base = config.load(root / "params" / "default.yaml")
        path = roster.add_model(root / "params" / "default.yaml", "qwen2.5-coder-1.5b")
        assert (
            path == root / "params" / "default-eval.yaml" and (root / "params" / "default.yaml").read_text() == before
        )
        cfg = config.load(path)
        assert cfg.answer.models == (*base.answer.models, "qwen2.5-coder-1.5b")
        assert cfg.know2guess.models == (base.know2guess.models or base.answer.models)
        assert cfg.evidence.models == (base.evidence.models or base.answer.models)
        assert [cfg.owner(s) for s in ("corpus", "verify", "answer")] == ["default", "default", "default-eval"]
        assert path.read_text().startswith(roster.HEADER)

    def test_again_changes_nothing(self, root: Path) -> None:
        """Adding the same model twice leaves the overlay as it was; a second model is appended."""
        base = config.load(root / "params" / "default.yaml")
        path = roster.add_model(root / "params" / "default.yaml", "qwen2.5-coder-1.5b")
        text = path.read_text()
        assert (
            roster.add_model(root / "params" / "default.yaml", "qwen2.5-coder-1.5b") == path
            and path.read_text() == text
        )
        roster.add_model(path, "qwen3-4b")
        assert config.load(path).answer.models[-1] == "qwen3-4b"
        assert config.load(path).know2guess.models == (base.know2guess.models or base.answer.models)

    def test_already_in_run(self, root: Path) -> None:
        """A model the run itself evaluates needs no overlay: the run's own params file is returned."""
        first = config.load(root / "params" / "default.yaml").answer.models[0]
        assert roster.add_model(root / "params" / "default.yaml", first) == root / "params" / "default.yaml"
        assert not (root / "params" / "default-eval.yaml").exists()

    def test_unknown(self, root: Path) -> None:
        """An id missing from the registry is an error naming the models file."""
        with pytest.raises(roster.RosterError, match=r"MODEL=no-such-model: not in params/models.yaml"):
            roster.add_model(root / "params" / "default.yaml", "no-such-model")
        assert not (root / "params" / "default-eval.yaml").exists()

    def test_endpoint_key_never_written(self, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """An endpoint gets a registry entry in params/endpoints/ naming its key's variable; the
        key itself is written nowhere."""
        monkeypatch.setenv("MY_EVAL_KEY", planted_key("very-secret"))
        path = roster.add_model(
            root / "params" / "default.yaml", "openai:org/My-Model", base_url=URL + "/", api_key_env="MY_EVAL_KEY"
        )
        cfg = config.load(path)
        assert cfg.models_file == "params/endpoints/default-eval.yaml"
        spec = registry.get_model(cfg.resolve(cfg.models_file), "org-my-model")
        assert (spec.backend, spec.served_name, spec.base_url, spec.api_key_env) == (
            "openai",
            "org/My-Model",
            URL,
            "MY_EVAL_KEY",
        )
        assert "smollm2-135m" in registry.load_models(cfg.resolve(cfg.models_file))  # the base registry is kept
        assert not [p for p in root.rglob("*") if p.is_file() and planted_key("very-secret").encode() in p.read_bytes()]

    def test_endpoint_id_taken(self, root: Path) -> None:
        """An endpoint whose id is another backend's registry entry is refused."""
        with pytest.raises(roster.RosterError, match="already a llamacpp model"):
            roster.add_model(root / "params" / "default.yaml", "openai:smollm2-135m", base_url=URL)

    def test_second_judges_pinned(self, root: Path) -> None:
        """A base with second-opinion judges gets none in the overlay (their sample spans every response)."""
        (root / "params" / "sj.yaml").write_text("base: default\njudge:\n  second_judges: [qwen2.5-coder-0.5b]\n")
        assert config.load(roster.add_model(root / "params" / "sj.yaml", "qwen3-4b")).judge.second_judges == ()

    def test_imported_run_in_place(self, tmp_path: Path) -> None:
        """A run made by `make import` records the model in its own params file, keeping its header."""
        project = tiny_project(tmp_path)
        done = imported.import_benchmark(
            write_lines(project / "b.jsonl", minimal_rows()), "mine", root=project, corpus="default"
        )
        assert roster.add_model(done.params_file, "qwen3-4b") == done.params_file
        assert done.params_file.read_text().startswith(imported.HEADER)
        cfg = config.load(done.params_file)
        assert cfg.answer.models[-1] == "qwen3-4b" and cfg.owner("verify") == "mine"


class TestOnlyTheNewModel:
    def test_old_models_send_nothing(self, tmp_path: Path, server, monkeypatch) -> None:  # noqa: ANN001
        """After a model is added, answering and judging the run again sends only the new model's
        calls: the old model's answers and every judgement of them come from the cache."""
        monkeypatch.setenv("DECLINECRAFT_CACHE", str(tmp_path / "cache"))
        root = tiny_project(
            tmp_path, {"old": fake_model(server.base_url, "old"), "judge": fake_model(server.base_url, "judge")}
        )
        orig = config.load(root / "params" / "orig.yaml")
        imported.import_benchmark(write_lines(root / "b.jsonl", minimal_rows()), "bench", root=root, corpus="orig")
        base = config.load(root / "params" / "bench.yaml")
        before = evaluate(base)
        server.reset()
        path = roster.add_model(base.params_file, "openai:newcomer", base_url=server.base_url)
        after = evaluate(config.load(path))
        stats = server.stats()
        # 3 questions x (no RAG, single-shot) answers; the echo server's replies repeat the old
        # model's, so their judge calls are cache hits too.
        assert stats["requests"] == 6 and {b["model"] for b in stats["bodies"]} == {"newcomer"}
        old = after[0].filter(pl.col("model") == "old").drop("cached", strict=False)
        assert old.equals(before[0].drop("cached", strict=False))
        assert set(after[1]["model"]) == {"old", "newcomer"} and orig.answer.models == ("old",)


def summary(rows: list[dict]) -> pl.DataFrame:
    """A 07_analysis/summary.csv-like frame: one row per model on several settings."""
    base = {
        "thinking": "off",
        "pipeline": "hybrid",
        "k": 5,
        "scenario": True,
        "prompt_variant": "default",
        "accuracy": 0.5,
        "accuracy_low": 0.4,
        "accuracy_high": 0.6,
    }
    return pl.DataFrame([{**base, **r} for r in rows])


class TestLeaderboard:
    def write(self, root: Path, rows: list[dict]) -> config.RunConfig:
        cfg = config.load(root / "params" / "default.yaml")
        cfg.stage_dir("analysis").mkdir(parents=True)
        summary(rows).write_csv(cfg.stage_dir("analysis") / "summary.csv")
        return cfg

    def test_rows_and_rank(self, root: Path) -> None:
        """Only the single-shot row at the run's k counts; Bal. F1 = 2A/(2+A-C) ranks the models,
        its range spans the two Wilson intervals."""
        cfg = self.write(
            root,
            [
                {
                    "model": "a",
                    "condition": "single",
                    "car": 0.2,
                    "car_low": 0.1,
                    "car_high": 0.3,
                    "attempt": 0.9,
                    "attempt_low": 0.8,
                    "attempt_high": 0.95,
                },
                {
                    "model": "b",
                    "condition": "single",
                    "car": 0.8,
                    "car_low": 0.7,
                    "car_high": 0.9,
                    "attempt": 0.9,
                    "attempt_low": 0.8,
                    "attempt_high": 0.95,
                },
                {
                    "model": "b",
                    "condition": "no_rag",
                    "pipeline": "none",
                    "k": 0,
                    "car": 1.0,
                    "car_low": 1.0,
                    "car_high": 1.0,
                    "attempt": 1.0,
                    "attempt_low": 1.0,
                    "attempt_high": 1.0,
                },
            ],
        )
        table = leaderboard.leaderboard(cfg)
        assert table["model"].to_list() == ["b", "a"] and table["rank"].to_list() == [1, 2]
        assert table["bal_f1"][0] == pytest.approx(2 * 0.9 / (2 + 0.9 - 0.8))
        assert table["bal_f1_low"][0] == pytest.approx(2 * 0.8 / (2 + 0.8 - 0.7))
        text = leaderboard.render(table, highlight="a")
        assert text.splitlines()[2].startswith(">") and "20.0 [10.0, 30.0]" in text

    def test_condition_rows(self, root: Path) -> None:
        """Every condition's row of the main setting is kept; other k, prompts and no scenario are not."""
        rate = {"car": 0.5, "car_low": 0.4, "car_high": 0.6, "attempt": 0.5, "attempt_low": 0.4, "attempt_high": 0.6}
        cfg = self.write(
            root,
            [
                {"model": "a", "condition": "no_rag", "pipeline": "none", "k": 0, **rate},
                {"model": "a", "condition": "single", **rate},
                {"model": "a", "condition": "iterative", **rate},
                {"model": "a", "condition": "single", "k": 10, **rate},
                {"model": "a", "condition": "single", "prompt_variant": "temporal", **rate},
                {"model": "a", "condition": "single", "scenario": False, **rate},
            ],
        )
        rows = leaderboard.condition_rows(cfg)
        assert rows["condition"].to_list() == ["no_rag", "single", "iterative"]
        assert leaderboard.run_rows(cfg).height == 1

    def test_published_rows(self) -> None:
        """Table 2's published rows are read from paper_reported.yaml, their Bal. F1 as published."""
        table = leaderboard.published_rows(REPO)
        row = table.filter(pl.col("model") == "Gemma 4 31B", pl.col("thinking") == "off").row(0, named=True)
        assert (row["car"], row["car_low"], row["bal_f1"]) == pytest.approx((0.833, 0.787, 0.901))
        assert table.height == 6 and set(table["thinking"]) == {"on", "off"}

    def test_paper_benchmark(self, root: Path) -> None:
        """The published rows join only a run that is, or derives from, the paper's run."""
        (root / "params" / "paper.yaml").write_text("description: paper\n")
        (root / "params" / "mine.yaml").write_text("base: paper\n")
        assert leaderboard.is_paper_benchmark(config.load(root / "params" / "mine.yaml"))
        assert not leaderboard.is_paper_benchmark(config.load(root / "params" / "default.yaml"))

    def test_missing_analysis(self, root: Path) -> None:
        """Without the analysis the error names summary.csv."""
        with pytest.raises(FileNotFoundError, match="07_analysis/summary.csv"):
            leaderboard.leaderboard(config.load(root / "params" / "default.yaml"))

    def test_nan_accuracy(self, root: Path) -> None:
        """A setting without accuracy prints n/a instead of a number."""
        cfg = self.write(
            root,
            [
                {
                    "model": "a",
                    "condition": "single",
                    "car": 0.5,
                    "car_low": 0.4,
                    "car_high": 0.6,
                    "attempt": 0.5,
                    "attempt_low": 0.4,
                    "attempt_high": 0.6,
                    "accuracy": math.nan,
                }
            ],
        )
        assert "n/a" in leaderboard.render(leaderboard.leaderboard(cfg))
