"""Tiny projects for the end-to-end tests with a real model (SmolLM2-135M in every role)."""

from __future__ import annotations

from pathlib import Path

from declinecraft.core import config
from declinecraft.retrieval import stage
from tests.support import answering, projects

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
  prompts: [standard]   # one prompt: the controls are unit-tested on a scripted model
  max_tokens: 48
  bootstrap_resamples: 200
"""


def tiny_project(tmp_path: Path, repo: Path) -> config.RunConfig:
    """A project with seven C_pre chunks, one C_post page, an index and three questions."""
    root = projects.copy_project(tmp_path / "project")
    (root / "params" / "t.yaml").write_text(RUN)
    cfg = config.load(root / "params" / "t.yaml")
    projects.write_corpus(cfg, {f"c{i}": f"[Page: Page {i}]\nMob {i} has {i * 4} health." for i in range(1, 8)})
    stage.run(cfg, progress=False)
    projects.write_benchmark(cfg, answering.benchmark(2, 1))
    return cfg
