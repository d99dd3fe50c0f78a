"""Run configuration: ``params/<run>.yaml`` → a frozen, typed, validated :class:`RunConfig`.

A params file has one block per stage (``corpus``, ``index``, ``generate``, ``verify``, ``answer``,
``judge``, ``analysis``, ``paper``) plus a few top-level keys. The run's name is the file's stem,
so two params files can never write into each other's ``outputs/<run>/``.

A file may say ``base: default`` to inherit every block of ``params/default.yaml`` and override a
few keys. A stage whose parameters (and all of its upstream stages' parameters) equal the base's is
*owned* by the base run: its outputs are read from ``outputs/<base>/`` instead of being recomputed.

Unknown keys are errors that name the file and the key path: a typo never silently falls back to
a default.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from declinecraft import paths


class ConfigError(ValueError):
    """A params file is invalid; the message names the file and the key."""


# --- one dataclass per params block; defaults are the paper's settings -------------------------


@dataclass(frozen=True)
class CorpusParams:
    """§3.1 and Appendix D: where pages come from, which pages count, how they become chunks.

    Title patterns are Python regular expressions searched in the page title (``re.search``).
    The paper names the kinds of page it excludes but not its exact lists; these are our reading.
    """

    source: str = "dump"
    """``dump`` (a MediaWiki XML export) or ``api`` (a crawl of a live MediaWiki API)."""
    dump: str = "data/miniwiki/miniwiki.xml"
    """The export read when ``source`` is ``dump`` (plain, .bz2 or .gz; project-relative or absolute)."""
    api_url: str = "https://minecraft.wiki/api.php"
    """The ``api.php`` crawled when ``source`` is ``api``."""
    user_agent: str = "DeclineCraft-crawler/0.1 (research reproduction)"
    """User-Agent header of every API request."""
    requests_per_second: float = 1.0
    """API politeness: at most this many requests per second."""
    max_retries: int = 6
    """Retries per API request on 5xx, 429, timeouts and maxlag, with exponential backoff."""
    timeout_s: float = 30.0
    """Seconds per HTTP request before it counts as a timeout."""
    maxlag: int = 5
    """``maxlag`` sent with every request (seconds of replication lag at which the wiki says wait)."""
    seeds_pre: tuple[str, ...] = ()
    """App. D: the seed pages of the C_pre crawl (the paper used 36)."""
    seeds_post: tuple[str, ...] = ()
    """App. D: the titles naming post-cut-off content that start the C_post crawl (the paper: 35)."""
    seed_source: str = "links"
    """``links``: breadth-first from the seeds over page links (the paper); ``allpages``: every page
    of ``namespaces`` (``list=allpages``), for a wiki whose links do not reach every page."""
    max_pages: int = 3000
    """Pages fetched per crawl before it stops (the stop is logged and recorded in the manifest)."""
    cutoff: str = "2025-03-31"
    """Corpus cut-off day (UTC), inclusive: a revision stamped on that day is before the cut-off."""
    snapshot: str = "2026-09-08"
    """C_post scrape day: pages at their latest revision on or before it ("" = newest revision)."""
    namespaces: tuple[int, ...] = (0,)
    """Namespaces that hold articles; pages elsewhere are dropped (reason ``namespace``)."""
    exclude_titles: tuple[str, ...] = (
        r"^[\w .'-]*Edition\b.*\d",  # versions and snapshots: "Java Edition 1.21.5", "… 25w14a"
        r"^Minecraft Education \d",
        r"(?i)version history|changelog|pre-release|release candidate|^snapshots?\b",
        r"(?i)^Minecraft Live\b|^Minecraft Festival\b|^Minecraft Experience\b|\blive event",
        r"(?i)\bmob vote|\bbiome vote",
        r"(?i)\bskin pack",
        r"(?i)^MINECON\b",
        r"(?i)\bmovie\b|\bfilm\b",
        r"^Mentioned features$",
    )
    """Both corpora: version and changelog pages, live events, mob votes, skin packs, MINECON,
    films, the Mentioned features page."""
    exclude_titles_pre: tuple[str, ...] = (
        r"^(Barnacle|Great Hunger|Monster of the Ocean Depths|Moobloom|Iceologer|Glare|"
        r"Copper Golem|Tuff Golem|Rascal|Crab|Penguin)$",
    )
    """C_pre only: mob-vote proposal pages (candidates not in the game at the cut-off). A page
    created after the cut-off under such a title documents the added feature (Copper Golem)."""
    exclude_titles_post: tuple[str, ...] = (
        r"\bEdition\b",
        r"^Minecraft (Dungeons|Legends|Earth|Story Mode|Blast)\b|^(Dungeons|Legends|Earth|Story Mode):",
        r"(?i)soundtrack|\balbum\b|\bpodcast\b|\((book|novel|comic|album|series|song)\)|^Minecraft: ",
        r"^Tutorials?[:/]",
    )
    """C_post only: edition and version pages, spin-off games (by title), media, tutorials."""
    drop_sections: tuple[str, ...] = (
        "History", "Trivia", "Data values", "Sounds", "Achievements", "Advancements",
        "Screenshots", "Navigation", "See also", "References", "External links",
        "In other media", "Mob votes", "Upcoming", "Joke", "Unimplemented", "Removed",
        "April Fools", "Mentioned",
    )
    """App. D: sections removed by cleaning, matched as heading prefixes (see ``clean``)."""
    min_chars: int = 200
    """Pages shorter than this many characters after cleaning are dropped."""
    chunk_size: int = 1500
    """Characters per chunk body, not counting the ``[Page: <title>]`` line."""
    chunk_overlap: int = 250
    """Characters consecutive chunks share, at most (whole lines, sentences or words)."""
    url_template: str = "https://minecraft.wiki/w/{title}"
    """A page's URL in chunk metadata; ``{title}`` is the title with underscores, URL-quoted."""


