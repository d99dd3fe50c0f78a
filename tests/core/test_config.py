"""Tests for declinecraft.core.config: params loading, validation, inheritance and run isolation."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from declinecraft.core import catalogue, config


def write(project: Path, name: str, data: dict) -> Path:
    path = project / "params" / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data))
    return path


class TestLoad:
    def test_default_loads(self, root: Path) -> None:
        """Every shipped params file is valid."""
        shipped = sorted(p.stem for p in (root / "params").glob("*.yaml") if p.stem not in {"models", "paper_reported"})
        assert {"default", "paper", "k10", "generators", "figures"} <= set(shipped)
        for name in shipped:
            cfg = config.load(root / "params" / f"{name}.yaml")
            assert cfg.run == name
            assert cfg.corpus.cutoff == "2025-03-31"

    def test_figures_run_reasks_the_default_run(self, root: Path) -> None:
        """params/figures.yaml reads 01-02 from the default run and keeps every answer, judge and
        view setting its default-run calls depend on, so only its ablations are new calls."""
        figures, default = config.load(root / "params" / "figures.yaml"), config.load(root / "params" / "default.yaml")
        assert (figures.owner("corpus"), figures.owner("index")) == ("default", "default")
        assert figures.generate.generator == default.generate.generator
        assert figures.generate.n_answerable == default.generate.n_answerable
        same = ("models", "conditions", "pipeline", "k", "max_rounds", "context_chars", "max_tokens", "temperature")
        assert {k: getattr(figures.answer, k) for k in same} == {k: getattr(default.answer, k) for k in same}
        assert "off" in figures.answer.thinking
        for block in ("know2guess", "evidence"):
            a, b = figures.block_dict(block), default.block_dict(block)
            assert {k: v for k, v in a.items() if k != "thinking"} == {k: v for k, v in b.items() if k != "thinking"}
        assert figures.know2guess.thinking == ("off",)
        judge = {k: v for k, v in figures.block_dict("judge").items() if not k.startswith("second_judge")}
        assert judge == {k: v for k, v in default.block_dict("judge").items() if not k.startswith("second_judge")}

    def test_unknown_block_key_names_key(self, project: Path) -> None:
        """A typo'd key inside a block is an error naming the file, block and key."""
        path = write(project, "typo", {"answer": {"kk": 10}})
        with pytest.raises(config.ConfigError, match=r"typo\.yaml: answer: unknown key 'kk'"):
            config.load(path)

    def test_unknown_top_level_key(self, project: Path) -> None:
        """A typo'd block name is an error, not a silently ignored block."""
        path = write(project, "typo", {"anwser": {"k": 10}})
        with pytest.raises(config.ConfigError, match="unknown top-level key 'anwser'"):
            config.load(path)

    @pytest.mark.parametrize(
        ("block", "key", "value"),
        [("answer", "k", "five"), ("paper", "build_pdf", "yes"), ("answer", "models", "m1"), ("index", "rrf_k", 6.5)],
    )
    def test_wrong_type(self, project: Path, block: str, key: str, value: object) -> None:
        """A value of the wrong type is an error naming the key path."""
        path = write(project, "bad", {block: {key: value}})
        with pytest.raises(config.ConfigError, match=rf"{block}\.{key}"):
            config.load(path)

    def test_defaults_fill_missing_keys(self, project: Path) -> None:
        """Keys a file leaves out take the paper's defaults."""
        cfg = config.load(write(project, "mini", {"answer": {"k": 3}}))
        assert cfg.answer.k == 3
        assert cfg.answer.max_rounds == 2
        assert cfg.index.rrf_k == 60

    def test_lists_become_tuples(self, project: Path) -> None:
        """List params are frozen as tuples, so the config is hashable and immutable."""
        cfg = config.load(write(project, "m", {"answer": {"models": ["a", "b"]}}))
        assert cfg.answer.models == ("a", "b")

    def test_base_cycle(self, project: Path) -> None:
        """Inheritance cycles are reported, not followed forever."""
        write(project, "a", {"base": "b"})
        path = write(project, "b", {"base": "a"})
        with pytest.raises(config.ConfigError, match="cycle"):
            config.load(path)

    def test_verifier_must_differ_from_generators(self, project: Path) -> None:
        """§3.3: a verifier that is also a generator is an error naming the key, unless allowed."""
        same = {"generate": {"generator": "m1"}, "verify": {"verifier": "m1", "self_verification": False}}
        with pytest.raises(config.ConfigError, match=r"x\.yaml: verify\.verifier 'm1' is also the generator"):
            config.load(write(project, "x", same))
        compare = {
            "generate": {"generator": "m1", "generators": ["m2"]},
            "verify": {"verifier": "m2", "self_verification": False},
        }
        with pytest.raises(config.ConfigError, match="verify.comparison_verifier 'm2' is also one of the compared"):
            config.load(write(project, "y", compare))
        compare["verify"]["comparison_verifier"] = "m3"  # the paper's arrangement (params/paper.yaml)
        assert config.load(write(project, "w", compare)).verify.verifier == "m2"
        same["verify"]["self_verification"] = True
        assert config.load(write(project, "z", same)).verify.verifier == "m1"

    def test_missing_base(self, project: Path) -> None:
        """A missing base names the missing file and the file whose `base:` named it."""
        with pytest.raises(
            config.ConfigError, match=r"x\.yaml: base: 'nope' names .*params/nope\.yaml, which does not exist"
        ):
            config.load(write(project, "x", {"base": "nope"}))


