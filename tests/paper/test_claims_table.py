"""Tests for declinecraft.paper.claims_table: testable claims one per row, the not-testable ones one
row per reason, and no table pretending to be filled."""

from __future__ import annotations

import polars as pl

from declinecraft.paper.claims_table import claims_tex, not_testable_groups


def claims(rows: list[tuple[str, str, str]]) -> pl.DataFrame:
    return pl.DataFrame(
        [
            dict(
                claim_id=f"c{i}",
                claim=claim,
                paper_value="+5.0",
                run_value="+1.0",
                test="McNemar",
                verdict=verdict,
                reason=reason,
            )
            for i, (claim, verdict, reason) in enumerate(rows)
        ]
    )


def test_not_testable_rows_grouped_by_reason() -> None:
    """Three claims not testable for two reasons print two rows, each counting its claims, in the
    order the reasons first occur; the testable claim keeps its own row with its values."""
    frame = claims(
        [
            ("RAG raises CAR (§4.2)", "not testable", "one k only (answer.k_sweep is empty)"),
            ("Thinking lowers CAR", "not testable", "no model with switchable thinking"),
            ("Size & CAR", "supported", ""),
            ("Ten chunks lower CAR", "not testable", "one k only (answer.k_sweep is empty)"),
        ]
    )
    assert not_testable_groups(frame) == [
        ("one k only (answer.k_sweep is empty)", ["RAG raises CAR (§4.2)", "Ten chunks lower CAR"]),
        ("no model with switchable thinking", ["Thinking lowers CAR"]),
    ]
    tex = claims_tex(frame)
    assert tex.count("\\begin{tabular}") == 2
    assert "Size \\& CAR & +5.0 & +1.0 & McNemar & \\textbf{supported} \\\\" in tex
    assert (
        "RAG raises CAR (§4.2); Ten chunks lower CAR & 2 claims: \\emph{one k only (answer.k\\_sweep is empty)} \\\\"
        in tex
    )
    assert "Thinking lowers CAR & 1 claim: \\emph{no model with switchable thinking} \\\\" in tex
    assert tex.count("not testable") == 0 and tex.count(" \\\\\n") == 5  # 2 headers, 1 claim, 2 reasons


def test_run_that_tests_nothing_prints_one_short_table() -> None:
    """Nineteen claims with one reason are one row, without the columns of values."""
    frame = claims([(f"Claim {i}", "not testable", "run health: 8 of 36 answers cut") for i in range(19)])
    tex = claims_tex(frame)
    assert tex.count("\\begin{tabular}") == 1 and "Verdict" not in tex
    assert tex.count(" \\\\\n") == 2 and "19 claims: \\emph{run health: 8 of 36 answers cut}" in tex


def test_no_claims_says_so() -> None:
    """Without claims.csv the file says so instead of a table."""
    assert "No claims check" in claims_tex(None) and "tabular" not in claims_tex(None)