@dataclass(frozen=True)
class IndexParams:
    """Appendix D/E: embedder, BM25 constants, fusion and reranking."""

    embedder: str = "all-minilm-l6-v2"
    """Dense model id (``embed.EMBEDDERS``); the paper: ``qwen3-embedding-8b``. Default chosen by
    measured Hit@5 on the mini wiki (benchmarks/bench_embedders.py)."""
    embedder_path: str = ""
    """Local weights for an embedder not shipped in a wheel (folder or .gguf; project-relative or
    absolute). Never a hub id: nothing is downloaded at run time."""
    reranker: str = "ms-marco-minilm-l12"
    """Cross-encoder id (``rerank.RERANKERS``); the paper: ``llama-nemotron-rerank-1b-v2``."""
    reranker_path: str = ""
    """Local weights for a reranker not shipped in a wheel (folder)."""
    bm25_analyzer: str = "en_stem"
    """Tantivy analyzer for chunks and queries: ``en_stem`` (lowercase, ASCII folding, English
    stemming) or ``default`` (lowercase only)."""
    # Tantivy's BM25 is fixed at k1=1.2, b=0.75; the paper used k1=1.5 (a listed deviation).
    bm25_k1: float = 1.2
    """BM25 k1; must be 1.2 (Tantivy's constant; the paper's 1.5 is a recorded deviation)."""
    bm25_b: float = 0.75
    """BM25 b; must be 0.75 (Tantivy's constant, same as the paper)."""
    rrf_k: int = 60
    """Reciprocal rank fusion constant K: score = sum over retrievers of 1 / (K + rank)."""
    fusion_depth: int = 50
    """Hits each retriever (BM25, dense) contributes to the fusion (at least k)."""
    rerank_pool: int = 50
    """Fused candidates the cross-encoder rescores (at least k)."""
    batch_size: int = 32
    """Texts per embedding / reranking forward pass."""


