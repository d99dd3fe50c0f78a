"""Whether each view's models followed its protocol, said at the head of its section, before any number.

A view's behavioural numbers (reliability, abstention, calibration, its direction words) mean
something only when the replies follow the view's protocol: a decision the protocol can read, a
stated confidence where it asks for one, and a reply not cut at the output budget. The counts are
run health's (``protocol_*`` and ``truncated`` rows of
:func:`declinecraft.analysis.view_health.collect_views`). When the share of replies that follow the
protocol in full is below ``analysis.min_protocol``, the view's behavioural macros print as
:data:`NOT_FOLLOWED` and the section prints its compliance sentence in place of its findings
(``\\KgFollowed``/``\\EsbFollowed`` are 0). Macros that describe the questions, the contexts or the
published numbers (:data:`KEEP`) print as they are.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from declinecraft.analysis import run_health
from declinecraft.core import small_n

#: What a behavioural number of a view whose models did not follow its protocol prints.
NOT_FOLLOWED = "not interpretable: the models did not follow the protocol ({k} of {n})"
#: Per view: (macro prefix, stage, what a reply is, the protocol in words).
VIEWS = (
    ("Kg", run_health.K2G_STAGE, "replies", "a decision line it keeps, a stated confidence"),
    ("Esb", run_health.EVIDENCE_STAGE, "answers", "a final text"),
)
#: Macros of a view that are not behaviour (the questions, contexts, settings and published
#: numbers): printed whatever the compliance. A name matches a prefix listed here.
KEEP = {
    "Kg": (
        "KgEnabled",
        "KgMaxTokens",
        "KgResamples",
        "KgPaper",
        "KgProbe",
        "KgLength",
        "KgQuestions",
        "KgAnswerable",
        "KgUnanswerable",
        "KgDecisionCalls",
        "KgConfigs",
        "KgProtocol",
        "KgFollowed",
    ),
    "Esb": (
        "EsbEnabled",
        "EsbAnswerable",
        "EsbUnanswerable",
        "EsbDistractors",
        "EsbInstances",
        "EsbK",
        "EsbModels",
        "EsbNoLFive",
        "EsbPartial",
        "EsbPrompts",
        "EsbQualityFailures",
        "EsbResponses",
        "EsbValidationItems",
        "EsbValues",
        "EsbRule",
        "EsbProtocol",
        "EsbFollowed",
    ),
}


def _sum(frame: pl.DataFrame, measure: str, stage: str) -> tuple[int, int]:
    return run_health.total(frame, measure, stage)


def compliance(frame: pl.DataFrame, stage: str) -> tuple[int, int]:
    """(replies that follow the protocol in full, replies returned) of one view's stage."""
    return _sum(frame, "protocol_followed", stage)


def sentence(frame: pl.DataFrame, stage: str, replies: str, protocol: str, min_share: float) -> str:
    """The section's first sentence: the protocol's counts, per model, and whether they clear
    ``min_share``; '' when the view returned no replies."""
    followed, n = compliance(frame, stage)
    if n == 0:
        return ""
    decided, _ = _sum(frame, "protocol_decision", stage)
    stated, asked = _sum(frame, "protocol_confidence", stage)
    cut, _ = _sum(frame, "truncated", stage)
    counts = [f"{run_health_of(decided, n)} have a decision the protocol can read"]
    if asked:
        counts.append(f"{run_health_of(stated, asked)} state a confidence")
    counts.append(f"{run_health_of(cut, n)} were cut at the output budget")
    per_model = (
        frame.filter((pl.col("measure") == "protocol_followed") & (pl.col("stage") == stage))
        .group_by("model", maintain_order=True)
        .agg(pl.col("numerator", "denominator").sum())
    )
    who = "; ".join(f"{m}: {run_health_of(k, d)}" for m, k, d in per_model.iter_rows())
    head = (
        f"Protocol compliance first ({protocol}, not cut): of the {small_n.counted(n, replies)}, "
        + ", ".join(counts)
        + f"; {run_health_of(followed, n)} follow the protocol in full ({who})."
    )
    if followed >= min_share * n:
        return head + f" That is at least the run's threshold of {100 * min_share:g}%."
    return (
        head + f" That is below the run's threshold of {100 * min_share:g}% (analysis.min_protocol), so the "
        "section's behavioural numbers are " + NOT_FOLLOWED.format(k=followed, n=n) + "."
    )


def run_health_of(k: int, n: int) -> str:
    """A count with its n: "6 of 9"."""
    return f"{k} of {n}"


def gate(macros: Sequence[tuple[str, str, str]], frame: pl.DataFrame, min_share: float) -> list[tuple[str, str, str]]:
    """The views' macros with ``KgProtocolSentence``/``KgFollowed`` (and ``Esb...``) added, and
    each behavioural macro of a view below ``min_share`` replaced by :data:`NOT_FOLLOWED`."""
    out = list(macros)
    for prefix, stage, replies, protocol in VIEWS:
        followed, n = compliance(frame, stage)
        ok = n == 0 or followed >= min_share * n
        if not ok:
            text = NOT_FOLLOWED.format(k=followed, n=n)
            out = [
                (name, text, f"{what} ({text})")
                if name.startswith(prefix) and not name.startswith(KEEP[prefix])
                else (name, value, what)
                for name, value, what in out
            ]
        out.append(
            (
                f"{prefix}ProtocolSentence",
                sentence(frame, stage, replies, protocol, min_share),
                "protocol compliance: decisions, confidences, cut replies, and whether they clear the threshold",
            )
        )
        out.append((f"{prefix}Followed", "1" if ok else "0", "1 when the view's replies follow its protocol"))
    return out
