"""Tests for declinecraft.harness.every_eval: results in the Every Eval Ever schema, checked by
every-eval-ever's validator."""

from __future__ import annotations

import importlib.util
import json
from collections import defaultdict
from pathlib import Path

import polars as pl
import pytest

from declinecraft.core import config
from declinecraft.core.registry import ModelSpec, load_models
from declinecraft.harness import every_eval
from tests.support import projects

RUN = projects.REPO / "outputs" / "default"
SUMMARY = RUN / "07_analysis" / "summary.csv"
NEEDED = [SUMMARY, RUN / "06_judge" / "judged.parquet", RUN / "04_verify" / "benchmark.jsonl"]
MISSING = [p for p in NEEDED if not p.is_file()]
MODELS = load_models(projects.REPO / "params" / "models.yaml")

needs_validator = pytest.mark.skipif(
    importlib.util.find_spec("every_eval_ever") is None,
    reason="every-eval-ever is not installed: `make setup` installs it",
)
needs_default_run = pytest.mark.skipif(
    bool(MISSING),
    reason=f"default run not built: {MISSING[0].relative_to(projects.REPO) if MISSING else ''} is missing "
    "(run `make all`)",
)


def row(**changes: object) -> dict[str, object]:
    """One summary.csv row of the main setting, with its counts and intervals."""
    base: dict[str, object] = {
        "model": "smollm2-135m",
        "thinking": "off",
        "condition": "single",
        "car": 0.25,
        "car_low": 0.05,
        "car_high": 0.7,
        "car_n": 4,
        "attempt": 1.0,
        "attempt_low": 0.2,
        "attempt_high": 1.0,
        "attempt_n": 1,
        "accuracy": 0.75,
        "accuracy_low": 0.75,
        "accuracy_high": 0.75,
        "accuracy_n": 1,
        "bal_f1": 0.727273,
    }
    return {**base, **changes}


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[Path, str]]:
    """The default run's records, written to a temporary folder."""
    out = tmp_path_factory.mktemp("every_eval")
    return out, every_eval.export(config.load(projects.REPO / "params" / "default.yaml"), out)


class TestCheckRows:
    @pytest.mark.parametrize(
        ("changes", "message"),
        [
            ({"car": 1.2, "car_high": 1.2}, "car = 1.2 is not a proportion in"),
            ({"model": None}, "no model id"),
            ({"model": "nobody"}, "model 'nobody' is not in the run's model registry"),
            ({"attempt": 0.1}, r"attempt = 0.1 is not inside its interval \[0.2, 1.0\]"),
            ({"car_n": -1}, "car_n = -1 is not a count"),
            ({"condition": "twice"}, "condition must be one of"),
        ],
    )
    def test_refused(self, changes: dict[str, object], message: str) -> None:
        """A row the schema cannot state is refused, naming the file, the row and what is wrong."""
        named = {"model": "smollm2-135m", "condition": "single", **changes}
        where = rf"summary.csv: the row of model {named['model']!r}, thinking 'off', condition {named['condition']!r}"
        with pytest.raises(every_eval.ExportError, match=f"^{where}: {message}"):
            every_eval.check_rows(pl.DataFrame([row(**changes)]), MODELS, where="summary.csv")

    def test_repeated(self) -> None:
        """Two rows of one model, thinking and condition are refused at the second."""
        with pytest.raises(
            every_eval.ExportError, match="summary.csv: the row of model 'smollm2-135m', .*: a second row"
        ):
            every_eval.check_rows(pl.DataFrame([row(), row()]), MODELS, where="summary.csv")

    def test_missing_metric(self) -> None:
        """A metric without questions (NaN, as CAR with no unanswerable question) is left out, not refused."""
        every_eval.check_rows(pl.DataFrame([row(car=float("nan"), car_n=0)]), MODELS, where="summary.csv")


class TestModelIdentity:
    @pytest.mark.parametrize(
        ("model", "want"),
        [
            ("qwen3-4b", ("Qwen/Qwen3-4B-FP8", "Qwen")),
            ("gpt-5", ("openai/gpt-5", "openai")),
            ("smollm2-135m", ("smollm2-135m", "SmolLM2")),
        ],
    )
    def test_identity(self, model: str, want: tuple[str, str]) -> None:
        """The Hugging Face repository, a hosted model's provider/name, else the registry id and family."""
        assert every_eval.model_identity(MODELS[model]) == want

    def test_endpoint(self) -> None:
        """An endpoint added by `make evaluate` (no family, flat name) is its own developer."""
        spec = ModelSpec(id="openai:mine", backend="openai", served_name="mine")
        assert every_eval.model_identity(spec) == ("openai:mine", "openai:mine")
        assert every_eval.model_info(spec, {})["additional_details"]["deployment_type"] == "externally_managed"