@dataclass(frozen=True)
class GenerateParams:
    """§3.2 and Appendix J.1: scenario-first question generation."""

    generator: str = "qwen2.5-coder-1.5b"
    """Registry id of the generator whose candidates make the benchmark."""
    generators: tuple[str, ...] = ()
    """Extra generators for Table 9's comparison (same pipeline and seed); () = no comparison."""
    n_answerable: int = 40
    """Answerable candidates to draft (per generator); the paper's count is not published."""
    n_unanswerable: int = 40
    """Unanswerable candidates to draft (per generator); the paper's count is not published."""
    scenario_chunks: int = 3
    """Random C_pre chunks shown to G_scenario (§3.2 step 1)."""
    target_pool: int = 10
    """Chunks retrieved by cosine similarity to the scenario (§3.2 step 2)."""
    target_draw: int = 5
    """The target is drawn uniformly from this many highest-ranked eligible chunks."""
    max_facts: int = 6
    """G_facts lists at most this many facts; extra ones are cut (§3.2 step 3)."""
    comparison_chunks: int = 3
    """Unanswerable: the C_pre chunks nearest the target chunk that G_facts compares against."""
    technical_title_patterns: tuple[str, ...] = (
        r"^(Java|Bedrock|Pocket|Legacy Console|Education) Edition\b",
        r"^Commands?\b",
        r"/(DV|BS|ED|Structure|Asset history|Development)\b",
        r"\b(Data values?|Block states?|NBT|Debug|Technical|Tutorials?)\b",
        r"^(Tutorials?|Template|Module|Category|Help|Minecraft Wiki):",
    )
    """Case-insensitive regexes on page titles: matching pages are never targets. The paper does
    not list its "technical pages"; these patterns are our completion."""
    max_words: int = 30
    """Scenarios and asked questions must be under this many words (J.1); longer is lost to format."""
    trim_scenarios: bool = False
    """Cut an over-long scenario back to its leading whole sentences under max_words (noted on the
    draft) instead of losing it; False = the paper's rule. For small models that ignore the limit."""
    max_tokens: int = 512
    """Output budget of each generator call (paper: 16,000)."""
    scenario_max_tokens: int = 0
    """Budget of the scenario call (0 = max_tokens); a cut-off answer counts as over-long."""
    question_max_tokens: int = 0
    """Budget of the question call (0 = max_tokens); a cut-off answer counts as over-long."""
    prompt_chunk_chars: int = 0
    """Cut each scenario and comparison (OLD) chunk to this many characters in generator prompts
    (0 = whole chunks, the paper; the target chunk is always whole): a CPU-speed deviation."""
    temperature: float = 0.0
    """Sampling temperature of every generator call."""


@dataclass(frozen=True)
class VerifyParams:
    """§3.3 and Appendix D/F: verification, assembly caps, audits."""

    verifier: str = "qwen2.5-coder-0.5b"
    """Registry id of the verifier model; a different model from the generator (§3.3) unless
    ``self_verification`` is set."""
    self_verification: bool = False
    """Allow the verifier to be a generator whose drafts it checks (the paper never does). The
    offline run sets it because of the two chat models it ships, only the 1.5B tells cases apart at
    all (the 0.5B answers YES to almost every Stated check); the datasheet and the paper's
    reproduction notes say so."""
    pipeline: str = "hybrid+rerank"
    """Retrieval pipeline R+ that feeds the verifier (§3.3)."""
    retrieve_k: int = 10
    """C_pre chunks the verifier reads per query."""
    context_chars: int = 0
    """Cut each chunk to this many characters inside verifier prompts (0 = whole chunk, the
    paper); a CPU-speed and context-window deviation of the offline run."""
    target_answerable: int = 700
    """Answerable questions in the benchmark."""
    target_unanswerable: int = 300
    """Unanswerable questions in the benchmark."""
    max_per_chunk: int = 2
    """At most this many questions per target chunk."""
    max_per_page: int = 10
    """At most this many questions per target page."""
    review_file: str = "data/manual_review.yaml"
    """Manual review: candidate ids dropped by hand, with reasons, per run."""
    audit_pipeline: str = "hybrid"
    """The default retriever of the evaluation, used by the Hit@k and scenario-overlap audits."""
    audit_k: int = 5
    """Chunks retrieved by the Hit@k and scenario-overlap audits (paper: 5)."""
    audit_folds: int = 10
    """Cross-validation folds of the style AUC (fewer when a half has fewer questions)."""
    audit_min_df: int = 3
    """Style AUC vocabulary: words that occur in at least this many questions."""
    comparison_verifier: str = ""
    """Verifier of Table 9's generator comparison ("" = the main verifier)."""
    comparison_answerable: int = 100
    """Answerable target of each generator in Table 9's comparison."""
    comparison_unanswerable: int = 100
    """Unanswerable target of each generator in Table 9's comparison."""
    max_tokens: int = 256
    """Output budget of each verifier call (paper: 16,000)."""
    temperature: float = 0.0
    """Sampling temperature of every verifier call."""


