"""End to end with a real model: 05, 06 and the Know2Guess view on a tiny project (SmolLM2-135M)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.projects import copy_project, write_benchmark, write_corpus

from declinecraft.core import config
from declinecraft.evaluation import answer_stage, judge_stage
from declinecraft.llm.cache import open_cache
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

    root = copy_project(tmp_path / "project")
    (root / "params" / "t.yaml").write_text(RUN)
    cfg = config.load(root / "params" / "t.yaml")
    write_corpus(cfg, {f"c{i}": f"[Page: Page {i}]\nMob {i} has {i * 4} health." for i in range(1, 8)})
    index_stage.run(cfg, progress=False)
    write_benchmark(cfg, benchmark(2, 1))
    return cfg


@pytest.mark.slow
def test_real_model_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    """Every question gets a state under both parsers, every table is written, and a second run
    replays every call from the cache."""
    monkeypatch.setenv("DECLINECRAFT_CACHE", str(tmp_path / "cache"))
    cfg = tiny_project(tmp_path, root)
    answer_stage.run(cfg)
    judge_stage.run(cfg)
    first = stage.run(cfg)
    assert (
        first.decisions.height == 3 * 2 * len(cfg.know2guess.prompts) * 2
    )  # questions x conditions x prompts x parsers
    assert set(first.decisions["state"].drop_nulls()) <= set(STATES)
    assert first.decisions["state"].null_count() == first.decisions["error"].is_not_null().sum()
    assert all((cfg.stage_dir("know2guess") / name).is_file() for name in stage.output_files(cfg.know2guess))
    with open_cache(tmp_path / "cache") as store:
        stored = store.count()
    again = stage.run(cfg)
    assert again.decisions.equals(first.decisions) and again.summary.equals(first.summary)
    with open_cache(tmp_path / "cache") as store:
        assert store.count() == stored  # the rerun sent no call (its time: benchmarks/bench_views.py)
