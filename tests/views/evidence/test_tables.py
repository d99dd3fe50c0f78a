"""Tests for declinecraft.views.evidence.tables: the view's tables, and on empty input."""

from __future__ import annotations

import polars as pl
import pytest

from declinecraft.views.evidence import tables


class TestMemoryAccuracy:
    def test_by_hand(self) -> None:
        """ESB's error diagnostic: answers at L3-L4, judged against the reference. Three L3/L4 answers
        score 1, 0, 1 and one abstains (left out); an L1 answer does not count -> 2/3 of 3 answers."""
        rows = [
            ("q1", "L3", "ANSWER", 1.0),
            ("q2", "L3", "ANSWER", 0.0),
            ("q1", "L4", "ANSWER", 1.0),
            ("q2", "L4", "ABSTAIN", 0.0),
            ("q1", "L1", "ANSWER", 0.0),
        ]
        frame = pl.DataFrame(
            [
                {
                    "model": "m",
                    "thinking": "off",
                    "prompt": "P1",
                    "order": "",
                    "question_id": q,
                    "instance_id": f"{q}{lv}",
                    "level": lv,
                    "esb_judge": c,
                    "abstained": c == "ABSTAIN",
                    "answered": c == "ANSWER",
                    "accuracy": a,
                    "known_wrong": None,
                    "gold_adopted": None,
                    "l5_type": None,
                }
                for q, lv, c, a in rows
            ],
            schema_overrides={"known_wrong": pl.Boolean, "gold_adopted": pl.Boolean, "l5_type": pl.String},
        )
        r = tables.summary(frame, tables.Boot(100)).row(0, named=True)
        assert r["memory_accuracy"] == pytest.approx(2 / 3) and (r["n_memory_answers"], r["n_memory_accuracy"]) == (
            3,
            3,
        )


def responses(rows: list[tuple[str, str, str, str, str | None]]) -> pl.DataFrame:
    """Annotated responses of one model from (question, level, order, prompt, ESB class) rows."""
    return pl.DataFrame(
        [
            {
                "model": "m",
                "thinking": "off",
                "prompt": p,
                "order": o,
                "question_id": q,
                "instance_id": f"{q}{lv}{o}",
                "level": lv,
                "esb_judge": c,
                "abstained": None if c is None else c == "ABSTAIN",
                "answered": None if c is None else c == "ANSWER",
                "accuracy": None,
                "known_wrong": None,
                "gold_adopted": None,
                "l5_type": None,
            }
            for q, lv, o, p, c in rows
        ],
        schema_overrides={
            "esb_judge": pl.String,
            "abstained": pl.Boolean,
            "answered": pl.Boolean,
            "accuracy": pl.Float64,
            "known_wrong": pl.Boolean,
            "gold_adopted": pl.Boolean,
            "l5_type": pl.String,
        },
    )


A, N = "ABSTAIN", "ANSWER"


