"""Tests for declinecraft.evaluation.roster: adding a model to a run (registry id or OpenAI-compatible
endpoint), the other models' calls coming from the cache."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from declinecraft.construction import imported
from declinecraft.core import config, registry
from declinecraft.evaluation import roster
from tests.support import keys, projects, releases

URL = "http://127.0.0.1:9/v1"


@pytest.fixture()
def root(tmp_path: Path) -> Path:
    """A project with the repository's default params and model registry."""
    return projects.copy_project(tmp_path / "project")


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
            ("openai:m", URL, keys.planted_key("123") + " secret", "give the NAME of an environment variable"),
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
        path = roster.add_model(root / "params" / "default.yaml", "smollm2-135m")
        assert (
            path == root / "params" / "default-eval.yaml" and (root / "params" / "default.yaml").read_text() == before
        )
        cfg = config.load(path)
        assert cfg.answer.models == (*base.answer.models, "smollm2-135m")
        assert cfg.know2guess.models == (base.know2guess.models or base.answer.models)
        assert cfg.evidence.models == (base.evidence.models or base.answer.models)
        assert [cfg.owner(s) for s in ("corpus", "verify", "answer")] == ["default", "default", "default-eval"]
        assert path.read_text().startswith(roster.HEADER)

    def test_again_changes_nothing(self, root: Path) -> None:
        """Adding the same model twice leaves the overlay as it was; a second model is appended."""
        base = config.load(root / "params" / "default.yaml")
        path = roster.add_model(root / "params" / "default.yaml", "smollm2-135m")
        text = path.read_text()
        assert roster.add_model(root / "params" / "default.yaml", "smollm2-135m") == path and path.read_text() == text
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
        monkeypatch.setenv("MY_EVAL_KEY", keys.planted_key("very-secret"))
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
        assert not [
            p for p in root.rglob("*") if p.is_file() and keys.planted_key("very-secret").encode() in p.read_bytes()
        ]

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
        project = releases.tiny_project(tmp_path)
        done = imported.import_benchmark(
            releases.write_lines(project / "b.jsonl", releases.minimal_rows()), "mine", root=project, corpus="default"
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
        root = releases.tiny_project(
            tmp_path,
            {
                "old": releases.fake_model(server.base_url, "old"),
                "judge": releases.fake_model(server.base_url, "judge"),
            },
        )
        orig = config.load(root / "params" / "orig.yaml")
        imported.import_benchmark(
            releases.write_lines(root / "b.jsonl", releases.minimal_rows()), "bench", root=root, corpus="orig"
        )
        base = config.load(root / "params" / "bench.yaml")
        before = releases.evaluate(base)
        server.reset()
        path = roster.add_model(base.params_file, "openai:newcomer", base_url=server.base_url)
        after = releases.evaluate(config.load(path))
        stats = server.stats()
        # 3 questions x (no RAG, single-shot) answers; the echo server's replies repeat the old
        # model's, so their judge calls are cache hits too.
        assert stats["requests"] == 6 and {b["model"] for b in stats["bodies"]} == {"newcomer"}
        old = after[0].filter(pl.col("model") == "old").drop("cached", strict=False)
        assert old.equals(before[0].drop("cached", strict=False))
        assert set(after[1]["model"]) == {"old", "newcomer"} and orig.answer.models == ("old",)
