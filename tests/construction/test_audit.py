"""Tests for declinecraft.construction.audit (App. D, F): style AUC, fate and verifier tables, the datasheet."""

from __future__ import annotations

import math
import random
from types import SimpleNamespace

import polars as pl
import pytest

from declinecraft.construction import audit, generate
from declinecraft.core.config import CorpusParams, GenerateParams, VerifyParams

VOCAB = "craft mine build find where horse armor sword chest cave river stone wood iron gold".split()


def questions(n: int, seed: int = 0, words: int = 8) -> list[str]:
    """``n`` random questions over one shared vocabulary."""
    rng = random.Random(seed)
    return [" ".join(rng.choice(VOCAB) for _ in range(words)) + "?" for _ in range(n)]


class TestFoldPlural:
    @pytest.mark.parametrize(
        ("word", "want"),
        [
            ("Pandas", "panda"),
            ("golems", "golem"),
            ("ponies", "pony"),
            ("boxes", "box"),
            ("torches", "torch"),
            ("glass", "glass"),
            ("cactus", "cactus"),
            ("axis", "axis"),
            ("ore", "ore"),
            ("bus", "bus"),
        ],
    )
    def test_folds(self, word: str, want: str) -> None:
        """Regular plurals fold to their singular; words ending in ss/us/is stay."""
        assert audit.fold_plural(word) == want


class TestTitleWords:
    def test_words_and_novelty(self) -> None:
        """Title words are folded and lower-cased; novelty words and months are never included."""
        words = audit.title_words(["Happy Ghasts", "New Nether", "Update Aquatic", "May"])
        assert words == {"happy", "ghast", "nether", "aquatic"}


class TestStripWords:
    def test_removes_title_words_keeps_novelty(self) -> None:
        """Title words go in any plural form; the rest of the phrasing stays."""
        words = audit.title_words(["Happy Ghast", "Panda"])
        out = audit.strip_words("Can happy ghasts carry pandas to the new base?", words)
        assert out.split() == ["Can", "carry", "to", "the", "new", "base?"]


class TestStyleAuc:
    def test_one_word_separates(self) -> None:
        """Halves that differ by one word are separated almost perfectly."""
        base = questions(200)
        texts = [q + (" zombie" if i % 2 else " skeleton") for i, q in enumerate(base)]
        result = audit.style_auc(texts, [i % 2 == 0 for i in range(200)], seed=0)
        assert result.auc > 0.95 and result.folds == 10 and result.note == ""

    def test_identical_distributions_near_chance(self) -> None:
        """Halves drawn from the same distribution give an AUC near 0.5."""
        result = audit.style_auc(questions(400, seed=1), [i % 2 == 0 for i in range(400)], seed=0)
        assert result.auc == pytest.approx(0.5, abs=0.1)

    def test_seeded(self) -> None:
        """The same seed gives the same AUC, and the seed is used: the folds it draws change the AUC."""
        texts, labels = questions(60, seed=2), [i % 3 == 0 for i in range(60)]
        assert audit.style_auc(texts, labels, seed=4) == audit.style_auc(texts, labels, seed=4)
        aucs = {audit.style_auc(texts, labels, seed=seed).auc for seed in range(4)}
        assert len(aucs) > 1

    def test_fewer_folds_said(self) -> None:
        """With few questions the folds shrink to the smaller half and the note says so."""
        result = audit.style_auc(questions(12), [i < 4 for i in range(12)])
        assert result.folds == 4 and "4 folds instead of 10" in result.note

    @pytest.mark.parametrize(
        ("texts", "labels", "match"),
        [
            (["a b c?", "d e f?"], [True, True], "too few"),
            ([f"{w} {w}s?" for w in ("cow", "pig", "hen", "fox", "bee", "owl")], [True, False] * 3, "no word"),
        ],
    )
    def test_not_computable(self, texts: list[str], labels: list[bool], match: str) -> None:
        """A half too small, or no word in 3+ questions, gives NaN with a note, not an error."""
        result = audit.style_auc(texts, labels)
        assert math.isnan(result.auc) and match in result.note


def bench_frame(n: int = 40) -> pl.DataFrame:
    """A benchmark where unanswerable questions name a C_post item and answerable ones do not."""
    base = questions(n, seed=3)
    return pl.DataFrame(
        {
            "id": [f"q{i}" for i in range(n)],
            "answerable": [i % 2 == 0 for i in range(n)],
            "asked_question": [q + (" horse" if i % 2 == 0 else " happy ghast") for i, q in enumerate(base)],
            "target_title": [f"Page {i % 5}" for i in range(n)],
            "target_chunk_id": [f"c{i % 7}" for i in range(n)],
        }
    )


class TestStyleTable:
    def test_full_and_style_only(self) -> None:
        """Item names separate the full text; removing title words brings the AUC back to chance."""
        table = audit.style_table(bench_frame(), ["Happy Ghast", "Horse"], folds=5, seed=0, min_df=3)
        auc = dict(zip(table["variant"], table["auc"], strict=True))
        assert auc["full"] > 0.95
        assert auc["style_only"] < 0.75


