"""ESB's metrics, response classes and level building at the edges (declinecraft.views.evidence)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from declinecraft.evaluation.context import Chunk
from declinecraft.evaluation.rule_labels import rule_label
from declinecraft.views import evidence
from declinecraft.views.evidence import calibration as cal
from declinecraft.views.evidence import classes, conflicts, levels, partial, tables, validation

# Ten responses per level; abstentions 1, 2, 6, 8, 2 on L1..L5 and 3 on T.
LEVELS = [lv for lv in ("L1", "L2", "L3", "L4", "L5", "T") for _ in range(10)]
ABSTAINED = [i < n for n in (1, 2, 6, 8, 2, 3) for i in range(10)]


class TestCalibration:
    def test_b_ece(self) -> None:
        """Eq. 1: (10*0.1 + 10*0.2 + 10*0.4 + 10*0.2 + 10*0.8) / 50; with T also 10*0.7 over 60."""
        assert evidence.b_ece(LEVELS, ABSTAINED) == pytest.approx(17 / 50)
        assert evidence.b_ece(LEVELS, ABSTAINED, ideal=evidence.IDEAL_WITH_T) == pytest.approx(24 / 60)

    def test_b_ece_extremes(self) -> None:
        """Perfect behaviour is 0, the opposite 1, no response at a scored level NaN."""
        good = [lv in cal.INSUFFICIENT for lv in LEVELS]
        assert evidence.b_ece(LEVELS, good) == 0.0
        assert evidence.b_ece(LEVELS, [not g for g in good]) == 1.0
        assert np.isnan(evidence.b_ece(["T"], [True]))

    def test_over_answer(self) -> None:
        """Eq. 2 over L3-L5 only; an Invalid response stays in the denominator."""
        assert evidence.over_answer_rate(LEVELS, ABSTAINED) == pytest.approx(14 / 30)
        answered = [not a for a in ABSTAINED]
        answered[29] = False  # an L3 response (not an abstention) that did not answer either: Invalid
        assert evidence.over_answer_rate(LEVELS, ABSTAINED, answered) == pytest.approx(13 / 30)
        assert np.isnan(evidence.over_answer_rate(["L1"], [False]))

    def test_other_rates(self) -> None:
        """Abstention per level, ESB's wrong-answer rate over all L5 responses, accuracy over L1-L2."""
        assert evidence.abstention_rate(LEVELS, ABSTAINED, "L4") == 0.8
        assert evidence.wrong_answer_rate(["L5", "L5", "L5", "L4"], [True, False, False, True]) == pytest.approx(1 / 3)
        assert evidence.accuracy(["L1", "L2", "L2", "L3"], [1.0, 0.5, float("nan"), 1.0]) == 0.75

    def test_weights(self) -> None:
        """Weights scale n_l and A_l: an L5 pair at ½ each counts as one question (ESB's main grid).

        L1: 2 questions answered (a=0, ideal 0); L5: question q abstains in one order only, r in
        neither. Unweighted Eq. 1: L5 has 4 responses, 1 abstains -> |1 - 4| = 3, B-ECE 3/6 and
        over-answer 3/4. Weighted ½: L5 weighs 2, abstains ½ -> |0.5 - 2| = 1.5 over 4 = 0.375,
        over-answer 1.5 / 2 = 0.75; doubling every weight changes nothing.
        """
        levels = ["L1", "L1", "L5", "L5", "L5", "L5"]
        abstained = [False, False, True, False, False, False]
        qids = ["q", "r", "q", "q", "r", "r"]
        w = evidence.main_weights(qids, levels)
        assert w == [1.0, 1.0, 0.5, 0.5, 0.5, 0.5]
        assert evidence.b_ece(levels, abstained) == pytest.approx(3 / 6)
        assert evidence.b_ece(levels, abstained, weights=w) == pytest.approx(1.5 / 4)
        assert evidence.b_ece(levels, abstained, weights=[2 * x for x in w]) == pytest.approx(1.5 / 4)
        assert evidence.over_answer_rate(levels, abstained, weights=w) == pytest.approx(0.75)
        assert evidence.over_answer_rate(["L3", "L5", "L5"], [False, True, False], weights=[1, 0.5, 0.5]) == 0.75
        with pytest.raises(ValueError, match="non-negative"):
            evidence.b_ece(levels, abstained, weights=[-1.0] * 6)

    def test_lengths_must_match(self) -> None:
        """Mismatched lists are an error, not a silent truncation."""
        with pytest.raises(ValueError, match="equal length"):
            evidence.b_ece(["L1", "L2"], [True])

    def test_cluster_interval(self) -> None:
        """The interval holds the pooled rate; one question or a constant statistic are handled."""
        num, den = np.array([0.0, 1, 2, 2, 1, 0, 2, 2]), np.full(8, 2.0)
        low, high = cal.cluster_interval([num, den], cal.ratio, n_resamples=500, seed=1)
        assert low <= num.sum() / den.sum() <= high and low < high
        assert all(np.isnan(cal.cluster_interval([num[:1], den[:1]], cal.ratio)))
        assert cal.cluster_interval([np.ones(5), np.ones(5)], cal.ratio, n_resamples=100) == (1.0, 1.0)

    def test_b_ece_statistic_matches_point(self) -> None:
        """The vectorised statistic of per-question counts equals b_ece on the responses."""
        a = [np.array([1.0, 0.0]), np.array([0.0, 1.0])]  # abstentions on L1 and L3 for two questions
        n = [np.array([1.0, 1.0]), np.array([1.0, 1.0])]
        got = cal.b_ece_statistic([0.0, 1.0])(*a, *n, axis=-1)
        assert got == pytest.approx(
            evidence.b_ece(["L1", "L1", "L3", "L3"], [True, False, False, True], ideal={"L1": 0.0, "L3": 1.0})
        )


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


