"""Tests of verification and assembly (§3.3, App. D): cue filter, verdicts, checks, review, caps."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from declinecraft.construction import generate, verify, verify_stage
from declinecraft.core.config import VerifyParams
from declinecraft.llm.calls import Call, Reply

# --- cue filter -------------------------------------------------------------------------------


class TestFindCues:
    @pytest.mark.parametrize(
        ("word", "cue"),
        [
            ("wonder", "wonder"),
            ("wonders", "wonder"),
            ("wondered", "wonder"),
            ("wondering", "wonder"),
            ("suddenly", "suddenly"),
            ("notice", "notice"),
            ("noticed", "notice"),
            ("notices", "notice"),
            ("heard", "heard"),
            ("announced", "announced"),
            ("announcement", "announcement"),
            ("announcements", "announcement"),
            ("new", "new"),
            ("New", "new"),
            ("newly", "new"),
            ("brand-new", "new"),
            ("recent", "recent"),
            ("recently", "recent"),
            ("latest", "latest"),
            ("update", "update"),
            ("updated", "update"),
            ("updates", "update"),
            ("added", "added"),
            ("introduced", "introduced"),
            ("change", "change"),
            ("changed", "change"),
            ("changes", "change"),
            ("no longer", "no longer"),
            ("nowadays", "nowadays"),
            ("these days", "these days"),
            ("now that", "now that"),
            ("Minecraft Live", "Minecraft Live"),
            ("snapshot", "snapshot"),
            ("snapshots", "snapshot"),
            ("pre-release", "pre-release"),
            ("prerelease", "pre-release"),
            ("beta build", "beta build"),
            ("2025", "year 20xx"),
            ("2031", "year 20xx"),
            ("in January", "month name"),
            ("in May", "month name"),
            ("September", "month name"),
        ],
    )
    def test_each_cue(self, word: str, cue: str) -> None:
        """Every word of Appendix D's list, in each listed form, is caught inside a question."""
        assert cue in verify.find_cues(f"Can my horse wear it {word} when riding?")

    @pytest.mark.parametrize(
        "sentence",
        [
            "Is renewable energy useful for my farm?",
            "Where can I find news about villagers?",
            "I knew the recipe; what does it need?",
            "How do I exchange emeralds?",
            "Is the sword unchanged?",
            "May I ride the horse into the cave?",
            "Will my army march past the village?",
            "Does it drop 1999 emeralds?",
            "Does it need 20000 blocks?",
            "Is the wood longer lasting?",
            "How many arrows can a skeleton shoot?",
            "Which block does the golem carry?",
        ],
    )
    def test_clean_sentences(self, sentence: str) -> None:
        """Words that merely contain a cue, modal 'May', verbs 'march' and non-years do not match."""
        assert verify.find_cues(sentence) == []

    def test_several_cues_once_each(self) -> None:
        """Each cue is reported once, in order of appearance."""
        assert verify.find_cues("Was the new block added in March 2025, new again?") == [
            "new",
            "added",
            "year 20xx",
            "month name",
        ]


# --- verifier ---------------------------------------------------------------------------------


class TestParseVerdict:
    @pytest.mark.parametrize(
        ("text", "want"),
        [
            ("YES", True),
            ("no", False),
            ("**Yes.**", True),
            ("NO, it does not.", False),
            ("The answer is yes", True),
            ("maybe", None),
            ("", None),
            (None, None),
            ("yes or no", True),
            ("It is unclear: Yes and No both apply", None),
        ],
    )
    def test_verdicts(self, text: str | None, want: bool | None) -> None:
        """The first word decides; otherwise exactly one of YES/NO must appear."""
        assert verify.parse_verdict(text) is want


def draft(i: int, answerable: bool, **kw: object) -> dict[str, object]:
    """A drafted candidate with every column of generate.DRAFT_SCHEMA."""
    row: dict[str, object] = {c: None for c in generate.DRAFT_SCHEMA}
    half = "a" if answerable else "u"
    row.update(
        id=f"{half}{i:04d}",
        index=i,
        answerable=answerable,
        generator="gen",
        status="drafted",
        step="",
        reason="",
        notes=[],
        scenario_chunk_ids=["p1", "p2", "p3"],
        scenario=f"I ride horse {i}.",
        target_chunk_id=f"t{i}",
        target_title=f"Page {i}",
        target_url=f"https://wiki/Page_{i}",
        comparison_chunk_ids=["p1"],
        fact=f"FACT{i}",
        asked_question=f"What does thing {i} do?",
    )
    row.update(kw)
    row["question"] = f"{row['scenario']} {row['asked_question']}"
    return row


