"""Tests for declinecraft.analysis.view_health: the two views' health counts on hand-built outputs
(tests/support/health.py)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from declinecraft.analysis import run_health, view_health
from declinecraft.core import catalogue, config
from tests.support import health


class TestViews:
    def test_know2guess_format(self) -> None:
        """Strict-parser replies with any issue; the normalized parser's rows are the same calls."""
        decisions = pl.DataFrame(
            {
                "model": ["m-a"] * 4,
                "thinking": ["off"] * 4,
                "parser": ["strict", "strict", "strict", "normalized"],
                "issues": ["no_decision;missing_confidence", "", "no_decision", None],
            }
        )
        found = view_health.know2guess_format(decisions)
        assert health.row(found, "k2g_format_issues", "m-a") == (2, 3)
        assert found["detail"][0] == "no_decision"

    def test_know2guess_protocol(self) -> None:
        """A reply follows the protocol with a decision it keeps, a stated confidence and no cut;
        a failed call is not a reply, the normalized parser's rows are the same calls."""
        decisions = pl.DataFrame(
            {
                "model": ["m-a"] * 6,
                "thinking": ["off"] * 6,
                "parser": ["strict"] * 5 + ["normalized"],
                "issues": ["no_decision;missing_confidence", "", "answer_with_abstain", "", "", ""],
                "finish_reason": ["stop", "stop", "stop", "length", None, "stop"],
                "error": [None, None, None, None, "HTTP 500", None],
            }
        )
        found = view_health.know2guess_protocol(decisions)
        assert health.row(found, "protocol_decision", "m-a") == (2, 4)
        assert health.row(found, "protocol_confidence", "m-a") == (3, 4)
        assert health.row(found, "protocol_followed", "m-a") == (1, 4)

    def test_evidence_protocol(self) -> None:
        """An evidence answer follows the protocol with final text, not exhausted and not cut."""
        responses = pl.DataFrame(
            {
                "model": ["m-a"] * 4,
                "thinking": ["off"] * 4,
                "response": ["Yes.", "", "It is", "No."],
                "budget_exhausted": [False, True, False, False],
                "finish_reason": ["stop", "length", "length", "stop"],
                "error": [None] * 4,
            }
        )
        found = view_health.evidence_protocol(responses)
        assert health.row(found, "protocol_decision", "m-a") == (3, 4)
        assert health.row(found, "protocol_followed", "m-a") == (2, 4)
        assert "protocol_confidence" not in set(found["measure"])

    def test_evidence_invalid(self) -> None:
        """Invalid responses summed over prompts."""
        summary = pl.DataFrame(
            {"model": ["m-a", "m-a"], "thinking": ["off", "off"], "n_invalid": [1, 2], "n_responses": [9, 9]}
        )
        assert health.row(view_health.evidence_invalid(summary), "esb_invalid", "m-a") == (3, 18)


@pytest.fixture()
def cfg(tmp_path: Path) -> config.RunConfig:
    """A run with hand-built answer and judge outputs and no views run."""
    return health.write_run(tmp_path)


class TestCollectViews:
    def test_views_not_run(self, cfg) -> None:  # noqa: ANN001
        """Views without outputs give notes, not errors."""
        found = view_health.collect_views(cfg)
        assert set(found["measure"]) == {"missing"} and found.height >= 2


class TestWhole:
    def test_analysis_not_run(self, cfg) -> None:  # noqa: ANN001
        """Without the analysis stage's run_health.csv the whole health says so, beside the verifier's
        counts and the views' notes."""
        found = view_health.whole(cfg)
        stages = found.filter(pl.col("measure") == "missing")["stage"].to_list()
        assert run_health.ANALYSIS_STAGE in stages
        assert found.filter(pl.col("measure") == "verifier_no_answerable")["denominator"].sum() > 0

    def test_analysis_counted(self, cfg) -> None:  # noqa: ANN001
        """The analysis stage's table is read back as written, in stage order after the verifier's."""
        written = run_health.collect(cfg, health.main_grid())
        path = catalogue.ANALYSIS_TABLE.path(cfg, "run_health")
        path.parent.mkdir(parents=True, exist_ok=True)
        written.write_csv(path)
        found = view_health.whole(cfg)
        assert found["stage"][0] == run_health.VERIFY_STAGE
        assert health.row(found, "truncated", "m-a", condition="no_rag") == health.row(
            written, "truncated", "m-a", condition="no_rag"
        )
