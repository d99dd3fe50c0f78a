"""Fault suite, fast part: damaged files and bad input give a clear error naming the file and the
record (or a counted outcome), never a silent fresh start and never a deep library traceback."""

from __future__ import annotations

import errno
import re
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
import yaml

from declinecraft.core import artifacts, config, paths
from declinecraft.corpus import corpora, wiki
from declinecraft.evaluation import judge
from declinecraft.llm import cache
from declinecraft.llm.calls import Reply
from tests.support import projects

pytestmark = pytest.mark.faults


HEADER = (
    '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" version="0.11">\n'
    '<siteinfo><namespaces><namespace key="0" /></namespaces></siteinfo>\n'
)


TEXT = "The block glows in the dark and can be mined with any pickaxe. " * 6


def page(title: str, text: str = TEXT, rev: int = 1) -> str:
    body = f'<text xml:space="preserve">{text}</text>' if text else "<text/>"
    return (
        f"<page><title>{title}</title><ns>0</ns><revision><id>{rev}</id>"
        f"<timestamp>2024-01-01T00:00:00Z</timestamp>{body}</revision></page>\n"
    )


class TestDump:
    def test_truncated_mid_page(self, tmp_path: Path) -> None:
        """An export cut inside a page: DumpError naming the file and the last complete page."""
        whole = HEADER + page("Lantern") + page("Torch") + "</mediawiki>\n"
        cut = tmp_path / "cut.xml"
        cut.write_text(whole[: whole.index("Torch") + 40], encoding="utf-8")
        with pytest.raises(
            wiki.DumpError, match=r"cut\.xml: malformed or truncated XML .*last complete page: 'Lantern'"
        ):
            list(wiki.read_dump(cut))

    def test_not_utf8(self, tmp_path: Path) -> None:
        """Latin-1 bytes in an export that declares no encoding: DumpError naming the line, the bytes
        and the encoding (UTF-8, XML's default); declared as ISO-8859-1, the same bytes read fine."""
        body = HEADER + page("Lantern") + page("Caf\u00e9", text="Caf\u00e9 au lait. " * 20) + "</mediawiki>\n"
        dump = tmp_path / "latin.xml"
        dump.write_bytes(body.encode("latin-1"))
        with pytest.raises(
            wiki.DumpError,
            match=r"latin\.xml: malformed .*Line 4 holds bytes that are not UTF-8 "
            r"\(b'\\xe9' at byte \d+ of the line; UTF-8 is XML's default, as it declares none\)",
        ):
            list(wiki.read_dump(dump))
        dump.write_bytes(b'<?xml version="1.0" encoding="ISO-8859-1"?>\n' + body.encode("latin-1"))
        assert [p.title for p in wiki.read_dump(dump)] == ["Lantern", "Caf\u00e9"]

    def test_duplicated_page(self, tmp_path: Path) -> None:
        """One title in two <page> elements: DumpError naming the file and the title."""
        dump = tmp_path / "dup.xml"
        dump.write_text(HEADER + page("Lantern") + page("Torch", rev=2) + page("Lantern", rev=3) + "</mediawiki>\n")
        with pytest.raises(wiki.DumpError, match=r"dup\.xml: page 'Lantern' occurs twice"):
            list(wiki.read_dump(dump))

    def test_empty_text_is_a_counted_drop(self, tmp_path: Path) -> None:
        """An empty <text/> is read as '' and counted as an 'empty page' drop, not lost or fatal."""
        dump = tmp_path / "empty.xml"
        dump.write_text(HEADER + page("Lantern") + page("Blank", text="") + "</mediawiki>\n")
        built = corpora.build(wiki.read_dump(dump), "2025-03-31")
        assert built.pre["title"].to_list() == ["Lantern"]
        assert built.dropped.filter(pl.col("title") == "Blank")["reason"].to_list() == ["empty page"]


def check(params: Path) -> subprocess.CompletedProcess[str]:
    """`make check-params` (the same entry point Make runs before any stage)."""
    return subprocess.run(
        [sys.executable, "-m", "declinecraft.core.config", "check", str(params)],
        capture_output=True,
        text=True,
        cwd=params.parent,
    )


