"""Tests for declinecraft.construction.generate (§3.2): parsing, drawing, the four steps."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from declinecraft.construction import generate
from declinecraft.core.config import GenerateParams
from declinecraft.llm.calls import Reply
from declinecraft.llm.responses import FormatError
from tests.support import generation


def params(**kw: object) -> GenerateParams:
    return GenerateParams(**{"n_answerable": 4, "n_unanswerable": 4, **kw})  # type: ignore[arg-type]


def run(
    model: generation.Scripted, pre: pl.DataFrame | None = None, post: pl.DataFrame | None = None, **kw: object
) -> pl.DataFrame:
    pre = generation.chunk_table(generation.PRE_PAGES, "pre") if pre is None else pre
    post = generation.chunk_table(generation.POST_PAGES, "post") if post is None else post
    return generate.generate_drafts(
        pre, post, params=params(**kw), seed=7, complete=model, search=generation.lexical_search(pre, post)
    )


# --- parsing ----------------------------------------------------------------------------------


class TestParseScenario:
    @pytest.mark.parametrize(
        ("text", "want"),
        [
            ("I am exploring a cave.", "I am exploring a cave."),
            ("Scenario: I am exploring a cave.", "I am exploring a cave."),
            ("’I am exploring a cave.’", "I am exploring a cave."),
            ('**Scenario:** "I am exploring a cave".', "I am exploring a cave."),
        ],
    )
    def test_cleans_labels_and_quotes(self, text: str, want: str) -> None:
        """Labels and surrounding quotes are removed; the scenario's words are kept."""
        assert generate.parse_scenario(Reply(text)) == want

    @pytest.mark.parametrize(
        ("text", "finish", "match"),
        [
            ("", "stop", "empty"),
            ("   \n ", "stop", "empty"),
            (" ".join(["word"] * 30), "stop", "over-long: 30 words"),
            ("I am in a cave and I", "length", "token budget"),
            ("I am in a cave. What now?", "stop", "asks a question"),
        ],
    )
    def test_bad_output_raises(self, text: str, finish: str, match: str) -> None:
        """Empty, over-long, cut-off or questioning scenarios are format errors saying why."""
        with pytest.raises(FormatError, match=match):
            generate.parse_scenario(Reply(text, finish_reason=finish))

    @pytest.mark.parametrize(
        ("text", "finish", "want", "note"),
        [
            (
                "I am in a cave. " + "It is very dark and " * 6 + "cold.",
                "stop",
                "I am in a cave.",
                "cut to its first 1 sentence(s) (36 words)",
            ),
            ("I fish. I have a rod. I sit on a long", "length", "I fish. I have a rod.", "cut off"),
        ],
    )
    def test_trim(self, text: str, finish: str, want: str, note: str) -> None:
        """With trim, an over-long or cut-off scenario keeps its leading whole sentences, noted."""
        notes: list[str] = []
        assert generate.parse_scenario(Reply(text, finish_reason=finish), trim=True, notes=notes) == want
        assert note in notes[0]

    def test_trim_needs_a_sentence(self) -> None:
        """With trim, a first sentence already over the limit is still lost."""
        with pytest.raises(FormatError, match="over-long: 32 words"):
            generate.parse_scenario(Reply(" ".join(["word"] * 31) + ". Short."), trim=True)

    def test_extra_lines_noted(self) -> None:
        """Only the first line is kept, and the note says so."""
        notes: list[str] = []
        assert generate.parse_scenario(Reply("I fish.\nThis scenario is about fishing."), notes=notes) == "I fish."
        assert notes == ["scenario: kept the first of 2 lines"]


