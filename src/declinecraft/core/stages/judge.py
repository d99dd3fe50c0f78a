"""06_judge: labels, references, accuracy scores and the leakage audit (Appendix I, J.3)."""

from __future__ import annotations

from declinecraft.core.declaration import SEVERAL_GENERATORS, Stage, writer
from declinecraft.core.params import JudgeParams
from declinecraft.core.stages.answer import ANSWER_COMPARISON_RESPONSES, ANSWER_RESPONSES
from declinecraft.core.stages.corpus import CORPUS_CHUNKS_POST, CORPUS_CHUNKS_PRE, CORPUS_PAGES_POST, CORPUS_PAGES_PRE
from declinecraft.core.stages.verify import VERIFY_BENCHMARK

_write = writer("judge", "06_judge")

JUDGE_LABELS = _write(
    "labels.parquet",
    "one row per (response, judge): raw output, label or null, unparsable, reasked, rule_label",
)
JUDGE_REFERENCES = _write(
    "references.parquet", "one oracle reference per question (answerable: at the cut-off; else today's game)"
)
JUDGE_SCORES = _write("scores.parquet", "one row per (response, accuracy judge): score or null, source")
JUDGE_JUDGED = _write(
    "judged.parquet", "responses + label + score_<judge> + accuracy (panel mean) + question + reference"
)
JUDGE_RESULTS = _write("results.csv", "metrics.summarize per configuration and setting, with the counts")
JUDGE_SUMMARY = _write("summary.parquet", "the same table as results.csv")
JUDGE_LEAKAGE = _write("leakage.csv", "no-RAG accuracy on unanswerable questions per model and thinking")
JUDGE_AGREEMENT = _write("agreement.csv", "response judge vs rule_label and second judges: agreement, kappa")
JUDGE_CHECK = _write(
    "judge_check.parquet",
    "the judges' check set: one row per (item, accuracy judge), expected and given score",
)
JUDGE_COMPARISON_LABELS = _write(
    "comparison_labels.parquet", "the response judge's labels of the comparison responses", SEVERAL_GENERATORS
)
JUDGE_MANIFEST = _write("manifest.json", "counts and seconds")

STAGE = Stage(
    block="judge",
    notebook="06_judge",
    params=JudgeParams,
    run="declinecraft.evaluation.judge_stage:run",
    about="response labels, oracle references, accuracy judges, leakage (App. I, J.3)",
    reads=(
        CORPUS_CHUNKS_PRE,
        CORPUS_CHUNKS_POST,
        CORPUS_PAGES_PRE,
        CORPUS_PAGES_POST,
        VERIFY_BENCHMARK,
        ANSWER_RESPONSES,
        ANSWER_COMPARISON_RESPONSES,
    ),
    prompts=("judge_response", "judge_accuracy", "oracle_answerable", "oracle_unanswerable"),
    models=("judge.response_judge", "judge.oracle", "judge.second_judges", "judge.accuracy_judges"),
    data=lambda cfg: [cfg.judge.check_file] if cfg.judge.check_file else [],
)