@dataclass(frozen=True)
class AnswerParams:
    """§4.1, Appendix A.2–A.4, E, H: the models under test and the retrieval conditions."""

    models: tuple[str, ...] = ()
    """Registry ids of the models under test (one server at a time)."""
    thinking: tuple[str, ...] = ("off",)
    """Thinking settings ("off", "on") for switchable models; others run their only mode."""
    conditions: tuple[str, ...] = ("no_rag", "single", "iterative")
    """Main grid: no retrieval, single-shot RAG, iterative RAG (§4.2)."""
    pipeline: str = "hybrid"
    """Retriever of the main grid (App. E: hybrid BM25 + dense, RRF)."""
    k: int = 5
    """Chunks retrieved by single-shot RAG, and per round by iterative RAG (paper: 5)."""
    max_rounds: int = 2
    """Iterative RAG: additional retrieval rounds after the first (Algorithm 4; paper: 2)."""
    k_sweep: tuple[int, ...] = ()
    """Ablation (App. A.2): single-shot RAG at each k; paper: (1, 2, 3, 5, 10). () = none."""
    pipelines: tuple[str, ...] = ()
    """Ablation (App. A.3): single-shot RAG with each pipeline at k. () = none."""
    no_scenario: bool = False
    """Ablation (App. A.4): single-shot RAG with the question alone as query and model input."""
    temporal_prompt: bool = False
    """Ours (§6.4): single-shot RAG with answer_with_context_temporal.txt."""
    rewriter: str = "qwen2.5-coder-1.5b"
    """Registry id of the query rewriter of the +rewrite pipelines (the paper's is not in our copy)."""
    context_chars: int = 0
    """Cut each chunk to this many characters in answer and reflection prompts (0 = whole chunk,
    the paper); a context-window and CPU-speed deviation of the offline run."""
    max_tokens: int = 16000
    """Output budget of every call of a model under test, thinking included (paper: 16,000)."""
    temperature: float = 0.0
    """Sampling temperature of every answer and reflection call."""
    limit_questions: int = 0
    """Answer only this many benchmark questions (answerable share kept, seeded); 0 = all."""


@dataclass(frozen=True)
class JudgeParams:
    """Appendix I and J.3: response judge, oracle, accuracy judges, leakage audit."""

    response_judge: str = "qwen2.5-coder-1.5b"
    """Registry id of the response judge (paper: Gemma 4 26B-A4B, thinking disabled)."""
    second_judges: tuple[str, ...] = ()
    """Second-opinion response judges for the agreement check (paper: Qwen3.8 27B, Llama 3.3 70B)."""
    second_judge_sample: int = 1008
    """Responses the second judges relabel, equal per (label, condition) cell; 0 = all."""
    oracle: str = "qwen2.5-coder-1.5b"
    """Registry id of the oracle writing reference answers (paper: DeepSeek V4.1 Flash)."""
    accuracy_judges: tuple[str, ...] = ("qwen2.5-coder-1.5b",)
    """Registry ids of the accuracy (and leakage) judges; accuracy is their mean (paper: three)."""
    truncate_chars: int = 12000
    """Responses are cut to this many characters before the response judge (App. I)."""
    oracle_page_chars: int = 0
    """Cut the oracle's source page to this many characters (0 = the whole page, the paper); a
    context-window and CPU-speed deviation of the offline run."""
    oracle_chunk_chars: int = 0
    """Cut each scenario chunk in the oracle's context to this many characters (0 = whole chunks)."""
    max_tokens: int = 512
    """Output budget of each response-judge and accuracy-judge call."""
    oracle_max_tokens: int = 0
    """Output budget of each oracle call (0 = max_tokens)."""
    temperature: float = 0.0
    """Sampling temperature of every judge and oracle call."""


