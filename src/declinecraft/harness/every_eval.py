"""A run's results in the Every Eval Ever schema (``every-eval-ever`` 0.3.0), checked by its validator.

``python -m declinecraft.harness.every_eval PARAMS [--out DIR]`` (``make every-eval RUN=<run>``)
writes, for each (model, thinking) of the run's leaderboard, under ``DIR`` (default
``outputs/<run>/every_eval/``) the datastore layout the schema's validator expects:

- ``data/declinecraft/<developer>/<model>/<uuid>.json``: the aggregate record: CAR, attempt rate,
  accuracy and Bal. F1 of each condition on the run's main setting
  (:func:`declinecraft.evaluation.leaderboard.condition_rows`), each with its n and interval; the
  benchmark named and versioned by the sha256 of ``04_verify/benchmark.jsonl``; the generation
  settings (temperature, output budget, thinking, prompt template) of the run's params; the judges
  from the models registry; package versions from the run's ``environment.json``;
- ``<uuid>_samples.jsonl`` beside it: one record per response and metric it counts in (its label,
  or its accuracy score), under the rules of :mod:`declinecraft.evaluation.metrics`.

The uuid derives from the benchmark hash, the run, the model and the thinking setting, and the
record's time is ``SOURCE_DATE_EPOCH`` or else when ``summary.csv`` was written, so exporting twice
writes the same bytes. A model's id is its Hugging Face repository where the registry names one, a
hosted model's ``provider/name``, else its registry id with the registry's family as developer
(the registry keeps no developer for the shipped GGUF models). Nothing here uses the network; the
validator is the ``every-eval-ever`` package that ``make setup`` installs.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import sys
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from declinecraft.core import catalogue, config, paths, prompts
from declinecraft.core.environment import sha256_file
from declinecraft.core.number_format import is_missing
from declinecraft.core.registry import ModelSpec, RegistryError, load_models
from declinecraft.evaluation.answer import CONDITIONS, NO_CONTEXT, REFLECT, TEMPLATES
from declinecraft.evaluation.leaderboard import condition_rows, main_setting, summary_path

SCHEMA_VERSION = "0.3.0"
#: The datastore collection the records are filed under (``data/<collection>/...``).
COLLECTION = "declinecraft"
#: Folder of a run's export (``outputs/<run>/every_eval/``).
FOLDER = "every_eval"
TITLES = {"no_rag": "no retrieval", "single": "single-shot RAG", "iterative": "iterative RAG"}
#: metric -> (display name, n column, interval method, kind, description).
METRICS = {
    "car": ("CAR", "car_n", "wilson", "abstention_rate", "Correct abstention rate: ABSTAIN on unanswerable questions"),
    "attempt": ("Attempt rate", "attempt_n", "wilson", "attempt_rate", "ANSWER or DENY on answerable questions"),
    "accuracy": ("Accuracy", "accuracy_n", "bootstrap", "accuracy", "Mean accuracy-judge score, answerable"),
    "bal_f1": ("Bal. F1", "", "", "f1", "Balanced F1 = 2A / (A + 2 - C) of attempt rate A and CAR C"),
}
SAMPLE_COLUMNS = (
    *("question_id", "answerable", "model", "thinking", "condition", "pipeline", "k", "scenario", "prompt_variant"),
    *("query", "response", "thinking_trace", "finish_reason", "budget_exhausted", "error"),
    *("label", "label_source", "rule_label", "accuracy", "reference"),
)


class ExportError(ValueError):
    """A leaderboard row that cannot be exported; the message names the file and the row."""


@dataclass(frozen=True)
class RunFacts:
    """What every record of a run states besides its scores."""

    run: str
    benchmark_sha256: str
    retrieved: str
    """Unix time of the record (``SOURCE_DATE_EPOCH``, else when ``summary.csv`` was written)."""
    packages: dict[str, str]
    """Installed versions from the run's ``environment.json`` (empty when it has none)."""
    confidence: float
    bootstrap_resamples: int
    source_metadata: dict[str, Any]
    source_data: dict[str, Any]
    scoring: dict[str, dict[str, Any]]
    """The schema's ``llm_scoring`` per metric: the response judge, or the accuracy judges."""
    answer: Any
    """The run's ``answer`` params block (sampling, budget, retrieval, rounds)."""
    prompts: dict[str, prompts.Prompt]
    """The answer template per condition, and the reflection template under ``reflect``."""


