"""Tests for declinecraft.core.check_agreement: each judge's agreement with the check set's labels."""

from __future__ import annotations

import polars as pl

from declinecraft.core.check_agreement import SCHEMA, check_agreement


class TestCheckAgreement:
    def test_share_and_pass(self) -> None:
        """Items scored as labelled over items, passed at the threshold, counted per kind."""
        rows = [
            dict(
                item_id=f"i{i}", kind=kind, judge="j", expected=0.0, score=0.0, agrees=ok, unparsable=False, error=None
            )
            for i, (kind, ok) in enumerate([("wrong", True), ("wrong", True), ("generic", False), ("generic", True)])
        ]
        found = check_agreement(pl.DataFrame(rows, schema=SCHEMA), 0.75).row(0, named=True)
        assert (found["agree"], found["items"], found["share"], found["passed"]) == (3, 4, 0.75, True)
        assert found["by_kind"] == "generic 1/2; wrong 2/2"
        assert check_agreement(pl.DataFrame(schema=SCHEMA), 0.7).height == 0