class TestParseFacts:
    @pytest.mark.parametrize(
        "text",
        [
            '{"facts": ["A is B.", "C is D."]}',
            '```json\n{"facts": ["A is B.", "C is D."]}\n```',
            'Here you go: {"facts": ["A is B.", "C is D."]} Hope it helps.',
            '["A is B.", "C is D."]',
        ],
    )
    def test_parses_lists(self, text: str) -> None:
        """The fact list is read from plain, fenced, embedded or bare-list JSON."""
        assert generate.parse_facts(Reply(text)) == ["A is B.", "C is D."]

    def test_empty_list_is_valid(self) -> None:
        """An empty list means no new fact, not a format error."""
        assert generate.parse_facts(Reply('{"facts": []}')) == []

    def test_cut_to_max(self) -> None:
        """More than max_facts facts are cut, with a note."""
        notes: list[str] = []
        reply = Reply(json.dumps({"facts": [f"F{i}." for i in range(9)]}))
        facts = generate.parse_facts(reply, max_facts=6, notes=notes)
        assert facts == [f"F{i}." for i in range(6)]
        assert notes and "9 listed" in notes[0]

    @pytest.mark.parametrize(
        ("text", "match"),
        [
            ("", "empty"),
            ("The facts are A and B.", "not JSON"),
            ('{"fact": "A"}', 'no "facts" list'),
            ('{"facts": [1, {"a": 2}]}', "no text"),
        ],
    )
    def test_bad_output_raises(self, text: str, match: str) -> None:
        """Empty, non-JSON, keyless or text-free output is lost to format."""
        with pytest.raises(FormatError, match=match):
            generate.parse_facts(Reply(text))


class TestParseQuestion:
    SCENARIO = "I am exploring a cave."

    def test_plain_question(self) -> None:
        """A single short question is returned as is."""
        assert generate.parse_question(Reply("What mob lives here?"), self.SCENARIO) == "What mob lives here?"

    def test_label_stripped(self) -> None:
        """A 'Question:' label is removed."""
        assert generate.parse_question(Reply("Question: What lives here?"), self.SCENARIO) == "What lives here?"

    def test_repeated_scenario_removed(self) -> None:
        """A copy of the scenario before the question is removed, with a note."""
        notes: list[str] = []
        out = generate.parse_question(Reply("I am exploring a cave. What lives here?"), self.SCENARIO, notes=notes)
        assert out == "What lives here?"
        assert notes == ["question: removed a copy of the scenario"]

    @pytest.mark.parametrize(
        ("text", "finish", "match"),
        [
            ("", "stop", "empty"),
            ("I am exploring a cave.", "stop", "repeats the scenario"),
            ("What lives here? And what do they eat?", "stop", "multi-question: 2"),
            ("Tell me what lives here.", "stop", "no question mark"),
            ("What lives here? (Answer: bats)", "stop", "text after"),
            ("Why " + "very " * 30 + "dark?", "stop", "over-long"),
            ("What lives", "length", "token budget"),
        ],
    )
    def test_bad_output_raises(self, text: str, finish: str, match: str) -> None:
        """Empty, scenario-only, multi-question, unterminated or over-long output is lost."""
        with pytest.raises(FormatError, match=match):
            generate.parse_question(Reply(text, finish_reason=finish), self.SCENARIO)


# --- drawing ----------------------------------------------------------------------------------


class TestCandidateRng:
    def test_same_inputs_same_stream(self) -> None:
        """The stream depends only on (seed, half, index)."""
        a, b = generate.candidate_rng(3, True, 5), generate.candidate_rng(3, True, 5)
        assert a.integers(10**9, size=4).tolist() == b.integers(10**9, size=4).tolist()

    @pytest.mark.parametrize(("other"), [(4, True, 5), (3, False, 5), (3, True, 6)])
    def test_differs_by_each_part(self, other: tuple[int, bool, int]) -> None:
        """Changing the seed, the half or the index changes the stream."""
        a = generate.candidate_rng(3, True, 5).integers(10**9, size=4).tolist()
        assert generate.candidate_rng(*other).integers(10**9, size=4).tolist() != a