class TestClasses:
    @pytest.mark.parametrize(
        ("label", "source", "exhausted", "want"),
        [
            ("ABSTAIN", "llm", False, "ABSTAIN"),
            ("DENY", "llm", False, "ANSWER"),
            ("ANSWER", "empty", False, "INVALID"),
            (None, "budget_exhausted", True, "INVALID"),
            (None, "error", False, None),
            (None, "llm", False, None),
        ],
    )
    def test_judge_class(self, label: str | None, source: str, exhausted: bool, want: str | None) -> None:
        """DENY is an answer, an empty or exhausted reply Invalid, a failed or unparsable one unclassified."""
        assert classes.judge_class(label, source, exhausted) == want

    @pytest.mark.parametrize(
        ("cls", "response", "want"),
        [
            ("ABSTAIN", "20 seconds", "abstain"),
            ("INVALID", "", "invalid"),
            (None, "", None),
            ("ANSWER", "Every 20 seconds.", "pick_gold"),
            ("ANSWER", "Every 35 seconds.", "pick_conflict"),
            ("ANSWER", "Either 20 or 35 seconds.", "both_values"),
            ("ANSWER", "Rarely.", "other"),
            ("ANSWER", "The passages contradict each other; I go with 35 seconds.", "conflict_aware"),
        ],
    )
    def test_l5_types(self, cls: str | None, response: str, want: str | None) -> None:
        """Each L5 response gets the first type that applies."""
        assert evidence.l5_type(cls, response, "20", "35") == want

    def test_agreement(self) -> None:
        """Agreement 3/4 and Cohen's kappa (0.75 - 0.3125) / (1 - 0.3125) over ANSWER/ABSTAIN/INVALID."""
        frame = pl.DataFrame(
            {
                "esb_judge": ["ANSWER", "ABSTAIN", "ANSWER", "INVALID", None],
                "esb_rule": ["ANSWER", "ABSTAIN", "ABSTAIN", "INVALID", "ANSWER"],
                "level": ["L1", "L3", "L3", "L4", "L4"],
                "prompt": ["P1"] * 5,
                "model": ["m"] * 5,
            }
        )
        row = classes.agreement(frame).row(0, named=True)
        assert (row["scope"], row["n"], row["agreement"]) == ("all", 4, 0.75)
        assert row["kappa"] == pytest.approx(0.4375 / 0.6875)


def chunk(cid: str, title: str, text: str) -> Chunk:
    return Chunk(cid, title, f"http://wiki/{cid}", f"[Page: {title}]\n{text}")


CHUNKS = {
    c.chunk_id: c
    for c in [
        chunk("t1", "Golem", "The golem has 20 health points. " + "Filler text. " * 20 + "It is made of Iron."),
        chunk("o1", "Ore", "Ore is mined."),
        chunk("o2", "Ore", "Ore drops 20 health points."),
    ]
}


def question(qid: str = "q", target: str = "t1") -> pl.DataFrame:
    return pl.DataFrame(
        [
            {
                "id": qid,
                "answerable": True,
                "question": "How much health?",
                "fact": "It has 20 health.",
                "target_chunk_id": target,
                "scenario_chunk_ids": [],
            }
        ],
        schema_overrides={"scenario_chunk_ids": pl.List(pl.String)},
    )


