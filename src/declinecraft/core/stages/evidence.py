"""09_evidence: ESB's five evidence levels on our questions (its §3-6)."""

from __future__ import annotations

from declinecraft.core import paths
from declinecraft.core.declaration import EVIDENCE_OFF, EVIDENCE_ON, Stage, writer
from declinecraft.core.params import EvidenceParams
from declinecraft.core.stages.answer import ANSWER_RETRIEVED
from declinecraft.core.stages.corpus import CORPUS_CHUNKS_POST, CORPUS_CHUNKS_PRE
from declinecraft.core.stages.index import INDEX_MANIFEST, INDEX_VERSION
from declinecraft.core.stages.judge import JUDGE_REFERENCES
from declinecraft.core.stages.verify import VERIFY_BENCHMARK

_write = writer("evidence", "09_evidence")

EVIDENCE_KEY_VALUES = _write(
    "key_values.parquet",
    "per answerable question: the value its conflicting copy alters, or why none",
    EVIDENCE_ON,
)
EVIDENCE_INSTANCES = _write(
    "instances.parquet",
    "per (question, level, order): chunk ids, the exact context, the checks",
    EVIDENCE_ON,
)
EVIDENCE_RESPONSES = _write(
    "responses.parquet", "per (instance, model, thinking, prompt): the answer call's reply", EVIDENCE_ON
)
EVIDENCE_LABELS = _write("labels.parquet", "the response judge's labels", EVIDENCE_ON)
EVIDENCE_SCORES = _write("scores.parquet", "the accuracy judges' scores of L1-L4 answers", EVIDENCE_ON)
EVIDENCE_JUDGED = _write(
    "judged.parquet", "responses + label + accuracy + ESB classes + L5 flags and types", EVIDENCE_ON
)
EVIDENCE_CURVE = _write(
    "curve.csv", "the evidence-sufficiency curve: per model, prompt and level L1-L5, T", EVIDENCE_ON
)
EVIDENCE_SUMMARY = _write(
    "summary.csv", "accuracy, over-answer, wrong-answer, B-ECE (with and without T), intervals", EVIDENCE_ON
)
EVIDENCE_POSITION_BIAS = _write(
    "position_bias.csv", "L5 by order: abstention, gold adoption, known-wrong; exact McNemar p", EVIDENCE_ON
)
EVIDENCE_PROMPT_EFFECTS = _write(
    "prompt_effects.csv", "P2, P3 vs P1 per level: change in abstention, McNemar p, BH q", EVIDENCE_ON
)
EVIDENCE_L5_TYPES = _write("l5_types.csv", "the L5 response distribution by type and order", EVIDENCE_ON)
EVIDENCE_AGREEMENT = _write(
    "agreement.csv", "response judge vs rule classifier (ESB classes): agreement, kappa", EVIDENCE_ON
)
EVIDENCE_QUALITY = _write("quality.csv", "ESB 4.4's checks with counts checked and failed", EVIDENCE_ON)
EVIDENCE_VALIDATION_SAMPLE = _write(
    "validation_sample.csv", "ESB 7.7's human-validation sheet: 40 responses per level", EVIDENCE_ON
)
EVIDENCE_VALIDATION_PAGE = _write("validation_sample.html", "the sheet as a form to label", EVIDENCE_ON)
EVIDENCE_VALIDATION_AGREEMENT = _write(
    "validation_agreement.csv", "ESB 7.7's Table 6 from annotators' labels", "runs with their labels"
)
EVIDENCE_PROBLEMS = _write(
    "problems.csv", "every question and level not built as defined, and what was done", EVIDENCE_ON
)
EVIDENCE_MANIFEST = _write("manifest.json", "settings, counts, seconds", EVIDENCE_ON)
EVIDENCE_STATUS = _write("STATUS.md", "says the view is switched off", EVIDENCE_OFF)

STAGE = Stage(
    block="evidence",
    notebook="09_evidence",
    params=EvidenceParams,
    run="declinecraft.views.evidence.stage:run",
    about="the Evidence Sufficiency Benchmark's five levels on our questions (seed 004 §3-6)",
    reads=(
        CORPUS_CHUNKS_PRE,
        CORPUS_CHUNKS_POST,
        INDEX_MANIFEST,
        INDEX_VERSION,
        VERIFY_BENCHMARK,
        ANSWER_RETRIEVED,
        JUDGE_REFERENCES,
    ),
    data=lambda cfg: [f"{paths.EVIDENCE_ANNOTATIONS}/{cfg.run}"],
    prompts=(
        "esb_baseline",
        "esb_sufficiency",
        "esb_cot_sufficiency",
        "esb_conflict",
        "answer_with_context",
        "judge_response",
        "judge_accuracy",
        "think_prompted",
    ),
    models=(
        "evidence.models|answer.models",
        "evidence.accuracy_judges|judge.accuracy_judges",
        "judge.response_judge",
        "evidence.conflict_model|generate.generator",
    ),
)
