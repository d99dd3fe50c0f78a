"""Where a run departs from the original study, said in the paper from the run's own params.

Two macros, both LaTeX (already escaped), both written into ``numbers.tex`` by
:func:`declinecraft.paper.run_settings.config_macros`:

- ``MiniatureBox``: a framed note under the title when the run asks for fewer benchmark questions
  than the paper. It says what the run is and that no number in it is evidence for or against the
  original, and names the larger runs. Empty for a run of the paper's size.
- ``DeviationItems``: ``\\item`` lines for the reproduction notes: one model in roles the paper
  keeps apart, answers scored only by judges of their own family, chunks cut inside prompts, no
  manual review of the unanswerable questions, and how the prompts were taken. Each item is
  written only when the run's params make it true.

The paper's sizes come from ``params/paper_reported.yaml`` (``n_answerable``, ``n_unanswerable``,
``n_models``); a fact it lacks makes no claim about it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from declinecraft.core import registry
from declinecraft.core.config import RunConfig
from declinecraft.core.number_format import thousands
from declinecraft.paper.latex import escape, listed

#: What the paper did that no run of this project does (§3.3, App. B).
MANUAL_REVIEW = (
    "The unanswerable questions were not reviewed by hand. The paper reviewed every one and replaced "
    "21 with malformed facts; here, only the verifier's checks stand between a draft and the benchmark."
)
PROMPTS = (
    "The prompts are the papers' own, transcribed verbatim into \\texttt{params/prompts/} (each file "
    "names its source); the few this project had to write say so in their files."
)


def _number(value: Any) -> int | None:
    try:
        return int(str(value).replace(",", ""))
    except ValueError:
        return None


def miniature_box(cfg: RunConfig, reported: Mapping[str, Mapping[str, Any]]) -> str:
    """The first-page box of a run smaller than the paper, or '' (see the module docstring).

    It states what the run asked for (``verify.target_answerable``/``target_unanswerable``) and
    what its benchmark holds (``\\BenchAnswerable``/``\\BenchUnanswerable`` of ``numbers.tex``:
    the verifier decides how many drafts reach it), and the run-health line
    (``\\HealthBoxLine`` of ``health_numbers.tex``)."""
    fact = lambda key: _number(reported.get(key, {}).get("value", ""))  # noqa: E731
    paper_answerable, paper_unanswerable = fact("n_answerable") or 0, fact("n_unanswerable") or 0
    paper_questions = paper_answerable + paper_unanswerable
    paper_models = fact("n_models") or 0
    questions = cfg.verify.target_answerable + cfg.verify.target_unanswerable
    models = len(cfg.answer.models)
    if questions >= paper_questions:
        return ""
    return (
        "\\noindent\\fbox{\\parbox{\\dimexpr\\linewidth-2\\fboxsep-2\\fboxrule}{\\small\\textbf{Miniature run.} "
        f"This run asks for {thousands(cfg.verify.target_answerable)} answerable and "
        f"{thousands(cfg.verify.target_unanswerable)} unanswerable benchmark questions (the paper has "
        f"{thousands(paper_answerable)} and {thousands(paper_unanswerable)}); its benchmark holds "
        "\\BenchAnswerable{} answerable and \\BenchUnanswerable{} unanswerable ones (the verifier decides how "
        f"many drafts reach it). It evaluates {models} {'model' if models == 1 else 'models'} (the paper: "
        f"{paper_models}), with an output budget of {thousands(cfg.answer.max_tokens)} tokens (the paper: "
        "16{,}000). \\HealthBoxLine{} It shows that "
        "every stage runs and what each table and figure holds; at this size no number in it is evidence "
        "for or against the original study. A number from fewer questions than "
        f"{cfg.analysis.finding_n} is printed with its $n$ and never stated "
        "as a finding. The run-health section says how the run went. Larger runs: "
        "\\texttt{make all PARAMS=params/complete.yaml} "
        "(every setting, offline, about two days on two cores) and \\texttt{params/paper.yaml} (the "
        "paper's models and sizes, on GPUs).}}\\par\\medskip"
    )


def roles(cfg: RunConfig) -> dict[str, list[str]]:
    """Each model's roles in the run, in pipeline order."""
    roles: dict[str, list[str]] = {}
    named = [
        ("generator", [cfg.generate.generator]),
        ("verifier", [cfg.verify.verifier]),
        ("response judge", [cfg.judge.response_judge]),
        ("oracle", [cfg.judge.oracle]),
        ("accuracy judge", list(cfg.judge.accuracy_judges)),
        ("model under test", list(cfg.answer.models)),
    ]
    for role, models in named:
        for model in models:
            if role not in roles.setdefault(model, []):
                roles[model].append(role)
    return roles


