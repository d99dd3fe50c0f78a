"""Tests for declinecraft.analysis.paper_tables: the paper's tables built from the results."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from declinecraft.analysis import analyze, paper_tables
from declinecraft.evaluation import metrics
from tests.support import judged_tables


def published_row() -> pl.DataFrame:
    """Responses reproducing Table 2's first row: attempt 668/700, CAR 242/300."""
    q = [(f"a{i}", True, "ANSWER" if i < 668 else "ABSTAIN") for i in range(700)]
    q += [(f"u{i}", False, "ABSTAIN" if i < 242 else "DENY") for i in range(300)]
    frame = pl.DataFrame(q, schema=["question_id", "answerable", "label"], orient="row")
    return frame.with_columns(
        model=pl.lit("gemma-4-26b-a4b"),
        thinking=pl.lit("off"),
        condition=pl.lit("single"),
        budget_exhausted=pl.lit(False),
        accuracy=pl.lit(0.7),
    )


class TestTable09:
    def test_car_and_losses(self) -> None:
        """The main generator's row carries the CAR of the verifier's single-shot run; others none."""
        audit = pl.DataFrame(
            {
                "generator": ["g1", "g2"],
                "accepted_answerable": [3, 2],
                "lost_to_format": [1, 2],
                "lost_at_scenario": [4, 0],
                "main_generator": [True, False],
            }
        )
        grid = pl.DataFrame(
            {
                "model": ["x", "v"],
                "thinking": ["off", "off"],
                "condition": ["single", "single"],
                "car": [0.2, 0.5],
                "config_label": ["X", "V"],
                "roles": ["", "V"],
            }
        )
        out = paper_tables.table09({"generator_audit": audit, "main_grid": grid})
        assert out["car"].to_list() == [50.0, None] and out["car_model"].to_list() == ["V", None]
        assert out["lost_at_scenario"].to_list() == [4.0, 0.0]

    def test_car_per_generator(self) -> None:
        """With the comparison answered, every generator's row has its own CAR, in percent, with
        the model's display name (the main results are not used)."""
        audit = pl.DataFrame(
            {
                "generator": ["g1", "g2"],
                "main_generator": [True, False],
                "car_model": ["m", "m"],
                "car": [0.25, 0.0],
                "car_k": [1, 0],
                "car_n": [4, 3],
            }
        )
        grid = pl.DataFrame(
            {
                "model": ["m"],
                "thinking": ["off"],
                "condition": ["single"],
                "car": [0.9],
                "config_label": ["M"],
                "roles": [""],
            }
        )
        facts = pl.DataFrame({"model": ["m"], "display_name": ["Model M"]})
        out = paper_tables.table09({"generator_audit": audit, "main_grid": grid, "facts": facts})
        assert out["car"].to_list() == [25.0, 0.0] and out["car_model"].to_list() == ["Model M"] * 2


class TestSelfPref:
    def test_rows(self) -> None:
        """One row per judge in points, then the other-family re-ranking."""
        sp = pl.DataFrame(
            {
                "judge": ["score_a"],
                "family": ["F"],
                "estimate": [0.012],
                "low": [0.005],
                "high": [0.02],
                "n_own": [10],
                "n_other": [20],
                "note": [""],
            }
        )
        rerank = pl.DataFrame({"n": [12], "n_reduced": [4], "rho": [0.84], "p": [0.001], "note": [""]})
        out = paper_tables.selfpref({"self_preference": sp, "judge_rerank": rerank})
        assert out["judge"].to_list() == ["a", "other-family judges only"] and out["estimate"][0] == pytest.approx(1.2)
        assert out["note"][1] == "rho = +0.84 over 12 configurations (4 re-scored)"


class TestPaperTablesBuild:
    def test_published_table2(self) -> None:
        """Table 2's published row: attempt 95.4 [93.6, 96.7], CAR 80.7 [75.8, 84.7], Bal. F1 88.9."""
        results = analyze.analyze(published_row(), design=analyze.Design(n_resamples=20))
        row = paper_tables.build(results)["table02"].row(0, named=True)
        got = [
            round(row[c], 1) for c in ("attempt", "attempt_low", "attempt_high", "car", "car_low", "car_high", "bal_f1")
        ]
        assert got == [95.4, 93.6, 96.7, 80.7, 75.8, 84.7, 88.9]
        assert metrics.balanced_f1(0.954, 0.807) == pytest.approx(0.889, abs=5e-4)

    def test_reasons(self) -> None:
        """Without results every table but 12 is a reason string; none raises; 12 needs the config."""
        out = paper_tables.build({})
        assert all(isinstance(v, str) for v in out.values()) and "table12" not in out

    def test_role_marks(self) -> None:
        """A model with a role in building the benchmark carries its marks as ``^{...}``."""
        results = analyze.analyze(published_row(), design=analyze.Design(n_resamples=5))
        facts = analyze.model_facts({}, ["gemma-4-26b-a4b"], {"gemma-4-26b-a4b": "GR"})
        results["main_grid"] = results["main_grid"].drop("roles").join(facts.select("model", "roles"), on="model")
        assert paper_tables.build(results)["table02"]["model"][0] == "gemma-4-26b-a4b^{GR}"


class TestTable12:
    def test_roles(self, tmp_path: Path) -> None:
        """The run's embedder, generator and judges."""
        cfg = judged_tables.project(tmp_path, None)
        out = paper_tables.table12(cfg)
        assert out["model"][0] == cfg.index.embedder and out.height >= 7
        assert "table12" in paper_tables.build({}, cfg)