def key_values(original: str, altered: str, kind: str = "model", unit: str = "") -> pl.DataFrame:
    row = conflicts._row("q", "model", evidence.KeyValue(kind, original, altered, unit), None)
    return pl.DataFrame([row], schema=conflicts.SCHEMA)


def build(kv: pl.DataFrame, retrieved: list[str], *, k: int = 3, chunk_chars: int = 0) -> levels.Levels:
    return levels.build(
        question(),
        CHUNKS,
        retrieved={"q": retrieved},
        key_values=kv,
        titles=["Golem", "Ore"],
        k=k,
        chunk_chars=chunk_chars,
    )


def problems(built: levels.Levels) -> dict[str, str]:
    return {r["problem"]: r["action"] for r in built.problems.iter_rows(named=True)}


class TestPartialSupport:
    def test_answer_sentence_cut(self) -> None:
        """The sentence holding the answer string goes; the header and the other sentences stay."""
        text = "[Page: Golem]\nThe golem has 20 health points. It is made of Iron. It walks slowly."
        assert partial.partial_chunk(text, "20 health", "It has 20 health.") == (
            "[Page: Golem]\nIt is made of Iron. It walks slowly.",
            "",
        )

    def test_fact_overlap_without_answer_string(self) -> None:
        """Without an answer string, the sentence holding most (at least half) of the fact's content
        words goes: {wolves, loyal} -> "Wolves are loyal to players." (2 of 2), not "Wolves eat." (1 of 2)."""
        text = "Wolves eat bones. Wolves are loyal to players. They live in forests."
        assert partial.partial_chunk(text, None, "Wolves are loyal.") == ("Wolves eat bones. They live in forests.", "")
        assert partial.partial_chunk("Cats purr.", None, "Wolves are loyal.") == (None, "no_answer_sentence")

    def test_nothing_left(self) -> None:
        """A chunk whose every sentence states the answer has no partial form."""
        assert partial.partial_chunk("It has 20 health. Really, 20 health.", "20 health", "") == (None, "nothing_left")

    def test_level_dropped_and_counted(self) -> None:
        """A one-sentence target gives no L2: a problem row and a failed quality check."""
        one = {**CHUNKS, "t1": chunk("t1", "Golem", "The golem has 20 health points.")}
        built = levels.build(
            question(),
            one,
            retrieved={"q": ["o1", "t1"]},
            titles=["Golem", "Ore"],
            k=3,
            key_values=key_values("20", "40", "number", "health"),
        )
        assert "L2" not in built.instances["level"].to_list()
        assert problems(built)["partial_nothing_left"] == "L2 dropped"
        q = built.quality.filter(pl.col("check") == "answer_sentence_cut").row(0, named=True)
        assert (q["n_checked"], q["n_failed"]) == (1, 1)


class TestLevelEdges:
    def test_copy_still_holding_original(self) -> None:
        """A replacement that contains the original: the L5 pair is dropped with the reason, counted."""
        built = build(key_values("Iron", "Iron Block"), ["o1", "t1"])
        assert "L5" not in built.instances["level"].to_list()
        assert problems(built)["conflict_check_failed"] == "L5 dropped"
        detail = built.problems.filter(pl.col("problem") == "conflict_check_failed")["detail"][0]
        assert detail.startswith("original_value_present")
        q = built.quality.filter(pl.col("check") == "original_absent_in_copy").row(0, named=True)
        assert (q["n_checked"], q["n_failed"]) == (1, 1)

    def test_value_cut_from_context(self) -> None:
        """When context_chars hides the value, L5 is dropped and L1 counted as not showing the answer."""
        built = build(key_values("Iron", "Gold"), ["o1", "t1"], chunk_chars=60)
        assert problems(built)["value_cut_from_context"] == "L5 dropped"
        l1 = built.quality.filter(pl.col("check") == "answer_present", pl.col("level") == "L1").row(0, named=True)
        assert (l1["n_checked"], l1["n_failed"]) == (1, 1)

    def test_short_levels(self) -> None:
        """Too few retrieved chunks and unrelated pages: kept with what there is, counted; an unknown
        retrieved id is skipped and counted."""
        built = build(key_values("20", "40", "number", "health"), ["t1", "o1", "gone"], k=4)
        got = problems(built)
        assert got["l2_short"] == "kept" and got["retrieved_chunk_missing"] == "chunk skipped"
        assert got["no_unrelated_chunks"] == "L3 dropped"  # Ore is retrieved, so related
        assert built.instances.filter(pl.col("level") == "L2")["chunk_ids"].to_list()[0] in (
            ["t1#partial", "o1"],
            ["o1", "t1#partial"],
        )

    def test_no_distractors(self) -> None:
        """A retriever that returns only the target: no L2, counted."""
        built = build(key_values("20", "40", "number", "health"), ["t1"])
        assert problems(built)["no_distractors"] == "L2 dropped"
        assert set(built.instances["level"]) == {"L1", "L3", "L4", "L5"}

    def test_l3_avoids_the_answer(self) -> None:
        """An unrelated chunk stating the answer string is never drawn for L3 (o2 states "20 health")."""
        built = build(key_values("20", "40", "number", "health"), ["t1"], k=2)
        assert built.instances.filter(pl.col("level") == "L3")["chunk_ids"].to_list() == [["o1"]]
        assert problems(built)["l3_short"] == "kept"
        other = build(key_values("Iron", "Gold"), ["t1"], k=2)
        assert sorted(other.instances.filter(pl.col("level") == "L3")["chunk_ids"][0]) == ["o1", "o2"]

    def test_k_must_be_positive(self) -> None:
        with pytest.raises(ValueError, match="evidence.k"):
            build(key_values("20", "40"), ["t1"], k=0)


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