def check_rows(rows: pl.DataFrame, models: dict[str, ModelSpec], *, where: str) -> None:
    """Refuse rows an Every Eval Ever record cannot state: no model, an unknown condition, a rate
    outside [0, 1] or outside its interval, a count that is not a whole number, a repeated row.

    Raises:
        ExportError: naming ``where`` and the row by its model, thinking and condition.
    """
    seen: set[tuple[str, str, str]] = set()
    for row in rows.iter_rows(named=True):
        model, thinking, condition = row.get("model"), row.get("thinking"), row.get("condition")
        name = f"{where}: the row of model {model!r}, thinking {thinking!r}, condition {condition!r}"
        if not isinstance(model, str) or not model.strip():
            raise ExportError(f"{name}: no model id")
        if model not in models:
            raise ExportError(f"{name}: model {model!r} is not in the run's model registry")
        if condition not in CONDITIONS or not thinking:
            raise ExportError(f"{name}: condition must be one of {CONDITIONS} and thinking given")
        if (model, thinking, condition) in seen:
            raise ExportError(f"{name}: a second row for the same model, thinking and condition")
        seen.add((model, thinking, condition))
        for metric, (_, n_column, method, _, _) in METRICS.items():
            value = _number(row.get(metric))
            if value is None:
                continue
            if not 0 <= value <= 1:
                raise ExportError(f"{name}: {metric} = {value} is not a proportion in [0, 1]")
            if n_column and not (isinstance(row.get(n_column), int) and row[n_column] >= 0):
                raise ExportError(f"{name}: {n_column} = {row.get(n_column)!r} is not a count")
            low, high = _number(row.get(f"{metric}_low")), _number(row.get(f"{metric}_high"))
            if method and (low is None or high is None or not 0 <= low <= value <= high <= 1):
                raise ExportError(f"{name}: {metric} = {value} is not inside its interval [{low}, {high}]")


def model_identity(spec: ModelSpec) -> tuple[str, str]:
    """``(id, developer)`` of a registry entry in the schema's terms (see the module docstring)."""
    for candidate in (spec.hf_repo, spec.served_name if spec.backend == "openai" else None):
        if candidate and "/" in candidate:
            return candidate, candidate.split("/", 1)[0]
    return spec.id, spec.family or spec.id


def model_info(spec: ModelSpec, packages: dict[str, str], **details: str) -> dict[str, Any]:
    """The schema's ``model_info`` of a registry entry (``packages``: the run's installed versions)."""
    model_id, developer = model_identity(spec)
    info: dict[str, Any] = {"name": spec.display_name or spec.id, "id": model_id, "developer": developer}
    engine = {"llamacpp": ("llama.cpp", "llama-cpp-python"), "vllm": ("vLLM", "vllm")}.get(spec.backend)
    if engine:
        info["inference_engine"] = {"name": engine[0], "version": packages.get(engine[1], "unknown")}
    facts = {"registry_id": spec.id, "backend": spec.backend, "revision": spec.revision, "precision": spec.precision}
    info["additional_details"] = {
        "deployment_type": "self_deployed" if spec.is_local else "externally_managed",
        "model_availability": "open_weights" if spec.hf_repo or spec.gguf else "unknown",
        **{k: str(v) for k, v in facts.items() if v},
        **details,
    }
    return info