@dataclass(frozen=True)
class AnalysisParams:
    """§4, Appendix A and H: statistics."""

    bootstrap_resamples: int = 1000
    """Bootstrap resamples over questions (accuracy intervals) and items (Table 10); App. H: 1000."""
    confidence: float = 0.95
    """Level of every interval (Wilson, bootstrap, t), as a proportion."""
    alpha: float = 0.05
    """A comparison is significant when its Benjamini-Hochberg q value is below alpha."""
    min_attempt: float = 0.95
    """Attempt-rate requirement (proportion) of the illustrative frontier point of App. A.7."""
    judge_score_prefix: str = "score_"
    """Prefix of the per-judge score columns in judged.parquet (``score_<judge model id>``)."""
    extra_runs: tuple[str, ...] = ()
    """Other runs whose judged responses join this analysis as ablation rows (e.g. ``k10`` for the
    k=10 comparison of App. A.2); a run without outputs is skipped with a note."""
    annotation_part1: int = 70
    """Part 1 of the human validation: answers to unanswerable questions to label (App. I)."""
    annotation_part2: int = 30
    """Part 2 of the human validation: attempted answers to score for accuracy (App. I)."""


@dataclass(frozen=True)
class PaperParams:
    """The paper build: tables, figures, macros, PDF."""

    build_pdf: bool = True
    """Build the PDF with latexmk when a TeX installation is present (else say it was skipped)."""
    figure_formats: tuple[str, ...] = ("pdf", "png")
    """File formats every figure is saved in."""
    figure_dpi: int = 200
    """Resolution of raster figure files (PNG), dots per inch."""


#: Stage order: (block name, notebook stem). Each stage depends on every stage before it.
STAGES: tuple[tuple[str, str], ...] = (
    ("corpus", "01_corpus"),
    ("index", "02_index"),
    ("generate", "03_generate"),
    ("verify", "04_verify"),
    ("answer", "05_answer"),
    ("judge", "06_judge"),
    ("analysis", "07_analysis"),
    ("paper", "08_paper"),
)

BLOCKS: dict[str, type] = {
    "corpus": CorpusParams,
    "index": IndexParams,
    "generate": GenerateParams,
    "verify": VerifyParams,
    "answer": AnswerParams,
    "judge": JudgeParams,
    "analysis": AnalysisParams,
    "paper": PaperParams,
}

TOP_LEVEL_KEYS = {"base", "description", "seed", "models_file", *BLOCKS}


