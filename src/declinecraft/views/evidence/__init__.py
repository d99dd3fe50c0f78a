"""The Evidence Sufficiency Benchmark's five evidence levels on DeclineCraft's questions.

ESB (Zhang and Wu, "Do LLMs Know When Evidence is Insufficient? An Evidence Sufficiency Benchmark
for Answer-Abstention Calibration in Retrieval-Augmented Generation") controls the evidence a
model reads; DeclineCraft controls what is known when. This view builds ESB's levels L1-L5 from
C_pre for each answerable question (:mod:`.levels`, the L5 conflicting copy by :mod:`.values` and
:mod:`.conflicts`), adds the unanswerable questions with their retrieved chunks as a sixth,
temporal condition T, asks the models under test with ESB's three prompt strategies
(:mod:`.asking`), labels every response twice (:mod:`.classes`) and computes ESB's metrics
(:mod:`.calibration`, :mod:`.tables`). :mod:`.stage` runs it (notebook 09); :mod:`.plots`,
:mod:`.report` (figures, LaTeX macros) read its output files; the explorer
(:mod:`declinecraft.explore.protocols`) shows one question's contexts and responses.
"""

from declinecraft.views.evidence.calibration import (
    ABSTENTION_ACCEPTABLE,
    ANSWER_EXPECTED,
    IDEAL,
    IDEAL_WITH_T,
    LEVELS,
    SCORED_IDEAL,
    SCORED_IDEAL_WITH_T,
    abstention_rate,
    accuracy,
    b_ece,
    main_weights,
    over_answer_rate,
    wrong_answer_rate,
)
from declinecraft.views.evidence.classes import L5_TYPES, is_conflict_aware, l5_type
from declinecraft.views.evidence.report import macros
from declinecraft.views.evidence.values import (
    KeyValue,
    conflicting_copy,
    contains,
    copy_problem,
)

__all__ = [
    "ABSTENTION_ACCEPTABLE",
    "ANSWER_EXPECTED",
    "IDEAL",
    "IDEAL_WITH_T",
    "L5_TYPES",
    "LEVELS",
    "SCORED_IDEAL",
    "SCORED_IDEAL_WITH_T",
    "KeyValue",
    "abstention_rate",
    "accuracy",
    "b_ece",
    "conflicting_copy",
    "contains",
    "copy_problem",
    "is_conflict_aware",
    "l5_type",
    "macros",
    "main_weights",
    "over_answer_rate",
    "wrong_answer_rate",
]
