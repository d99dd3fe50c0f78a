"""The catalogue of the pipeline: every stage, every file it writes and every file it reads, declared once.

A stage's files are :class:`Artifact` constants (``JUDGE_JUDGED`` is ``06_judge/judged.parquet``);
the code that writes a file and the code that reads it both ask its artifact for the path
(:meth:`Artifact.path`), so no file name is spelt anywhere else. Each :class:`Stage` lists the
artifacts it reads; from those come the stages it reads (:func:`read_stages`), the Make graph
(:mod:`declinecraft.core.pipeline`) and which base run owns a stage of a derived run
(:meth:`declinecraft.core.config.RunConfig.owner`).

An artifact's name may hold one ``{}``: a family of files, one per key (the analysis stage's
``<table>.csv``, the paper's figures). Most artifacts sit in their stage's folder
(``outputs/<run>/NN_stage/``); the paper stage also writes into the run's ``paper/`` and
``figures/`` folders (the project's own for the default run, :func:`declinecraft.core.paths.paper_dirs`)
and the run's folder itself. ``when`` says which runs write an artifact ("" for every run).

Standard library only: ``python -m declinecraft.core.system_packages`` imports it before the
project's environment exists.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from declinecraft.core import paths

#: The marker of a stage whose code does not exist yet (written by
#: :func:`declinecraft.core.stage_writer.not_built`, removed when the stage first runs).
NOT_BUILT = "NOT_BUILT.md"

# Runs that write an artifact, when not every run does.
SEVERAL_GENERATORS = "runs that compare generators (generate.generators)"
K2G_ON = "know2guess.enabled"
K2G_OFF = "know2guess.enabled: false"
EVIDENCE_ON = "evidence.enabled"
EVIDENCE_OFF = "evidence.enabled: false"
IMPORTED = "runs made by make import"
OTHER_RUNS = "runs other than default"
OTHER_RUNS_WITH_BIB = "runs other than default, where the project has paper/references.bib"
WITH_PDF = "paper.build_pdf with latexmk installed"
WITH_RESULTS = "runs with judged responses"

#: The conditions a run's config decides (the others depend on what the run found).
_DECIDED: dict[str, Callable[[Any], bool]] = {
    K2G_ON: lambda cfg: bool(cfg.know2guess.enabled),
    K2G_OFF: lambda cfg: not cfg.know2guess.enabled,
    EVIDENCE_ON: lambda cfg: bool(cfg.evidence.enabled),
    EVIDENCE_OFF: lambda cfg: not cfg.evidence.enabled,
    OTHER_RUNS: lambda cfg: cfg.run != "default",
}


@dataclass(frozen=True)
class Artifact:
    """One file (or family of files, or folder) a stage writes."""

    stage: str
    """The params block of the stage that writes it (``judge``)."""
    name: str
    """Its name in its place; one ``{}`` makes a family (one file per key), a trailing ``/`` a folder."""
    about: str
    """What it holds: its columns or its kind of content."""
    when: str = ""
    """Which runs write it ("" for every run)."""
    place: str = "stage"
    """Where it sits: ``stage`` (the stage folder), ``paper``, ``tables`` (``paper/tables/``),
    ``figures`` or ``run`` (the run's folder)."""

    @property
    def kind(self) -> str:
        """The file's format, from its suffix (``parquet``, ``csv``, ...); ``folder`` for a folder."""
        return "folder" if self.name.endswith("/") else self.name.rsplit(".", 1)[-1] if "." in self.name else "file"

    def file(self, key: str | None = None) -> str:
        """The file name (a family member's with ``key``)."""
        if ("{}" in self.name) != (key is not None):
            raise ValueError(f"{self.stage}/{self.name}: a family needs a key, a single file none (got {key!r})")
        return self.name.replace("{}", key or "").rstrip("/")

    def folder(self, cfg: Any, run: str | None = None) -> Path:
        """The folder it sits in for run ``cfg`` (the stage's owner's), or for ``run`` when given."""
        if self.place == "stage":
            return cfg.run_dir(run) / notebook(self.stage) if run else cfg.stage_dir(self.stage)
        return places(cfg, run)[self.place]

    def path(self, cfg: Any, key: str | None = None, *, run: str | None = None) -> Path:
        """Where it is for run ``cfg`` (in the folder of the run that owns its stage), or for ``run``."""
        return self.folder(cfg, run) / self.file(key)

    def relative(self, key: str | None = None) -> str:
        """Its path under a run folder, for a file in a stage folder (``04_verify/benchmark.parquet``)."""
        return f"{notebook(self.stage)}/{self.file(key)}"

    @property
    def pattern(self) -> str:
        """Its name as a glob pattern (a family's key as ``*``, a folder without its ``/``)."""
        return self.name.replace("{}", "*").rstrip("/")

    def matches(self, name: str) -> bool:
        """Whether ``name`` (a path relative to its place) is this artifact, or a file inside it."""
        if self.kind == "folder":
            return "/" in name and fnmatch.fnmatchcase(name.split("/", 1)[0], self.pattern)
        return fnmatch.fnmatchcase(name, self.pattern) and name.count("/") == self.pattern.count("/")

    def decided(self, cfg: Any) -> bool | None:
        """Whether runs under ``cfg`` write it: True, False, or None when that depends on what the run finds."""
        if self.when == "":
            return True
        return _DECIDED[self.when](cfg) if self.when in _DECIDED else None

    def required(self, cfg: Any) -> bool:
        """Whether every successful run of its stage under ``cfg`` leaves it (a family never is)."""
        return "{}" not in self.name and self.decided(cfg) is True


def places(cfg: Any, run: str | None = None) -> dict[str, Path]:
    """The folders the paper stage writes beside its stage folder, for run ``cfg`` (or ``run``)."""
    figures, paper = paths.paper_dirs(cfg.root, run or cfg.run)
    return {"paper": paper, "tables": paper / "tables", "figures": figures, "run": cfg.run_dir(run)}


_DECLARED: list[Artifact] = []


def _declare(stage: str, name: str, about: str, when: str = "", place: str = "stage") -> Artifact:
    artifact = Artifact(stage, name, about, when, place)
    _DECLARED.append(artifact)
    return artifact


# --- 01_corpus -----------------------------------------------------------------------------------
_PAGES = "one row per page (title, revision_id, timestamp, created, text)"
_CHUNKS = "one row per chunk (chunk_id, title, text, url, revision_id, timestamp, corpus)"
CORPUS_PAGES_PRE = _declare("corpus", "pages_pre.parquet", f"C_pre: {_PAGES}")
CORPUS_PAGES_POST = _declare("corpus", "pages_post.parquet", f"C_post: {_PAGES}")
CORPUS_CHUNKS_PRE = _declare("corpus", "chunks_pre.parquet", f"C_pre: {_CHUNKS}")
CORPUS_CHUNKS_POST = _declare("corpus", "chunks_post.parquet", f"C_post: {_CHUNKS}")
CORPUS_DROPPED = _declare("corpus", "dropped.parquet", "every page left out (title, corpus, reason, detail)")
CORPUS_STATS = _declare("corpus", "stats.csv", "pages, chunks and drops per corpus")
CORPUS_MANIFEST = _declare("corpus", "manifest.json", "the input's sha256 or crawl statistics, params and counts")
#: Each corpus's chunks and pages by corpus name.
CORPUS_CHUNKS = {"pre": CORPUS_CHUNKS_PRE, "post": CORPUS_CHUNKS_POST}
CORPUS_PAGES = {"pre": CORPUS_PAGES_PRE, "post": CORPUS_PAGES_POST}

# --- 02_index ------------------------------------------------------------------------------------
INDEX_MANIFEST = _declare(
    "index", "manifest.json", "the stage manifest: current version (path), built_now, counts, embedder, timing"
)
INDEX_VERSION = _declare(
    "index",
    "index-{}/",
    "one index version (key: its fingerprint): its manifest, LanceDB tables of C_pre and C_post, Tantivy BM25 "
    "over C_pre, the frequent terms' BM25 scores (declinecraft.retrieval.index)",
)

# --- 03_generate ---------------------------------------------------------------------------------
GENERATE_DRAFTS = _declare(
    "generate", "drafts.parquet", "one row per candidate and generator: every step's raw output, cache key, status"
)
GENERATE_STAGE = _declare(
    "generate", "stage.json", "input counts (chunks and pages without text), seconds per generator"
)

# --- 04_verify -----------------------------------------------------------------------------------
VERIFY_BENCHMARK = _declare("verify", "benchmark.parquet", "the questions kept (declinecraft.construction.verify)")
VERIFY_BENCHMARK_JSONL = _declare("verify", "benchmark.jsonl", "the same questions as JSON lines")
VERIFY_CANDIDATES = _declare("verify", "candidates.parquet", "every candidate with its fate")
VERIFY_AUDIT_FATES = _declare("verify", "audit_fates.csv", "candidates per fate")
VERIFY_AUDIT_FORMAT = _declare("verify", "audit_format.csv", "drafts lost to format, per step")
VERIFY_AUDIT_VERIFIER = _declare("verify", "audit_verifier.csv", "the verifier's answers per check")
VERIFY_AUDIT_STYLE = _declare("verify", "audit_style.csv", "the style AUC (answerable against unanswerable wording)")
VERIFY_AUDIT_RETRIEVAL = _declare("verify", "audit_retrieval.csv", "Hit@k and scenario-chunk overlap of the kept")
VERIFY_AUDIT_PAGES = _declare("verify", "audit_pages.csv", "questions per target page")
VERIFY_AUDIT_CHUNKS = _declare("verify", "audit_chunks.csv", "questions per target chunk")
VERIFY_AUDIT_REVIEW = _declare("verify", "audit_review.csv", "candidates the manual review changed, and why")
VERIFY_AUDIT_GENERATORS = _declare(
    "verify",
    "audit_generators.csv",
    "Table 9: each generator's drafts through the comparison verifier",
    SEVERAL_GENERATORS,
)
VERIFY_COMPARISON_CANDIDATES = _declare(
    "verify",
    "comparison_candidates.parquet",
    "every compared generator's candidates with their fates",
    SEVERAL_GENERATORS,
)
VERIFY_DATASHEET = _declare("verify", "datasheet.md", "the benchmark's datasheet")
VERIFY_IMPORT = _declare("verify", "import.json", "where an imported benchmark came from, and its counts", IMPORTED)

# --- 05_answer -----------------------------------------------------------------------------------
ANSWER_RESPONSES = _declare(
    "answer",
    "responses.parquet",
    "one row per (question, model, thinking, condition, pipeline, k, scenario, prompt_variant): response, "
    "thinking trace, finish reason, budget flag, cache key, retrieved chunks and ranks, rounds",
)
ANSWER_RETRIEVAL = _declare("answer", "retrieval.parquet", "Hit@k and scenario-chunk overlap per pipeline, k, scenario")
ANSWER_RETRIEVED = _declare("answer", "retrieved.parquet", "the ranked chunk ids per question and retrieval setting")
ANSWER_COMPARISON_RESPONSES = _declare(
    "answer",
    "comparison_responses.parquet",
    "Table 9's CAR responses on the compared generators' questions (declinecraft.evaluation.comparison)",
    SEVERAL_GENERATORS,
)
ANSWER_MANIFEST = _declare("answer", "manifest.json", "settings, counts and seconds per model")

# --- 06_judge ------------------------------------------------------------------------------------
JUDGE_LABELS = _declare(
    "judge",
    "labels.parquet",
    "one row per (response, judge): raw output, label or null, unparsable, reasked, rule_label",
)
JUDGE_REFERENCES = _declare(
    "judge", "references.parquet", "one oracle reference per question (answerable: at the cut-off; else today's game)"
)
JUDGE_SCORES = _declare("judge", "scores.parquet", "one row per (response, accuracy judge): score or null, source")
JUDGE_JUDGED = _declare(
    "judge", "judged.parquet", "responses + label + score_<judge> + accuracy (panel mean) + question + reference"
)
JUDGE_RESULTS = _declare("judge", "results.csv", "metrics.summarize per configuration and setting, with the counts")
JUDGE_SUMMARY = _declare("judge", "summary.parquet", "the same table as results.csv")
JUDGE_LEAKAGE = _declare("judge", "leakage.csv", "no-RAG accuracy on unanswerable questions per model and thinking")
JUDGE_AGREEMENT = _declare("judge", "agreement.csv", "response judge vs rule_label and second judges: agreement, kappa")
JUDGE_CHECK = _declare(
    "judge",
    "judge_check.parquet",
    "the judges' check set: one row per (item, accuracy judge), expected and given score",
)
JUDGE_COMPARISON_LABELS = _declare(
    "judge", "comparison_labels.parquet", "the response judge's labels of the comparison responses", SEVERAL_GENERATORS
)
JUDGE_MANIFEST = _declare("judge", "manifest.json", "counts and seconds")

# --- 09_know2guess -------------------------------------------------------------------------------
K2G_DECISIONS = _declare(
    "know2guess",
    "know2guess_decisions.csv",
    "one row per run, parser and question: state, confidence, answer, issues, credit, judge label",
    K2G_ON,
)
K2G_SUMMARY = _declare("know2guess", "know2guess_summary.csv", "every K2G rate with its interval, ECE", K2G_ON)
K2G_COST_SENSITIVE = _declare("know2guess", "know2guess_cost_sensitive.csv", "R_lambda per lambda with ranks", K2G_ON)
K2G_OUTCOMES = _declare("know2guess", "know2guess_outcomes.csv", "the outcome profile", K2G_ON)
K2G_CALIBRATION = _declare("know2guess", "know2guess_calibration.csv", "the reliability diagram's bins", K2G_ON)
K2G_PARSER_SENSITIVITY = _declare(
    "know2guess", "know2guess_parser_sensitivity.csv", "normalized minus strict, per run", K2G_ON
)
K2G_PROMPT_SENSITIVITY = _declare(
    "know2guess", "know2guess_prompt_sensitivity.csv", "each control prompt minus the standard prompt", K2G_ON
)
K2G_SEPARABILITY = _declare(
    "know2guess", "know2guess_separability.csv", "K2G 3.5's probe: accuracy, macro-F1, recall, FPR, AUROC", K2G_ON
)
K2G_SEPARABILITY_FEATURES = _declare(
    "know2guess", "know2guess_separability_features.csv", "the probe's top words per half", K2G_ON
)
K2G_CROSS_PROTOCOL = _declare(
    "know2guess", "know2guess_cross_protocol.csv", "K2G's declared vs our judged abstention", K2G_ON
)
K2G_CROSSTAB = _declare("know2guess", "know2guess_crosstab.csv", "K2G state x judge label counts", K2G_ON)
K2G_ISSUES = _declare("know2guess", "know2guess_issues.csv", "every parser issue, counted per run and parser", K2G_ON)
K2G_MANIFEST = _declare("know2guess", "manifest.json", "settings, counts, seconds (enabled: false when off)")
K2G_DISABLED = _declare("know2guess", "DISABLED.md", "says the view is switched off", K2G_OFF)

# --- 10_evidence ---------------------------------------------------------------------------------
EVIDENCE_KEY_VALUES = _declare(
    "evidence",
    "key_values.parquet",
    "per answerable question: the value its conflicting copy alters, or why none",
    EVIDENCE_ON,
)
EVIDENCE_INSTANCES = _declare(
    "evidence",
    "instances.parquet",
    "per (question, level, order): chunk ids, the exact context, the checks",
    EVIDENCE_ON,
)
EVIDENCE_RESPONSES = _declare(
    "evidence", "responses.parquet", "per (instance, model, thinking, prompt): the answer call's reply", EVIDENCE_ON
)
EVIDENCE_LABELS = _declare("evidence", "labels.parquet", "the response judge's labels", EVIDENCE_ON)
EVIDENCE_SCORES = _declare("evidence", "scores.parquet", "the accuracy judges' scores of L1-L4 answers", EVIDENCE_ON)
EVIDENCE_JUDGED = _declare(
    "evidence", "judged.parquet", "responses + label + accuracy + ESB classes + L5 flags and types", EVIDENCE_ON
)
EVIDENCE_CURVE = _declare(
    "evidence", "curve.csv", "the evidence-sufficiency curve: per model, prompt and level L1-L5, T", EVIDENCE_ON
)
EVIDENCE_SUMMARY = _declare(
    "evidence", "summary.csv", "accuracy, over-answer, wrong-answer, B-ECE (with and without T), intervals", EVIDENCE_ON
)
EVIDENCE_POSITION_BIAS = _declare(
    "evidence", "position_bias.csv", "L5 by order: abstention, gold adoption, known-wrong; exact McNemar p", EVIDENCE_ON
)
EVIDENCE_PROMPT_EFFECTS = _declare(
    "evidence", "prompt_effects.csv", "P2, P3 vs P1 per level: change in abstention, McNemar p, BH q", EVIDENCE_ON
)
EVIDENCE_L5_TYPES = _declare("evidence", "l5_types.csv", "the L5 response distribution by type and order", EVIDENCE_ON)
EVIDENCE_AGREEMENT = _declare(
    "evidence", "agreement.csv", "response judge vs rule classifier (ESB classes): agreement, kappa", EVIDENCE_ON
)
EVIDENCE_QUALITY = _declare("evidence", "quality.csv", "ESB 4.4's checks with counts checked and failed", EVIDENCE_ON)
EVIDENCE_VALIDATION_SAMPLE = _declare(
    "evidence", "validation_sample.csv", "ESB 7.7's human-validation sheet: 40 responses per level", EVIDENCE_ON
)
EVIDENCE_VALIDATION_PAGE = _declare("evidence", "validation_sample.html", "the sheet as a form to label", EVIDENCE_ON)
EVIDENCE_VALIDATION_AGREEMENT = _declare(
    "evidence", "validation_agreement.csv", "ESB 7.7's Table 6 from annotators' labels", "runs with their labels"
)
EVIDENCE_PROBLEMS = _declare(
    "evidence", "problems.csv", "every question and level not built as defined, and what was done", EVIDENCE_ON
)
EVIDENCE_MANIFEST = _declare("evidence", "manifest.json", "settings, counts, seconds", EVIDENCE_ON)
EVIDENCE_STATUS = _declare("evidence", "STATUS.md", "says the view is switched off", EVIDENCE_OFF)

# --- 07_analysis ---------------------------------------------------------------------------------
ANALYSIS_TABLE = _declare(
    "analysis",
    "{}.csv",
    "one CSV per table (key: its name): every result of declinecraft.analysis.analyze (main_grid, paired_tests, "
    "...), facts, the upstream copies, tableNN per paper table the run fills, paper_tables, run_health, claims, "
    "notes, annotation_sample",
)
ANALYSIS_ANNOTATION_PAGE = _declare(
    "analysis", "annotation_sample.html", "the annotation sample for annotators", WITH_RESULTS
)
ANALYSIS_STATUS = _declare("analysis", "status.json", "ok or no_input (with the reason), rows, tables, annotators")

# --- 08_paper ------------------------------------------------------------------------------------
PAPER_RUN_HEALTH = _declare("paper", "run_health.csv", "the run's health with the views' rows")
PAPER_FIGURE_CHECKS = _declare("paper", "figure_checks.csv", "every drawn figure's layout and caption problems")
PAPER_SKIPPED = _declare("paper", "skipped.csv", "every figure and table the run cannot fill, with the reason")
PAPER_NUMBERS = _declare("paper", "numbers.csv", "every number macro: value, printed text, n/a reason")
PAPER_VIEW_NUMBERS = _declare("paper", "view_numbers.csv", "the views' macros")
PAPER_PAGE_CHECKS = _declare("paper", "page_checks.csv", "the built PDF's page problems")
PAPER_PDF_STATUS = _declare("paper", "pdf.json", "the PDF built, or why not")
PAPER_NUMBERS_TEX = _declare("paper", "numbers.tex", "one macro per number the text quotes", place="paper")
PAPER_VIEW_NUMBERS_TEX = _declare("paper", "view_numbers.tex", "the views' number macros", place="paper")
PAPER_HEALTH_NUMBERS_TEX = _declare("paper", "health_numbers.tex", "the run-health macros", place="paper")
PAPER_SKIPPED_TEX = _declare("paper", "skipped.tex", "why a figure or table is missing or small", place="paper")
PAPER_ENVIRONMENT_TEX = _declare("paper", "environment.tex", "the machines of the run", place="paper")
PAPER_PDF = _declare("paper", "main.pdf", "the paper", WITH_PDF, place="paper")
PAPER_TABLE = _declare(
    "paper", "{}.tex", "one LaTeX table (key: tableNN, selfpref, reported, claims, run_health)", place="tables"
)
PAPER_MAIN_TEX = _declare("paper", "main.tex", "a copy of the hand-written paper/main.tex", OTHER_RUNS, place="paper")
PAPER_REFERENCES = _declare(
    "paper", "references.bib", "a copy of paper/references.bib", OTHER_RUNS_WITH_BIB, place="paper"
)
PAPER_FIGURE = _declare(
    "paper", "{}", "one figure file (key: <stem>.<format>, one per format of paper.figure_formats)", place="figures"
)
PAPER_ENVIRONMENT = _declare(
    "paper", "environment.json", "the run's machine, model files' sha256 and the calls' machines", place="run"
)

#: Files in the paper's folders that are the project's own sources, not outputs (the default run
#: writes its paper into the project's ``paper/`` and ``figures/``).
SOURCES = {"paper": (PAPER_MAIN_TEX.name, PAPER_REFERENCES.name), "figures": ("README.md",)}

#: Every artifact, in stage order.
ARTIFACTS: tuple[Artifact, ...] = tuple(_DECLARED)


@dataclass(frozen=True)
class Stage:
    """One stage: its params block, its notebook and the artifacts of other stages it reads."""

    block: str
    """The params block, also the stage's name (``judge``)."""
    notebook: str
    """The notebook's stem, also the stage folder's name (``06_judge``)."""
    reads: tuple[Artifact, ...]
    """The artifacts of earlier stages it reads (their stages' outputs are its prerequisites)."""


_CHUNK_FILES = (CORPUS_CHUNKS_PRE, CORPUS_CHUNKS_POST)
_INDEX = (INDEX_MANIFEST, INDEX_VERSION)
#: The views' tables, frames and manifests (what the paper draws and counts).
_VIEWS = tuple(a for a in ARTIFACTS if a.stage in ("know2guess", "evidence") and a.kind not in ("md", "html"))
#: What the analysis stage copies or counts of the stages before it.
_ANALYSIS_READS = (
    CORPUS_STATS,
    GENERATE_DRAFTS,
    VERIFY_BENCHMARK,
    VERIFY_AUDIT_FATES,
    VERIFY_AUDIT_STYLE,
    VERIFY_AUDIT_RETRIEVAL,
    VERIFY_AUDIT_GENERATORS,
    VERIFY_COMPARISON_CANDIDATES,
    ANSWER_RESPONSES,
    ANSWER_RETRIEVAL,
    ANSWER_COMPARISON_RESPONSES,
    JUDGE_LABELS,
    JUDGE_REFERENCES,
    JUDGE_SCORES,
    JUDGE_JUDGED,
    JUDGE_AGREEMENT,
    JUDGE_COMPARISON_LABELS,
)

#: The stages in run order (a stage runs after every stage whose artifacts it reads).
STAGES: dict[str, Stage] = {
    s.block: s
    for s in (
        Stage("corpus", "01_corpus", ()),
        Stage("index", "02_index", _CHUNK_FILES),
        Stage("generate", "03_generate", (*_CHUNK_FILES, *_INDEX)),
        Stage("verify", "04_verify", (*_CHUNK_FILES, *_INDEX, GENERATE_DRAFTS)),
        Stage("answer", "05_answer", (*_INDEX, VERIFY_BENCHMARK, VERIFY_COMPARISON_CANDIDATES)),
        Stage(
            "judge",
            "06_judge",
            (*_CHUNK_FILES, *CORPUS_PAGES.values(), VERIFY_BENCHMARK, ANSWER_RESPONSES, ANSWER_COMPARISON_RESPONSES),
        ),
        Stage(
            "know2guess",
            "09_know2guess",
            (*_CHUNK_FILES, VERIFY_BENCHMARK, ANSWER_RESPONSES, ANSWER_RETRIEVED, JUDGE_REFERENCES, JUDGE_JUDGED),
        ),
        Stage(
            "evidence",
            "10_evidence",
            (*_CHUNK_FILES, *_INDEX, VERIFY_BENCHMARK, ANSWER_RETRIEVED, JUDGE_REFERENCES),
        ),
        Stage("analysis", "07_analysis", _ANALYSIS_READS),
        # The paper also reads every parquet file of the run for its calls' cache keys (the machine record).
        Stage(
            "paper",
            "08_paper",
            (ANALYSIS_TABLE, ANALYSIS_STATUS, VERIFY_AUDIT_VERIFIER, *_VIEWS)
            + tuple(a for a in ARTIFACTS if a.kind == "parquet" and a not in _VIEWS),
        ),
    )
}


def stage(block: str) -> Stage:
    """The stage of a params block (KeyError naming the known blocks for another name)."""
    try:
        return STAGES[block]
    except KeyError:
        raise KeyError(f"no stage {block!r} (stages: {', '.join(STAGES)})") from None


def notebook(block: str) -> str:
    """The notebook stem and stage folder name of a block (``judge`` -> ``06_judge``)."""
    return stage(block).notebook


def block_of(notebook_stem: str) -> str:
    """The block of a notebook stem (``06_judge`` -> ``judge``)."""
    found = [s.block for s in STAGES.values() if s.notebook == notebook_stem]
    if not found:
        raise KeyError(f"no stage notebook {notebook_stem!r}")
    return found[0]


def writes(block: str) -> tuple[Artifact, ...]:
    """The artifacts a stage writes, in declaration order."""
    stage(block)
    return tuple(a for a in ARTIFACTS if a.stage == block)


def read_stages(block: str) -> tuple[str, ...]:
    """The blocks whose artifacts a stage reads directly, in run order."""
    found = {a.stage for a in stage(block).reads} - {block}
    return tuple(b for b in STAGES if b in found)


def upstream(block: str) -> list[str]:
    """Every block whose outputs ``block`` reads, directly or through another stage, in run order."""
    seen: set[str] = set()
    todo = list(read_stages(block))
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(read_stages(name))
    return [b for b in STAGES if b in seen]


def find(block: str, name: str, place: str = "stage") -> Artifact | None:
    """The artifact of stage ``block`` that file ``name`` (relative to ``place``) is, or None."""
    for artifact in writes(block):
        if artifact.place == place and "{}" not in artifact.name and artifact.matches(name):
            return artifact
    return next((a for a in writes(block) if a.place == place and a.matches(name)), None)


def manifest(block: str) -> Artifact:
    """The manifest a stage writes (KeyError for a stage without one)."""
    found = [a for a in writes(block) if a.place == "stage" and a.name == "manifest.json"]
    if not found:
        raise KeyError(f"stage {block!r} declares no manifest")
    return found[0]


def missing(cfg: Any, block: str) -> list[Path]:
    """The files a successful run of stage ``block`` under ``cfg`` leaves that are not there."""
    return [a.path(cfg) for a in writes(block) if a.required(cfg) and not a.path(cfg).exists()]