def frame(rows: list[dict[str, object]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=generate.DRAFT_SCHEMA)


class Verifier:
    """A fake verifier: ``stated``/``answers`` map a fact to the text it replies."""

    def __init__(self, stated: Callable[[str], str], answers: Callable[[str], str]) -> None:
        self.rules = {"verify_stated": stated, "verify_answers": answers}
        self.calls: list[Call] = []

    def __call__(self, calls: list[Call]) -> list[Reply]:
        self.calls.extend(calls)
        out = []
        for c in calls:
            text = self.rules[c.prompt](c.fields.get("fact") or c.fields["answer"])
            out.append(
                Reply("", error=text[6:]) if text.startswith("ERROR:") else Reply(text, cache_key=f"k-{c.prompt}")
            )
        return out


def fixed_search(queries: list[str], where: str, k: int) -> list[list[str]]:
    return [["p1", "p2"][:k] for _ in queries]


CHUNKS = {"p1": "[Page: A] alpha", "p2": "[Page: B] beta", "p3": "[Page: C] gamma"}


def check(rows: list[dict[str, object]], verifier: Verifier, **kw: object) -> pl.DataFrame:
    return verify.verify_drafts(
        frame(rows), chunk_text=CHUNKS, complete=verifier, search=fixed_search, params=VerifyParams(**kw)
    )  # type: ignore[arg-type]


class TestVerifyDrafts:
    @pytest.mark.parametrize(
        ("answerable", "stated", "answers", "fate"),
        [
            (True, "NO", "YES", "passed"),
            (True, "YES", "YES", "rejected_stated"),
            (True, "NO", "NO", "rejected_answers"),
            (False, "NO", "NO", "passed"),
            (False, "YES", "NO", "rejected_stated"),
            (False, "NO", "YES", "rejected_answers"),
        ],
    )
    def test_rules(self, answerable: bool, stated: str, answers: str, fate: str) -> None:
        """Answerable needs Stated=NO and Answers=YES; unanswerable needs both NO."""
        out = check([draft(0, answerable)], Verifier(lambda f: stated, lambda f: answers))
        assert out["fate"][0] == fate

    def test_contexts(self) -> None:
        """Answerable Stated reads the scenario; unanswerable Stated and Answers read R+ chunks."""
        v = Verifier(lambda f: "NO", lambda f: "NO")
        out = check([draft(0, True), draft(1, False)], v, context_chars=3)
        stated = [c for c in v.calls if c.prompt == "verify_stated"]
        assert stated[0].fields["context"] == "I ride horse 0."
        assert stated[1].fields["context"] == "[Pa\n\n[Pa"
        assert out["stated_context_ids"].to_list() == [None, ["p1", "p2"]]
        answers = [c for c in v.calls if c.prompt == "verify_answers"]
        assert [c.fields["question"] for c in answers] == [f"I ride horse {i}. What does thing {i} do?" for i in (0, 1)]
        assert out["answers_context_ids"].to_list() == [["p1", "p2"], ["p1", "p2"]]

    def test_stops_after_first_rejection(self) -> None:
        """A candidate rejected by Stated is not sent to Answers."""
        v = Verifier(lambda f: "YES", lambda f: "YES")
        check([draft(0, False)], v)
        assert [c.prompt for c in v.calls] == ["verify_stated"]

    def test_cue_filtered_skips_verifier(self) -> None:
        """A question with a novelty cue is cue_filtered and costs no verifier call."""
        v = Verifier(lambda f: "NO", lambda f: "NO")
        out = check([draft(0, False, asked_question="What does the new golem do?")], v)
        assert out["fate"][0] == "cue_filtered" and out["cues"][0].to_list() == ["new"]
        assert v.calls == []

    def test_unparsable_and_errors(self) -> None:
        """Verdicts that say neither YES nor NO, and failed calls, are their own fates."""
        v = Verifier(lambda f: "perhaps" if f == "FACT0" else "ERROR:HTTP 500", lambda f: "NO")
        out = check([draft(0, False), draft(1, False)], v)
        assert out["fate"].to_list() == ["verifier_unparsable", "verifier_error"]
        assert out["fate_detail"][1] == "stated: HTTP 500"

    def test_generation_failures_keep_status(self) -> None:
        """Candidates that were not drafted keep their generation status as fate."""
        lost = draft(0, True, status="lost_to_format", asked_question=None, fact=None)
        out = check([lost], Verifier(lambda f: "NO", lambda f: "YES"))
        assert out["fate"][0] == "lost_to_format"


# --- review and assembly ----------------------------------------------------------------------


class TestLoadReview:
    def test_missing_file(self, tmp_path: Path) -> None:
        """No review file means no drops."""
        assert verify.load_review(tmp_path / "none.yaml", "default") == {}

    def test_reads_run(self, tmp_path: Path) -> None:
        """Entries of the asked run are returned by id; other runs are ignored."""
        path = tmp_path / "r.yaml"
        path.write_text(
            "runs:\n  default:\n    - {id: u0001, reason: fake item, question: 'Q?'}\n  other:\n"
            "    - {id: u0002, reason: x}\n"
        )
        assert verify.load_review(path, "default") == {"u0001": {"reason": "fake item", "question": "Q?"}}

    @pytest.mark.parametrize(
        ("text", "match"),
        [
            ("- a\n", "runs:"),
            ("runs:\n  default:\n    - {id: u1}\n", r"runs\.default\[0\] needs"),
            ("runs:\n  default:\n    - {id: u1, reason: r}\n    - {id: u1, reason: r}\n", "listed twice"),
            ("runs: [\n", "not valid YAML"),
        ],
    )
    def test_malformed(self, tmp_path: Path, text: str, match: str) -> None:
        """A malformed file is an error naming the file and entry."""
        path = tmp_path / "r.yaml"
        path.write_text(text)
        with pytest.raises(ValueError, match=match):
            verify.load_review(path, "default")


def passed(rows: list[dict[str, object]]) -> pl.DataFrame:
    return frame(rows).with_columns(fate=pl.lit("passed"))


class TestAssemble:
    def test_targets_and_reserve(self) -> None:
        """Each half is filled in index order up to its target; the rest stay in reserve."""
        rows = [draft(i, True) for i in range(4)] + [draft(i, False) for i in range(3)]
        out = verify.assemble(passed(rows), target_answerable=2, target_unanswerable=3)
        assert out["fate"].to_list() == ["kept", "kept", "reserve", "reserve", "kept", "kept", "kept"]

    def test_caps(self) -> None:
        """At most max_per_chunk questions per chunk and max_per_page per page."""
        rows = [draft(i, False, target_chunk_id="c1" if i < 3 else f"c{i}", target_title="P") for i in range(6)]
        out = verify.assemble(passed(rows), target_answerable=0, target_unanswerable=6, max_per_chunk=2, max_per_page=4)
        assert out["fate"].to_list() == ["kept", "kept", "capped_chunk", "kept", "kept", "capped_page"]

    def test_only_passed_compete(self) -> None:
        """Rejected candidates keep their fate and use no quota."""
        cands = passed([draft(i, True) for i in range(3)]).with_columns(
            fate=pl.when(pl.col("index") == 0).then(pl.lit("rejected_stated")).otherwise("fate")
        )
        out = verify.assemble(cands, target_answerable=2, target_unanswerable=0)
        assert out["fate"].to_list() == ["rejected_stated", "kept", "kept"]

    def test_review_replaces(self) -> None:
        """A reviewed drop is replaced by the next unused candidate that passed, and marked."""
        rows = [draft(i, False) for i in range(4)]
        review = {"u0001": {"reason": "fake item", "question": "What does thing 1 do?"}}
        out = verify.assemble(passed(rows), target_answerable=0, target_unanswerable=2, review=review)
        assert out["fate"].to_list() == ["kept", "manual_review", "kept", "reserve"]
        assert out["replacement"].to_list() == [False, False, True, False]
        assert out["review_reason"][1] == "fake item"

    @pytest.mark.parametrize(
        ("review", "match"),
        [
            ({"u0009": {"reason": "r", "question": ""}}, "'u0009' is not a candidate"),
            ({"u0001": {"reason": "r", "question": "Other?"}}, "review it again"),
        ],
    )
    def test_stale_review(self, review: dict[str, dict[str, str]], match: str) -> None:
        """A review entry for an unknown id or a changed question is an error, not a silent drop."""
        with pytest.raises(ValueError, match=match):
            verify.assemble(
                passed([draft(i, False) for i in range(3)]), target_answerable=0, target_unanswerable=2, review=review
            )


class TestBenchmark:
    def test_kept_only(self) -> None:
        """The benchmark holds the kept candidates, answerable first, with the declared columns."""
        rows = [draft(0, False), draft(1, True), draft(0, True)]
        cands = verify.assemble(
            passed(rows).with_columns(
                verifier=pl.lit("v"),
                stated_key=pl.lit("s"),
                answers_key=pl.lit("a"),
                stated_raw=pl.lit("NO"),
                answers_raw=pl.lit("YES"),
            ),
            target_answerable=1,
            target_unanswerable=1,
        )
        bench = verify.benchmark(cands)
        assert bench.columns == list(verify.BENCHMARK_COLUMNS)
        assert bench["id"].to_list() == ["a0000", "u0000"]


# --- the stage --------------------------------------------------------------------------------


def stage_project(project: Path, name: str = "t", extra: str = "") -> object:
    """A project whose corpus and generate stages are written: 6 unanswerable, 4 answerable drafts."""
    from declinecraft.core import config

    targets = "verify:\n  target_answerable: 6\n  target_unanswerable: 6\n"
    (project / "params" / f"{name}.yaml").write_text(f"base: default\n{extra or targets}")
    cfg = config.load(project / "params" / f"{name}.yaml")
    corpus = cfg.stage_dir("corpus")
    corpus.mkdir(parents=True, exist_ok=True)
    for half, ids in (("pre", ["p1", "p2", "p3"]), ("post", ["t0", "t1"])):
        pl.DataFrame(
            {
                "chunk_id": ids,
                "title": [f"T {i}" for i in ids],
                "text": [f"[Page: T {i}] x" for i in ids],
                "url": ids,
                "revision_id": [1] * len(ids),
                "timestamp": ["2025"] * len(ids),
                "corpus": [half] * len(ids),
            }
        ).write_parquet(corpus / f"chunks_{half}.parquet")
    rows = [draft(i, i < 4, target_chunk_id=f"p{i % 3 + 1}" if i < 4 else f"t{i % 2}") for i in range(10)]
    drafts = frame(rows).with_columns(generator=pl.lit(cfg.generate.generator))
    for other in cfg.generate.generators:
        drafts = pl.concat([drafts, frame(rows).with_columns(generator=pl.lit(other))])
    folder = cfg.stage_dir("generate")
    folder.mkdir(parents=True, exist_ok=True)
    drafts.write_parquet(folder / "drafts.parquet")
    return cfg


class TestRunStage:
    def test_writes_benchmark_and_audits(self, project: Path) -> None:
        """The stage writes the benchmark, every candidate's fate, the audit tables and the datasheet."""
        cfg = stage_project(project)
        v = Verifier(lambda f: "NO", lambda f: "YES" if f in {"FACT0", "FACT1", "FACT2"} else "NO")
        out = verify_stage.run(cfg, complete=v, search=fixed_search)
        folder = cfg.stage_dir("verify")
        bench = pl.read_parquet(folder / "benchmark.parquet")
        assert bench.height == pl.read_ndjson(folder / "benchmark.jsonl").height == 3 + 4
        assert bench["id"].to_list()[:3] == ["a0000", "a0001", "a0002"]
        cands = pl.read_parquet(folder / "candidates.parquet")
        fates = dict(zip(cands["id"], cands["fate"], strict=True))
        assert cands.height == 10 and fates["a0003"] == "rejected_answers"
        assert [fates[f"u{i:04d}"] for i in range(4, 10)] == ["kept"] * 4 + ["capped_chunk"] * 2
        for name in ("fates", "format", "verifier", "style", "retrieval", "pages", "chunks", "review"):
            assert (folder / f"audit_{name}.csv").is_file()
        retrieval = out.audits["audit_retrieval"].row(0, named=True)
        assert (retrieval["audit"], retrieval["n"], retrieval["hits"]) == ("hit_at_k", 3, 2)
        assert "## Known limits" in (folder / "datasheet.md").read_text()
        assert not (folder / "audit_generators.csv").exists()

    def test_generator_comparison(self, project: Path) -> None:
        """Listing several generators adds Table 9: one row per generator, same verifier."""
        extra = (
            "generate:\n  generators: [other-gen]\nverify:\n  comparison_answerable: 2\n  comparison_unanswerable: 6\n"
        )
        cfg = stage_project(project, "cmp", extra)
        out = verify_stage.run(cfg, complete=Verifier(lambda f: "NO", lambda f: "NO"), search=fixed_search)
        table = out.audits["audit_generators"]
        assert table["generator"].to_list() == ["qwen2.5-coder-1.5b", "other-gen"]
        assert table["accepted_unanswerable"].to_list() == [4, 4]
        assert (cfg.stage_dir("verify") / "audit_generators.csv").is_file()

    def test_nothing_survives(self, project: Path) -> None:
        """When every draft was lost, the stage still writes an empty benchmark and says so."""
        cfg = stage_project(project)
        path = cfg.stage_dir("generate") / "drafts.parquet"
        lost = pl.read_parquet(path).with_columns(status=pl.lit("lost_to_format"), reason=pl.lit("not JSON"))
        lost.write_parquet(path)
        v = Verifier(lambda f: "NO", lambda f: "NO")
        out = verify_stage.run(cfg, complete=v, search=fixed_search)
        assert out.benchmark.height == 0 and v.calls == []
        assert set(out.candidates["fate"]) == {"lost_to_format"}
        sheet = (cfg.stage_dir("verify") / "datasheet.md").read_text()
        assert "lost to format: 10/10 (100.0%)" in sheet and f"**{cfg.verify.target_answerable} short**" in sheet