class TestCandidateId:
    def test_ids(self) -> None:
        """Ids carry the half and the zero-padded index."""
        assert generate.candidate_id(True, 7) == "a0007"
        assert generate.candidate_id(False, 12) == "u0012"


class TestIsTechnical:
    PATTERNS = GenerateParams().technical_title_patterns

    @pytest.mark.parametrize(
        "title", ["Java Edition 1.21.9", "Commands/give", "Block states", "Horse/DV", "Tutorials/Mining"]
    )
    def test_technical(self, title: str) -> None:
        """Version, command, data and tutorial pages are technical."""
        assert generate.is_technical(title, self.PATTERNS)

    @pytest.mark.parametrize("title", ["Horse", "Copper Golem", "Happy Ghast", "Editions"])
    def test_not_technical(self, title: str) -> None:
        """Game-content pages are not."""
        assert not generate.is_technical(title, self.PATTERNS)


class TestChooseTarget:
    TITLES = {f"c{i}": ("Java Edition 1.0" if i == 1 else f"Page {i}") for i in range(10)}

    def test_excludes_and_draws_top(self) -> None:
        """Technical and excluded chunks never win; the draw covers exactly the top 5 eligible."""
        ranked = [f"c{i}" for i in range(10)]
        seen = set()
        for s in range(200):
            chosen, eligible = generate.choose_target(
                ranked, self.TITLES, np.random.default_rng(s), exclude=["c0"], patterns=[r"Edition"], draw=5
            )
            seen.add(chosen)
            assert eligible == 8
        assert seen == {"c2", "c3", "c4", "c5", "c6"}

    def test_short_pool(self) -> None:
        """A pool of fewer than 5 eligible chunks is drawn from as it is and reported."""
        chosen, eligible = generate.choose_target(
            ["c2", "c3", "c1"], self.TITLES, np.random.default_rng(0), patterns=[r"Edition"]
        )
        assert chosen in {"c2", "c3"} and eligible == 2

    def test_empty_pool(self) -> None:
        """No eligible chunk gives None and a count of 0."""
        rng = np.random.default_rng(0)
        assert generate.choose_target(["c1", "zz"], self.TITLES, rng, patterns=["Edition"]) == (None, 0)


# --- the four steps ---------------------------------------------------------------------------


