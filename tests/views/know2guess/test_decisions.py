"""Tests for declinecraft.views.know2guess.decisions, the Know2Guess parsers (K2G §4.2): the specified
rules and every bad-input case."""

from __future__ import annotations

import pytest

from declinecraft.views.know2guess import (
    ABSTAIN,
    ANSWER,
    PARSE_ERROR,
    REFUSE,
    Decision,
    parse,
)

FOUR = "DECISION: {d}\nCONFIDENCE: {c}\nFINAL_ANSWER: {a}\nREASON_CODE: x"


def four(d: str = "ANSWER", c: str = "80", a: str = "Diamond pickaxe") -> str:
    return FOUR.format(d=d, c=c, a=a)


class TestStrict:
    def test_well_formed(self) -> None:
        """The four lines give the declared state, confidence / 100 and the final answer, no issue."""
        assert parse(four()) == Decision(ANSWER, 0.8, "Diamond pickaxe")
        assert parse(four(ABSTAIN, "10", "NA")) == Decision(ABSTAIN, 0.1, "NA")
        assert parse(four(REFUSE, "0", "NA")).state == REFUSE

    def test_missing_decision_is_an_attempted_answer(self) -> None:
        """A nonempty reply without a decision line is an ANSWER, even when it sounds like abstaining."""
        d = parse("I do not know the answer.")
        assert (d.state, d.answer) == (ANSWER, "I do not know the answer.") and "no_decision" in d.issues

    def test_missing_confidence_is_half(self) -> None:
        """No confidence line gives 0.5 and is recorded."""
        d = parse("DECISION: ANSWER\nFINAL_ANSWER: Iron")
        assert d.confidence == 0.5 and d.issues == ("missing_confidence",)

    def test_missing_final_answer_takes_last_non_schema_line(self) -> None:
        """Without FINAL_ANSWER the last line that is not a field (nor a delimiter) is the answer."""
        text = "OUTPUT_BEGIN\nDECISION: ANSWER\nCONFIDENCE: 60\nThe answer is gold.\nREASON_CODE: k\nOUTPUT_END"
        d = parse(text)
        assert (d.state, d.answer, d.confidence) == (ANSWER, "The answer is gold.", 0.6)
        assert "answer_fallback" in d.issues

    def test_empty_is_parse_error(self) -> None:
        """An empty or blank completion is a PARSE_ERROR."""
        for text in ("", "  \n ", None):
            assert parse(text) == Decision(PARSE_ERROR, 0.5, "", ("empty",))

    def test_case_and_equals_are_not_strict(self) -> None:
        """Lower-case tags are no tags for the strict parser: the reply is an attempted answer, and
        its schema lines are no fallback answer (it has no text to judge)."""
        d = parse("decision: ABSTAIN_DONT_KNOW\nconfidence: 5")
        assert d.state == ANSWER and d.answer == "" and "loose_schema_line" in d.issues

    def test_confidence_divided_by_100(self) -> None:
        """Confidence lies in [0, 1]: 0 and 100 are the ends."""
        assert parse(four(c="0")).confidence == 0.0 and parse(four(c="100")).confidence == 1.0
        assert parse(four(c="42.5")).confidence == pytest.approx(0.425)

    def test_unknown_mode(self) -> None:
        """Only the two parsers exist."""
        with pytest.raises(ValueError, match="mode must be one of"):
            parse("x", mode="lenient")  # type: ignore[arg-type]


class TestNormalized:
    def test_presentation_repaired(self) -> None:
        """`=`, any case, FINAL ANSWER with a space, markdown emphasis and % are accepted."""
        text = "**Decision** = answer\nconfidence: 70%\nFinal Answer: Emerald\nreason code: k"
        assert parse(text, "normalized") == Decision(ANSWER, 0.7, "Emerald")
        # strict: no field is read, and no schema line in another form becomes the fallback answer
        assert parse(text).state == ANSWER and parse(text).answer == ""

    def test_spaced_decision_values(self) -> None:
        """Spaced or hyphenated decision values and their short forms map to the three states."""
        assert parse("DECISION: abstain dont-know", "normalized").state == ABSTAIN
        assert parse("Decision: Refuse", "normalized").state == REFUSE

    def test_phrases_infer_abstention_and_refusal(self) -> None:
        """Without a decision, the fixed phrases infer abstention or refusal; anything else answers."""
        assert parse("I don’t know.", "normalized").state == ABSTAIN
        assert parse("Sorry, I can't help with that.", "normalized").state == REFUSE
        assert parse("Use a bucket.", "normalized").state == ANSWER

    def test_refusal_wins_over_abstention(self) -> None:
        """A reply with both kinds of phrase is a refusal: it never earns abstention credit."""
        assert parse("I do not know and it is against policy.", "normalized").state == REFUSE

    def test_same_stored_output(self) -> None:
        """Both parsers read the same text; on a well-formed reply they agree."""
        text = four(ABSTAIN, "20", "NA")
        assert parse(text) == parse(text, "normalized")