def export(cfg: config.RunConfig, out: Path | None = None) -> dict[Path, str]:
    """Write the run's records under ``out`` (default ``outputs/<run>/every_eval/``), replacing
    ``out/data/declinecraft/``; return each written file with the leaderboard row it holds.

    Raises:
        FileNotFoundError: the analysis, judge or verify stage has not run (names the file).
        ExportError: a row :func:`check_rows` refuses.
    """
    out = out or cfg.run_dir() / FOLDER
    models = load_models(cfg.resolve(cfg.models_file))
    rows = condition_rows(cfg)
    check_rows(rows, models, where=str(summary_path(cfg)))
    judged_path = catalogue.JUDGE_JUDGED.path(cfg)
    if not judged_path.is_file():
        raise FileNotFoundError(f"missing {judged_path}: run {catalogue.notebook('judge')} first")
    judged = pl.read_parquet(judged_path, columns=list(SAMPLE_COLUMNS)).filter(main_setting(cfg))
    run = run_facts(cfg, models)
    collection = out / "data" / COLLECTION
    if collection.exists():
        shutil.rmtree(collection)
    written: dict[Path, str] = {}
    for (model, thinking), group in rows.group_by("model", "thinking", maintain_order=True):
        spec, label = models[str(model)], f"model {model!r}, thinking {thinking!r}"
        model_id, developer = model_identity(spec)
        stem = _uuid(run.benchmark_sha256, run.run, spec.id, str(thinking))
        folder = collection / _component(developer) / _component(model_id.split("/", 1)[-1])
        evaluation_id = f"{COLLECTION}/{model_id}/thinking-{thinking}/{run.retrieved}"
        mine = judged.filter(pl.col("model") == model, pl.col("thinking") == thinking)
        lines = [json.dumps(r, ensure_ascii=False, allow_nan=False) for r in _samples(mine, evaluation_id, model_id)]
        samples = paths.write_text_atomic(folder / f"{stem}_samples.jsonl", "".join(f"{line}\n" for line in lines))
        record = _aggregate(group, spec, str(thinking), evaluation_id, run)
        record["detailed_evaluation_results"] = {
            "format": "jsonl",
            "file_path": samples.relative_to(out).as_posix(),
            "hash_algorithm": "sha256",
            "checksum": sha256_file(samples),
            "total_rows": len(lines),
        }
        text = json.dumps(record, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        aggregate = paths.write_text_atomic(folder / f"{stem}.json", text)
        written.update({aggregate: label, samples: label})
    return written


def validate(out: Path, written: dict[Path, str] | None = None) -> tuple[list[str], list[str]]:
    """Check every record under ``out/data/`` with every-eval-ever's own validator, its datastore
    checks included (path, companion file, score bounds, model deployment and identity).

    Returns:
        ``(errors, warnings)``, each message naming the file and, when ``written`` is given, its row.

    Raises:
        ModuleNotFoundError: every-eval-ever is not installed (``make setup`` installs it).
    """
    from every_eval_ever.validator import format_error, format_warning, validate_file

    files = sorted(p for p in (out / "data").rglob("*") if p.suffix in (".json", ".jsonl"))
    repo = frozenset(p.relative_to(out).as_posix() for p in files)
    errors, warnings = [], []
    for path in files:
        report = validate_file(
            path,
            repo_path=path.relative_to(out).as_posix(),
            available_files=repo,
            read_repo_file=lambda name: (out / name).read_text(encoding="utf-8"),
            run_semantic_checks=True,
        )
        where = f"{path}" + (f" ({written[path]})" if written and path in written else "")
        errors += [f"{where}: {format_error(e)}" for e in report.errors]
        warnings += [f"{where}: {format_warning(w)}" for w in report.warnings]
    return errors, warnings


def run_facts(cfg: config.RunConfig, models: dict[str, ModelSpec]) -> RunFacts:
    """Read what the records state about the run: its benchmark, machine record, params and judges.

    Raises:
        FileNotFoundError: the run has no ``04_verify/benchmark.jsonl``.
        RegistryError: a judge is not in the run's model registry.
    """
    benchmark = catalogue.VERIFY_BENCHMARK_JSONL.path(cfg)
    if not benchmark.is_file():
        raise FileNotFoundError(f"missing {benchmark}: run {catalogue.notebook('verify')} first")
    digest = sha256_file(benchmark)
    questions = [json.loads(line) for line in benchmark.read_text(encoding="utf-8").splitlines() if line.strip()]
    answerable = sum(bool(q.get("answerable")) for q in questions)
    environment = catalogue.PAPER_ENVIRONMENT.path(cfg)
    machine = json.loads(environment.read_text(encoding="utf-8")) if environment.is_file() else {}
    packages = {str(k): str(v) for k, v in (machine.get("packages") or {}).items()}
    where = {"run": cfg.run, "params": cfg.params_file.name, "benchmark_sha256": digest}
    judge = cfg.judge

    def scoring(ids: Iterable[str], prompt: str) -> dict[str, Any]:
        if missing := [m for m in ids if m not in models]:
            raise RegistryError(f"{cfg.models_file}: judge {missing[0]!r} is not in the run's model registry")
        judges = [{"model_info": model_info(models[m], packages), "temperature": judge.temperature} for m in ids]
        return {"judges": judges, "input_prompt": prompts.load(prompt, cfg.root).text, "aggregation_method": "average"}

    labels = scoring([judge.response_judge], "judge_response")
    return RunFacts(
        run=cfg.run,
        benchmark_sha256=digest,
        retrieved=os.environ.get("SOURCE_DATE_EPOCH") or str(int(summary_path(cfg).stat().st_mtime)),
        packages=packages,
        confidence=cfg.analysis.confidence,
        bootstrap_resamples=cfg.analysis.bootstrap_resamples,
        source_metadata={
            "source_name": f"DeclineCraft run {cfg.run}",
            "source_type": "evaluation_run",
            "source_organization_name": "DeclineCraft",
            "evaluator_relationship": "third_party",
            "additional_details": {**where, "environment_id": str(machine.get("environment_id", "unknown"))},
        },
        source_data={
            "dataset_name": "DeclineCraft",
            "source_type": "other",
            "additional_details": {
                **where,
                "benchmark_file": catalogue.VERIFY_BENCHMARK_JSONL.relative(),
                "questions": str(len(questions)),
                "answerable": str(answerable),
                "unanswerable": str(len(questions) - answerable),
                "cutoff": str(cfg.corpus.cutoff),
            },
        },
        scoring={"car": labels, "attempt": labels, "accuracy": scoring(judge.accuracy_judges, "judge_accuracy")},
        answer=cfg.answer,
        prompts={
            **{c: prompts.load(NO_CONTEXT if c == "no_rag" else TEMPLATES["default"], cfg.root) for c in CONDITIONS},
            "reflect": prompts.load(REFLECT, cfg.root),
        },
    )


def _aggregate(rows: pl.DataFrame, spec: ModelSpec, thinking: str, evaluation_id: str, run: RunFacts) -> dict[str, Any]:
    """One (model, thinking)'s aggregate record from its condition rows (a metric without questions,
    NaN, is left out: the schema takes finite scores only)."""
    results = []
    by_condition = {r["condition"]: r for r in rows.iter_rows(named=True)}
    for condition in (c for c in CONDITIONS if c in by_condition):
        row = by_condition[condition]
        for metric, (title, n_column, method, kind, description) in METRICS.items():
            if (value := _number(row[metric])) is None:
                continue
            counts = {"n": str(row[n_column])} if n_column else {c: str(row[c]) for c in ("car_n", "attempt_n")}
            score: dict[str, Any] = {"score": value, "details": counts}
            if n_column:
                interval = {"lower": row[f"{metric}_low"], "upper": row[f"{metric}_high"]}
                score["uncertainty"] = {
                    "confidence_interval": {**interval, "confidence_level": run.confidence, "method": method},
                    "num_samples": row[n_column],
                    **({"num_bootstrap_samples": run.bootstrap_resamples} if method == "bootstrap" else {}),
                }
            retrieval = {} if condition == "no_rag" else {"pipeline": run.answer.pipeline, "k": run.answer.k}
            results.append(
                {
                    "evaluation_result_id": f"{condition}/{metric}",
                    "evaluation_name": _evaluation_name(condition),
                    "source_data": run.source_data,
                    "metric_config": {
                        "evaluation_description": f"{description}; {TITLES[condition]}",
                        "metric_id": f"{COLLECTION}.{metric}",
                        "metric_name": title,
                        "metric_kind": kind,
                        "metric_unit": "proportion",
                        "metric_parameters": retrieval,
                        "lower_is_better": False,
                        "score_type": "continuous",
                        "min_score": 0,
                        "max_score": 1,
                        **({"llm_scoring": run.scoring[metric]} if metric in run.scoring else {}),
                    },
                    "score_details": score,
                    "generation_config": _generation(run, condition, thinking),
                }
            )
    return {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id,
        "retrieved_timestamp": run.retrieved,
        "source_metadata": run.source_metadata,
        "model_info": model_info(spec, run.packages, thinking=thinking),
        "eval_library": {"name": COLLECTION, "version": run.packages.get(COLLECTION, "unknown")},
        "evaluation_results": results,
    }


def _generation(run: RunFacts, condition: str, thinking: str) -> dict[str, Any]:
    """The schema's ``generation_config`` of a condition: the answer stage's sampling and prompt."""
    prompt = run.prompts[condition]
    details = {"prompt": prompt.name, "prompt_version": prompt.version, "thinking": thinking}
    if condition == "iterative":
        details |= {"max_rounds": str(run.answer.max_rounds), "reflection_prompt": run.prompts["reflect"].name}
    args = {"temperature": run.answer.temperature, "max_tokens": run.answer.max_tokens, "reasoning": thinking != "off"}
    return {"generation_args": {**args, "prompt_template": prompt.text}, "additional_details": details}


def _samples(judged: pl.DataFrame, evaluation_id: str, model_id: str) -> Iterator[dict[str, Any]]:
    """Instance records: each response once per metric it counts in. As in stage 07, an exhausted
    budget counts in neither rate and scores 0 in accuracy, and so does an abstention in accuracy;
    an unjudged accuracy counts in none."""
    order = {c: i for i, c in enumerate(CONDITIONS)}
    rows = sorted(judged.iter_rows(named=True), key=lambda r: (order[r["condition"]], r["question_id"]))
    for metric in ("car", "attempt", "accuracy"):
        for r in rows:
            exhausted, label = bool(r["budget_exhausted"]), r["label"]
            if metric == "car" and not r["answerable"] and not exhausted and label:
                score, value, reference = float(label == "ABSTAIN"), label, ["ABSTAIN"]
            elif metric == "attempt" and r["answerable"] and not exhausted and label:
                score, value, reference = float(label in ("ANSWER", "DENY")), label, ["ANSWER", "DENY"]
            elif metric == "accuracy" and r["answerable"] and (exhausted or label):
                accuracy = 0.0 if exhausted or label == "ABSTAIN" else _number(r["accuracy"])
                if accuracy is None:
                    continue
                score, value, reference = accuracy, r["response"] or "", [r["reference"]] if r["reference"] else []
            else:
                continue
            method = "llm_judge" if metric == "accuracy" or r["label_source"] == "llm" else str(r["label_source"])
            attribution = {"turn_idx": 0, "source": "output.raw", "extracted_value": value, "extraction_method": method}
            yield {
                "schema_version": SCHEMA_VERSION,
                "evaluation_id": evaluation_id,
                "model_id": model_id,
                "evaluation_name": _evaluation_name(r["condition"]),
                "evaluation_result_id": f"{r['condition']}/{metric}",
                "sample_id": r["question_id"],
                "interaction_type": "single_turn",
                "input": {"raw": r["query"], "reference": reference},
                "output": {
                    "raw": [r["response"] or ""],
                    "reasoning_trace": [r["thinking_trace"]] if r["thinking_trace"] else None,
                },
                "messages": None,
                "answer_attribution": [{**attribution, "is_terminal": True}],
                "evaluation": {"score": score, "is_correct": score == 1.0},
                "error": r["error"],
                "metadata": {
                    k: str(r[k]) for k in ("answerable", "label", "rule_label", "finish_reason", "budget_exhausted")
                },
            }


def _evaluation_name(condition: str) -> str:
    return f"DeclineCraft, {TITLES[condition]}"


def _number(value: Any) -> float | None:
    """A finite float, or None for a missing or NaN value."""
    if isinstance(value, bool) or is_missing(value):
        return None
    return float(value)


def _uuid(*parts: str) -> str:
    """A version-4-shaped uuid derived from ``parts`` (the schema's file names must be uuid4)."""
    return str(uuid.UUID(bytes=hashlib.sha256("/".join(parts).encode()).digest()[:16], version=4))


def _component(name: str) -> str:
    """A portable datastore folder name (the validator's rule: no '/', ':' or reserved characters)."""
    return re.sub(r'[<>:"\\|?*/\x00-\x1f]', "_", name).rstrip(". ") or "_"


def _main(argv: list[str]) -> int:
    """``python -m declinecraft.harness.every_eval PARAMS [--out DIR]``: export and validate."""
    parser = argparse.ArgumentParser(prog="python -m declinecraft.harness.every_eval")
    parser.add_argument("params", type=Path)
    parser.add_argument("--out", type=Path, default=None, help=f"default: outputs/<run>/{FOLDER}/")
    args = parser.parse_args(argv)
    try:
        cfg = config.load(args.params)
        out = args.out or cfg.run_dir() / FOLDER
        written = export(cfg, out)
        errors, warnings = validate(out, written)
    except ModuleNotFoundError as exc:
        print(f"error: {exc}: the validator is the every-eval-ever package (`make setup` installs it)", file=sys.stderr)
        return 1
    except (config.ConfigError, FileNotFoundError, ExportError, RegistryError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for message in warnings:
        print(f"warning: {message}", file=sys.stderr)
    for message in errors:
        print(f"error: {message}", file=sys.stderr)
    aggregates = sum(p.suffix == ".json" for p in written)
    print(f"{aggregates} Every Eval Ever records (and their samples) in {out}: {len(errors)} validator errors")
    return 1 if errors else 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