def candidates() -> pl.DataFrame:
    """Hand-built candidates covering each fate and a verifier record."""
    rows = []
    spec = [
        ("kept", "drafted", "NO", "YES"),
        ("rejected_stated", "drafted", "YES", None),
        ("rejected_answers", "drafted", "NO", "NO"),
        ("lost_to_format", "lost_to_format", None, None),
        ("verifier_unparsable", "drafted", "hmm", None),
    ]
    for i, (fate, status, stated, answers) in enumerate(spec):
        row = {c: None for c in generate.DRAFT_SCHEMA}
        row.update(
            id=f"u{i:04d}",
            index=i,
            answerable=False,
            generator="g",
            status=status,
            step="facts",
            reason="not JSON" if status != "drafted" else "",
            verifier="v",
            fate=fate,
            fate_detail="stated: 'hmm'" if fate == "verifier_unparsable" else None,
            stated_raw=stated,
            answers_raw=answers,
            stated=None if stated in (None, "hmm") else stated == "YES",
            target_title="P",
            target_chunk_id="c",
            asked_question="Q?",
        )
        rows.append(row)
    return pl.DataFrame(rows, infer_schema_length=None)


class TestDraftTable:
    def test_counts(self) -> None:
        """Drafts are counted per generator, half, status and step."""
        table = audit.draft_table(candidates())
        assert table["n"].sum() == 5
        assert table.filter(pl.col("status") == "lost_to_format")["step"].to_list() == ["facts"]


class TestFateTable:
    def test_counts_and_shares(self) -> None:
        """Each fate is counted with its share of the half."""
        table = audit.fate_table(candidates())
        assert table["n"].sum() == 5 and table["share"].sum() == pytest.approx(1.0)


class TestFormatTable:
    def test_lost(self) -> None:
        """Only drafts that stopped during generation are listed, by step and reason."""
        table = audit.format_table(candidates())
        assert table.select("status", "step", "reason", "n").rows() == [("lost_to_format", "facts", "not JSON", 1)]


class TestVerifierTable:
    def test_rates(self) -> None:
        """Rejections are counted per check over the candidates that check saw."""
        table = audit.verifier_table(candidates())
        stated = table.filter(pl.col("check") == "stated").row(0, named=True)
        answers = table.filter(pl.col("check") == "answers").row(0, named=True)
        assert (stated["evaluated"], stated["rejected"], stated["unparsable"]) == (4, 1, 1)
        assert stated["rejection_rate"] == pytest.approx(0.25)
        assert (answers["evaluated"], answers["rejected"]) == (2, 1)


class TestSpreadTable:
    def test_per_page(self) -> None:
        """Questions are counted per page: answerable first, most questions first, ties by title."""
        titles = ["B", "A", "B", "C", "B", "A", "D", "E", "D", "E"]
        bench = pl.DataFrame({"answerable": [True] * 6 + [False] * 4, "target_title": titles})
        table = audit.spread_table(bench)
        assert table.rows() == [(True, "B", 3), (True, "A", 2), (True, "C", 1), (False, "D", 2), (False, "E", 2)]


class TestComparisonRow:
    def test_row(self) -> None:
        """A generator's row counts accepted questions, format losses and facts already in C_pre."""
        row = audit.comparison_row(candidates(), audit.StyleAUC(0.6, 5, 1, 1, 3), 0.9)
        assert row["accepted_unanswerable"] == 1 and row["lost_to_format"] == 1
        assert row["fact_in_cpre_pct"] == pytest.approx(100 / 3)
        assert row["hit_at_5_pct"] == pytest.approx(90.0)


class TestGeneratorTable:
    def test_one_row_per_generator(self) -> None:
        """The table has one row per generator, in order."""
        table = audit.generator_table([{"generator": "a", "style_auc": 0.5}, {"generator": "b", "style_auc": 0.7}])
        assert table["generator"].to_list() == ["a", "b"]


class TestDatasheet:
    def test_sections(self) -> None:
        """The datasheet states sources, counts, format losses, audits and limits."""
        cands = candidates().with_columns(
            notes=pl.Series([["scenario: cut to its first 1 sentence(s) (34 words)"], [], [], [], []])
        )
        bench = cands.filter(pl.col("fate") == "kept")
        out = {
            "candidates": cands,
            "benchmark": bench,
            "audit_fates": audit.fate_table(cands),
            "audit_format": audit.format_table(cands),
            "audit_verifier": audit.verifier_table(cands),
            "audit_style": pl.DataFrame({"variant": ["full"], "auc": [0.8]}),
            "audit_retrieval": pl.DataFrame({"audit": ["hit_at_k"], "rate": [0.9]}),
            "audit_review": pl.DataFrame(),
        }
        cfg = SimpleNamespace(
            run="default",
            seed=0,
            corpus=CorpusParams(),
            generate=GenerateParams(),
            verify=VerifyParams(target_unanswerable=3),
        )
        pre = pl.DataFrame({"title": ["A", "A", "B"]})
        text = audit.datasheet(cfg, out, pre=pre, post=pl.DataFrame({"title": ["C"]}))
        for needle in (
            "## Sources",
            "cut-off 2025-03-31",
            "2 pages, 3 chunks",
            "lost to format: 1/5 (20.0%)",
            "1 kept of 3 targeted (**2 short**)",
            "## Known limits",
            "Style AUC",
            "1 scenarios cut back to whole sentences",
            "YES to 1/3 (33.3%) of its Stated checks",
            "YES to 0/0 of its Answers checks",
        ):
            assert needle in text
        assert "Self-verification" not in text
        cfg.verify = VerifyParams(verifier=cfg.generate.generator, self_verification=True)
        assert "Self-verification: the verifier" in audit.datasheet(
            cfg, out, pre=pre, post=pl.DataFrame({"title": ["C"]})
        )