@dataclass(frozen=True)
class RunConfig:
    """Everything one run needs, frozen. Build it with :func:`load`."""

    run: str
    root: Path
    params_file: Path
    seed: int = 0
    description: str = ""
    models_file: str = "params/models.yaml"
    base: "RunConfig | None" = None
    blocks: dict[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        # Blocks read as attributes: cfg.corpus.cutoff.
        blocks = self.__dict__.get("blocks", {})
        if name in blocks:
            return blocks[name]
        raise AttributeError(name)

    def block_dict(self, name: str) -> dict[str, Any]:
        """Return one block as plain data (what papermill shows and the stage stamp hashes)."""
        return _to_plain(dataclasses.asdict(self.blocks[name]))

    def owner(self, stage: str) -> str:
        """Return the run whose outputs hold ``stage``: this run, or the base run when this stage
        and everything upstream of it are configured identically."""
        if self.base is None:
            return self.run
        names = [name for name, _ in STAGES]
        upstream = names[: names.index(stage) + 1]
        same = self.seed == self.base.seed and all(
            self.block_dict(b) == self.base.block_dict(b) for b in upstream
        )
        return self.base.owner(stage) if same else self.run

    def run_dir(self, run: str | None = None) -> Path:
        """Return ``outputs/<run>/`` (this run by default)."""
        return paths.outputs_dir(self.root) / (run or self.run)

    def stage_dir(self, stage: str) -> Path:
        """Return the folder a stage's outputs are read from (its owner's) — and written to when
        this run owns it."""
        return self.run_dir(self.owner(stage)) / dict(STAGES)[stage]

    @property
    def cache_dir(self) -> Path:
        """Caches shared by every run (LLM calls, embeddings, model files)."""
        return paths.cache_dir(self.root)

    def resolve(self, relative: str) -> Path:
        """Return a project-relative path from the params as an absolute path."""
        path = Path(relative)
        return path if path.is_absolute() else self.root / path

    def to_dict(self) -> dict[str, Any]:
        """Return the resolved configuration as plain data (no secrets ever live in params)."""
        out: dict[str, Any] = {
            "run": self.run,
            "base": self.base.run if self.base else None,
            "seed": self.seed,
            "description": self.description,
            "models_file": self.models_file,
        }
        out.update({name: self.block_dict(name) for name in BLOCKS})
        return out


def load(params_file: str | Path) -> RunConfig:
    """Read, inherit and validate a params file.

    Raises:
        ConfigError: unknown key, wrong type, missing base, or a base cycle — naming file and key.
    """
    return _load(Path(params_file).resolve(), seen=())


def _load(path: Path, seen: tuple[Path, ...]) -> RunConfig:
    if path in seen:
        raise ConfigError(f"{path}: 'base' inheritance cycle through {', '.join(map(str, seen))}")
    if not path.is_file():
        raise ConfigError(f"params file not found: {path}")
    root = paths.find_root(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: top level must be a mapping of blocks")
    unknown = sorted(set(raw) - TOP_LEVEL_KEYS)
    if unknown:
        raise ConfigError(
            f"{path}: unknown top-level key {unknown[0]!r} (allowed: {', '.join(sorted(TOP_LEVEL_KEYS))})"
        )
    base = None
    if raw.get("base"):
        base = _load((root / "params" / f"{raw['base']}.yaml").resolve(), seen=(*seen, path))
    blocks = {}
    for name, cls in BLOCKS.items():
        inherited = base.block_dict(name) if base else {}
        given = raw.get(name) or {}
        if not isinstance(given, dict):
            raise ConfigError(f"{path}: block {name!r} must be a mapping")
        blocks[name] = _build(cls, {**inherited, **given}, f"{path}: {name}")
    _check_verifier(blocks["generate"], blocks["verify"], path)
    return RunConfig(
        run=path.stem,
        root=root,
        params_file=path,
        seed=int(raw.get("seed", base.seed if base else 0)),
        description=str(raw.get("description", "")),
        models_file=str(raw.get("models_file", base.models_file if base else "params/models.yaml")),
        base=base,
        blocks=blocks,
    )


def _check_verifier(generate: GenerateParams, verify: VerifyParams, path: Path) -> None:
    """§3.3: a separate model checks the generator's questions (and, for Table 9, every compared
    generator's), unless the run says otherwise."""
    if verify.self_verification:
        return
    if verify.verifier == generate.generator:
        raise ConfigError(
            f"{path}: verify.verifier {verify.verifier!r} is also the generator; the paper verifies with a "
            "separate model (set verify.self_verification: true to allow it, a recorded deviation)"
        )
    comparison = verify.comparison_verifier or verify.verifier
    if generate.generators and comparison in {generate.generator, *generate.generators}:
        raise ConfigError(
            f"{path}: verify.comparison_verifier {comparison!r} is also one of the compared generators; "
            "Table 9 checks every generator with a separate model (set verify.self_verification: true to allow it)"
        )


def _build(cls: type, values: dict[str, Any], where: str) -> Any:
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (allowed: {', '.join(sorted(names))})")
    kwargs = {key: _coerce(value, hints[key], f"{where}.{key}") for key, value in values.items()}
    return cls(**kwargs)


def _coerce(value: Any, hint: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in typing.get_args(hint):
            return None
        hint = next(a for a in typing.get_args(hint) if a is not type(None))
        origin = typing.get_origin(hint)
    if origin is tuple:
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where}: expected a list, got {value!r}")
        (item,) = typing.get_args(hint)[:1]
        return tuple(_coerce(v, item, f"{where}[{i}]") for i, v in enumerate(value))
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true/false, got {value!r}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: expected an integer, got {value!r}")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where}: expected a number, got {value!r}")
        return float(value)
    if hint is str:
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise ConfigError(f"{where}: expected a string, got {value!r}")
        return str(value)
    return value


def _to_plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_plain(v) for v in value]
    return value


