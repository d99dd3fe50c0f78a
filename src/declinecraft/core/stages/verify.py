"""04_verify: the verifier, the benchmark's assembly and its audits (§3.3, Appendix D, F)."""

from __future__ import annotations

from declinecraft.core.declaration import IMPORTED, SEVERAL_GENERATORS, Stage, writer
from declinecraft.core.params import VerifyParams
from declinecraft.core.stages.corpus import CORPUS_CHUNKS_POST, CORPUS_CHUNKS_PRE
from declinecraft.core.stages.generate import GENERATE_DRAFTS
from declinecraft.core.stages.index import INDEX_MANIFEST, INDEX_VERSION

_write = writer("verify", "04_verify")

VERIFY_BENCHMARK = _write("benchmark.parquet", "the questions kept (declinecraft.construction.verify)")
VERIFY_BENCHMARK_JSONL = _write("benchmark.jsonl", "the same questions as JSON lines")
VERIFY_CANDIDATES = _write("candidates.parquet", "every candidate with its fate")
VERIFY_AUDIT_FATES = _write("audit_fates.csv", "candidates per fate")
VERIFY_AUDIT_FORMAT = _write("audit_format.csv", "drafts lost to format, per step")
VERIFY_AUDIT_VERIFIER = _write("audit_verifier.csv", "the verifier's answers per check")
VERIFY_AUDIT_STYLE = _write("audit_style.csv", "the style AUC (answerable against unanswerable wording)")
VERIFY_AUDIT_RETRIEVAL = _write("audit_retrieval.csv", "Hit@k and scenario-chunk overlap of the kept")
VERIFY_AUDIT_PAGES = _write("audit_pages.csv", "questions per target page")
VERIFY_AUDIT_CHUNKS = _write("audit_chunks.csv", "questions per target chunk")
VERIFY_AUDIT_REVIEW = _write("audit_review.csv", "candidates the manual review changed, and why")
VERIFY_AUDIT_GENERATORS = _write(
    "audit_generators.csv",
    "Table 9: each generator's drafts through the comparison verifier",
    SEVERAL_GENERATORS,
)
VERIFY_COMPARISON_CANDIDATES = _write(
    "comparison_candidates.parquet",
    "every compared generator's candidates with their fates",
    SEVERAL_GENERATORS,
)
VERIFY_DATASHEET = _write("datasheet.md", "the benchmark's datasheet")
VERIFY_IMPORT = _write("import.json", "where an imported benchmark came from, and its counts", IMPORTED)

STAGE = Stage(
    block="verify",
    notebook="04_verify",
    params=VerifyParams,
    run="declinecraft.construction.verify_stage:run",
    about="verification, assembly and audits: caps, cue filter, style AUC, Hit@5 (§3.3, App. D, F)",
    reads=(CORPUS_CHUNKS_PRE, CORPUS_CHUNKS_POST, INDEX_MANIFEST, INDEX_VERSION, GENERATE_DRAFTS),
    data=lambda cfg: [cfg.verify.review_file],
    prompts=("verify_stated", "verify_answers"),
    models=("verify.verifier", "verify.comparison_verifier|verify.verifier"),
)
