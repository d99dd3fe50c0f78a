"""Tests for declinecraft.construction.verify (§3.3, App. D): cue filter, verdicts, checks, review, caps."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from declinecraft.construction import verify
from declinecraft.core.config import VerifyParams
from tests.support import candidates

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


CHUNKS = {"p1": "[Page: A] alpha", "p2": "[Page: B] beta", "p3": "[Page: C] gamma"}


def check(rows: list[dict[str, object]], verifier: candidates.Verifier, **kw: object) -> pl.DataFrame:
    return verify.verify_drafts(
        candidates.frame(rows),
        chunk_text=CHUNKS,
        complete=verifier,
        search=candidates.fixed_search,
        params=VerifyParams(**kw),
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
        out = check([candidates.draft(0, answerable)], candidates.Verifier(lambda f: stated, lambda f: answers))
        assert out["fate"][0] == fate

    def test_contexts(self) -> None:
        """Answerable Stated reads the scenario; unanswerable Stated and Answers read R+ chunks."""
        v = candidates.Verifier(lambda f: "NO", lambda f: "NO")
        out = check([candidates.draft(0, True), candidates.draft(1, False)], v, context_chars=3)
        stated = [c for c in v.calls if c.prompt == "verify_stated"]
        assert stated[0].fields["context"] == "I ride horse 0."
        assert stated[1].fields["context"] == "[Pa\n\n[Pa"
        assert out["stated_context_ids"].to_list() == [None, ["p1", "p2"]]
        answers = [c for c in v.calls if c.prompt == "verify_answers"]
        assert [c.fields["question"] for c in answers] == [f"I ride horse {i}. What does thing {i} do?" for i in (0, 1)]
        assert out["answers_context_ids"].to_list() == [["p1", "p2"], ["p1", "p2"]]

    def test_stops_after_first_rejection(self) -> None:
        """A candidate rejected by Stated is not sent to Answers."""
        v = candidates.Verifier(lambda f: "YES", lambda f: "YES")
        check([candidates.draft(0, False)], v)
        assert [c.prompt for c in v.calls] == ["verify_stated"]

    def test_cue_filtered_skips_verifier(self) -> None:
        """A question with a novelty cue is cue_filtered and costs no verifier call."""
        v = candidates.Verifier(lambda f: "NO", lambda f: "NO")
        out = check([candidates.draft(0, False, asked_question="What does the new golem do?")], v)
        assert out["fate"][0] == "cue_filtered" and out["cues"][0].to_list() == ["new"]
        assert v.calls == []

    def test_unparsable_and_errors(self) -> None:
        """Verdicts that say neither YES nor NO, and failed calls, are their own fates."""
        v = candidates.Verifier(lambda f: "perhaps" if f == "FACT0" else "ERROR:HTTP 500", lambda f: "NO")
        out = check([candidates.draft(0, False), candidates.draft(1, False)], v)
        assert out["fate"].to_list() == ["verifier_unparsable", "verifier_error"]
        assert out["fate_detail"][1] == "stated: HTTP 500"

    def test_generation_failures_keep_status(self) -> None:
        """Candidates that were not drafted keep their generation status as fate."""
        lost = candidates.draft(0, True, status="lost_to_format", asked_question=None, fact=None)
        out = check([lost], candidates.Verifier(lambda f: "NO", lambda f: "YES"))
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
    return candidates.frame(rows).with_columns(fate=pl.lit("passed"))


class TestAssemble:
    def test_targets_and_reserve(self) -> None:
        """Each half is filled in index order up to its target; the rest stay in reserve."""
        rows = [candidates.draft(i, True) for i in range(4)] + [candidates.draft(i, False) for i in range(3)]
        out = verify.assemble(passed(rows), target_answerable=2, target_unanswerable=3)
        assert out["fate"].to_list() == ["kept", "kept", "reserve", "reserve", "kept", "kept", "kept"]

    def test_caps(self) -> None:
        """At most max_per_chunk questions per chunk and max_per_page per page."""
        rows = [
            candidates.draft(i, False, target_chunk_id="c1" if i < 3 else f"c{i}", target_title="P") for i in range(6)
        ]
        out = verify.assemble(passed(rows), target_answerable=0, target_unanswerable=6, max_per_chunk=2, max_per_page=4)
        assert out["fate"].to_list() == ["kept", "kept", "capped_chunk", "kept", "kept", "capped_page"]

    def test_only_passed_compete(self) -> None:
        """Rejected candidates keep their fate and use no quota."""
        cands = passed([candidates.draft(i, True) for i in range(3)]).with_columns(
            fate=pl.when(pl.col("index") == 0).then(pl.lit("rejected_stated")).otherwise("fate")
        )
        out = verify.assemble(cands, target_answerable=2, target_unanswerable=0)
        assert out["fate"].to_list() == ["rejected_stated", "kept", "kept"]

    def test_review_replaces(self) -> None:
        """A reviewed drop is replaced by the next unused candidate that passed, and marked."""
        rows = [candidates.draft(i, False) for i in range(4)]
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
                passed([candidates.draft(i, False) for i in range(3)]),
                target_answerable=0,
                target_unanswerable=2,
                review=review,
            )


class TestBenchmark:
    def test_kept_only(self) -> None:
        """The benchmark holds the kept candidates, answerable first, with the declared columns."""
        rows = [candidates.draft(0, False), candidates.draft(1, True), candidates.draft(0, True)]
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
