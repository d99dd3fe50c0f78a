"""A scripted Know2Guess run: two models' replies under two prompts, parsed and graded with known outcomes."""

from __future__ import annotations

import polars as pl

from declinecraft.llm.calls import Reply
from declinecraft.views.know2guess import (
    grading,
    protocol,
)
from declinecraft.views.know2guess.protocol import Run

IDS = ["a0", "a1", "a2", "a3", "u0", "u1", "u2", "u3"]


def ans(answer: str, conf: int) -> str:
    return f"DECISION: ANSWER\nCONFIDENCE: {conf}\nFINAL_ANSWER: {answer}\nREASON_CODE: k"


ABST = "DECISION: ABSTAIN_DONT_KNOW\nCONFIDENCE: 10\nFINAL_ANSWER: NA\nREASON_CODE: k"


#: Model m, standard prompt: one of each outcome (u3's call fails).
M_STANDARD = [
    ans("right", 90),
    ABST,
    ans("wrong", 60),
    "DECISION: REFUSE_POLICY\nCONFIDENCE: 5\nFINAL_ANSWER: NA",
    ABST,
    "I don't know.",
    "",
    None,
]


#: Model m, compact prompt: as standard, but a1 is answered correctly.
M_COMPACT = [M_STANDARD[0], ans("right", 70), *M_STANDARD[2:]]


#: Model n abstains on everything.
N_STANDARD = [ABST] * 8


def questions() -> pl.DataFrame:
    return pl.DataFrame(
        {
            "id": IDS,
            "answerable": [i.startswith("a") for i in IDS],
            "question": [f"Q {i}?" for i in IDS],
            "asked_question": [f"Q {i}?" for i in IDS],
        }
    )


def replies(texts: list[str | None]) -> list[Reply]:
    return [Reply("", error="boom") if t is None else Reply(t) for t in texts]


def decisions() -> pl.DataFrame:
    rows = []
    for run, texts in (
        (Run("m", "off", "no_rag", "standard"), M_STANDARD),
        (Run("m", "off", "no_rag", "compact"), M_COMPACT),
        (Run("n", "off", "no_rag", "standard"), N_STANDARD),
    ):
        rows += protocol.decision_rows(questions(), run, replies(texts))
    frame = protocol.decisions_frame(rows)
    refs = pl.DataFrame({"question_id": IDS, "reference": "ref"})
    items = grading.judge_items(frame, refs)
    accuracy = items.select(
        "response_id", accuracy=(pl.col("response") == "right").cast(pl.Float64), score_source=pl.lit("llm")
    )
    return grading.credit(frame, accuracy)


def row(frame: pl.DataFrame, **key: str) -> dict[str, object]:
    out = frame.filter(*[pl.col(k) == v for k, v in key.items()])
    assert out.height == 1, out
    return out.row(0, named=True)