class TestParams:
    @pytest.mark.parametrize(
        ("data", "message"),
        [
            ({"base": "default", "answer": {"k": "five"}}, r"bad\.yaml: answer\.k: expected an integer, got 'five'"),
            (
                {"base": "default", "answer": {"models": ["no-such-model"]}},
                r"bad\.yaml: model 'no-such-model' is not in .*models\.yaml",
            ),
            ({"base": "bad"}, r"'base' inheritance cycle"),
        ],
        ids=["wrong-type", "unknown-model", "base-cycle"],
    )
    def test_clear_error(self, tmp_path: Path, data: dict, message: str) -> None:
        """A wrong type, an unknown model id and a base cycle: one line naming file and key, exit 1."""
        project = projects.copy_project(tmp_path / "p")
        params = project / "params" / "bad.yaml"
        params.write_text(yaml.safe_dump(data))
        done = check(params)
        assert done.returncode == 1 and "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
        assert re.search(message, done.stderr), done.stderr

    def test_shipped_params_name_known_models(self, root: Path) -> None:
        """Every shipped run names only models of its models file."""
        for name in ("default", "faults", "paper", "k10", "generators"):
            config.check_models(config.load(root / "params" / f"{name}.yaml"))


class TestBenchmark:
    def bench(self, tmp_path: Path, **change: list) -> config.RunConfig:
        cfg = config.load(projects.copy_project(tmp_path / "p") / "params" / "default.yaml")
        frame = pl.DataFrame(
            {
                "id": ["a1", "a2"],
                "answerable": [True, False],
                "asked_question": ["Why?", "How?"],
                "question": ["I mine. Why?", "I build. How?"],
                "target_chunk_id": ["c1", "c2"],
                "scenario_chunk_ids": [["c3"], ["c4"]],
                **change,
            }
        )
        cfg.stage_dir("verify").mkdir(parents=True)
        frame.write_parquet(cfg.stage_dir("verify") / "benchmark.parquet")
        return cfg

    def test_valid(self, tmp_path: Path) -> None:
        """A well-formed benchmark reads back unchanged."""
        assert artifacts.read_benchmark(self.bench(tmp_path))["id"].to_list() == ["a1", "a2"]

    @pytest.mark.parametrize(
        ("change", "message"),
        [
            ({"question": ["I mine. Why?", "  "]}, r"benchmark\.parquet: id 'a2' has an empty question"),
            ({"id": ["a1", "a1"]}, r"benchmark\.parquet: id 'a1' occurs 2 times"),
        ],
        ids=["empty-question", "duplicate-id"],
    )
    def test_bad_record(self, tmp_path: Path, change: dict, message: str) -> None:
        """An empty question or a repeated id: ValueError naming the file and the record."""
        with pytest.raises(ValueError, match=message):
            artifacts.read_benchmark(self.bench(tmp_path, **change))


class TestEmptyJudge:
    def test_every_call_empty(self) -> None:
        """A judge answering '' every time: each response re-asked once, then counted unparsable."""
        calls: list[int] = []

        def ask(batch: list) -> list[Reply]:
            calls.append(len(batch))
            return [Reply(text="") for _ in batch]

        responses = pl.DataFrame(
            {
                "response_id": ["r1", "r2", "r3"],
                "query": ["q?"] * 3,
                "response": ["It glows.", "I do not know.", "Yes."],
                "budget_exhausted": [False] * 3,
                "error": [None] * 3,
            }
        )
        labels = judge.label_responses(responses, ask, judge="j")
        assert calls == [3, 3]  # first asks, then one re-ask each
        assert labels["unparsable"].to_list() == [True] * 3 and labels["label"].null_count() == 3
        assert labels["reasked"].all()


