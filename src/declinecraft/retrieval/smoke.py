"""Setup's smoke check of retrieval: the run's embedder embeds a text and its reranker scores a pair.

``python -m declinecraft.retrieval.smoke params/default.yaml`` (the end of ``make setup``) loads
the embedder and the reranker of the run's ``index`` block, each in a process of its own, with no
cache, and checks that a vector and a score come back finite. A process that dies or returns
nothing stops setup with one message naming the model and the signal. The chat models have their
own check (:mod:`declinecraft.llm.smoke`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from declinecraft.core import config
from declinecraft.runtime.process_exit import report, run_child

#: The text embedded and the (query, passage) pair scored.
TEXT = "Grass blocks spread to nearby dirt in light."
QUERY = "How does grass spread?"
#: Seconds one model may take to load and answer.
TIMEOUT_S = 300


def embed_once(params_file: str | Path) -> dict[str, object]:
    """Load the run's embedder and embed :data:`TEXT` (no cache)."""
    from declinecraft.retrieval.embed import load_embedder

    cfg = config.load(params_file)
    path = cfg.resolve(cfg.index.embedder_path) if cfg.index.embedder_path else None
    vector = load_embedder(cfg.index.embedder, path=path).embed_documents([TEXT])
    ok = vector.shape[0] == 1 and bool(np.isfinite(vector).all()) and float(np.abs(vector).sum()) > 0
    return {"model": cfg.index.embedder, "ok": ok, "dim": int(vector.shape[1])}


def score_once(params_file: str | Path) -> dict[str, object]:
    """Load the run's reranker and score (:data:`QUERY`, :data:`TEXT`) (no cache)."""
    from declinecraft.retrieval.rerank import load_reranker

    cfg = config.load(params_file)
    path = cfg.resolve(cfg.index.reranker_path) if cfg.index.reranker_path else None
    scores = load_reranker(cfg.index.reranker, path=path).score([(QUERY, TEXT)])
    return {"model": cfg.index.reranker, "ok": bool(np.isfinite(scores).all()), "score": float(scores[0])}


def check(params_file: str | Path, *, timeout_s: float = TIMEOUT_S) -> list[str]:
    """Run the embedder and the reranker each in a child process; one failure message per failure."""
    failures = []
    for part in ("embed", "score"):
        child = run_child(
            [sys.executable, "-m", "declinecraft.retrieval.smoke", f"--{part}", str(params_file)], timeout_s
        )
        result = child.result() if child.returncode == 0 else None
        if not result or not result.get("ok"):
            what = child.ended(timeout_s) if child.returncode != 0 else "returned no finite result"
            model = (result or {}).get("model", "see the params file's index block")
            role = "embedder" if part == "embed" else "reranker"
            failures.append(f"setup's smoke check failed: the run's {role} ({model}) {what}.\n{child.stderr_tail()}")
        else:
            print(f"   {result['model']}: {part} ok", flush=True)
    return failures


def main(argv: list[str]) -> int:
    """``PARAMS_FILE`` checks both; ``--embed PARAMS_FILE`` / ``--score PARAMS_FILE`` is one child."""
    if len(argv) == 2 and argv[0] in ("--embed", "--score"):
        print(json.dumps(embed_once(argv[1]) if argv[0] == "--embed" else score_once(argv[1])), flush=True)
        return 0
    if len(argv) != 1:
        print("usage: python -m declinecraft.retrieval.smoke PARAMS_FILE", file=sys.stderr)
        return 2
    return report(check(argv[0]))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
