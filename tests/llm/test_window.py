"""Tests for declinecraft.llm.window: how many requests a stream holds at once (the window itself is
exercised through ``Client.astream`` in tests/llm/test_client.py, TestStream)."""

from __future__ import annotations

from declinecraft.llm.window import WINDOW, window_size


class TestWindowSize:
    def test_window_default(self) -> None:
        """The window holds four times the slots, at least WINDOW."""
        assert window_size(2) == WINDOW and window_size(1024) == 4096

    def test_grows_past_the_floor(self) -> None:
        """Just past WINDOW / 4 slots the window is four times the slots, not the floor."""
        slots = WINDOW // 4 + 1
        assert window_size(slots) == 4 * slots > WINDOW
