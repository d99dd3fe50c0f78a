"""Tests for declinecraft.views.evidence.negation: the scope of a negator."""

from __future__ import annotations

import pytest

from declinecraft.views.evidence import negation


def negated_words(text: str) -> list[str]:
    """The words of ``text`` inside a negation scope."""
    spans = negation.scopes(text)
    words = [(w, text.index(w)) for w in dict.fromkeys(text.replace(",", " ").replace(";", " ").split())]
    return [w for w, at in words if negation.is_negated(text, at, spans)]


class TestScopes:
    @pytest.mark.parametrize(
        ("text", "want"),
        [
            ("it does not drop iron; it drops gold", ["drop", "iron"]),
            ("not iron but gold", ["iron"]),
            ("gold rather than iron", ["iron"]),
            ("gold instead of iron", ["iron"]),
            ("Not surprisingly, they differ", []),
            ("I am not sure whether they differ", ["sure"]),
            ("it cannot be iron, so it is gold", ["be", "iron"]),
            ("I don't think it is iron", ["think", "it", "is", "iron"]),
            ("there is no conflict between them", ["conflict", "between", "them"]),
            ("no conflict, contradiction or discrepancy", ["conflict", "contradiction", "or", "discrepancy"]),
            ("without doubt, it is gold", ["doubt"]),
        ],
    )
    def test_scope_ends_at_its_clause(self, text: str, want: list[str]) -> None:
        """A negator governs the words after it up to the end of its clause; a pseudo-negation none."""
        assert negated_words(text) == want

    def test_scope_to_the_end(self) -> None:
        """A scope without an end runs to the end of the text, as one span."""
        text = "neither iron nor gold"
        assert negation.scopes(text) == [(len("neither"), len(text))]

    def test_clause_after(self) -> None:
        """The rest of a clause stops at its first scope end."""
        text = "a conflict does not exist here; it is 20"
        assert negation.clause_after(text, len("a conflict")) == " does not exist here"
