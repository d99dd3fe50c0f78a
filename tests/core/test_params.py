"""Tests for declinecraft.core.params: the params blocks, frozen and documented field by field, their
defaults the paper's settings."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest

from declinecraft.core import bounds, params

BLOCKS = [
    params.LLMParams,
    params.CorpusParams,
    params.GenerateParams,
    params.VerifyParams,
    params.AnswerParams,
    params.JudgeParams,
    params.Know2GuessParams,
    params.EvidenceParams,
    params.AnalysisParams,
    params.PaperParams,
]


def undocumented(module: Path) -> list[str]:
    """Fields of the module's dataclasses not followed by a docstring."""
    missing = []
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ClassDef):
            body = node.body
            for i, item in enumerate(body):
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    after = body[i + 1] if i + 1 < len(body) else None
                    documented = isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                    if not documented:
                        missing.append(f"{node.name}.{item.target.id}")
    return missing


class TestBlocks:
    @pytest.mark.parametrize("block", BLOCKS, ids=lambda c: c.__name__)
    def test_frozen(self, block: type) -> None:
        """A block cannot be changed once built (a copy with changes is ``dataclasses.replace``)."""
        built = block()
        name = dataclasses.fields(built)[0].name
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(built, name, getattr(built, name))

    def test_every_field_documented(self) -> None:
        """Each field of each block has its docstring."""
        assert undocumented(Path(params.__file__)) == []

    def test_index_block_reexported(self) -> None:
        """The index block, in its own module, is the same class here."""
        from declinecraft.core.index_params import IndexParams

        assert params.IndexParams is IndexParams


class TestPaperDefaults:
    def test_answer_and_verify(self) -> None:
        """The paper's settings: k = 5, two iterative rounds, 16,000 output tokens, temperature 0;
        700 answerable and 300 unanswerable questions, the verifier reading 10 chunks."""
        a, v = params.AnswerParams(), params.VerifyParams()
        assert (a.k, a.max_rounds, a.max_tokens, a.temperature) == (5, 2, 16_000, 0.0)
        assert (v.target_answerable, v.target_unanswerable, v.retrieve_k) == (700, 300, 10)

    def test_analysis(self) -> None:
        """95 % intervals from 1,000 bootstrap resamples, alpha 0.05, each in its range."""
        a = params.AnalysisParams()
        assert (a.confidence, a.bootstrap_resamples, a.alpha) == (0.95, 1000, 0.05)
        assert bounds.check("analysis", a, "analysis") == []
