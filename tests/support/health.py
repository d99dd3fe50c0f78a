"""Hand-built answer and judge outputs with known run-health counts, and a run that holds them.

Two models under test: ``m-a`` answers cleanly except one truncated no-RAG reply; ``m-b`` has two
failed calls (one answer, one iterative reflection) and asks for one more retrieval round once.
Two accuracy judges: ``j-big`` parses everything, ``j-small`` gives one unparsable score of 2.
The verifier ``v`` said NO to 7 of the 9 answerable drafts it answered (one more unparsable) and
to 4 of 5 unanswerable ones; a second generator's drafts (``g-other``) are not the benchmark's."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from declinecraft.core import config
from declinecraft.evaluation import judge_check
from tests.support import projects


def _rounds(status: str) -> str:
    """The ``rounds`` JSON of one iterative answer whose round-0 reflection had ``status``; an
    "insufficient" one leads to a second round, the last allowed."""
    first = {"index": 0, "reflection": {"status": status}, "stop": None if status == "insufficient" else status}
    more = [{"index": 1, "reflection": None, "stop": "max_rounds"}] if status == "insufficient" else []
    return json.dumps([first, *more])


def responses() -> pl.DataFrame:
    """Twelve answers: 2 models x 3 conditions x 2 questions (q1 answerable, q2 not)."""
    rows = []
    for model in ("m-a", "m-b"):
        for condition in ("no_rag", "single", "iterative"):
            for q in ("q1", "q2"):
                rows.append(
                    {
                        "response_id": f"{model}-{condition}-{q}",
                        "question_id": q,
                        "answerable": q == "q1",
                        "model": model,
                        "thinking": "off",
                        "condition": condition,
                        "finish_reason": "stop",
                        "budget_exhausted": False,
                        "error": None,
                        "rounds": _rounds("no_follow_ups") if condition == "iterative" else None,
                        "n_rounds": 1 if condition == "iterative" else None,
                    }
                )
    schema = {"error": pl.String, "finish_reason": pl.String, "rounds": pl.String, "n_rounds": pl.Int64}
    frame = pl.DataFrame(rows, schema_overrides=schema)
    # m-a: one reply cut at the budget with no answer left (exhausted); m-b: one failed answer, one
    # failed reflection, one more round
    fix = {
        "m-a-no_rag-q1": {"finish_reason": "length", "budget_exhausted": True},
        "m-b-single-q2": {"finish_reason": None, "error": "HTTP 500"},
        "m-b-iterative-q1": {"rounds": _rounds("error")},
        "m-b-iterative-q2": {"rounds": _rounds("insufficient"), "n_rounds": 2},
    }
    return pl.DataFrame([{**r, **fix.get(r["response_id"], {})} for r in frame.to_dicts()], schema=frame.schema)


def scores() -> pl.DataFrame:
    """Two judges x two answerable responses scored by a call; j-small's second is unparsable."""
    rows = []
    for judge in ("j-big", "j-small"):
        for rid in ("m-a-single-q1", "m-b-single-q1"):
            bad = judge == "j-small" and rid == "m-b-single-q1"
            rows.append(
                {
                    "response_id": rid,
                    "judge": judge,
                    "source": "llm",
                    "raw_output": "1.5" if bad else "1",
                    "score": None if bad else 1.0,
                    "unparsable": bad,
                    "reasked": bad,
                    "error": None,
                }
            )
    rows.append(
        {
            "response_id": "m-a-no_rag-q1",
            "judge": "j-big",
            "source": "abstain",
            "raw_output": None,
            "score": 0.0,
            "unparsable": False,
            "reasked": False,
            "error": None,
        }
    )
    return pl.DataFrame(rows, schema_overrides={"error": pl.String, "score": pl.Float64})


def labels() -> pl.DataFrame:
    """The response judge's labels: one call per answer with a reply (11), one re-asked and recovered."""
    replied = responses().filter(pl.col("error").is_null())["response_id"].to_list()
    return pl.DataFrame(
        [
            {
                "response_id": rid,
                "judge": "j-big",
                "role": "response_judge",
                "source": "llm",
                "unparsable": False,
                "reasked": i == 0,
                "error": None,
            }
            for i, rid in enumerate(replied)
        ],
        schema_overrides={"error": pl.String},
    )


def main_grid() -> pl.DataFrame:
    """Accuracy panel complete for m-a's single-shot answer only (j-small failed on m-b's)."""
    return pl.DataFrame(
        {
            "model": ["m-a", "m-b"],
            "thinking": ["off", "off"],
            "condition": ["single", "single"],
            "accuracy_n": [1, 0],
            "n_answerable": [1, 1],
        }
    )


def verifier_audit(generator: str) -> pl.DataFrame:
    """The verify stage's ``audit_verifier`` table for drafts of ``generator`` and of ``g-other``."""
    columns = ("generator", "verifier", "answerable", "check", "evaluated", "rejected", "unparsable", "errors")
    rows = [
        (generator, "v", True, "stated", 12, 2, 0, 0),
        (generator, "v", True, "answers", 10, 7, 1, 0),
        (generator, "v", False, "stated", 5, 0, 0, 0),
        (generator, "v", False, "answers", 5, 1, 0, 0),
        ("g-other", "v", True, "answers", 8, 8, 0, 0),
    ]
    return pl.DataFrame(rows, schema=columns, orient="row")


def check() -> pl.DataFrame:
    """The judges' check set as scored: j-big agrees on 9 of 10 items, j-small on 3 of 10."""
    rows = [
        {
            "item_id": f"i{i}",
            "kind": "wrong",
            "judge": judge,
            "expected": 0.0,
            "score": 0.0 if i < k else 1.0,
            "agrees": i < k,
            "unparsable": False,
            "error": None,
        }
        for judge, k in (("j-big", 9), ("j-small", 3))
        for i in range(10)
    ]
    return pl.DataFrame(rows, schema=judge_check.SCHEMA)


def write_run(tmp_path: Path) -> config.RunConfig:
    """A run with these answer and judge outputs and no views run."""
    (tmp_path / "params").mkdir()
    (tmp_path / "pyproject.toml").write_text("")
    for name in ("default.yaml", "models.yaml"):
        (tmp_path / "params" / name).write_text((projects.REPO / "params" / name).read_text())
    run = config.load(tmp_path / "params" / "default.yaml")
    run.stage_dir("verify").mkdir(parents=True)
    verifier_audit(run.generate.generator).write_csv(run.stage_dir("verify") / "audit_verifier.csv")
    run.stage_dir("answer").mkdir(parents=True)
    run.stage_dir("judge").mkdir(parents=True)
    responses().write_parquet(run.stage_dir("answer") / "responses.parquet")
    labels().write_parquet(run.stage_dir("judge") / "labels.parquet")
    scores().write_parquet(run.stage_dir("judge") / "scores.parquet")
    check().write_parquet(run.stage_dir("judge") / "judge_check.parquet")
    return run


def row(frame: pl.DataFrame, measure: str, model: str, **keys: str) -> tuple[int, int]:
    """The (numerator, denominator) of the one run-health row of ``measure`` and ``model`` (and
    ``keys``, column by column)."""
    hit = frame.filter((pl.col("measure") == measure) & (pl.col("model") == model))
    for column, value in keys.items():
        hit = hit.filter(pl.col(column) == value)
    assert hit.height == 1, (measure, model, keys, hit)
    return hit["numerator"][0], hit["denominator"][0]
