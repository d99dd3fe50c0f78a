"""Tests for declinecraft.views.evidence.stage (stage 09) on the tiny synthetic run of
tests/support/esb_run.py with scripted models, and on the default run's outputs.

The model under test answers from the first passage under P1, abstains under P2 whenever it reads
more than one passage or none, and under P3 answers from the first passage after calling the
passages conflicting."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar

import polars as pl
import pytest

from declinecraft.core import catalogue, config
from declinecraft.evaluation import answer
from declinecraft.evaluation.rule_labels import ESB_LABELS, LABELS, rule_label
from declinecraft.explore import protocols
from declinecraft.llm.calls import Call, Reply
from declinecraft.paper import caption_check, figure_check, flat_panels
from declinecraft.views.evidence import plots, report, stage, validation
from declinecraft.views.evidence.classes import L5_TYPES
from tests.support import default_run, esb_run, projects

INSUFFICIENT = "The evidence is insufficient to answer this question."


PASSAGE = re.compile(r"^\[\d+\] .*\n(?:\[Page: .*\]\n)?(.*)$", re.M)


HEADER = re.compile(r"^\[\d+\] ", re.M)


#: Figure captions of paper/main.tex, which each view figure must match (caption_check).
CAPTIONS = caption_check.captions((projects.REPO / "paper" / "main.tex").read_text(encoding="utf-8"))


def first_passage(context: str) -> str:
    """The text of passage [1] of a formatted context."""
    match = PASSAGE.search(context)
    return match.group(1) if match else ""


def model_under_test(call: Call) -> str:
    """P1 and J2 answer from passage [1] (without passages they say they do not know); P2
    abstains on more than one passage or none; P3 calls the passages conflicting and answers
    from passage [1]."""
    if call.prompt == "answer_no_context":
        return "I do not know the answer. I would need to know more."
    context = call.fields["context"]
    if call.prompt == "esb_baseline" and not HEADER.search(context):
        return "I do not know the answer. I would need to know more."
    if call.prompt == "esb_sufficiency" and len(HEADER.findall(context)) != 1:
        return INSUFFICIENT
    prefix = "Sufficiency: the passages conflict. Answer: " if call.prompt == "esb_cot_sufficiency" else ""
    return prefix + first_passage(context)


def conflict_model(call: Call) -> str:
    """The generator: a value for the sheep fact, none for the wolf fact."""
    if "Sheep" in call.fields["fact"]:
        return '{"original": "eating grass", "altered": "drinking water"}'
    return '{"original": "", "altered": ""}'


def response_judge(call: Call) -> str:
    """ABSTAIN for an ESB-style abstention, ANSWER otherwise."""
    return rule_label(call.fields["answer"], scheme="esb").replace("INVALID", "ANSWER")


def accuracy_judge(call: Call) -> str:
    """1 when the candidate states the gold value of a0 (20 seconds) or a1 (Coal), else 0."""
    return "1.0" if re.search(r"\b20 seconds|\bCoal\b", call.fields["candidate"]) else "0.0"


class Scripted:
    """A batch callable from a script; records the calls."""

    def __init__(self, script: Callable[[Call], str], log: list[tuple[str, Call]], model: str) -> None:
        self.script, self.log, self.model = script, log, model

    def __call__(self, calls: Sequence[Call]) -> list[Reply]:
        self.log.extend((self.model, c) for c in calls)
        return [Reply(self.script(c), cache_key=f"{self.model}-{i}") for i, c in enumerate(calls)]


class FakeModels:
    """The model layer: the model under test m1, the generator gen, the judge j1."""

    SCRIPTS: ClassVar[dict[str, Callable[[Call], str]]] = {"m1": model_under_test, "gen": conflict_model}

    def __init__(self) -> None:
        self.log: list[tuple[str, Call]] = []
        self.released = 0

    def thinking_switch(self, model_id: str) -> str:
        return "none"

    def asker(self, model_id: str, *, thinking: str | None, max_tokens: int, temperature: float = 0.0) -> Scripted:
        def script(call: Call) -> str:
            if call.prompt == "judge_response":
                return response_judge(call)
            if call.prompt == "judge_accuracy":
                return accuracy_judge(call)
            return self.SCRIPTS[model_id](call)

        return Scripted(script, self.log, model_id)

    def release(self) -> None:
        self.released += 1

    def prompts(self, model: str) -> list[str]:
        return [c.prompt for m, c in self.log if m == model]


@pytest.fixture()
def done(project: Path) -> tuple[config.RunConfig, FakeModels, esb_run.FakeSearch, stage.EvidenceResult]:
    cfg = esb_run.make_run(project)
    models, search = FakeModels(), esb_run.FakeSearch()
    return cfg, models, search, stage.run(cfg, models=models, search=search)


def problems(result: stage.EvidenceResult) -> set[tuple[str, str, str]]:
    return {(r["question_id"], r["level"], r["problem"]) for r in result.tables["problems"].iter_rows(named=True)}


class TestStage:
    def test_outputs(self, done) -> None:  # noqa: ANN001
        """Every declared file is written; the manifest counts what was built and sent."""
        cfg, _, search, _ = done
        folder = cfg.stage_dir("evidence")
        for name in (
            *(f"{t}.csv" for t in stage.TABLES),
            *(f"{f}.parquet" for f in stage.FRAMES),
            "manifest.json",
            stage.PAGE.name,
        ):
            assert (folder / name).is_file(), name
        assert not (folder / stage.LABELLED.name).exists()  # no annotator has labelled the sheet
        manifest = json.loads((folder / "manifest.json").read_text())
        # a0, a1, a2: L1-L4 + two L5; a3: L1-L4; u0, u1: T  -> 6 + 6 + 6 + 4 + 2
        assert manifest["instances"] == {"L1": 4, "L2": 4, "L3": 4, "L4": 4, "L5": 6, "T": 2}
        assert manifest["n_responses"] == 24 * 4 and manifest["key_values"] == {"rule": 2, "model": 2}
        assert manifest["searched_questions"] == 5 and len(search.queries) == 5  # a0 and u0 came from stage 05

    def test_models_one_at_a_time(self, done) -> None:  # noqa: ANN001
        """Generator, model under test, judge in turn; the generator only where no rule applies."""
        _, models, _, _ = done
        order = list(dict.fromkeys(m for m, _ in models.log))
        assert order == ["gen", "m1", "j1"]
        assert models.prompts("gen") == ["esb_conflict", "esb_conflict"]  # a2 and a3
        assert models.prompts("m1").count("answer_no_context") == 4  # J2 at L4 is stage 05's no-RAG call
        assert models.prompts("m1").count("esb_baseline") == 24  # P1: ESB's baseline on every context

    def test_bad_input_counted(self, done) -> None:  # noqa: ANN001
        """Missing target chunk, one-chunk page, no alterable value: each a problem row, no crash."""
        _, _, _, result = done
        got = problems(result)
        assert ("a4", "all", "target_chunk_missing") in got
        assert ("a1", "L2", "single_chunk_page") in got
        assert ("a3", "L5", "no_alterable_value") in got and ("a3", "L3", "no_answer_string") in got
        assert ("u0", "T", "answer_in_context") in got
        assert "a4" not in result.instances["question_id"].to_list()

    def test_quality_table(self, done) -> None:  # noqa: ANN001
        """ESB §4.4: L3 never states the answer; T's retrieved chunk that does is counted."""
        _, _, _, result = done
        rows = result.tables["quality"].iter_rows(named=True)
        q = {(r["check"], r["level"]): (r["n_checked"], r["n_failed"]) for r in rows}
        assert q[("answer_absent", "L3")] == (3, 0) and q[("answer_absent", "T")] == (1, 1)  # u1: no answer string
        assert q[("conflict_present", "L5")] == (3, 0) and q[("original_absent_in_copy", "L5")] == (3, 0)
        # L2: every target has an answer sentence and more; of a0-a2 (answer strings), a1's retrieved
        # neighbour c1 ("Coal is mined ...") still states "Coal": one failure, counted, kept
        assert q[("answer_sentence_cut", "L2")] == (4, 0) and q[("answer_absent", "L2")] == (3, 1)
        assert ("a1", "L2", "answer_in_context") in problems(result)

    def test_validation_sheet(self, done) -> None:  # noqa: ANN001
        """ESB §7.7's sheet: every level's classified responses up to 40 (here 4 questions x 4 prompts
        = 16 on L1, both orders of 3 questions x 4 = 24 on L5), with empty annotator columns."""
        _, _, _, result = done
        sheet = result.tables["validation_sample"]
        sizes = dict(sheet.group_by("level").len().iter_rows())
        assert (sizes["L1"], sizes["L5"], sizes["T"]) == (16, 24, 8) and set(sheet["level_valid"]) == {""}

    def test_validation_form(self, done) -> None:  # noqa: ANN001
        """The sheet's form lists every sampled response with its level, in the sheet's order, each
        with the two questions (level valid, human class): 4 answerable questions x 4 prompts on each
        of L1-L4, 3 x 2 orders x 4 on L5, 2 unanswerable x 4 on T = 96 (none above 40 a level)."""
        cfg, _, _, result = done
        page = (cfg.stage_dir("evidence") / stage.PAGE.name).read_text(encoding="utf-8")
        sheet = result.tables["validation_sample"]
        cards = re.findall(r'<section class="item" data-item="([^"]+)" data-level="([^"]+)">', page)
        assert cards == list(zip(sheet["item_id"], sheet["level"], strict=True)) and len(cards) == 96
        assert page.count('data-column="level_valid"') == 2 * 96 and page.count('data-column="human_class"') == 3 * 96

    def test_annotators_labels(self, done) -> None:  # noqa: ANN001
        """Labels in data/evidence_annotations/<run>/ come back as ESB's Table 6: an annotator who
        finds every context valid and agrees with our class on every item but one L1 item gives per
        level valid 1 and agreement 1, on L1 15 of 16 and over all 95 of 96; removing the file removes the table. A bad
        file stops the stage before any model call, naming it."""
        cfg, _, _, result = done
        sheet = result.tables["validation_sample"]
        flip = sheet.filter(pl.col("level") == "L1")["item_id"][0]
        other = {"ANSWER": "ABSTAIN", "ABSTAIN": "ANSWER", "INVALID": "ANSWER"}
        labels = sheet.select(
            "item_id",
            level_valid=pl.lit("yes"),
            human_class=pl.when(pl.col("item_id") == flip)
            .then(pl.col("esb_judge").replace_strict(other))
            .otherwise(pl.col("esb_judge")),
        )
        folder = validation.labels_dir(cfg)
        folder.mkdir(parents=True)
        labels.write_csv(folder / "ann.csv")
        again = stage.run(cfg, models=FakeModels(), search=esb_run.FakeSearch())
        table = pl.read_csv(cfg.stage_dir("evidence") / stage.LABELLED.name)
        assert table.equals(again.tables["validation_agreement"])
        got = {r["level"]: (r["n_classified"], r["valid"], r["agreement"]) for r in table.iter_rows(named=True)}
        assert got["L1"] == (16, 1.0, 15 / 16) and got["all"] == (96, 1.0, 95 / 96)
        assert all(
            got[level] == (n, 1.0, 1.0) for level, n in (("L2", 16), ("L3", 16), ("L4", 16), ("L5", 24), ("T", 8))
        )
        (folder / "ann.csv").unlink()
        stage.run(cfg, models=FakeModels(), search=esb_run.FakeSearch())
        assert not (cfg.stage_dir("evidence") / stage.LABELLED.name).exists()
        (folder / "bad.csv").write_text("item_id,level_valid,human_class\nx,maybe,\n")
        models = FakeModels()
        with pytest.raises(ValueError, match=r"bad.csv: item x has level_valid 'maybe'"):
            stage.run(cfg, models=models, search=esb_run.FakeSearch())
        assert models.log == []

    def test_levels(self, done) -> None:  # noqa: ANN001
        """L1 is the target alone; L2 holds its partial chunk (the answer sentence cut) once among k-1
        others; L3 avoids related pages and the answer string; L5's copy holds the altered value in
        both orders."""
        _, _, _, result = done
        inst = {(r["question_id"], r["level"], r["order"]): r for r in result.instances.iter_rows(named=True)}
        assert inst[("a0", "L1", "")]["chunk_ids"] == ["g1"]
        l2 = inst[("a0", "L2", "")]
        assert sorted(l2["chunk_ids"]) == ["b1", "g1#partial", "i1"]
        assert l2["chunk_ids"][l2["target_position"] - 1] == "g1#partial"
        assert "It drops 3 copper ingots." in l2["context"] and "20 seconds" not in l2["context"]
        assert not l2["answer_present"]
        l3 = inst[("a1", "L3", "")]["chunk_ids"]
        assert len(l3) == 3 and not {"c1", "f1", "t1"} & set(l3)  # Coal states the answer; t1 was retrieved
        gold, swap = inst[("a0", "L5", "gold_first")], inst[("a0", "L5", "conflict_first")]
        assert gold["chunk_ids"] == ["g1", "g1#conflict"] and swap["chunk_ids"] == ["g1#conflict", "g1"]
        assert "20 seconds" in gold["context"] and gold["altered_string"] in gold["context"]
        assert inst[("a2", "L5", "gold_first")]["altered_string"] == "drinking water"

    def test_metrics(self, done) -> None:  # noqa: ANN001
        """The scripted behaviour comes out in the curve, the summary and the L5 flags."""
        _, _, _, result = done
        curve = {(r["prompt"], r["level"]): r["abstention"] for r in result.tables["curve"].iter_rows(named=True)}
        assert curve[("P1", "L4")] == 1.0 and curve[("P1", "L1")] == 0.0 and curve[("P1", "L5")] == 0.0
        assert curve[("P2", "L1")] == 0.0 and curve[("P2", "L2")] == 1.0 and curve[("P2", "T")] == 1.0
        summary = {r["prompt"]: r for r in result.tables["summary"].iter_rows(named=True)}
        # Each L5 question counts once (two orders, ½ each): 3 L5 questions weigh 3, not 6.
        # P1: L3 4 of 4 answered, L4 0 of 4, L5 3 of 3 -> (4 + 3) / 11
        assert summary["P1"]["over_answer"] == pytest.approx(7 / 11)
        # P1 L5 conflict-first reads the copy first: a0, a1, a2 adopt the altered value -> 3 x ½ of 3
        assert summary["P1"]["wrong_answer"] == pytest.approx(0.5)
        # P1 B-ECE over L1 and L3-L5 (our L2 is abstention-acceptable): L1 0/4, L3 0/4 (|0-4|),
        # L4 4/4, L5 0/3 (|0-3|) -> (4 + 3) / 15
        assert summary["P1"]["b_ece"] == pytest.approx(7 / 15)
        assert summary["P1"]["b_ece_t"] == pytest.approx(9 / 17)  # T: 0 of 2 abstain
        assert summary["P1"]["accuracy_low"] <= summary["P1"]["accuracy"] <= summary["P1"]["accuracy_high"]
        types = result.tables["l5_types"].filter(pl.col("order") == "all", pl.col("n") > 0)
        assert set(zip(types["prompt"], types["type"], strict=True)) == {
            ("P1", "pick_gold"),
            ("P1", "pick_conflict"),
            ("P2", "abstain"),
            ("P3", "conflict_aware"),
            ("J2", "pick_gold"),
            ("J2", "pick_conflict"),
        }

    def test_accuracy_scored_against_references(self, done) -> None:  # noqa: ANN001
        """L1-L2 answers are scored by the accuracy judges; a question without a reference is null."""
        _, _, _, result = done
        j = result.judged.filter(pl.col("prompt") == "P1", pl.col("level") == "L1")
        acc = dict(zip(j["question_id"], j["accuracy"], strict=True))
        assert acc["a0"] == 1.0 and acc["a1"] == 1.0 and acc["a2"] is None and acc["a3"] is None

    def test_position_bias_and_prompt_effects(self, done) -> None:  # noqa: ANN001
        """P1 adopts the gold value only with gold first: 3 discordant pairs, exact McNemar p = 0.25;
        P2 abstains on every L5 question where P1 answers: 3 discordant questions."""
        _, _, _, result = done
        p1 = result.tables["position_bias"].filter(pl.col("prompt") == "P1").row(0, named=True)
        assert (p1["gold_gold_first"], p1["gold_conflict_first"], p1["gold_p"]) == (1.0, 0.0, pytest.approx(0.25))
        effects = result.tables["prompt_effects"].filter(pl.col("prompt") == "P2", pl.col("level") == "L5")
        effects = effects.row(0, named=True)
        # One pair per question (the two L5 orders combined first): 3 questions, not 6 instances
        assert (effects["change"], effects["only_prompt"], effects["n_pairs"]) == (1.0, 3, 3)
        assert effects["q"] >= effects["p"]

    def test_rerun_is_identical(self, done) -> None:  # noqa: ANN001
        """Same inputs and seed: the same instances and tables."""
        cfg, _, _, first = done
        again = stage.run(cfg, models=FakeModels(), search=esb_run.FakeSearch())
        assert again.instances.equals(first.instances)
        assert again.tables["summary"].equals(first.tables["summary"])

    def test_disabled(self, project: Path) -> None:
        """enabled: false writes a status file, removes stale tables and returns an empty result."""
        cfg = esb_run.make_run(project, {"enabled": "false"})
        folder = cfg.stage_dir("evidence")
        folder.mkdir(parents=True)
        (folder / "curve.csv").write_text("stale\n")
        result = stage.run(cfg, models=FakeModels(), search=esb_run.FakeSearch())
        assert (folder / stage.STATUS.name).is_file() and not (folder / "curve.csv").exists()
        assert result.instances.is_empty() and result.tables == {}

    def test_unknown_prompt(self, project: Path) -> None:
        """A prompt strategy other than P1-P3 is an error naming the setting."""
        cfg = esb_run.make_run(project, {"prompts": "[P1, P9]"})
        with pytest.raises(ValueError, match=r"evidence\.prompts"):
            stage.run(cfg, models=FakeModels(), search=esb_run.FakeSearch())

    def test_no_questions(self, project: Path) -> None:
        """An empty benchmark gives empty tables and macros that say n/a, no crash."""
        cfg = esb_run.make_run(project)
        path = cfg.stage_dir("verify") / "benchmark.parquet"
        pl.read_parquet(path).clear().write_parquet(path)
        result = stage.run(cfg, models=FakeModels(), search=esb_run.FakeSearch())
        assert result.judged.is_empty() and result.tables["curve"].is_empty()
        got = {name: value for name, value, _ in report.macros(cfg.stage_dir("evidence"))}
        assert got["EsbAnswerable"] == "0" and got["EsbAbstainLFive"] == "n/a" and got["EsbLFiveVsLFour"] == "n/a"

    def test_missing_references(self, project: Path) -> None:
        """Without stage 06 the error names the file to make."""
        cfg = esb_run.make_run(project)
        (cfg.stage_dir("judge") / "references.parquet").unlink()
        with pytest.raises(FileNotFoundError, match="06_judge"):
            stage.run(cfg, models=FakeModels(), search=esb_run.FakeSearch())