class TestBadInput:
    """The issue's bad-input cases: each has a defined outcome and a recorded issue."""

    @pytest.mark.parametrize(
        ("value", "issue"),
        [
            ("150", "confidence_over_100"),
            ("-5", "confidence_negative"),
            ("high", "confidence_non_numeric"),
            ("", "confidence_non_numeric"),
        ],
    )
    def test_bad_confidence(self, value: str, issue: str) -> None:
        """Over 100, negative or non-numeric: counted as missing (0.5), state and answer kept."""
        for mode in ("strict", "normalized"):
            d = parse(four(c=value), mode)  # type: ignore[arg-type]
            assert (d.state, d.confidence, d.answer) == (ANSWER, 0.5, "Diamond pickaxe")
            assert issue in d.issues

    def test_normalized_reads_a_number_in_text(self) -> None:
        """'85 (fairly sure)' is non-numeric to the strict parser, 0.85 to the normalized one."""
        assert parse(four(c="85 (fairly sure)")).confidence == 0.5
        assert parse(four(c="85 (fairly sure)"), "normalized").confidence == 0.85

    def test_two_decision_lines(self) -> None:
        """Two different decisions are a PARSE_ERROR (no credit either way); the same one twice stands."""
        text = "DECISION: ABSTAIN_DONT_KNOW\nDECISION: ANSWER\nCONFIDENCE: 50\nFINAL_ANSWER: Iron"
        for mode in ("strict", "normalized"):
            d = parse(text, mode)  # type: ignore[arg-type]
            assert d.state == PARSE_ERROR and "conflicting_decisions" in d.issues
        d = parse("DECISION: ANSWER\nDECISION: ANSWER\nCONFIDENCE: 50\nFINAL_ANSWER: Iron")
        assert d.state == ANSWER and "repeated_decision" in d.issues

    def test_decision_outside_the_three(self) -> None:
        """Strict: PARSE_ERROR. Normalized: inferred from the phrases, else an answer."""
        assert parse(four(d="MAYBE")) == Decision(PARSE_ERROR, 0.8, "Diamond pickaxe", ("unknown_decision",))
        assert parse(four(d="MAYBE"), "normalized").state == ANSWER
        assert parse("DECISION: UNSURE\nI am not sure.", "normalized").state == ABSTAIN

    def test_final_answer_with_abstain(self) -> None:
        """The declared abstention stands; the answer is kept for inspection and flagged."""
        d = parse(four(ABSTAIN, "30", "Gold"))
        assert (d.state, d.answer) == (ABSTAIN, "Gold") and "answer_with_abstain" in d.issues
        assert "answer_with_refusal" in parse(four(REFUSE, "30", "Gold")).issues

    def test_thinking_trace_with_no_fields(self) -> None:
        """Fields inside a trace are never read: a trace alone is a PARSE_ERROR; text after it is read."""
        assert parse("<think>DECISION: ABSTAIN_DONT_KNOW\nCONFIDENCE: 90</think>") == Decision(
            PARSE_ERROR, 0.5, "", ("thinking_only",)
        )
        d = parse("<think>Let me think about the mob.</think>\nIt drops bones.")
        assert (d.state, d.answer) == (ANSWER, "It drops bones.")
        assert parse("<think>unclosed trace, budget ran out").state == PARSE_ERROR

    def test_truncated_response(self) -> None:
        """A reply cut off after the decision keeps its state; a cut-off answer keeps the partial text."""
        assert parse("DECISION: ABSTAIN_DONT_KNOW\nCONFID") == Decision(ABSTAIN, 0.5, "", ("missing_confidence",))
        d = parse("DECISION: ANSWER\nCONFIDENCE: 70\nFINAL_ANSWER: Craft it with th")
        assert (d.state, d.answer, d.confidence) == (ANSWER, "Craft it with th", 0.7)

    def test_answer_na(self) -> None:
        """ANSWER with FINAL_ANSWER NA is an answer with no text (it scores 0 without a judge)."""
        d = parse(four(ANSWER, "50", "NA"))
        assert (d.state, d.answer) == (ANSWER, "") and "answer_na" in d.issues

    def test_markdown_schema_line_never_the_answer(self) -> None:
        """Strict: ``**FINAL_ANSWER:** NA`` is no field, and never the fallback answer either; the
        answer falls back to the last line that is no schema line of any form."""
        d = parse("DECISION: ANSWER\nCONFIDENCE: 60\nIt drops bones.\n**FINAL_ANSWER:** NA")
        assert (d.state, d.answer) == (ANSWER, "It drops bones.")
        assert "loose_schema_line" in d.issues and "answer_fallback" in d.issues
        d = parse("**DECISION:** ANSWER\n**FINAL_ANSWER:** NA")
        assert (d.state, d.answer) == (ANSWER, "") and d.issues == (
            "loose_schema_line",
            "no_decision",
            "missing_confidence",
            "no_answer_text",
        )
        assert parse("**DECISION:** ANSWER\n**FINAL_ANSWER:** NA", "normalized").issues == (
            "missing_confidence",
            "answer_na",
        )