@needs_default_run
class TestExport:
    def test_files(self, exported: tuple[Path, dict[Path, str]]) -> None:
        """Each model of the default run gets an aggregate and its samples in the datastore layout."""
        out, written = exported
        aggregates = sorted(p for p in written if p.suffix == ".json")
        models = set(pl.read_csv(SUMMARY)["model"])
        assert len(aggregates) == len(models) and all(
            p.with_name(f"{p.stem}_samples.jsonl") in written for p in aggregates
        )
        assert all(p.relative_to(out).parts[:2] == ("data", "declinecraft") for p in written)

    def test_samples_give_scores(self, exported: tuple[Path, dict[Path, str]]) -> None:
        """Each aggregate score with an n is the mean of its instance records, over n of them."""
        for path in (p for p in exported[1] if p.suffix == ".json"):
            record = json.loads(path.read_text(encoding="utf-8"))
            scores = defaultdict(list)
            for line in path.with_name(f"{path.stem}_samples.jsonl").read_text(encoding="utf-8").splitlines():
                sample = json.loads(line)
                scores[sample["evaluation_result_id"]].append(sample["evaluation"]["score"])
            for result in record["evaluation_results"]:
                got = scores.get(result["evaluation_result_id"])
                if result["evaluation_result_id"].endswith("bal_f1"):
                    assert got is None
                    continue
                assert got and len(got) == result["score_details"]["uncertainty"]["num_samples"]
                assert sum(got) / len(got) == pytest.approx(result["score_details"]["score"], abs=1e-6)

    def test_settings(self, exported: tuple[Path, dict[Path, str]]) -> None:
        """The benchmark hash and the run's generation settings are stated."""
        cfg = config.load(projects.REPO / "params" / "default.yaml")
        record = json.loads(next(p for p in exported[1] if p.suffix == ".json").read_text(encoding="utf-8"))
        result = record["evaluation_results"][0]
        digest = result["source_data"]["additional_details"]["benchmark_sha256"]
        assert len(digest) == 64 and record["source_metadata"]["additional_details"]["benchmark_sha256"] == digest
        args = result["generation_config"]["generation_args"]
        assert (args["temperature"], args["max_tokens"]) == (cfg.answer.temperature, cfg.answer.max_tokens)

    def test_same_bytes(self, exported: tuple[Path, dict[Path, str]], tmp_path: Path) -> None:
        """Exporting again writes the same files, byte for byte."""
        out, written = exported
        again = every_eval.export(config.load(projects.REPO / "params" / "default.yaml"), tmp_path)
        assert {p.relative_to(tmp_path) for p in again} == {p.relative_to(out) for p in written}
        assert all((tmp_path / p.relative_to(out)).read_bytes() == p.read_bytes() for p in written)

    @needs_validator
    def test_validates(self, exported: tuple[Path, dict[Path, str]]) -> None:
        """every-eval-ever's own validator, datastore checks included, finds no error and no warning."""
        assert every_eval.validate(*exported) == ([], [])

    @needs_validator
    def test_validator_refuses_score(self, exported: tuple[Path, dict[Path, str]], tmp_path: Path) -> None:
        """A record whose rate is above 1 fails the validator, the message naming the file and its row."""
        out, written = exported
        aggregate = next(p for p in written if p.suffix == ".json")
        copy = tmp_path / aggregate.relative_to(out)
        copy.parent.mkdir(parents=True)
        samples = aggregate.with_name(f"{aggregate.stem}_samples.jsonl")
        copy.with_name(samples.name).write_bytes(samples.read_bytes())
        record = json.loads(aggregate.read_text(encoding="utf-8"))
        record["evaluation_results"][0]["score_details"]["score"] = 1.2
        copy.write_text(json.dumps(record), encoding="utf-8")
        errors, _ = every_eval.validate(tmp_path, {copy: written[aggregate]})
        assert len(errors) == 1 and errors[0].startswith(f"{copy} ({written[aggregate]}): ")
        assert "score 1.2 is outside [min_score=0, max_score=1]" in errors[0]

    @needs_validator
    def test_command(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """The command exports and validates, and says where and how many."""
        assert every_eval._main([str(projects.REPO / "params" / "default.yaml"), "--out", str(tmp_path)]) == 0
        assert (
            f"Every Eval Ever records (and their samples) in {tmp_path}: 0 validator errors" in capsys.readouterr().out
        )
