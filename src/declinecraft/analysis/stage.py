"""Stage 07: analyze a run's judged responses and write every result table as CSV.

:func:`run` reads the judged table (:mod:`declinecraft.analysis.inputs`), computes every
statistic of the paper (:func:`declinecraft.analysis.analyze.analyze`), draws the shared
annotation sample, reads annotators' labels back when there are any, and writes into
``outputs/<run>/07_analysis/`` (of the run that owns the stage: a derived run with identical
upstream blocks shares its base's): ``<name>.csv`` per result, ``tableNN.csv`` per fillable paper
table, ``paper_tables.csv`` (why a table is empty), ``run_health.csv`` (failed calls, truncations,
judge parse failures and questions scored, :mod:`declinecraft.analysis.run_health`),
``claims.csv`` (the paper's headline claims against this run, :mod:`declinecraft.analysis.claims`),
the annotation sample and ``status.json``.

Without a judged table the stage still writes the model facts, the upstream copies, the paper
tables they fill (11 and 12) and the run health of what did run, records the reason in
``status.json`` and returns a result whose ``status`` is ``no_input``: the paper stage then prints
"n/a" for every number and lists what it skipped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from declinecraft.analysis import analyze, annotation, claims, inputs, judges, paper_tables, results, run_health
from declinecraft.core import catalogue, registry
from declinecraft.core.config import RunConfig
from declinecraft.core.stage_writer import StageWriter

#: Metrics of ``condition_means`` shown first in the notebook.
HEADLINE_METRICS = ("car", "attempt", "accuracy")


@dataclass(frozen=True)
class AnalysisResult:
    """What one run of the analysis stage wrote, and why it wrote less when it had no input."""

    folder: Path
    """The ``07_analysis/`` folder every file went to (the owner run's)."""
    status: str
    """``ok`` when judged responses were analyzed, ``no_input`` when the judge stage had not run."""
    reason: str
    """Why there was no input (empty when ``status`` is ``ok``)."""
    tables: Mapping[str, pl.DataFrame]
    """Every table written as ``<name>.csv``: the results, model facts and upstream copies (only
    the facts and upstream copies without input)."""
    paper_tables: Mapping[str, pl.DataFrame | str]
    """Each paper table's content (written as ``tableNN.csv``) or the reason the run cannot fill it."""
    rows: int
    """Judged responses read (0 without input)."""
    annotators: tuple[str, ...]
    """Annotators whose labels were found in ``data/annotations/<run>/`` (sorted)."""

    @property
    def ok(self) -> bool:
        """Whether the stage had judged responses to analyze."""
        return self.status == "ok"

    def headline(self) -> list[pl.DataFrame]:
        """The tables to look at first: mean CAR, attempt and accuracy per condition, the
        significance counts and the associations (none without input)."""
        if not self.ok:
            return []
        means = self.tables["condition_means"]
        return [
            means.filter(pl.col("metric").is_in(HEADLINE_METRICS)),
            self.tables["significance_counts"],
            self.tables["associations"],
        ]

    def explain(self) -> pl.DataFrame | str:
        """What the run could not compute and why: the ``notes`` table, or the missing input."""
        return self.tables["notes"] if self.ok else self.reason

    def files(self) -> list[str]:
        """Names of the files in the stage folder."""
        return sorted(p.name for p in self.folder.iterdir())


def run(cfg: RunConfig) -> AnalysisResult:
    """Analyze the run's judged table and write every result (see the module docstring)."""
    writer = StageWriter.of(cfg, "analysis", float_precision=results.FLOAT_PRECISION)
    out = writer.folder
    out.mkdir(parents=True, exist_ok=True)
    writer.finish()
    specs = registry.load_models(cfg.resolve(cfg.models_file))
    upstream = inputs.upstream_tables(cfg)
    judged, reason = inputs.load_judged(cfg)
    if judged is None:
        tables = {"facts": analyze.model_facts(specs, list(cfg.answer.models), inputs.roles_of(cfg)), **upstream}
        tables["run_health"] = run_health.collect(cfg)
        content = paper_tables.build(tables, cfg)
        _write_all(tables, content, writer)
        # Every claim is then "not testable" with this reason; the paper still prints the table.
        checked = claims.check(tables, claims.context_from_config(cfg, reason), claims.reported_facts(cfg.root))
        writer.frame(catalogue.ANALYSIS_TABLE, checked, "claims")
        writer.json(catalogue.ANALYSIS_STATUS, {"status": "no_input", "reason": reason}, indent=1, end="")
        print(f"analysis: {reason}")
        return AnalysisResult(out, "no_input", reason, tables, content, 0, ())
    facts = analyze.model_facts(specs, judged["model"].unique().sort().to_list(), inputs.roles_of(cfg))
    # Judges' families come from the registry: a judge need not be one of the evaluated models.
    families = {
        f"{cfg.analysis.judge_score_prefix}{j}": specs[j].family for j in cfg.judge.accuracy_judges if j in specs
    }
    tables = analyze.analyze(judged, facts, analyze.design_from_config(cfg), judge_families=families)
    tables["facts"] = facts
    tables.update(upstream)
    tables["run_health"] = run_health.collect(cfg, tables.get("main_grid"))
    tables["annotation_sample"] = annotation.write_sample(cfg, judged, out)
    annotations = annotation.read_annotations(cfg)
    if annotations:
        tables["human_agreement"] = judges.human_agreement(
            tables["annotation_sample"], annotations, n_resamples=cfg.analysis.bootstrap_resamples, seed=cfg.seed
        )
    tables["claims"] = claims.check(tables, claims.context_from_config(cfg), claims.reported_facts(cfg.root))
    content = paper_tables.build(tables, cfg)
    _write_all(tables, content, writer)
    status = {"status": "ok", "rows": judged.height, "tables": sorted(tables), "annotators": sorted(annotations)}
    writer.json(catalogue.ANALYSIS_STATUS, status, indent=1, end="")
    return AnalysisResult(out, "ok", "", tables, content, judged.height, tuple(sorted(annotations)))


def _write_all(
    tables: Mapping[str, pl.DataFrame], content: Mapping[str, pl.DataFrame | str], writer: StageWriter
) -> None:
    """Write every result table and every fillable paper table (``tableNN``) as a CSV table, and
    ``paper_tables`` with the reason of each table the run cannot fill."""
    for name, table in tables.items():
        writer.frame(catalogue.ANALYSIS_TABLE, table, name)
    status = []
    for name, filled in content.items():
        if isinstance(filled, pl.DataFrame):
            writer.frame(catalogue.ANALYSIS_TABLE, filled, name)
        status.append({"table": name, "reason": filled if isinstance(filled, str) else ""})
    writer.frame(catalogue.ANALYSIS_TABLE, pl.DataFrame(status), "paper_tables")