class TestOwner:
    def test_derived_run_reuses_upstream(self, project: Path) -> None:
        """A run differing only in `answer` reads stages 01–04 from its base and owns 05 onwards."""
        cfg = config.load(write(project, "k10", {"base": "default", "answer": {"k": 10}}))
        assert [cfg.owner(s) for s in catalogue.STAGES] == ["default"] * 4 + ["k10"] * (len(catalogue.STAGES) - 4)
        assert cfg.stage_dir("verify") == project / "outputs" / "default" / "04_verify"
        assert cfg.stage_dir("answer") == project / "outputs" / "k10" / "05_answer"

    def test_sibling_view(self, project: Path) -> None:
        """A run differing only in a view reads the analysis (which reads no view) from its base."""
        cfg = config.load(write(project, "ev", {"base": "default", "evidence": {"k": 4}}))
        owners = {s: cfg.owner(s) for s in catalogue.STAGES}
        assert owners["analysis"] == owners["know2guess"] == owners["judge"] == "default"
        assert owners["evidence"] == owners["paper"] == "ev"

    def test_seed_change_owns_everything(self, project: Path) -> None:
        """A different seed changes every stage, so the derived run owns all of them."""
        cfg = config.load(write(project, "s1", {"base": "default", "seed": 1}))
        assert {cfg.owner(s) for s in catalogue.STAGES} == {"s1"}

    def test_standalone_run_owns_everything(self, project: Path) -> None:
        """Without a base, every stage is the run's own."""
        cfg = config.load(project / "params" / "default.yaml")
        assert {cfg.owner(s) for s in catalogue.STAGES} == {"default"}


class TestWriteStamps:
    def test_two_runs_two_trees(self, project: Path) -> None:
        """Two params files write into two separate output trees."""
        a = config.load(project / "params" / "default.yaml")
        b = config.load(write(project, "other", {"corpus": {"min_chars": 100}}))
        config.write_stamps(a)
        config.write_stamps(b)
        assert (project / "outputs" / "default" / "params" / "corpus.yaml").is_file()
        assert (project / "outputs" / "other" / "params" / "corpus.yaml").is_file()
        other = yaml.safe_load((project / "outputs" / "other" / "params" / "corpus.yaml").read_text())
        assert other["corpus"]["min_chars"] == 100
        assert other["params_file"] == "params/other.yaml"

    def test_only_changed_blocks_rewritten(self, project: Path) -> None:
        """Editing one block rewrites only that block's stamp (what makes Make rerun one stage)."""
        path = write(project, "r", {"answer": {"k": 5}})
        config.write_stamps(config.load(path))
        write(project, "r", {"answer": {"k": 7}})
        changed = {p.name for p in config.write_stamps(config.load(path))}
        assert "answer.yaml" in changed
        assert not changed & {"corpus.yaml", "index.yaml", "verify.yaml", "judge.yaml"}

    def test_unchanged_rewrites_nothing(self, project: Path) -> None:
        """Stamping twice with no edit changes no file."""
        cfg = config.load(project / "params" / "default.yaml")
        config.write_stamps(cfg)
        assert config.write_stamps(cfg) == []