class TestReaders:
    def test_browse(self, done) -> None:  # noqa: ANN001
        """One question's six contexts, each with its four responses (P1-P3, J2), levels in order."""
        cfg, _, _, _ = done
        frame = protocols.question_contexts(cfg.stage_dir("evidence"), "a0")
        assert frame.height == 6 * 4
        levels = frame.unique(["level", "order"], maintain_order=True)["level"].to_list()
        assert levels == ["L1", "L2", "L3", "L4", "L5", "L5"]
        assert protocols.question_contexts(cfg.stage_dir("evidence"), "nope").is_empty()
        assert "a0" in protocols.question_ids(cfg.stage_dir("evidence"))

    def test_macros(self, done) -> None:  # noqa: ANN001
        """Macro names are letters only, and the direction words follow the data."""
        cfg, _, _, _ = done
        # min_n=1: every number counts as a finding, so the words can be checked against the data.
        got = {name: value for name, value, _ in report.macros(cfg.stage_dir("evidence"), min_n=1)}
        assert all(re.fullmatch(r"[A-Za-z]+", n) for n in got)
        assert got["EsbAnswerable"] == "4" and got["EsbAbstainLFour"] == "100.0\\%"
        assert got["EsbLFiveVsLFour"] == "lower than" and got["EsbBoundaryWord"] == "stays level"
        assert got["EsbPromptThreeWord"] == "does not change"
        assert (got["EsbPartialDropped"], got["EsbPartialChecked"], got["EsbPartialLeaks"]) == ("0", "3", "1")
        # By default (the claims check's minimum, 6) four questions are no finding.
        small = {name: value for name, value, _ in report.macros(cfg.stage_dir("evidence"))}
        assert (
            small["EsbAbstainLFour"] == "\\dcsmall{100.0\\%}{4 questions}"
            and small["EsbLFiveVsLFour"] == "beside its rate"
        )

    def test_plots(self, done) -> None:  # noqa: ANN001
        """Each figure draws the run's numbers, worked out by hand from the scripted models (4
        answerable questions on L1-L4, 3 with L5 in both orders, 2 unanswerable on T):
        P1 and J2 answer from passage [1] and say they do not know without one -> abstain on L4
        only; P2 abstains on every context but the one-passage L1; P3 never abstains and calls
        every context conflicting. Curve and heatmap (percent): P1, J2 0 0 0 100 0 0; P2 0 100 100
        100 100 100; P3 0 everywhere. L5 types: P1 and J2 pick the passage read first (gold value
        with gold first, the copy's with the copy first: 50 / 50), P2 100 abstain, P3 100
        conflict-aware. Position bias: every prompt abstains alike in both orders (P2 100, the rest
        0), no discordant pair, McNemar p = 1: "ns". Helpfulness-safety (ESB Eq. 2, 3): over-answer
        P1 (4 L3 + 0 L4 + 3 L5) / 11, P2 0, P3 11/11; accuracy over L1 only (our L2 is
        abstention-acceptable): a0 and a1 scored 1 under every prompt (a2, a3 have no reference), so
        100 each, and P2's four L2 abstentions cost nothing. No figure has a layout problem or a
        quantity its caption leaves unnamed; the tables
        without rows give a note and no data."""
        _, _, _, result = done
        t = result.tables
        abstain = {
            "P1": [0, 0, 0, 100, 0, 0],
            "J2": [0, 0, 0, 100, 0, 0],
            "P2": [0, 100, 100, 100, 100, 100],
            "P3": [0, 0, 0, 0, 0, 0],
        }
        panels = plots.plot_sufficiency_curve(t["curve"]).axes  # one panel per prompt, one model
        drawn = {ax.get_title(): [c.lines[0].get_ydata().tolist() for c in ax.containers] for ax in panels}
        assert drawn == {p: [rates] for p, rates in abstain.items()}
        heat = {ax.get_title(): ax.images[0].get_array().tolist() for ax in plots.plot_prompt_heatmap(t["curve"]).axes}
        assert heat == {p: [rates] for p, rates in abstain.items()}
        want = {
            "P1": {"pick_gold": 50, "pick_conflict": 50},
            "J2": {"pick_gold": 50, "pick_conflict": 50},
            "P2": {"abstain": 100},
            "P3": {"conflict_aware": 100},
        }
        l5 = plots.plot_l5_distribution(t["l5_types"]).axes
        widths = {ax.get_title(): [p.get_width() for p in ax.patches] for ax in l5}
        assert widths == {p: [shares.get(kind, 0) for kind in L5_TYPES] for p, shares in want.items()}
        bias = plots.plot_position_bias(t["position_bias"]).axes
        for ax in bias:
            gold, conflict = ([p.get_width() for p in bars] for bars in ax.containers)
            assert gold == conflict == [100 if ax.get_title() == "P2" else 0]
        assert [s.get_text() for ax in bias for s in ax.texts] == ["ns"] * 4
        trade = plots.plot_helpfulness_safety(t["summary"]).axes
        points = {ax.get_title(): c.lines[0].get_xydata()[0].tolist() for ax in trade for c in ax.containers}
        want_points = {"P1": [700 / 11, 100], "J2": [700 / 11, 100], "P2": [0, 100], "P3": [100, 100]}
        assert sorted(points) == sorted(want_points)
        assert all(points[p] == pytest.approx(xy) for p, xy in want_points.items())
        for fn, frame in (
            (plots.plot_sufficiency_curve, t["curve"]),
            (plots.plot_l5_distribution, t["l5_types"]),
            (plots.plot_prompt_heatmap, t["curve"]),
            (plots.plot_position_bias, t["position_bias"]),
            (plots.plot_helpfulness_safety, t["summary"]),
        ):
            stem = "esb_" + fn.__name__.removeprefix("plot_")
            fig = fn(frame)
            flat_panels.say_flat(fig)  # as the paper stage does before it checks a figure
            assert figure_check.problems(fig, CAPTIONS[stem]) == [], fn.__name__
            (empty,) = fn(frame.clear()).axes  # the table's columns without rows: a note, no data
            assert [x.get_text() for x in empty.texts][0].endswith(" in this run") and not empty.lines, fn.__name__


