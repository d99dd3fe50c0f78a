"""Tests for declinecraft.evaluation.rule_labels: the rule-based labeller and the judge-output parsers."""

from __future__ import annotations

import re

import pytest

from declinecraft.evaluation import judge, rule_labels
from declinecraft.evaluation.rule_labels import rule_label
from tests.support import projects

PROMPT = projects.REPO / "params" / "prompts" / "judge_response.txt"


def prompt_examples() -> list[tuple[str, str]]:
    """The 15 labelled examples of the J.3 response-judge prompt, as (response, label)."""
    return re.findall(r"RESPONSE: (.*?)\nLABEL: (\w+)", PROMPT.read_text(encoding="utf-8"))


class TestRuleLabel:
    def test_public_name(self) -> None:
        """judge.rule_label is the rule labeller (the public API of docs/layout.md)."""
        assert judge.rule_label is rule_labels.rule_label

    @pytest.mark.parametrize(("response", "label"), prompt_examples())
    def test_prompt_examples(self, response: str, label: str) -> None:
        """Every example of the J.3 judge prompt gets the paper's label."""
        assert judge.rule_label(response) == label

    def test_prompt_has_fifteen_examples(self) -> None:
        """The example set above is complete (guards the regex that reads the prompt)."""
        assert len(prompt_examples()) == 15

    @pytest.mark.parametrize(
        ("response", "label"),
        [
            # Table 1 of the paper: a premise denial followed by a substitution.
            (
                "Since 'copper horse armor' is not a recognized item in the game, it would provide 0 armor points.",
                "DENY",
            ),
            ("I do not know the answer. I would need to know the recipe.", "ABSTAIN"),
            ("I'm sorry, but I can't assist with that.", "ABSTAIN"),
            ("The context doesn’t mention copper golems. They are not part of vanilla Minecraft.", "DENY"),
            ("There is no such item as a sulfur cube.", "DENY"),
            ("The provided context does not contain the answer. However, it probably has 10 health.", "ANSWER"),
            ("I don't know. It was probably added in a later update.", "ABSTAIN"),
            ("Pandas do not exist in the Nether; they spawn in jungles.", "ANSWER"),
            ("It is available in Minecraft Bedrock Edition but not in Minecraft: Java Edition.", "ANSWER"),
            ("Craft it with 3 copper ingots in a row.", "ANSWER"),
        ],
    )
    def test_phrases(self, response: str, label: str) -> None:
        """Denials win over refusals; a refusal then a guess is ANSWER; a location is not a denial."""
        assert judge.rule_label(response) == label

    @pytest.mark.parametrize("response", ["", "   ", "<think>I do not know this item.</think>", "<think>unclosed"])
    def test_no_final_answer(self, response: str) -> None:
        """Empty text or only a thinking trace never declines: ANSWER."""
        assert judge.rule_label(response) == "ANSWER"

    def test_thinking_is_ignored(self) -> None:
        """A denial inside the thinking trace does not count; the final text decides."""
        text = "<think>Maybe it does not exist.</think>The provided context does not contain the answer."
        assert judge.rule_label(text) == "ABSTAIN"


class TestParseLabel:
    @pytest.mark.parametrize(
        ("raw", "label"),
        [
            ("ABSTAIN", "ABSTAIN"),
            ("deny", "DENY"),
            ("Label: Abstain.", "ABSTAIN"),
            ("**ANSWER**", "ANSWER"),
            ("ABSTAIN\n\nBecause the response says it does not know.", "ABSTAIN"),
            ("ABSTAIN\n\nIt does not ANSWER the question.", "ABSTAIN"),
            ("LABEL: DENY", "DENY"),
            ("The correct label is DENY.", "DENY"),
            ("<think>DENY or ANSWER?</think>ANSWER", "ANSWER"),
        ],
    )
    def test_parsed(self, raw: str, label: str) -> None:
        """A label alone on the first line (any case, prefix, markup) or one capital label in the text."""
        assert judge.parse_label(raw) == label

    @pytest.mark.parametrize("raw", ["", None, "DENY or ABSTAIN", "I think the answer is abstain", "UNSURE", "Label:"])
    def test_unparsable(self, raw: str | None) -> None:
        """No label, two labels or an empty output is None, never a guess."""
        assert judge.parse_label(raw) is None


class TestParseScore:
    @pytest.mark.parametrize(
        ("raw", "score"),
        [
            ("1.0", 1.0),
            ("0.5", 0.5),
            ("0", 0.0),
            ("0.0", 0.0),
            ("Score: 1", 1.0),
            ("**0.5**", 0.5),
            ("1.0/1", 1.0),
            ("1.0\n\nThe candidate covers every fact.", 1.0),
            ("The score is 0.5.", 0.5),
        ],
    )
    def test_parsed(self, raw: str, score: float) -> None:
        """The number alone on the first line, or exactly one valid number in the text."""
        assert judge.parse_score(raw) == score

    @pytest.mark.parametrize("raw", ["", None, "0.75", "2", "0.5 or 1.0", "correct", "0.5/2"])
    def test_unparsable(self, raw: str | None) -> None:
        """Values outside {0, 0.5, 1}, several numbers or words only are None."""
        assert judge.parse_score(raw) is None


class TestEsbRuleLabel:
    @pytest.mark.parametrize(
        ("response", "want"),
        [
            ("The evidence is insufficient to answer this question.", "ABSTAIN"),
            ("Sufficiency: insufficient evidence. Answer: The evidence is insufficient to answer this.", "ABSTAIN"),
            ("I do not know the answer. I would need to know the recipe.", "ABSTAIN"),
            ("There is no such item as a sulfur cube.", "ANSWER"),  # a premise denial is a claim
            ("The provided context does not contain the answer. However, it probably has 10 health.", "ANSWER"),
            ("It takes 20 seconds.", "ANSWER"),
            ("", "INVALID"),
            ("  ** --- **", "INVALID"),
            ("<think>I do not know</think>", "INVALID"),
            ("42", "INVALID"),
        ],
    )
    def test_classes(self, response: str, want: str) -> None:
        """ESB's three classes from the same rules plus ESB's insufficiency phrases."""
        assert rule_label(response, scheme="esb") == want

    def test_default_scheme_unchanged(self) -> None:
        """The DeclineCraft labels stay as they were: ESB's phrases do not enter them."""
        assert rule_label("The evidence is insufficient to answer this question.") == "ANSWER"
        assert rule_label("") == "ANSWER" and rule_label("There is no such item as a sulfur cube.") == "DENY"

    def test_unknown_scheme(self) -> None:
        with pytest.raises(ValueError, match="scheme"):
            rule_label("x", scheme="other")
