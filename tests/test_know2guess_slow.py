"""End to end with a real model: 05, 06 and the Know2Guess view on a tiny project (SmolLM2-135M)."""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path

import polars as pl
import pytest

from declinecraft.construction import audit
from declinecraft.core import config
from declinecraft.evaluation import answer_stage, judge_stage
from declinecraft.retrieval import stage as index_stage
from declinecraft.views.know2guess import STATES, stage

RUN = """base: default
answer:
  models: [smollm2-135m]
  conditions: [no_rag, single]
  k: 2
  max_tokens: 24
  context_chars: 200
  limit_questions: 0
judge:
  response_judge: smollm2-135m
  oracle: smollm2-135m
  accuracy_judges: [smollm2-135m]
  max_tokens: 4
  oracle_max_tokens: 16
  oracle_page_chars: 200
  oracle_chunk_chars: 100
know2guess:
  max_tokens: 48
  bootstrap_resamples: 200
"""


def tiny_project(tmp_path: Path, repo: Path) -> config.RunConfig:
    """A project with seven C_pre chunks, one C_post page, an index and three questions."""
    from test_answer import benchmark

    root = tmp_path / "project"
    (root / "params").mkdir(parents=True)
    shutil.copy(repo / "pyproject.toml", root)
    for name in ("default.yaml", "models.yaml"):
        shutil.copy(repo / "params" / name, root / "params")
    shutil.copytree(repo / "params" / "prompts", root / "params" / "prompts")
    (root / "params" / "t.yaml").write_text(RUN)
    cfg = config.load(root / "params" / "t.yaml")
    when = datetime(2024, 1, 1, tzinfo=timezone.utc)
    corpus = cfg.stage_dir("corpus")
    corpus.mkdir(parents=True)
    for half, ids in (("pre", [f"c{i}" for i in range(1, 8)]), ("post", ["post1"])):
        pl.DataFrame({
            "chunk_id": ids, "title": [f"Page {c[1:]}" if half == "pre" else "New Mob" for c in ids],
            "text": [f"[Page: Page {c[1:]}]\nMob {c[1:]} has {int(c[1:]) * 4} health." if half == "pre"
                     else "[Page: New Mob]\nThe new mob glows." for c in ids],
            "url": [f"http://wiki/{c}" for c in ids], "revision_id": list(range(len(ids))),
            "timestamp": [when] * len(ids), "corpus": [half] * len(ids),
        }).write_parquet(corpus / f"chunks_{half}.parquet")  # fmt: skip
        titles = ["Page 1", "Page 2"] if half == "pre" else ["New Mob"]
        pl.DataFrame({"title": titles, "text": ["A page about mobs."] * len(titles)}).write_parquet(
            corpus / f"pages_{half}.parquet")
    index_stage.run(cfg, progress=False)
    bench = benchmark(2, 1).with_columns(
        target_title=pl.Series(["Page 1", "Page 2", "New Mob"]), target_url=pl.lit("http://wiki/x"),
        scenario_chunk_ids=pl.Series([["c2", "c3"]] * 3))  # fmt: skip
    cfg.stage_dir("verify").mkdir(parents=True)
    bench.write_parquet(cfg.stage_dir("verify") / "benchmark.parquet")
    return cfg


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(audit, "style_probe"), reason="needs construction.audit.style_probe")
def test_real_model_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    """Every question gets a state under both parsers, every table is written, and a second run
    replays every call from the cache."""
    monkeypatch.setenv("DECLINECRAFT_CACHE", str(tmp_path / "cache"))
    cfg = tiny_project(tmp_path, root)
    answer_stage.run(cfg)
    judge_stage.run(cfg)
    first = stage.run(cfg)
    assert first.decisions.height == 3 * 2 * 4 * 2  # questions x conditions x prompts x parsers
    assert set(first.decisions["state"].drop_nulls()) <= set(STATES)
    assert first.decisions["state"].null_count() == first.decisions["error"].is_not_null().sum()
    assert all((cfg.stage_dir("know2guess") / name).is_file() for name in stage.output_files(cfg.know2guess))
    again = stage.run(cfg)
    assert again.decisions.equals(first.decisions) and again.summary.equals(first.summary)
    assert again.manifest["seconds"]["decisions"] + again.manifest["seconds"]["grading"] < 10
