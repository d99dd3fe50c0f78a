"""Tests for declinecraft.construction.verify_stage: stage 04 on a tiny project."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from declinecraft.construction import verify_stage
from tests.support import candidates


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
    rows = [candidates.draft(i, i < 4, target_chunk_id=f"p{i % 3 + 1}" if i < 4 else f"t{i % 2}") for i in range(10)]
    drafts = candidates.frame(rows).with_columns(generator=pl.lit(cfg.generate.generator))
    for other in cfg.generate.generators:
        drafts = pl.concat([drafts, candidates.frame(rows).with_columns(generator=pl.lit(other))])
    folder = cfg.stage_dir("generate")
    folder.mkdir(parents=True, exist_ok=True)
    drafts.write_parquet(folder / "drafts.parquet")
    return cfg


class TestRunStage:
    def test_writes_benchmark_and_audits(self, project: Path) -> None:
        """The stage writes the benchmark, every candidate's fate, the audit tables and the datasheet."""
        cfg = stage_project(project)
        v = candidates.Verifier(lambda f: "NO", lambda f: "YES" if f in {"FACT0", "FACT1", "FACT2"} else "NO")
        out = verify_stage.run(cfg, complete=v, search=candidates.fixed_search)
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
        out = verify_stage.run(
            cfg, complete=candidates.Verifier(lambda f: "NO", lambda f: "NO"), search=candidates.fixed_search
        )
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
        v = candidates.Verifier(lambda f: "NO", lambda f: "NO")
        out = verify_stage.run(cfg, complete=v, search=candidates.fixed_search)
        assert out.benchmark.height == 0 and v.calls == []
        assert set(out.candidates["fate"]) == {"lost_to_format"}
        sheet = (cfg.stage_dir("verify") / "datasheet.md").read_text()
        assert "lost to format: 10/10 (100.0%)" in sheet and f"**{cfg.verify.target_answerable} short**" in sheet