def write_stamps(cfg: RunConfig) -> list[Path]:
    """Write ``outputs/<run>/params/<block>.yaml`` for every stage (only when changed) and the
    resolved config; return the files that changed.

    Make depends on these files, so editing one block of a params file reruns only that stage
    and the stages downstream of it.
    """
    folder = cfg.run_dir() / "params"
    changed = []
    params_file = cfg.params_file.relative_to(cfg.root).as_posix()
    for name in BLOCKS:
        # Papermill reads this file with -f: the notebook sees its run and its own block.
        payload = {"params_file": params_file, "seed": cfg.seed, name: cfg.block_dict(name)}
        target = folder / f"{name}.yaml"
        if paths.write_text_if_changed(target, yaml.safe_dump(payload, sort_keys=True)):
            changed.append(target)
    # Which run's outputs each stage reads (Make includes this to wire a derived run to its base).
    owners = "".join(f"OWNER_{cfg.run}_{name} := {cfg.owner(name)}\n" for name in BLOCKS)
    if paths.write_text_if_changed(folder / "owners.mk", owners):
        changed.append(folder / "owners.mk")
    resolved = folder / "resolved.yaml"
    text = yaml.safe_dump(cfg.to_dict(), sort_keys=False)
    if paths.write_text_if_changed(resolved, text):
        changed.append(resolved)
    return changed


def fingerprint(data: Any) -> str:
    """Return a short stable hash of plain data (used to version indexes and outputs by params)."""
    blob = json.dumps(_to_plain(data), sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def _main(argv: list[str]) -> int:
    """``python -m declinecraft.config stamp params/x.yaml``: validate and write the stage stamps."""
    if len(argv) != 2 or argv[0] not in {"stamp", "check", "run-name"}:
        print("usage: python -m declinecraft.config {stamp|check|run-name} PARAMS_FILE", file=sys.stderr)
        return 2
    try:
        cfg = load(argv[1])
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if argv[0] == "stamp":
        chain = cfg
        while chain is not None:  # a derived run reads its base's outputs: stamp the base too
            write_stamps(chain)
            chain = chain.base
        print(cfg.run)
    elif argv[0] == "run-name":
        print(cfg.run)
    else:
        print(f"{cfg.params_file}: ok (run {cfg.run!r})")
    return 0


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))


def for_notebook(params_file: str | Path, **injected: Any) -> RunConfig:
    """Load the run a notebook was given and check the blocks papermill injected with ``-f``.

    ``params_file`` may be project-relative; it is resolved from the notebook's working folder
    upwards. Each injected block must equal the block loaded from the file: a mismatch means the
    stage stamp is stale and is an error, not a silent choice between the two.
    """
    path = Path(params_file)
    if not path.is_absolute():
        path = paths.find_root(Path.cwd()) / path
    cfg = load(path)
    for name, block in injected.items():
        if block and _to_plain(block) != cfg.block_dict(name):
            raise ConfigError(f"{path}: injected {name!r} block differs from the file; rerun via make")
    return cfg


def not_built(cfg: RunConfig, stage: str) -> Path:
    """Record that a stage's code does not exist yet, so its notebook runs without faking results.

    Writes ``NOT_BUILT.md`` into the stage folder and returns its path; downstream stages see the
    marker and say so instead of inventing inputs.
    """
    folder = cfg.stage_dir(stage)
    message = f"Stage {stage!r} is not built yet: this run has no {stage} outputs.\n"
    paths.write_text_atomic(folder / "NOT_BUILT.md", message)
    print(message.strip())
    return folder / "NOT_BUILT.md"


def referenced_models(cfg: RunConfig) -> set[str]:
    """Return every model id a run names (generator, verifier, models under test, judges)."""
    return {
        cfg.generate.generator,
        cfg.verify.verifier,
        *cfg.answer.models,
        cfg.answer.rewriter,
        cfg.judge.response_judge,
        cfg.judge.oracle,
        *cfg.judge.second_judges,
        *cfg.judge.accuracy_judges,
    }
