"""08_know2guess: Know2Guess's decision protocol on our questions (its §3.5, §4)."""

from __future__ import annotations

from declinecraft.core.declaration import K2G_OFF, K2G_ON, Stage, writer
from declinecraft.core.params import Know2GuessParams
from declinecraft.core.stages.answer import ANSWER_RESPONSES, ANSWER_RETRIEVED
from declinecraft.core.stages.corpus import CORPUS_CHUNKS_POST, CORPUS_CHUNKS_PRE
from declinecraft.core.stages.judge import JUDGE_JUDGED, JUDGE_REFERENCES
from declinecraft.core.stages.verify import VERIFY_BENCHMARK

_write = writer("know2guess", "08_know2guess")

K2G_DECISIONS = _write(
    "know2guess_decisions.csv",
    "one row per run, parser and question: state, confidence, answer, issues, credit, judge label",
    K2G_ON,
)
K2G_SUMMARY = _write("know2guess_summary.csv", "every K2G rate with its interval, ECE", K2G_ON)
K2G_COST_SENSITIVE = _write("know2guess_cost_sensitive.csv", "R_lambda per lambda with ranks", K2G_ON)
K2G_OUTCOMES = _write("know2guess_outcomes.csv", "the outcome profile", K2G_ON)
K2G_CALIBRATION = _write("know2guess_calibration.csv", "the reliability diagram's bins", K2G_ON)
K2G_PARSER_SENSITIVITY = _write("know2guess_parser_sensitivity.csv", "normalized minus strict, per run", K2G_ON)
K2G_PROMPT_SENSITIVITY = _write(
    "know2guess_prompt_sensitivity.csv", "each control prompt minus the standard prompt", K2G_ON
)
K2G_SEPARABILITY = _write(
    "know2guess_separability.csv", "K2G 3.5's probe: accuracy, macro-F1, recall, FPR, AUROC", K2G_ON
)
K2G_SEPARABILITY_FEATURES = _write("know2guess_separability_features.csv", "the probe's top words per half", K2G_ON)
K2G_CROSS_PROTOCOL = _write("know2guess_cross_protocol.csv", "K2G's declared vs our judged abstention", K2G_ON)
K2G_CROSSTAB = _write("know2guess_crosstab.csv", "K2G state x judge label counts", K2G_ON)
K2G_ISSUES = _write("know2guess_issues.csv", "every parser issue, counted per run and parser", K2G_ON)
K2G_MANIFEST = _write("manifest.json", "settings, counts, seconds (enabled: false when off)")
K2G_DISABLED = _write("DISABLED.md", "says the view is switched off", K2G_OFF)

STAGE = Stage(
    block="know2guess",
    notebook="08_know2guess",
    params=Know2GuessParams,
    run="declinecraft.views.know2guess.stage:run",
    about="Know2Guess's decision protocol on our questions (seed 003 §3.5, §4)",
    reads=(
        CORPUS_CHUNKS_PRE,
        CORPUS_CHUNKS_POST,
        VERIFY_BENCHMARK,
        ANSWER_RESPONSES,
        ANSWER_RETRIEVED,
        JUDGE_REFERENCES,
        JUDGE_JUDGED,
    ),
    prompts=(
        "k2g_standard",
        "k2g_standard_rag",
        "k2g_answer_only",
        "k2g_answer_only_rag",
        "k2g_compact",
        "k2g_compact_rag",
        "k2g_delimiter",
        "k2g_delimiter_rag",
        "judge_accuracy",
        "think_prompted",
    ),
    models=("know2guess.models|answer.models", "know2guess.control_models", "judge.accuracy_judges"),
)