class TestPromptEffects:
    def test_one_pair_per_question(self) -> None:
        """L5's two orders are combined into one pair per question before McNemar.

        P1 never abstains. Under P2, q1 abstains in both orders (1 against 0), q2 in one (½ against 0),
        q3 in none (a tie). Two discordant questions, both for P2: n_pairs 3, exact p = 2 * 0.5**2 = 0.5;
        abstention under P2 is (1 + ½ + 0) / 3 = ½. Pairing the six instances would give 3 discordant
        pairs and p 0.25."""
        rows = [(q, "L5", o, "P1", N) for q in ("q1", "q2", "q3") for o in ("gold_first", "conflict_first")]
        rows += [("q1", "L5", "gold_first", "P2", A), ("q1", "L5", "conflict_first", "P2", A)]
        rows += [("q2", "L5", "gold_first", "P2", A), ("q2", "L5", "conflict_first", "P2", N)]
        rows += [("q3", "L5", "gold_first", "P2", N), ("q3", "L5", "conflict_first", "P2", N)]
        r = tables.prompt_effects(responses(rows)).filter(pl.col("level") == "L5").row(0, named=True)
        assert (r["n_pairs"], r["only_prompt"], r["only_p1"]) == (3, 2, 0)
        assert r["p"] == pytest.approx(0.5) and r["abstention"] == pytest.approx(0.5) and r["abstention_p1"] == 0.0

    def test_unclassified_order_left_out(self) -> None:
        """A question's outcome is the mean of its classified responses: one unclassified order leaves the other."""
        rows = [("q1", "L5", "gold_first", "P1", N), ("q1", "L5", "conflict_first", "P1", None)]
        rows += [("q1", "L5", "gold_first", "P2", A), ("q1", "L5", "conflict_first", "P2", A)]
        pairs = tables.question_pairs(responses(rows), "P2", "P1", "prompt", "abstained")
        assert pairs.to_dicts() == [{"question_id": "q1", "a": 1.0, "b": 0.0}]


class TestWeights:
    def test_weights_after_unclassified_dropped(self) -> None:
        """q1's L5 has one classified order (abstained) and one unclassified: it counts once, at weight 1.

        q2 answers in both orders (½ each). The curve's L5 abstention is (1 + 0) / 2 = ½; weights
        assigned before the drop would give ½ / 1.5 = ⅓."""
        rows = [("q1", "L5", "gold_first", "P1", A), ("q1", "L5", "conflict_first", "P1", None)]
        rows += [("q2", "L5", "gold_first", "P1", N), ("q2", "L5", "conflict_first", "P1", N)]
        frame = responses(rows)
        assert tables.weighted(frame)["weight"].to_list() == [1.0, 0.5, 0.5, 0.5]
        curve = tables.curve(frame, tables.Boot(100)).filter(pl.col("level") == "L5").row(0, named=True)
        assert curve["abstention"] == pytest.approx(0.5) and curve["n_unclassified"] == 1


class TestL2:
    def test_l2_abstention_costs_nothing(self) -> None:
        """Our L2 is abstention-acceptable: an L2 abstention enters neither B-ECE nor accuracy, and
        the curve gives it no ideal. L1 answers, L2 and L3 abstain: B-ECE 0 (ESB's a* = 0 would give ⅓)."""
        frame = responses([("q1", "L1", "", "P1", N), ("q1", "L2", "", "P1", A), ("q1", "L3", "", "P1", A)])
        frame = frame.with_columns(accuracy=pl.Series([1.0, 0.0, None]))
        r = tables.summary(frame, tables.Boot(100)).row(0, named=True)
        assert r["b_ece"] == 0.0 and r["accuracy"] == 1.0 and r["n_accuracy"] == 1
        ideal = dict(tables.curve(frame, tables.Boot(100)).select("level", "ideal").iter_rows())
        assert ideal["L1"] == 0.0 and ideal["L2"] is None and ideal["L3"] == 1.0


class TestTablesEmpty:
    def test_no_responses(self) -> None:
        """A run without responses gives empty tables, not an error."""
        frame = pl.DataFrame(
            schema={
                "model": pl.String,
                "thinking": pl.String,
                "prompt": pl.String,
                "level": pl.String,
                "order": pl.String,
                "question_id": pl.String,
                "instance_id": pl.String,
                "esb_judge": pl.String,
                "abstained": pl.Boolean,
                "answered": pl.Boolean,
                "accuracy": pl.Float64,
                "known_wrong": pl.Boolean,
                "gold_adopted": pl.Boolean,
                "l5_type": pl.String,
            }
        )
        boot = tables.Boot(100)
        assert tables.curve(frame, boot).is_empty() and tables.summary(frame, boot).is_empty()
        assert tables.position_bias(frame).is_empty() and tables.prompt_effects(frame).is_empty()
        assert tables.l5_types(frame).is_empty()
