"""03_generate: scenario-first drafts of benchmark questions (§3.2, Appendix J.1)."""

from __future__ import annotations

from declinecraft.core.declaration import Stage, writer
from declinecraft.core.params import GenerateParams
from declinecraft.core.stages.corpus import CORPUS_CHUNKS_POST, CORPUS_CHUNKS_PRE
from declinecraft.core.stages.index import INDEX_MANIFEST, INDEX_VERSION

_write = writer("generate", "03_generate")

GENERATE_DRAFTS = _write(
    "drafts.parquet", "one row per candidate and generator: every step's raw output, cache key, status"
)
GENERATE_STAGE = _write("stage.json", "input counts (chunks and pages without text), seconds per generator")

STAGE = Stage(
    block="generate",
    notebook="03_generate",
    params=GenerateParams,
    run="declinecraft.construction.generate_stage:run",
    about="scenario, target chunk, facts, question (§3.2, App. J.1)",
    reads=(CORPUS_CHUNKS_PRE, CORPUS_CHUNKS_POST, INDEX_MANIFEST, INDEX_VERSION),
    prompts=("generate_scenario", "generate_facts", "generate_question"),
    models=("generate.generator", "generate.generators"),
)