class TestDamagedCache:
    def filled(self, tmp_path: Path) -> Path:
        with cache.open_cache(tmp_path) as store:
            store.store(
                [
                    cache.CallRecord(
                        key=f"k{i}",
                        status="ok",
                        endpoint="e",
                        revision="",
                        prompt_version="",
                        request="{}",
                        text="x" * 3000,
                        reasoning=None,
                        finish_reason="stop",
                        prompt_tokens=1,
                        completion_tokens=1,
                        latency_s=0.1,
                        error=None,
                        attempts=1,
                        created_at="2026-01-01T00:00:00",
                    )
                    for i in range(100)
                ]
            )
        return cache.cache_path(tmp_path)

    @pytest.mark.parametrize("damage", ["truncated", "empty", "garbage", "zeroed-pages"])
    def test_clear_error_never_fresh(self, tmp_path: Path, damage: str) -> None:
        """A damaged store: CacheError naming the file and the salvage command; the file is untouched."""
        path = self.filled(tmp_path)
        data = path.read_bytes()
        damaged = {
            "truncated": data[: len(data) // 2],
            "empty": b"",
            "garbage": b"not a database" * 100,
            "zeroed-pages": data[:4096] + b"\0" * 8192 + data[12288:],
        }[damage]
        path.write_bytes(damaged)
        with pytest.raises(
            cache.CacheError, match=rf"{path}: the LLM call cache is damaged .*declinecraft\.llm\.cache salvage"
        ):
            with cache.open_cache(tmp_path) as store:
                store.fetch([f"k{i}" for i in range(100)])
        assert path.read_bytes() == damaged  # nothing overwritten, no fresh cache in its place

    def test_salvage(self, tmp_path: Path) -> None:
        """`salvage` keeps the damaged file aside, leaves a store that opens again with the calls on
        the pages left, and exits 1 because the last page's calls are lost."""
        path = self.filled(tmp_path)
        path.write_bytes(path.read_bytes()[:-4096])
        done = subprocess.run(
            [sys.executable, "-m", "declinecraft.llm.cache", "salvage", str(path)], capture_output=True, text=True
        )
        assert done.returncode == 1 and "calls recovered" in done.stdout and "lost" in done.stdout
        assert list(tmp_path.glob("llm/calls.sqlite.damaged-*"))
        with cache.open_cache(tmp_path) as store:
            assert 90 <= store.count() < 100


class TestNoSpace:
    def test_simulated_enospc_keeps_earlier_file(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        """ENOSPC half-way through a write: the earlier file survives, no temp file is left."""
        target = paths.write_text_atomic(tmp_path / "numbers.tex", "earlier\n")

        def full(self: Path, text: str, **kwargs: object) -> int:
            with open(self, "w") as fh:
                fh.write(text[:3])
            raise OSError(errno.ENOSPC, "No space left on device", str(self))

        monkeypatch.setattr(Path, "write_text", full)
        with pytest.raises(
            OSError, match=r"could not write .*numbers\.tex \(No space left on device\); the earlier file is kept"
        ):
            paths.write_text_atomic(target, "new content\n" * 100)
        monkeypatch.undo()
        assert target.read_text() == "earlier\n" and sorted(p.name for p in tmp_path.iterdir()) == ["numbers.tex"]

    def test_full_filesystem(self, tmp_path: Path) -> None:
        """A real full filesystem (a 64 KiB tmpfs, where mounting is allowed): the same outcome for a
        parquet output written like every stage writes it."""
        mount = tmp_path / "tiny"
        mount.mkdir()
        if (
            shutil.which("mount") is None
            or subprocess.run(
                ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mount)], capture_output=True
            ).returncode
        ):
            pytest.skip("cannot mount a tmpfs here (needs root)")
        try:
            target = mount / "benchmark.parquet"
            pl.DataFrame({"x": ["small"]}).write_parquet(target)
            earlier = target.read_bytes()
            big = pl.DataFrame({"x": [str(i) * 50 for i in range(20000)]})
            with pytest.raises(Exception, match=r"No space left on device|os error 28") as info:
                with paths.atomic_path(target) as tmp:
                    big.write_parquet(tmp, compression="uncompressed")
            assert target.read_bytes() == earlier and [p.name for p in mount.iterdir()] == ["benchmark.parquet"]
            self.raised = str(info.value)
        finally:
            subprocess.run(["umount", str(mount)], check=False)

    def test_full_filesystem_error_names_file(self, tmp_path: Path) -> None:
        """The error of a parquet write into a full filesystem names the target file."""
        self.test_full_filesystem(tmp_path)
        assert "benchmark.parquet" in self.raised