class TestForNotebook:
    def test_injected_block_must_match(self, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A block injected by papermill that differs from the file is an error (stale stamp)."""
        monkeypatch.chdir(project)
        with pytest.raises(config.ConfigError, match="differs"):
            config.for_notebook("params/default.yaml", answer={"k": 99})

    def test_relative_path_from_subfolder(self, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """A project-relative params path resolves from a notebook's subfolder."""
        (project / "notebooks").mkdir()
        monkeypatch.chdir(project / "notebooks")
        assert config.for_notebook("params/default.yaml").root == project.resolve()


class TestReferencedModels:
    @pytest.mark.parametrize("name", ["default", "paper", "k10"])
    def test_every_model_is_registered(self, root: Path, name: str) -> None:
        """Every model a shipped params file names has an entry in params/models.yaml."""
        from declinecraft.core import registry

        cfg = config.load(root / "params" / f"{name}.yaml")
        known = registry.load_models(cfg.resolve(cfg.models_file))
        assert config.referenced_models(cfg) - set(known) == set()


class TestLLMBlock:
    def test_defaults_and_override(self, project: Path) -> None:
        """`llm:` is optional; its keys override the defaults and a derived run inherits them."""
        assert config.load(write(project, "plain", {})).llm == config.LLMParams()
        write(project, "strict", {"llm": {"max_failed_share": 0.0, "retry_failures": False}})
        derived = config.load(write(project, "derived", {"base": "strict"}))
        assert (derived.llm.max_failed_share, derived.llm.retry_failures) == (0.0, False)
        assert derived.to_dict()["llm"] == {
            "max_failed_share": 0.0,
            "retry_failures": False,
            "budget_usd": None,
            "budget_tokens": None,
            "retrieval_device": "auto",
        }

    def test_budget(self, project: Path) -> None:
        """A budget in dollars and tokens is read; 0 is allowed (send nothing), a negative one is refused."""
        cfg = config.load(write(project, "capped", {"llm": {"budget_usd": 12, "budget_tokens": 0}}))
        assert (cfg.llm.budget_usd, cfg.llm.budget_tokens) == (12.0, 0)
        with pytest.raises(config.ConfigError, match=r"neg\.yaml: llm\.budget_usd: -1\.0 is out of range"):
            config.load(write(project, "neg", {"llm": {"budget_usd": -1}}))
        with pytest.raises(config.ConfigError, match=r"word\.yaml: llm\.budget_tokens: expected an integer"):
            config.load(write(project, "word", {"llm": {"budget_tokens": "many"}}))

    def test_retrieval_device(self, project: Path) -> None:
        """``retrieval_device`` takes auto, cpu or cuda:N; anything else names the file and the key."""
        assert (
            config.load(write(project, "gpu", {"llm": {"retrieval_device": "cuda:3"}})).llm.retrieval_device == "cuda:3"
        )
        with pytest.raises(config.ConfigError, match=r"bad\.yaml: llm\.retrieval_device must be auto, cpu or cuda:N"):
            config.load(write(project, "bad", {"llm": {"retrieval_device": "gpu"}}))
        with pytest.raises(config.ConfigError, match=r"num\.yaml: llm\.retrieval_device must be .*got '0'"):
            config.load(write(project, "num", {"llm": {"retrieval_device": 0}}))

    def test_unknown_key(self, project: Path) -> None:
        """A typo inside `llm:` names the file and the key."""
        with pytest.raises(config.ConfigError, match=r"typo\.yaml: llm: unknown key 'retry_failure'"):
            config.load(write(project, "typo", {"llm": {"retry_failure": True}}))

    def test_not_in_stamps(self, project: Path) -> None:
        """A run policy: changing it rewrites no stage stamp (nothing that passed reruns)."""
        cfg = config.load(write(project, "r", {}))
        config.write_stamps(cfg)
        changed = config.write_stamps(config.load(write(project, "r", {"llm": {"max_failed_share": 0.5}})))
        assert [p.name for p in changed] == ["resolved.yaml"]


class TestAblationModels:
    def test_loaded(self, root: Path) -> None:
        """paper.yaml gives each ablation setting its own models, as tuples."""
        cfg = config.load(root / "params" / "paper.yaml")
        assert len(cfg.answer.ablation_models["k=10"]) == 11 and len(cfg.answer.ablation_models["bm25"]) == 12
        assert isinstance(cfg.answer.ablation_models["no_scenario"], tuple)

    @pytest.mark.parametrize(
        ("given", "match"),
        [
            ({"k=7": ["qwen2.5-coder-0.5b"]}, r"ablation_models\.k=7: not an ablation setting"),
            ({"no_scenario": ["nobody"]}, r"ablation_models\.no_scenario: 'nobody' is not one of answer\.models"),
            (["k=1"], r"answer\.ablation_models: expected a mapping"),
        ],
    )
    def test_refused(self, project: Path, given: object, match: str) -> None:
        """A key that names no ablation of the run, a model not under test, or a list is refused."""
        path = write(project, "abl", {"answer": {"k_sweep": [1, 5], "no_scenario": True, "ablation_models": given}})
        with pytest.raises(config.ConfigError, match=match):
            config.load(path)