class TestValidationSample:
    def test_stratified(self) -> None:
        """Per level at most per_level classified responses, levels in order, contexts joined, the
        annotator's columns empty; an unclassified response is never drawn."""
        rows = [
            ("r1", "L1", "ANSWER"),
            ("r2", "L1", "ANSWER"),
            ("r3", "L1", "ABSTAIN"),
            ("r4", "L3", "ANSWER"),
            ("r5", "L3", None),
        ]
        judged = pl.DataFrame(
            [
                {
                    "response_id": r,
                    "instance_id": f"i{lv}",
                    "level": lv,
                    "order": "",
                    "model": "m",
                    "prompt": "P1",
                    "question_id": "q",
                    "query": "Q?",
                    "response": "x",
                    "esb_judge": c,
                    "l5_type": None,
                }
                for r, lv, c in rows
            ],
            schema_overrides={"esb_judge": pl.String, "l5_type": pl.String},
        )
        instances = pl.DataFrame({"instance_id": ["iL1", "iL3"], "context": ["ctx1", "ctx3"]})
        sheet = validation.validation_sample(judged, instances, per_level=2, seed=0)
        assert sheet["level"].to_list() == ["L1", "L1", "L3"] and sheet["item_id"][2] == "r4"
        assert set(sheet["context"]) == {"ctx1", "ctx3"} and set(sheet["human_class"]) == {""}
        assert tuple(sheet.columns) == validation.COLUMNS


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


class TestIsConflictAware:
    @pytest.mark.parametrize(
        "text",
        [
            "The passages conflict: one says 20 seconds, the other 30. I go with 20 seconds.",
            "Passage [2] contradicts passage [1]; the answer is 20 seconds.",
            "There is a discrepancy between the sources. It drops 3 ingots.",
            "The passages do not agree on the value, but passage [1] says 20 seconds.",
            "The values are not consistent. Answer: 20 seconds.",
            "There is no conflict in passage [1], but another passage says 30 seconds.",
            "It is 20 seconds, although the passages disagree.",
        ],
    )
    def test_disagreement(self, text: str) -> None:
        """A response that says its passages disagree is conflict-aware."""
        assert evidence.is_conflict_aware(text)

    @pytest.mark.parametrize(
        "text",
        [
            "There is no conflict between the passages. The golem presses a button every 20 seconds.",
            "The passages do not contradict each other; the answer is 20 seconds.",
            "No two passages differ on this: 20 seconds.",
            "The sources don't seem to be in any conflict. It drops 3 copper ingots.",
            "Sufficiency: sufficient, without contradiction. Answer: Coal.",
            "The passages agree: 20 seconds.",
            "",
        ],
    )
    def test_agreement_or_negation(self, text: str) -> None:
        """A negated cue ("no conflict", "do not contradict") or plain agreement is not conflict-aware."""
        assert not evidence.is_conflict_aware(text)

    def test_l5_type_uses_it(self) -> None:
        """A P3 answer saying the passages agree is evidence picking, not conflict-aware."""
        text = "There is no conflict between the passages. The answer is 20 seconds."
        assert classes.l5_type("ANSWER", text, "20 seconds", "30 seconds") == "pick_gold"
        assert classes.l5_type("ANSWER", "The passages conflict; 30 seconds.", "20 seconds", "30 seconds") == (
            "conflict_aware"
        )
