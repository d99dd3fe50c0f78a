"""Exploring per-question failures (DESIGN.md, goal 2): one tidy frame, filters, a question view.

:func:`load` joins a run's benchmark, responses, labels, scores and references: one row per response
(question x model x thinking x condition x pipeline x k x scenario x prompt variant). Each filter
answers one of the paper's questions with a small frame of question ids and context: label
transitions between settings (App. A.9's Sulfur Cube: abstained single-shot, answered iterative),
thinking off -> on (App. A.5), questions every model failed, the LLM judge against
``judge.rule_label``, disagreeing accuracy judges, exhausted budgets. :func:`show` renders one
question (HTML in Jupyter, text in a terminal), :func:`browse` pages through questions (widgets),
``python -m declinecraft.explore.frame report params/<run>.yaml`` writes the static page (:mod:`explore_report`).

Label codes (filters, the HTML page's ``#transition=A-X``): A = ABSTAIN, D = DENY, X = ANSWER,
``-`` = no label (exhausted budget or failed call); ``*`` or None = any.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from declinecraft.core import config
from declinecraft.core import paths
from declinecraft.core.config import RunConfig

CONDITIONS = ("no_rag", "single", "iterative")
LABEL_CODES: dict[str, str | None] = {"A": "ABSTAIN", "D": "DENY", "X": "ANSWER", "-": None}
CODE_OF = {"ABSTAIN": "A", "DENY": "D", "ANSWER": "X"}
#: Columns a response table may lack (synthetic or older tables): added as nulls with these types.
RESPONSE_COLUMNS: dict[str, Any] = {
    "answerable": pl.Boolean, "thinking": pl.String, "pipeline": pl.String, "k": pl.Int64,
    "scenario": pl.Boolean, "prompt_variant": pl.String, "label": pl.String, "rule_label": pl.String,
    "accuracy": pl.Float64, "budget_exhausted": pl.Boolean, "finish_reason": pl.String, "error": pl.String,
    "response": pl.String, "thinking_trace": pl.String, "query": pl.String,
    "retrieved_chunk_ids": pl.List(pl.String), "component_ranks": pl.String, "rounds": pl.String,
    "n_rounds": pl.Int64, "response_id": pl.String,
}  # fmt: skip
#: Benchmark columns the explorer shows (``scenario`` becomes ``scenario_text``).
BENCH_COLUMNS: dict[str, Any] = {
    "answerable": pl.Boolean, "scenario": pl.String, "asked_question": pl.String, "question": pl.String,
    "fact": pl.String, "target_chunk_id": pl.String, "target_title": pl.String, "target_url": pl.String,
    "scenario_chunk_ids": pl.List(pl.String),
}  # fmt: skip
_FROM_BENCH = ("scenario_text", "asked_question", "question", "fact", "target_chunk_id", "target_title",
               "target_url", "scenario_chunk_ids")  # fmt: skip
FIRST = ("question_id", "answerable", "setting", "main", "model", "thinking", "condition", "pipeline", "k",
         "scenario", "prompt_variant", "label", "rule_label", "accuracy")  # fmt: skip
CONTEXT = ("answerable", "asked_question")
#: What :func:`search` (and the report's search box) looks in.
SEARCH_FIELDS = ("question_id", "scenario_text", "asked_question", "fact", "target_title", "reference", "response")


# --- loading -----------------------------------------------------------------------------------


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
    hint = " (NOT_BUILT.md is there: the stage has not run yet)" if (path.parent / "NOT_BUILT.md").exists() else ""
    params = cfg.params_file.relative_to(cfg.root) if cfg.params_file.is_relative_to(cfg.root) else cfg.params_file
    return f"missing {path}{hint}: run {stage} first (make all PARAMS={params})"


def load(run: str | Path | RunConfig, *, root: Path | None = None) -> pl.DataFrame:
    """Load a run's responses with everything known about them (:func:`join_tables`), one row each.

    Reads ``04_verify/benchmark.parquet``, ``06_judge/judged.parquet`` (before judging:
    ``05_answer/responses.parquet``, no labels) and ``06_judge/references.parquet`` via
    ``cfg.stage_dir`` (a derived run reads its base's). Adds ``run`` and ``params_file`` (for :func:`show`).

    Raises:
        FileNotFoundError: the benchmark or the responses are missing (names the file).
    """
    cfg = resolve(run, root=root)
    bench_path = cfg.stage_dir("verify") / "benchmark.parquet"
    if not bench_path.is_file():
        raise FileNotFoundError(_missing(bench_path, cfg, "04_verify"))
    source = next((p for p in (cfg.stage_dir("judge") / "judged.parquet", cfg.stage_dir("answer") / "responses.parquet")
                   if p.is_file()), cfg.stage_dir("answer") / "responses.parquet")  # fmt: skip
    if not source.is_file():
        raise FileNotFoundError(_missing(source, cfg, "05_answer"))
    refs_path = cfg.stage_dir("judge") / "references.parquet"
    refs = pl.read_parquet(refs_path, columns=["question_id", "reference"]) if refs_path.is_file() else None
    frame = join_tables(pl.read_parquet(bench_path), pl.read_parquet(source), refs,
                        pipeline=cfg.answer.pipeline, k=cfg.answer.k)  # fmt: skip
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


def join_tables(benchmark: pl.DataFrame, responses: pl.DataFrame, references: pl.DataFrame | None = None, *,
                pipeline: str | None = None, k: int | None = None) -> pl.DataFrame:  # fmt: skip
    """Join responses (judged or not) with their questions; the frame :func:`load` returns.

    Adds ``setting`` (the condition for the main grid at ``pipeline``/``k``, inferred when None;
    e.g. ``single/bm25/k5``, ``single/hybrid/k5/no-scenario`` for ablations), ``main``,
    ``failed`` (unanswerable: ANSWER; answerable: ABSTAIN, exhausted budget or accuracy < 0.5;
    null when unknown), ``target_retrieved``, ``target_rank`` (1-based) and ``scenario_hits``
    (scenario chunks among the retrieved ones); the benchmark's scenario text is ``scenario_text``.

    Raises:
        ValueError: a required column is missing, or a response's question is not in the benchmark.
    """
    for name, frame, needed in (("responses", responses, ("question_id", "model", "condition")),
                                ("benchmark", benchmark, ("id",))):  # fmt: skip
        if missing := [c for c in needed if c not in frame.columns]:
            raise ValueError(f"{name}: missing column {missing[0]!r} (have: {', '.join(frame.columns)})")
    resp = _with_defaults(responses, RESPONSE_COLUMNS).with_columns(
        pl.col("question_id").cast(pl.String), pl.col("thinking").fill_null("off"),
        pl.col("scenario").fill_null(True), pl.col("prompt_variant").fill_null("default"),
        pl.col("budget_exhausted").fill_null(False),
    )  # fmt: skip
    bench = _with_defaults(benchmark, BENCH_COLUMNS)
    if isinstance(bench.schema["fact"], pl.List):
        bench = bench.with_columns(pl.col("fact").list.join("; "))
    bench = bench.select(
        pl.col("id").cast(pl.String).alias("question_id"), pl.col("answerable").alias("_answerable"),
        pl.col("scenario").alias("scenario_text"), *[c for c in _FROM_BENCH if c != "scenario_text"],
        pl.lit(True).alias("_known"),
    )  # fmt: skip
    resp = resp.drop([c for c in (*_FROM_BENCH, "scenario_text") if c in resp.columns])
    if "reference" not in resp.columns:
        none = pl.DataFrame(schema=dict.fromkeys(("question_id", "reference"), pl.String))
        refs = references if references is not None else none
        resp = resp.join(refs.select(pl.col("question_id").cast(pl.String), "reference").unique("question_id"),
                         on="question_id", how="left")  # fmt: skip
    frame = resp.join(bench, on="question_id", how="left")
    if (unknown := frame.filter(pl.col("_known").is_null())).height:
        raise ValueError(f"response to question {unknown['question_id'][0]!r} but the benchmark has no such "
                         "question (benchmark and responses from different builds?)")  # fmt: skip
    if pipeline is None or k is None:
        pipeline, k = _main_setting(resp)
    cond = pl.col("condition")
    main = (
        pl.col("scenario")
        & (pl.col("prompt_variant") == "default")
        & ((cond == "no_rag") | ((pl.col("pipeline") == pipeline) & (pl.col("k") == k)))
    )
    ablation = pl.concat_str(
        cond, pl.when(cond != "no_rag").then(pl.format("/{}/k{}", "pipeline", "k")).otherwise(pl.lit("")),
        pl.when(pl.col("scenario")).then(pl.lit("")).otherwise(pl.lit("/no-scenario")),
        pl.when(pl.col("prompt_variant") == "default").then(pl.lit("")).otherwise("/" + pl.col("prompt_variant")),
        ignore_nulls=True,
    )  # fmt: skip
    retrieved = pl.col("retrieved_chunk_ids")
    rank = pl.concat_list("target_chunk_id", retrieved).list.eval(pl.element().slice(1).index_of(pl.element().first()))
    frame = frame.with_columns(
        answerable=pl.coalesce("answerable", "_answerable"), main=main.fill_null(False),
        setting=pl.when(main.fill_null(False)).then(cond).otherwise(ablation),
        target_retrieved=retrieved.list.contains(pl.col("target_chunk_id")),
        target_rank=rank.list.first().cast(pl.Int64) + 1,
        scenario_hits=retrieved.list.set_intersection(pl.col("scenario_chunk_ids")).list.len().cast(pl.Int64),
    ).with_columns(failed=failed_expr())  # fmt: skip
    rest = [c for c in frame.columns if c not in FIRST and not c.startswith("_")]
    return frame.select(*FIRST, *rest)


def failed_expr(*, strict: bool = False, threshold: float = 0.5) -> pl.Expr:
    """Whether a response failed its question (null when unknown); ``strict`` also fails DENY on
    unanswerable questions (the paper's strict CAR counts only ABSTAIN)."""
    label = pl.col("label")
    score = pl.when(pl.col("budget_exhausted")).then(0.0).otherwise(pl.col("accuracy"))
    unanswerable = (pl.when(label == "ANSWER").then(True).when(label == "DENY").then(strict)
                    .when(label == "ABSTAIN").then(False).otherwise(None))  # fmt: skip
    answerable = (pl.when((label == "ABSTAIN") | pl.col("budget_exhausted")).then(True)
                  .when(label.is_in(["ANSWER", "DENY"])).then(score < threshold).otherwise(None))  # fmt: skip
    return pl.when(pl.col("answerable")).then(answerable).otherwise(unanswerable)


def load_chunks(run: str | Path | RunConfig, *, root: Path | None = None) -> pl.DataFrame:
    """Chunks of both corpora (chunk_id, title, url, text, corpus) from the run's corpus stage.

    Raises:
        FileNotFoundError: a chunk file is missing (names it).
    """
    cfg = resolve(run, root=root)
    frames = []
    for corpus in ("pre", "post"):
        path = cfg.stage_dir("corpus") / f"chunks_{corpus}.parquet"
        if not path.is_file():
            raise FileNotFoundError(_missing(path, cfg, "01_corpus"))
        frame = _with_defaults(pl.read_parquet(path), {"title": pl.String, "url": pl.String, "text": pl.String})
        frames.append(frame.select("chunk_id", "title", "url", "text", pl.lit(corpus).alias("corpus")))
    return pl.concat(frames)


_CHUNKS: dict[str, pl.DataFrame] = {}


def _chunks_of(frame: pl.DataFrame) -> pl.DataFrame | None:
    """The chunks of the run a loaded frame came from (read once per params file), else None."""
    params = frame["params_file"][0] if "params_file" in frame.columns and frame.height else None
    if params is not None and params not in _CHUNKS:
        try:
            _CHUNKS[params] = load_chunks(params)
        except (FileNotFoundError, config.ConfigError):
            return None
    return _CHUNKS.get(params) if params else None


# --- filters -----------------------------------------------------------------------------------


def _label(value: str | None) -> tuple[bool, str | None]:
    """(is a condition, label) from a code, a label name, '-' (no label), or None/'*' (any)."""
    if value is None or value == "*":
        return False, None
    if value in LABEL_CODES:
        return True, LABEL_CODES[value]
    if value.upper() in CODE_OF:
        return True, value.upper()
    raise ValueError(f"unknown label {value!r}: use ABSTAIN, DENY, ANSWER, a code A/D/X, '-' or '*'")


def _is(column: str, value: str | None) -> pl.Expr:
    active, label = _label(value)
    if not active:
        return pl.lit(True)
    return pl.col(column).is_null() if label is None else pl.col(column) == label


def _pairs(frame: pl.DataFrame, key: str, before: str, after: str, on: Sequence[str],
           from_label: str | None, to_label: str | None) -> pl.DataFrame:  # fmt: skip
    cols = ("label", "accuracy", "response")
    side = [frame.filter(pl.col(key) == v).select(*on, *CONTEXT, *[pl.col(c).alias(f"{c}_{n}") for c in cols])
            for v, n in ((before, "from"), (after, "to"))]  # fmt: skip
    joined = side[0].join(side[1].drop(CONTEXT), on=list(on), how="inner")
    return joined.filter(_is("label_from", from_label), _is("label_to", to_label)).sort(*on)


def transitions(frame: pl.DataFrame, before: str = "single", after: str = "iterative", *,
                from_label: str | None = "ABSTAIN", to_label: str | None = "ANSWER") -> pl.DataFrame:  # fmt: skip
    """Responses whose label goes from ``from_label`` in setting ``before`` to ``to_label`` in
    ``after`` for the same question, model and thinking (default: the Sulfur Cube of App. A.9).

    Returns question_id, model, thinking, answerable, asked_question and label/accuracy/response
    ``_from`` and ``_to``.
    """
    return _pairs(frame, "setting", before, after, ("question_id", "model", "thinking"), from_label, to_label)


def thinking_changes(frame: pl.DataFrame, setting: str = "no_rag", *, from_label: str | None = "ABSTAIN",
                     to_label: str | None = "DENY") -> pl.DataFrame:  # fmt: skip
    """Responses whose label goes from ``from_label`` with thinking off to ``to_label`` with it on,
    for the same question, model and setting (default: A -> D without retrieval, App. A.5)."""
    rows = frame.filter(pl.col("setting") == setting)
    return _pairs(rows, "thinking", "off", "on", ("question_id", "model", "setting"), from_label, to_label)


def all_failed(frame: pl.DataFrame, *, strict: bool = False, threshold: float = 0.5) -> pl.DataFrame:
    """Questions that every response with a known outcome failed, per setting (see ``failed_expr``).

    Returns question_id, setting, n_responses, answerable, asked_question.
    """
    scored = frame.with_columns(_failed=failed_expr(strict=strict, threshold=threshold)).drop_nulls("_failed")
    grouped = scored.group_by("question_id", "setting").agg(
        pl.col("_failed").all().alias("_all"), pl.len().alias("n_responses"), *[pl.col(c).first() for c in CONTEXT]
    )  # fmt: skip
    return _sorted(grouped.filter("_all").drop("_all"), ("question_id", "setting"))


def _sorted(frame: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """Sort by ``keys``, settings in display order (:func:`setting_order`)."""
    order = {s: i for i, s in enumerate(setting_order(frame["setting"].unique().to_list()))}
    rank = pl.col("setting").replace_strict(order, default=None, return_dtype=pl.Int64).alias("_order")
    return frame.sort(*[rank if k == "setting" else pl.col(k) for k in keys])


def _rows(frame: pl.DataFrame, keep: pl.Expr, extra: Sequence[str]) -> pl.DataFrame:
    keys = ("question_id", "setting", "model", "thinking")
    return _sorted(frame.filter(keep).select(*keys, *CONTEXT, *extra), keys)


def judge_rule_disagreements(frame: pl.DataFrame) -> pl.DataFrame:
    """Responses whose LLM label differs from ``judge.rule_label`` (both present)."""
    keep = pl.all_horizontal(pl.col("label", "rule_label").is_not_null()) & (pl.col("label") != pl.col("rule_label"))
    return _rows(frame, keep, ("label", "rule_label", "response"))


def score_columns(frame: pl.DataFrame) -> list[str]:
    """The per-judge accuracy columns (``score_<judge>``) of a frame."""
    return [c for c in frame.columns if c.startswith("score_")]


def judge_disagreements(frame: pl.DataFrame, *, min_spread: float = 0.5) -> pl.DataFrame:
    """Responses whose accuracy judges' scores differ by at least ``min_spread`` (adds ``spread``)."""
    cols = score_columns(frame)
    if len(cols) < 2:
        return _rows(frame.with_columns(spread=pl.lit(None, pl.Float64)), pl.lit(False), ("spread",))
    spread = (pl.max_horizontal(cols) - pl.min_horizontal(cols)).alias("spread")
    return _rows(frame.with_columns(spread), pl.col("spread") >= min_spread - 1e-9, ("label", *cols, "spread"))


def budget_exhausted(frame: pl.DataFrame) -> pl.DataFrame:
    """Responses whose output budget ran out before a final answer."""
    return _rows(frame, pl.col("budget_exhausted"), ("finish_reason", "thinking_trace"))


def search(frame: pl.DataFrame, text: str) -> pl.DataFrame:
    """Questions whose id, scenario, question, fact, target page, reference or any response contains
    ``text`` (case-insensitive); returns question_id, answerable, asked_question."""
    hay = pl.concat_str([pl.col(c).fill_null("") for c in SEARCH_FIELDS], separator="\n").str.to_lowercase()
    hits = frame.filter(hay.str.contains(text.lower(), literal=True))
    return hits.group_by("question_id").agg(*[pl.col(c).first() for c in CONTEXT]).sort("question_id")


#: Filters without parameters, by the name the HTML page uses: (title, function).
FLAGS = {
    "all_failed": ("every model failed", all_failed),
    "judge_rule": ("LLM judge ≠ rule label", judge_rule_disagreements),
    "judges": ("accuracy judges disagree", judge_disagreements),
    "exhausted": ("budget exhausted", budget_exhausted),
}


def setting_order(settings: Sequence[str]) -> list[str]:
    """Settings in display order: no_rag, single, iterative, then ablations alphabetically."""
    rank = {c: i for i, c in enumerate(CONDITIONS)}
    return sorted(dict.fromkeys(settings), key=lambda s: (rank.get(s, len(rank)), s))


# --- one question ------------------------------------------------------------------------------


@dataclass
class QuestionView:
    """One question with every response to it; HTML in Jupyter, text in a terminal."""

    question: dict[str, Any]
    rows: list[dict[str, Any]]
    chunks: dict[str, dict[str, Any]] = field(default_factory=dict)
    judges: list[str] = field(default_factory=list)

    def settings(self) -> list[str]:
        """The settings of the rows, in display order."""
        return setting_order([r["setting"] for r in self.rows])

    def _repr_html_(self) -> str:
        from declinecraft.explore import views as explore_html

        return explore_html.question_html(self, standalone=True)

    def text(self, *, thinking: bool = False) -> str:
        """Plain text; thinking traces only when asked."""
        from declinecraft.explore import views as explore_html

        return explore_html.question_text(self, thinking=thinking)

    def __str__(self) -> str:
        return self.text()

    __repr__ = __str__


def show(question_id: str, frame: pl.DataFrame, *, chunks: pl.DataFrame | None = None,
         models: Sequence[str] | None = None, settings: Sequence[str] | None = None) -> QuestionView:  # fmt: skip
    """Everything about one question: scenario, question, target, fact, reference, and per setting
    the retrieved chunks and every model's response, thinking, label, scores and rounds.

    ``chunks`` (``load_chunks``) gives titles and texts; by default they are read from the corpus
    stage of the run the frame was loaded from. ``models``/``settings`` restrict the responses.

    Raises:
        ValueError: the question is not in the frame.
    """
    rows = frame.filter(pl.col("question_id") == str(question_id))
    if rows.height == 0:
        some = ", ".join(frame["question_id"].unique(maintain_order=True).head(5).to_list())
        raise ValueError(f"question {question_id!r} is not in the frame (questions include: {some})")
    if models is not None:
        rows = rows.filter(pl.col("model").is_in(list(models)))
    if settings is not None:
        rows = rows.filter(pl.col("setting").is_in(list(settings)))
    order = {s: i for i, s in enumerate(setting_order(frame["setting"].unique().to_list()))}
    records = sorted(rows.to_dicts(), key=lambda r: (order.get(r["setting"], 99), r["model"], r["thinking"]))
    first = frame.filter(pl.col("question_id") == str(question_id)).row(0, named=True)
    question = {c: first.get(c) for c in ("question_id", "answerable", *_FROM_BENCH, "reference")}
    wanted = [question["target_chunk_id"], *(question["scenario_chunk_ids"] or [])]
    wanted += [c for r in records for c in r.get("retrieved_chunk_ids") or []]
    chunks = chunks if chunks is not None else _chunks_of(frame)
    found = [] if chunks is None else chunks.filter(pl.col("chunk_id").is_in(wanted)).to_dicts()
    table = {r["chunk_id"]: r for r in found}
    judges = [c.removeprefix("score_") for c in score_columns(frame)]
    return QuestionView(question, records, table, judges)


# --- interactive ---------------------------------------------------------------------------------


def browse(frame: pl.DataFrame, *, questions: pl.DataFrame | Sequence[str] | None = None,
           chunks: pl.DataFrame | None = None) -> Any:  # fmt: skip
    """An ipywidgets view (JupyterLab) to pick model, setting and filter and page through questions.

    ``questions`` (a filter's frame or a list of ids) starts the view on those questions.
    """
    from declinecraft.explore.views import Browser

    return Browser(frame, questions=questions, chunks=chunks)


# --- command line ------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m declinecraft.explore.frame report params/<run>.yaml [--out FILE]``: write the explorer."""
    import argparse

    from declinecraft.explore import report as explore_report

    parser = argparse.ArgumentParser(prog="python -m declinecraft.explore.frame", description=main.__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("report", help="write outputs/<run>/explorer/index.html")
    rep.add_argument("params_file")
    rep.add_argument("--out", type=Path, default=None, help="file to write instead")
    args = parser.parse_args(argv)
    try:
        path = explore_report.write_report(resolve(args.params_file), out=args.out)
    except (FileNotFoundError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