class TestGenerateDrafts:
    def test_all_steps(self) -> None:
        """Well-formed output drafts every candidate, with all intermediate outputs and keys."""
        drafts = run(generation.good_model())
        assert drafts.height == 8 and set(drafts["status"]) == {"drafted"}
        row = drafts.row(0, named=True)
        assert row["id"] == "a0000" and row["answerable"]
        assert row["question"] == f"{row['scenario']} {row['asked_question']}"
        assert row["fact"] == row["facts"][row["fact_index"]]
        assert all(row[f"{s}_key"] for s in ("scenario", "facts", "question"))
        assert row["target_chunk_id"] not in row["scenario_chunk_ids"]

    def test_comparison_text(self) -> None:
        """Answerable facts are compared with the scenario chunks; unanswerable with C_pre chunks."""
        drafts = run(generation.good_model())
        for row in drafts.iter_rows(named=True):
            if row["answerable"]:
                assert row["comparison_chunk_ids"] == row["scenario_chunk_ids"]
            else:
                assert len(row["comparison_chunk_ids"]) == 3
                assert all(c.startswith("pre-") for c in row["comparison_chunk_ids"])
                assert row["target_chunk_id"].startswith("post-")
                assert row["target_title"] != "Java Edition 1.21.9"

    def test_reproducible_and_stable(self) -> None:
        """Same seed, same drafts; more candidates leave the earlier ones unchanged."""
        small, again = run(generation.good_model()), run(generation.good_model())
        assert small.equals(again)
        big = run(generation.good_model(), n_answerable=6, n_unanswerable=5)
        cols = ["id", "scenario_chunk_ids", "target_chunk_id", "fact_index", "question"]
        assert big.filter(pl.col("id").is_in(small["id"].to_list())).select(cols).equals(small.select(cols))

    @pytest.mark.parametrize(
        ("step", "reply", "status", "reason"),
        [
            ("generate_scenario", Reply(""), "lost_to_format", "empty output"),
            ("generate_scenario", Reply("x " * 40), "lost_to_format", "over-long: 40 words"),
            ("generate_facts", Reply("no json here"), "lost_to_format", "not JSON"),
            ("generate_facts", Reply('{"facts": []}'), "no_facts", "no new fact"),
            ("generate_question", Reply("Why? How?"), "lost_to_format", "multi-question"),
            ("generate_question", Reply("", error="HTTP 500"), "llm_error", "HTTP 500"),
        ],
    )
    def test_bad_output_counted(self, step: str, reply: Reply, status: str, reason: str) -> None:
        """Bad output at any step ends the candidate with a status and reason, never a crash."""
        drafts = run(generation.good_model(**{step: lambda f: reply}))
        assert drafts.height == 8
        assert set(drafts["status"]) == {status}
        assert all(reason in r for r in drafts["reason"])
        assert set(drafts["step"]) == {step.removeprefix("generate_")}

    def test_trim_scenarios(self) -> None:
        """trim_scenarios keeps over-long scenarios' leading sentences (noted) instead of losing them."""
        long = generation.good_model(
            generate_scenario=lambda f: "I sit by a lake. " + "The water is calm and blue " * 5
        )
        assert set(run(long)["status"]) == {"lost_to_format"}
        drafts = run(long, trim_scenarios=True)
        assert set(drafts["status"]) == {"drafted"} and set(drafts["scenario"]) == {"I sit by a lake."}
        assert all("cut to its first 1 sentence(s)" in n[0] for n in drafts["notes"])

    def test_no_eligible_target(self) -> None:
        """An empty C_post (or one of technical pages only) gives no_target, not a crash."""
        post = generation.chunk_table(["Java Edition 1.21.9"], "post")
        drafts = run(generation.good_model(), post=post)
        unans = drafts.filter(~pl.col("answerable"))
        assert set(unans["status"]) == {"no_target"}
        assert set(drafts.filter(pl.col("answerable"))["status"]) == {"drafted"}

    def test_empty_chunks_skipped(self) -> None:
        """Chunks without text (a page that left nothing) are never shown to the generator."""
        pre = generation.chunk_table(generation.PRE_PAGES, "pre").with_columns(
            text=pl.when(pl.col("title") == "Horse").then(pl.lit(" ")).otherwise("text")
        )
        model = generation.good_model()
        drafts = run(model, pre=pre)
        assert not any(c.startswith("pre-horse") for ids in drafts["scenario_chunk_ids"] for c in ids)

    def test_prompt_chunk_cap(self) -> None:
        """prompt_chunk_chars cuts scenario and comparison chunks, never the target chunk."""
        model = generation.good_model()
        run(model, prompt_chunk_chars=20)
        by_prompt = {c.prompt: c for c in model.calls}
        assert all(len(part) <= 20 for part in by_prompt["generate_scenario"].fields["context"].split("\n\n"))
        assert all(len(part) <= 20 for part in by_prompt["generate_facts"].fields["old"].split("\n\n"))
        assert len(by_prompt["generate_facts"].fields["new"]) > 20  # the target chunk stays whole


class TestKnownIds:
    def test_passes_known(self) -> None:
        """Known ids come back in order."""
        assert generate.known_ids(["b", "a"], {"a": "x", "b": "y"}, "here") == ["b", "a"]

    def test_unknown_is_error(self) -> None:
        """An id the corpus does not hold is an error naming the place and the id."""
        with pytest.raises(ValueError, match=r"u0001: retrieved chunk 'zz' .* rebuild 02_index"):
            generate.known_ids(["zz"], {"a": "x"}, "u0001")
