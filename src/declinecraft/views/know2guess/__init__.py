"""Know2Guess's decision protocol (the Know2Guess paper) on DeclineCraft's questions.

The models under test declare ANSWER / ABSTAIN_DONT_KNOW / REFUSE_POLICY with a confidence and a
final answer under K2G's standard prompt and its controls, without retrieval and with our
retrieved context; two parsers read each reply, our accuracy judges grade the answers, and the
tables set K2G's scores beside our response judge's labels of the same questions.

Modules: :mod:`.decisions` (the parsers), :mod:`.protocol` (prompts, conditions, runs),
:mod:`.grading` (accuracy judges), :mod:`.reliability` (K2G's scores), :mod:`.sensitivity`
(parser and prompt), :mod:`.separability` (the lexical probe), :mod:`.crossprotocol`,
:mod:`.stage` (stage 08), :mod:`.plots` (figures) and :mod:`.macros` (paper numbers).
"""

from declinecraft.views.know2guess.decisions import (
    ABSTAIN,
    ANSWER,
    PARSE_ERROR,
    REFUSE,
    STATES,
    Decision,
    parse,
)
from declinecraft.views.know2guess.protocol import CONDITIONS, PROMPTS, Run, plan
from declinecraft.views.know2guess.reliability import (
    calibration_bins,
    cost_sensitive,
    ece,
    outcomes,
    reliability_from_counts,
    summary,
)
from declinecraft.views.know2guess.separability import decision_metrics, length_test, separability_probe

__all__ = [
    "ABSTAIN",
    "ANSWER",
    "CONDITIONS",
    "PARSE_ERROR",
    "PROMPTS",
    "REFUSE",
    "STATES",
    "Decision",
    "Run",
    "calibration_bins",
    "cost_sensitive",
    "decision_metrics",
    "ece",
    "length_test",
    "outcomes",
    "parse",
    "plan",
    "reliability_from_counts",
    "separability_probe",
    "summary",
]
