"""A run's responses as one tidy frame (docs/design.md, goal 2): loading and joining the stage files.

:func:`load` joins a run's benchmark, responses, labels, scores and references: one row per response
(question x model x thinking x condition x pipeline x k x scenario x prompt variant).
:mod:`~declinecraft.explore.filters` picks questions out of it, :mod:`~declinecraft.explore.question`
shows one question, :mod:`~declinecraft.explore.report` writes the static page. The explorer reads
stage files only, never pipeline code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from declinecraft.core import catalogue, config, paths
from declinecraft.core.config import RunConfig
from declinecraft.explore.protocols import with_know2guess

#: Columns a response table may lack (synthetic or older tables): added as nulls with these types.
RESPONSE_COLUMNS: dict[str, Any] = {
    "answerable": pl.Boolean,
    "thinking": pl.String,
    "pipeline": pl.String,
    "k": pl.Int64,
    "scenario": pl.Boolean,
    "prompt_variant": pl.String,
    "label": pl.String,
    "rule_label": pl.String,
    "judge_label": pl.String,
    "accuracy": pl.Float64,
    "budget_exhausted": pl.Boolean,
    "finish_reason": pl.String,
    "error": pl.String,
    "response": pl.String,
    "thinking_trace": pl.String,
    "query": pl.String,
    "retrieved_chunk_ids": pl.List(pl.String),
    "component_ranks": pl.String,
    "rounds": pl.String,
    "n_rounds": pl.Int64,
    "response_id": pl.String,
}
#: Benchmark columns the explorer shows (``scenario`` becomes ``scenario_text``).
BENCH_COLUMNS: dict[str, Any] = {
    "answerable": pl.Boolean,
    "scenario": pl.String,
    "asked_question": pl.String,
    "question": pl.String,
    "fact": pl.String,
    "target_chunk_id": pl.String,
    "target_title": pl.String,
    "target_url": pl.String,
    "scenario_chunk_ids": pl.List(pl.String),
}
#: Benchmark fields every response row carries (and :func:`~declinecraft.explore.question.show` shows).
FROM_BENCH = (
    "scenario_text",
    "asked_question",
    "question",
    "fact",
    "target_chunk_id",
    "target_title",
    "target_url",
    "scenario_chunk_ids",
)
#: The frame's leading columns, in this order (the rest follow as the tables have them).
FIRST = (
    "question_id",
    "answerable",
    "setting",
    "main",
    "model",
    "thinking",
    "condition",
    "pipeline",
    "k",
    "scenario",
    "prompt_variant",
    "label",
    "rule_label",
    "accuracy",
)


def resolve(run: str | Path | RunConfig, *, root: Path | None = None) -> RunConfig:
    """Return the run config of a run name (``params/<run>.yaml``), a params file or a config."""
    if isinstance(run, RunConfig):
        return run
    path = Path(run)
    if path.suffix not in (".yaml", ".yml"):
        path = paths.find_root(root or Path.cwd()) / "params" / f"{run}.yaml"
    elif not path.is_absolute():
        path = paths.find_root(root or Path.cwd()) / path
    return config.load(path)


def _missing(path: Path, cfg: RunConfig, stage: str) -> str:
    marker = path.parent / catalogue.NOT_BUILT
    hint = f" ({marker.name} is there: the stage has not run yet)" if marker.exists() else ""
    params = paths.under(cfg.params_file, cfg.root)
    return f"missing {path}{hint}: run {catalogue.notebook(stage)} first (make all PARAMS={params})"


def load(run: str | Path | RunConfig, *, root: Path | None = None) -> pl.DataFrame:
    """Load a run's responses with everything known about them (:func:`join_tables`), one row each.

    Reads ``04_verify/benchmark.parquet``, ``06_judge/judged.parquet`` (before judging:
    ``05_answer/responses.parquet``, no labels) and ``06_judge/references.parquet`` via
    ``cfg.stage_dir`` (a derived run reads its base's), and each response's Know2Guess decision
    when that view has run (:func:`~declinecraft.explore.protocols.with_know2guess`). Adds ``run``
    and ``params_file`` (for :func:`show`).

    Raises:
        FileNotFoundError: the benchmark or the responses are missing (names the file).
    """
    cfg = resolve(run, root=root)
    bench_path = catalogue.VERIFY_BENCHMARK.path(cfg)
    if not bench_path.is_file():
        raise FileNotFoundError(_missing(bench_path, cfg, "verify"))
    responses = catalogue.ANSWER_RESPONSES.path(cfg)
    source = next((p for p in (catalogue.JUDGE_JUDGED.path(cfg), responses) if p.is_file()), responses)
    if not source.is_file():
        raise FileNotFoundError(_missing(source, cfg, "answer"))
    refs_path = catalogue.JUDGE_REFERENCES.path(cfg)
    refs = pl.read_parquet(refs_path, columns=["question_id", "reference"]) if refs_path.is_file() else None
    frame = join_tables(
        pl.read_parquet(bench_path), pl.read_parquet(source), refs, pipeline=cfg.answer.pipeline, k=cfg.answer.k
    )
    frame = with_know2guess(frame, cfg.stage_dir("know2guess"))
    return frame.with_columns(run=pl.lit(cfg.run), params_file=pl.lit(str(cfg.params_file)))


def _with_defaults(frame: pl.DataFrame, columns: dict[str, Any]) -> pl.DataFrame:
    return frame.with_columns(pl.lit(None, dtype).alias(c) for c, dtype in columns.items() if c not in frame.columns)


def _main_setting(resp: pl.DataFrame) -> tuple[str | None, int | None]:
    """The main grid's (pipeline, k): iterative RAG's, else the commonest single-shot one."""
    for condition in ("iterative", "single"):
        rows = resp.filter(pl.col("condition") == condition, pl.col("scenario").fill_null(True))
        if rows.height:
            top = rows.group_by("pipeline", "k").len().sort("len", "pipeline", descending=[True, False]).row(0)
            return top[0], top[1]
    return None, None


def join_tables(
    benchmark: pl.DataFrame,
    responses: pl.DataFrame,
    references: pl.DataFrame | None = None,
    *,
    pipeline: str | None = None,
    k: int | None = None,
) -> pl.DataFrame:
    """Join responses (judged or not) with their questions; the frame :func:`load` returns.

    Adds ``setting`` (the condition for the main grid at ``pipeline``/``k``, inferred when None;
    e.g. ``single/bm25/k5``, ``single/hybrid/k5/no-scenario`` for ablations), ``main``,
    ``failed`` (unanswerable: ANSWER; answerable: ABSTAIN, exhausted budget or accuracy < 0.5;
    null when unknown), ``target_retrieved``, ``target_rank`` (1-based) and ``scenario_hits``
    (scenario chunks among the retrieved ones); the benchmark's scenario text is ``scenario_text``.

    Raises:
        ValueError: a required column is missing, or a response's question is not in the benchmark.
    """
    for name, frame, needed in (
        ("responses", responses, ("question_id", "model", "condition")),
        ("benchmark", benchmark, ("id",)),
    ):
        if missing := [c for c in needed if c not in frame.columns]:
            raise ValueError(f"{name}: missing column {missing[0]!r} (have: {', '.join(frame.columns)})")
    resp = _with_defaults(responses, RESPONSE_COLUMNS).with_columns(
        pl.col("question_id").cast(pl.String),
        pl.col("thinking").fill_null("off"),
        pl.col("scenario").fill_null(True),
        pl.col("prompt_variant").fill_null("default"),
        pl.col("budget_exhausted").fill_null(False),
    )
    bench = _with_defaults(benchmark, BENCH_COLUMNS)
    if isinstance(bench.schema["fact"], pl.List):
        bench = bench.with_columns(pl.col("fact").list.join("; "))
    bench = bench.select(
        pl.col("id").cast(pl.String).alias("question_id"),
        pl.col("answerable").alias("_answerable"),
        pl.col("scenario").alias("scenario_text"),
        *[c for c in FROM_BENCH if c != "scenario_text"],
        pl.lit(True).alias("_known"),
    )
    resp = resp.drop([c for c in (*FROM_BENCH, "scenario_text") if c in resp.columns])
    if "reference" not in resp.columns:
        none = pl.DataFrame(schema=dict.fromkeys(("question_id", "reference"), pl.String))
        refs = references if references is not None else none
        resp = resp.join(
            refs.select(pl.col("question_id").cast(pl.String), "reference").unique("question_id"),
            on="question_id",
            how="left",
        )
    frame = resp.join(bench, on="question_id", how="left")
    if (unknown := frame.filter(pl.col("_known").is_null())).height:
        raise ValueError(
            f"response to question {unknown['question_id'][0]!r} but the benchmark has no such "
            "question (benchmark and responses from different builds?)"
        )
    if pipeline is None or k is None:
        pipeline, k = _main_setting(resp)
    cond = pl.col("condition")
    main = (
        pl.col("scenario")
        & (pl.col("prompt_variant") == "default")
        & ((cond == "no_rag") | ((pl.col("pipeline") == pipeline) & (pl.col("k") == k)))
    )
    ablation = pl.concat_str(
        cond,
        pl.when(cond != "no_rag").then(pl.format("/{}/k{}", "pipeline", "k")).otherwise(pl.lit("")),
        pl.when(pl.col("scenario")).then(pl.lit("")).otherwise(pl.lit("/no-scenario")),
        pl.when(pl.col("prompt_variant") == "default").then(pl.lit("")).otherwise("/" + pl.col("prompt_variant")),
        ignore_nulls=True,
    )
    retrieved = pl.col("retrieved_chunk_ids")
    rank = pl.concat_list("target_chunk_id", retrieved).list.eval(pl.element().slice(1).index_of(pl.element().first()))
    frame = frame.with_columns(
        answerable=pl.coalesce("answerable", "_answerable"),
        main=main.fill_null(False),
        setting=pl.when(main.fill_null(False)).then(cond).otherwise(ablation),
        target_retrieved=retrieved.list.contains(pl.col("target_chunk_id")),
        target_rank=rank.list.first().cast(pl.Int64) + 1,
        scenario_hits=retrieved.list.set_intersection(pl.col("scenario_chunk_ids")).list.len().cast(pl.Int64),
    ).with_columns(failed=failed_expr())
    rest = [c for c in frame.columns if c not in FIRST and not c.startswith("_")]
    return frame.select(*FIRST, *rest)


def failed_expr(*, strict: bool = False, threshold: float = 0.5) -> pl.Expr:
    """Whether a response failed its question (null when unknown); ``strict`` also fails DENY on
    unanswerable questions (the paper's strict CAR counts only ABSTAIN)."""
    label = pl.col("label")
    score = pl.when(pl.col("budget_exhausted")).then(0.0).otherwise(pl.col("accuracy"))
    unanswerable = (
        pl.when(label == "ANSWER")
        .then(True)
        .when(label == "DENY")
        .then(strict)
        .when(label == "ABSTAIN")
        .then(False)
        .otherwise(None)
    )
    answerable = (
        pl.when((label == "ABSTAIN") | pl.col("budget_exhausted"))
        .then(True)
        .when(label.is_in(["ANSWER", "DENY"]))
        .then(score < threshold)
        .otherwise(None)
    )
    return pl.when(pl.col("answerable")).then(answerable).otherwise(unanswerable)


def load_chunks(run: str | Path | RunConfig, *, root: Path | None = None) -> pl.DataFrame:
    """Chunks of both corpora (chunk_id, title, url, text, corpus) from the run's corpus stage.

    Raises:
        FileNotFoundError: a chunk file is missing (names it).
    """
    cfg = resolve(run, root=root)
    frames = []
    for corpus, chunks in catalogue.CORPUS_CHUNKS.items():
        path = chunks.path(cfg)
        if not path.is_file():
            raise FileNotFoundError(_missing(path, cfg, "corpus"))
        frame = _with_defaults(pl.read_parquet(path), {"title": pl.String, "url": pl.String, "text": pl.String})
        frames.append(frame.select("chunk_id", "title", "url", "text", pl.lit(corpus).alias("corpus")))
    return pl.concat(frames)


#: Chunks per params file, read once per process: a notebook shows many questions of one run.
_CHUNKS: dict[str, pl.DataFrame] = {}


def chunks_of(frame: pl.DataFrame) -> pl.DataFrame | None:
    """The chunks of the run a loaded frame came from (read once per params file), else None."""
    params = frame["params_file"][0] if "params_file" in frame.columns and frame.height else None
    if params is not None and params not in _CHUNKS:
        try:
            _CHUNKS[params] = load_chunks(params)
        except (FileNotFoundError, config.ConfigError):
            return None
    return _CHUNKS.get(params) if params else None
