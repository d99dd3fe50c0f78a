"""Tests for declinecraft.paper.prompts_appendix: every template printed as typed, each with its
file, its source and a label main.tex can cite."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from declinecraft.core import prompts
from declinecraft.paper import prompts_appendix


def write(folder: Path, name: str, section: str, text: str) -> None:
    (folder / f"{name}.txt").write_text(f"# section: {section}\n---\n{text}\n", encoding="utf-8")


def test_templates_printed_in_order_and_escaped(tmp_path: Path) -> None:
    """The original's J.1-J.3 prompts come first; special characters print as themselves; blank
    lines and indents are kept."""
    write(tmp_path, "a_view", 'Know2Guess, Appendix C.1, "Standard"', "Say 100% & {question}")
    write(tmp_path, "b_judge", 'Appendix J.3, "Accuracy judge."', "Q: {question}\n\n  _x_ $5 #1 ~ ^\\")
    write(tmp_path, "c_scenario", 'Appendix J.1, "Scenario (G_scenario)"', "Context: {context}")
    tex = prompts_appendix.prompts_tex(tmp_path)
    labels = re.findall(r"\\label\{prompt:([^}]+)\}", tex)
    assert labels == ["c_scenario", "b_judge", "a_view"]
    assert "\\subsection{Scenario (G\\_scenario)}" in tex and "\\subsection{Accuracy judge}" in tex
    assert "Say 100\\% \\& \\{question\\}" in tex
    assert (
        "\\mbox{}\\par\n\\hspace*{1em}\\_x\\_ \\$5 \\#1 \\textasciitilde{} \\textasciicircum{}\\textbackslash{}" in tex
    )
    assert "\\texttt{params/prompts/b\\_judge.txt}" in tex and "Appendix J.3" in tex


def test_bad_template_names_its_file(tmp_path: Path) -> None:
    """A template without its separator line fails naming the file, never prints half an appendix."""
    (tmp_path / "broken.txt").write_text("no header\n", encoding="utf-8")
    with pytest.raises(prompts.PromptError, match="broken.txt"):
        prompts_appendix.prompts_tex(tmp_path)


def test_project_prompts_cover_every_reference(root: Path) -> None:
    """Every template of params/prompts/ is in the appendix once, and every prompt main.tex cites by
    \\ref or \\dcprompt has its label there."""
    tex = prompts_appendix.prompts_tex(prompts.prompts_dir(root))
    labels = set(re.findall(r"\\label\{prompt:([^}]+)\}", tex))
    assert labels == set(prompts.available(root))
    main = (root / "paper" / "main.tex").read_text(encoding="utf-8")
    cited = set(re.findall(r"\\ref\{prompt:([a-z_]+)\}", main)) | set(re.findall(r"\\dcprompt\{([a-z_]+)\}", main))
    assert cited and cited <= labels
    assert "\\label{app:prompts}" in tex


def test_heading_skips_a_cited_title(tmp_path: Path) -> None:
    """A quoted paper title in parentheses is not the heading; the prompt's own title is, with
    (ours) for a template in our wording."""
    write(tmp_path, "k2g", 'Know2Guess ("Know2Guess: A Benchmark"), Appendix C.4, "Answer-only control"', "Q")
    write(
        tmp_path,
        "k2g_rag",
        'ours, after Know2Guess ("Know2Guess: A Benchmark") Appendix C.4, "Answer-only control"',
        "Q",
    )
    tex = prompts_appendix.prompts_tex(tmp_path)
    assert "\\subsection{Answer-only control}\\label{prompt:k2g}" in tex
    assert "\\subsection{Answer-only control (ours)}\\label{prompt:k2g_rag}" in tex