def test_default_run() -> None:
    """Stage 09 of the default run (`make all`): every declared output written; contexts L1-L4 for
    each answerable question of the seeded subset, L5 in both orders or not at all, T for each
    unanswerable one; one response per context, model, thinking and prompt, each classified or
    counted unclassified in the summary; every response label in the label set, null exactly on the
    flagged ones; and every cache key in the stage's call ledger. That a second run replays every call
    from the cache, byte for byte, is tests/runtime/test_bundle.py::test_replay_into_second_checkout
    (a strict replay of the scripted run, which runs 09); that a cached call starts no local server
    is tests/llm/test_client.py::TestConnect::test_server_started_lazily."""
    cfg = default_run.config_or_skip("evidence")
    assert catalogue.missing(cfg, "evidence") == []
    read = {name: pl.read_parquet(artifact.path(cfg)) for name, artifact in stage.FRAMES.items()}
    instances, judged = read["instances"], read["judged"]
    bench = pl.read_parquet(cfg.stage_dir("verify") / "benchmark.parquet")
    questions = answer.select_questions(bench, cfg.evidence.limit_questions, cfg.seed)
    assert set(instances["question_id"]) <= set(questions["id"])
    levels = instances.group_by("question_id", "answerable").agg(pl.col("level").sort())
    for qid, answerable, found in levels.iter_rows():
        want = [["L1", "L2", "L3", "L4"], ["L1", "L2", "L3", "L4", "L5", "L5"]] if answerable else [["T"]]
        assert found in want, qid
    l5 = instances.filter(pl.col("level") == "L5")
    assert (
        sorted(set(l5["order"])) <= ["conflict_first", "gold_first"]
        and l5.select("question_id", "order").is_unique().all()
    )

    s, switch = stage.Settings.of(cfg), default_run.thinking_switch(cfg)
    answering = [(m, t) for m in s.models for t in answer.thinking_modes(cfg.evidence.thinking, switch(m))]
    assert judged.height == instances.height * len(answering) * len(s.prompts)
    assert judged.select("instance_id", "model", "thinking", "prompt").is_unique().all()
    assert sorted(judged["response_id"]) == sorted(read["responses"]["response_id"])
    assert set(judged["esb_judge"].drop_nulls()) <= set(ESB_LABELS)
    summary = pl.read_csv(stage.TABLES["summary"].path(cfg))
    assert judged["esb_judge"].null_count() == summary["n_unclassified"].sum()
    assert summary["n_responses"].sum() == judged.height
    assert set(judged["label"].drop_nulls()) <= set(LABELS)
    unlabelled = set(judged.filter(pl.col("label").is_null() & ~pl.col("budget_exhausted"))["response_id"])
    flagged = set(judged.filter(pl.col("label_unparsable") | pl.col("label_error").is_not_null())["response_id"])
    assert unlabelled == flagged
    keys = {
        key for name in ("key_values", "responses", "labels", "scores") for key in read[name]["cache_key"].drop_nulls()
    }
    assert keys and keys <= default_run.llm_keys(cfg, "evidence")
