"""Tests for declinecraft.paper.run_settings: the run's settings as paper macros."""

from __future__ import annotations

from pathlib import Path

from declinecraft.core.config import VerifyParams
from declinecraft.paper import numbers, run_settings
from tests.support import judged_tables


class TestConfigMacros:
    def test_settings(self, tmp_path: Path) -> None:
        """Run settings and the paper's BM25 constant are macros; counts keep their braced commas."""
        out = run_settings.config_macros(judged_tables.project(tmp_path, None), {"bm25_k1": {"value": 1.5}})
        values = dict(zip(out["macro"], out["text"], strict=True))
        assert values["BMkOne"] == "1.2" and values["PaperBMkOne"] == "1.5" and values["RunName"] == "default"
        assert values["Resamples"] == "1{,}000" and out.schema == numbers.compute({}).schema

    def test_self_verification_noted(self, tmp_path: Path) -> None:
        """The reproduction notes and the method's text say when the verifier also generated the
        questions, and call the verifier separate only when it did not."""
        cfg = judged_tables.project(tmp_path, None)
        notes = {}
        for verifier in (cfg.generate.generator, "someone-else"):
            cfg = cfg.with_blocks(verify=VerifyParams(verifier=verifier, self_verification=True))
            out = run_settings.config_macros(cfg, {})
            values = dict(zip(out["macro"], out["text"], strict=True))
            notes[verifier] = (values["VerifierNote"], values["VerifierWho"])
        assert "self-verification" in notes[cfg.generate.generator][0] and notes["someone-else"][0] == ""
        assert notes[cfg.generate.generator][1].endswith(", the generator itself)")
        assert notes["someone-else"][1].startswith("A separate verifier (")