#: The roles one model holds together in the paper (§3, App. I; ``params/paper.yaml``): the
#: generator and the response judge are also under test, and so is the verifier, which also judges
#: accuracy. Any other pair of roles on one model is a deviation.
PAPER_ROLE_PAIRS = frozenset(
    frozenset(pair)
    for pair in [
        ("generator", "model under test"),
        ("response judge", "model under test"),
        ("verifier", "accuracy judge"),
        ("verifier", "model under test"),
        ("accuracy judge", "model under test"),
    ]
)


def _family(specs: Mapping[str, registry.ModelSpec], model: str) -> str:
    return specs[model].family if model in specs and specs[model].family else model


def deviation_items(cfg: RunConfig, specs: Mapping[str, registry.ModelSpec]) -> str:
    """The reproduction notes' ``\\item`` lines that the run's params make true."""
    name = lambda m: escape(specs[m].display_name if m in specs and specs[m].display_name else m)  # noqa: E731
    items = []
    shared = [
        f"{name(m)} is {listed(r)}"
        for m, r in roles(cfg).items()
        if any(frozenset((a, b)) not in PAPER_ROLE_PAIRS for a in r for b in r if a != b)
    ]
    if shared:
        items.append(
            "\\textbf{Roles.} " + "; ".join(shared) + ". In the paper, one model holds two roles only as a "
            "generator, verifier or judge that is also evaluated, or as the verifier that also judges accuracy."
        )
    judges = {_family(specs, j) for j in cfg.judge.accuracy_judges}
    own = [m for m in cfg.answer.models if judges and judges == {_family(specs, m)}]
    if own:
        items.append(
            "\\textbf{Own-family scoring.} Every accuracy judge is of the same family as "
            f"{listed([name(m) for m in own])}, "
            "so those answers are scored only by their own family. The paper's three judges come from different "
            "families, so no answer is scored only by a model of its own family (App.~A.1)."
        )
    if cfg.judge.labels_by_rule:
        items.append(
            "\\textbf{Labels.} Each response's label of record is read from its explicit phrases "
            "(\\texttt{judge.labels\\_by\\_rule}), the way the Evidence Sufficiency Benchmark labels its responses, "
            f"with premise denial added; the response judge ({name(cfg.judge.response_judge)}) labels every response "
            "too, and run health gives its agreement with the rules. The paper's labels are its response judge's "
            "(App.~I)."
        )
    cuts = [
        (cfg.generate.prompt_chunk_chars, "scenario and comparison chunks in the generator's prompts"),
        (cfg.verify.context_chars, "chunks in the verifier's prompts"),
        (cfg.answer.context_chars, "retrieved chunks in the answer prompts"),
        (cfg.judge.oracle_page_chars, "the source page in the oracle's prompt"),
    ]
    cut = [f"{what} to {thousands(n)} characters" for n, what in cuts if n > 0]
    if cut:
        items.append(
            f"\\textbf{{Prompts cut.}} To fit small context windows and two cores, this run cuts {listed(cut)}; "
            "the paper sends them whole."
        )
    items.append(f"\\textbf{{Review.}} {MANUAL_REVIEW}")
    items.append(f"\\textbf{{Prompts.}} {PROMPTS}")
    return "\n".join(f"\\item {item}" for item in items)
