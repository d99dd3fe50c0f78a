"""Tests for declinecraft.evaluation.context: the retrieved passages as a prompt's context."""

from __future__ import annotations

from declinecraft.evaluation import context
from tests.support import answering


class TestFormatContext:
    def test_title_and_url(self) -> None:
        """Each chunk is numbered with its page title and URL, then its text."""
        text = context.format_context([answering.CHUNKS["c1"], answering.CHUNKS["c2"]])
        assert text == (
            "[1] Page 1 (https://wiki/Page_1)\n[Page: Page 1]\ntext 1\n\n[2] Page 2 "
            "(https://wiki/Page_2)\n[Page: Page 2]\ntext 2"
        )
