"""The params blocks: one frozen dataclass per stage, each field documented; defaults are the
paper's settings. :mod:`declinecraft.core.config` reads a params file into them and validates it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from declinecraft.core import small_n
from declinecraft.core.bounds import (
    COUNT,
    LEVEL,
    POSITIVE,
    PROPORTION,
    SECONDS,
    TEMPERATURE,
    TOKENS,
    TOKENS_OR_0,
    Bound,
)

# The index block outgrew this module; it lives in core.index_params and is re-exported here.
from declinecraft.core.index_params import IndexParams  # noqa: F401  (re-exported)

#: Appendix D: sections "about other versions or out-of-game material" (matched as prefixes).
DROP_SECTIONS: tuple[str, ...] = (
    "History",
    "Trivia",
    "Data values",
    "Sounds",
    "Achievements",
    "Advancements",
    "Screenshots",
    "Navigation",
    "See also",
    "References",
    "External links",
    "In other media",
    "Mob votes",
    "Upcoming",
    "Joke",
    "Unimplemented",
    "Removed",
    "April Fools",
    "Mentioned",
)


@dataclass(frozen=True)
class LLMParams:
    """How every stage that calls models treats failed calls, what it may spend, and where the
    retrieval models run beside the model servers (``llm:`` in a params file).

    A run policy rather than a stage input: it is in no stage's stamp, so changing it reruns
    nothing that passed (a stage that failed reruns anyway).
    """

    max_failed_share: Annotated[float, PROPORTION] = 0.1
    """A stage fails when more than this share of one model's calls failed (after the client's
    retries), naming the model, the count and the first error; a model whose every call failed
    always fails it. 0 = any failed call fails the stage. A proportion in [0, 1]."""
    retry_failures: bool = True
    """Re-send the calls that the cache holds as failed from an earlier run; false = return them as
    failures again (never re-sent). A call that failed in this run is not re-sent in it."""
    budget_usd: Annotated[float | None, Bound(0)] = None
    """The most the run may spend on model calls, in USD at each entry's ``price_in`` / ``price_out``
    (the batch price for batched entries), over every stage and every earlier attempt of the run.
    A call that could pass it is not sent: the stage stops, says what was spent and what is left,
    and exits non-zero; raise it and rerun to go on from the cache. None = no cap; 0 = send nothing."""
    budget_tokens: Annotated[int | None, COUNT] = None
    """The most prompt plus output tokens the run may send, counted like ``budget_usd``. None = no
    cap; 0 = send nothing."""
    retrieval_device: str = "auto"
    """Where the embedder and the reranker run: ``auto`` (the CPU in a stage that starts model
    servers, where a vLLM server may be using any GPU; in the index stage the GPU when torch sees
    one), ``cpu``, or ``cuda:N`` (GPU N, 0-based among the visible GPUs, in every stage; the
    resources gate then lends the servers every GPU but N). A machine without a GPU runs them on
    the CPU under ``auto``. The embedding and score caches do not key on the device: a vector or
    score is computed once, on whichever device first needed it (:mod:`declinecraft.core.retrieval_device`)."""


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
    requests_per_second: Annotated[float, SECONDS] = 1.0
    """API politeness: at most this many requests per second."""
    max_retries: Annotated[int, COUNT] = 6
    """Retries per API request on 5xx, 429, timeouts and maxlag, with exponential backoff."""
    timeout_s: Annotated[float, SECONDS] = 30.0
    """Seconds per HTTP request before it counts as a timeout."""
    maxlag: Annotated[int, COUNT] = 5
    """``maxlag`` sent with every request (seconds of replication lag at which the wiki says wait)."""
    seeds_pre: tuple[str, ...] = ()
    """App. D: the seed pages of the C_pre crawl (the paper used 36)."""
    seeds_post: tuple[str, ...] = ()
    """App. D: the titles naming post-cut-off content that start the C_post crawl (the paper: 35)."""
    seed_source: str = "links"
    """``links``: breadth-first from the seeds over page links (the paper); ``allpages``: every page
    of ``namespaces`` (``list=allpages``), for a wiki whose links do not reach every page."""
    max_pages: Annotated[int, POSITIVE] = 3000
    """Pages fetched per crawl before it stops (the stop is logged and recorded in the manifest)."""
    cutoff: str = "2025-03-31"
    """Corpus cut-off day (UTC), inclusive: a revision stamped on that day is before the cut-off."""
    snapshot: str = "2026-09-08"
    """C_post scrape day: pages at their latest revision on or before it ("" = newest revision)."""
    namespaces: Annotated[tuple[int, ...], COUNT] = (0,)
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
    drop_sections: tuple[str, ...] = DROP_SECTIONS
    """App. D: sections removed by cleaning, matched as heading prefixes (see ``clean``)."""
    min_chars: Annotated[int, COUNT] = 200
    """Pages shorter than this many characters after cleaning are dropped."""
    chunk_size: Annotated[int, POSITIVE] = 1500
    """Characters per chunk body, not counting the ``[Page: <title>]`` line."""
    chunk_overlap: Annotated[int, COUNT] = 250
    """Characters consecutive chunks share, at most (whole lines, sentences or words)."""
    url_template: str = "https://minecraft.wiki/w/{title}"
    """A page's URL in chunk metadata; ``{title}`` is the title with underscores, URL-quoted."""


@dataclass(frozen=True)
class GenerateParams:
    """§3.2 and Appendix J.1: scenario-first question generation."""

    generator: str = "qwen2.5-coder-1.5b"
    """Registry id of the generator whose candidates make the benchmark."""
    generators: tuple[str, ...] = ()
    """Extra generators for Table 9's comparison (same pipeline and seed); () = no comparison."""
    n_answerable: Annotated[int, COUNT] = 40
    """Answerable candidates to draft (per generator); the paper's count is not published."""
    n_unanswerable: Annotated[int, COUNT] = 40
    """Unanswerable candidates to draft (per generator); the paper's count is not published."""
    scenario_chunks: Annotated[int, POSITIVE] = 3
    """Random C_pre chunks shown to G_scenario (§3.2 step 1)."""
    target_pool: Annotated[int, POSITIVE] = 10
    """Chunks retrieved by cosine similarity to the scenario (§3.2 step 2)."""
    target_draw: Annotated[int, POSITIVE] = 5
    """The target is drawn uniformly from this many highest-ranked eligible chunks."""
    max_facts: Annotated[int, POSITIVE] = 6
    """G_facts lists at most this many facts; extra ones are cut (§3.2 step 3)."""
    comparison_chunks: Annotated[int, COUNT] = 3
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
    max_words: Annotated[int, POSITIVE] = 30
    """Scenarios and asked questions must be under this many words (J.1); longer is lost to format."""
    trim_scenarios: bool = False
    """Cut an over-long scenario back to its leading whole sentences under max_words (noted on the
    draft) instead of losing it; False = the paper's rule. For small models that ignore the limit."""
    max_tokens: Annotated[int, TOKENS] = 512
    """Output budget of each generator call (paper: 16,000)."""
    scenario_max_tokens: Annotated[int, TOKENS_OR_0] = 0
    """Budget of the scenario call (0 = max_tokens); a cut-off answer counts as over-long."""
    question_max_tokens: Annotated[int, TOKENS_OR_0] = 0
    """Budget of the question call (0 = max_tokens); a cut-off answer counts as over-long."""
    prompt_chunk_chars: Annotated[int, COUNT] = 0
    """Cut each scenario and comparison (OLD) chunk to this many characters in generator prompts
    (0 = whole chunks, the paper; the target chunk is always whole): a CPU-speed deviation."""
    temperature: Annotated[float, TEMPERATURE] = 0.0
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
    retrieve_k: Annotated[int, POSITIVE] = 10
    """C_pre chunks the verifier reads per query."""
    context_chars: Annotated[int, COUNT] = 0
    """Cut each chunk to this many characters inside verifier prompts (0 = whole chunk, the
    paper); a CPU-speed and context-window deviation of the offline run."""
    target_answerable: Annotated[int, COUNT] = 700
    """Answerable questions in the benchmark."""
    target_unanswerable: Annotated[int, COUNT] = 300
    """Unanswerable questions in the benchmark."""
    max_per_chunk: Annotated[int, POSITIVE] = 2
    """At most this many questions per target chunk."""
    max_per_page: Annotated[int, POSITIVE] = 10
    """At most this many questions per target page."""
    review_file: str = "data/manual_review.yaml"
    """Manual review: candidate ids dropped by hand, with reasons, per run."""
    audit_pipeline: str = "hybrid"
    """The default retriever of the evaluation, used by the Hit@k and scenario-overlap audits."""
    audit_k: Annotated[int, POSITIVE] = 5
    """Chunks retrieved by the Hit@k and scenario-overlap audits (paper: 5)."""
    audit_folds: Annotated[int, Bound(2)] = 10
    """Cross-validation folds of the style AUC (fewer when a half has fewer questions)."""
    audit_min_df: Annotated[int, POSITIVE] = 3
    """Style AUC vocabulary: words that occur in at least this many questions."""
    comparison_verifier: str = ""
    """Verifier of Table 9's generator comparison ("" = the main verifier)."""
    comparison_answerable: Annotated[int, COUNT] = 100
    """Answerable target of each generator in Table 9's comparison."""
    comparison_unanswerable: Annotated[int, COUNT] = 100
    """Unanswerable target of each generator in Table 9's comparison."""
    max_tokens: Annotated[int, TOKENS] = 256
    """Output budget of each verifier call (paper: 16,000)."""
    temperature: Annotated[float, TEMPERATURE] = 0.0
    """Sampling temperature of every verifier call."""


@dataclass(frozen=True)
class AnswerParams:
    """§4.1, Appendix A.2–A.4, E, H: the models under test and the retrieval conditions."""

    models: tuple[str, ...] = ()
    """Registry ids of the models under test (one server at a time)."""
    thinking: tuple[str, ...] = ("off",)
    """Thinking settings ("off", "on") for switchable models; others run their only mode.
    "prompted" also runs models without a switch a second time, asked to reason in <think> tags
    (prompted reasoning, not a native thinking switch; evaluation.answer.thinking_modes)."""
    ablation_thinking: tuple[str, ...] = ()
    """Thinking settings the ablations (k sweep, pipelines, no scenario, temporal prompt) run in;
    () = every one of ``thinking``. ("off",) pairs thinking on the main grid only, as the paper's k
    ablation ran with thinking disabled (App. A.2; evaluation.answer.plan)."""
    ablation_models: dict[str, tuple[str, ...]] = field(default_factory=dict, hash=False)
    """Models of each ablation setting, keyed by its name: ``k=<k>`` (k sweep), a pipeline name
    (pipelines), ``no_scenario``, ``temporal_prompt``; a setting not named runs every model. The
    paper ran each ablation on its own subset (App. A.2: k=10 on 11 models, k=1-3 on 8; A.3: six
    pipelines on 12; A.4: no scenario on 10); names and models are checked on load."""
    conditions: tuple[str, ...] = ("no_rag", "single", "iterative")
    """Main grid: no retrieval, single-shot RAG, iterative RAG (§4.2)."""
    pipeline: str = "hybrid"
    """Retriever of the main grid (App. E: hybrid BM25 + dense, RRF)."""
    k: Annotated[int, POSITIVE] = 5
    """Chunks retrieved by single-shot RAG, and per round by iterative RAG (paper: 5)."""
    max_rounds: Annotated[int, COUNT] = 2
    """Iterative RAG: additional retrieval rounds after the first (Algorithm 4; paper: 2)."""
    k_sweep: Annotated[tuple[int, ...], POSITIVE] = ()
    """Ablation (App. A.2): single-shot RAG at each k; paper: (1, 2, 3, 5, 10). () = none."""
    pipelines: tuple[str, ...] = ()
    """Ablation (App. A.3): single-shot RAG with each pipeline at k. () = none."""
    no_scenario: bool = False
    """Ablation (App. A.4): single-shot RAG with the question alone as query and model input."""
    temporal_prompt: bool = False
    """Ours (§6.4): single-shot RAG with answer_with_context_temporal.txt."""
    rewriter: str = "qwen2.5-coder-1.5b"
    """Registry id of the query rewriter of the +rewrite pipelines (the paper's is not in our copy)."""
    context_chars: Annotated[int, COUNT] = 0
    """Cut each chunk to this many characters in answer and reflection prompts (0 = whole chunk,
    the paper); a context-window and CPU-speed deviation of the offline run."""
    max_tokens: Annotated[int, TOKENS] = 16000
    """Output budget of every call of a model under test, thinking included (paper: 16,000)."""
    temperature: Annotated[float, TEMPERATURE] = 0.0
    """Sampling temperature of every answer and reflection call."""
    limit_questions: Annotated[int, COUNT] = 0
    """Answer only this many benchmark questions (answerable share kept, seeded); 0 = all."""


@dataclass(frozen=True)
class JudgeParams:
    """Appendix I and J.3: response judge, oracle, accuracy judges, leakage audit."""

    response_judge: str = "qwen2.5-coder-1.5b"
    """Registry id of the response judge (paper: Gemma 4 26B-A4B, thinking disabled)."""
    labels_by_rule: bool = False
    """Take each response's label of record from its explicit phrases (the rule classifier,
    :mod:`declinecraft.evaluation.rule_labels`) instead of the response judge, which still labels
    every response; its agreement with the rules is in run health. A deviation for judges too small
    for the J.3 prompt (the paper: false)."""
    second_judges: tuple[str, ...] = ()
    """Second-opinion response judges for the agreement check (paper: Qwen3.8 27B, Llama 3.3 70B)."""
    second_judge_sample: Annotated[int, COUNT] = 1008
    """Responses the second judges relabel, equal per (label, condition) cell; 0 = all."""
    oracle: str = "qwen2.5-coder-1.5b"
    """Registry id of the oracle writing reference answers (paper: DeepSeek V4.1 Flash)."""
    accuracy_judges: tuple[str, ...] = ("qwen2.5-coder-1.5b",)
    """Registry ids of the accuracy (and leakage) judges; accuracy is their mean (paper: three)."""
    truncate_chars: Annotated[int, POSITIVE] = 12000
    """Responses are cut to this many characters before the response judge (App. I)."""
    oracle_page_chars: Annotated[int, COUNT] = 0
    """Cut the oracle's source page to this many characters (0 = the whole page, the paper); a
    context-window and CPU-speed deviation of the offline run."""
    oracle_chunk_chars: Annotated[int, COUNT] = 0
    """Cut each scenario chunk in the oracle's context to this many characters (0 = whole chunks)."""
    max_tokens: Annotated[int, TOKENS] = 512
    """Output budget of each response-judge and accuracy-judge call."""
    oracle_max_tokens: Annotated[int, TOKENS_OR_0] = 0
    """Output budget of each oracle call (0 = max_tokens)."""
    temperature: Annotated[float, TEMPERATURE] = 0.0
    """Sampling temperature of every judge and oracle call."""
    check_file: str = "data/judge_check/accuracy.csv"
    """The judges' check set (:mod:`declinecraft.evaluation.judge_check`): labelled items every
    accuracy judge model scores once before its scores count ("" = none)."""
    check_items: Annotated[int, COUNT] = 0
    """Ask only this many check-set items, the same number of each kind (seeded); 0 = every item.
    Each item is one call per accuracy judge model."""
    check_min_agreement: Annotated[float, PROPORTION] = 0.7
    """The share of check-set items an accuracy judge must score as labelled; below it the judge's
    scores are printed as not interpretable and no accuracy resting on them is a finding."""
    constrain_reask: bool = True
    """Constrain the one re-ask of an unparsable label or score to the valid answers (a grammar on
    llama.cpp, structured outputs on vLLM; a hosted API gets the plain re-ask). A deviation: the
    paper re-asks with the prompt's last line only. Small judges answer a 0/0.5/1 scale with
    "1.5" even when re-asked; false keeps the paper's plain re-ask."""


@dataclass(frozen=True)
class Know2GuessParams:
    """Know2Guess's decision protocol on our questions (its §3.5, §4; :mod:`declinecraft.views.know2guess`)."""

    enabled: bool = True
    """Run the view (``make all`` runs it by default); false writes ``DISABLED.md`` and nothing else."""
    models: tuple[str, ...] = ()
    """Registry ids of the models under test; () = the answer stage's models."""
    thinking: tuple[str, ...] = ()
    """Thinking settings ("off", "on") of switchable models; () = the answer stage's."""
    control_models: tuple[str, ...] = ()
    """Models that also get the control prompts (K2G: three of nine); () = every model under test."""
    prompts: tuple[str, ...] = ("standard", "answer_only", "compact", "delimiter")
    """K2G Appendix C prompts: ``standard`` (required) and the controls ``answer_only``, ``compact``,
    ``delimiter`` (``params/prompts/k2g_*.txt``)."""
    conditions: tuple[str, ...] = ("no_rag", "single")
    """``no_rag`` (K2G's setting) and ``single`` (ours: the answer stage's single-shot RAG chunks)."""
    limit_questions: Annotated[int, COUNT] = 0
    """Ask only this many of the answer stage's questions (answerable share kept, seeded); 0 = all."""
    max_tokens: Annotated[int, TOKENS] = 160
    """Output budget of each decision call in tokens, thinking included (K2G §5.3: 128–160, thinking off)."""
    temperature: Annotated[float, TEMPERATURE] = 0.0
    """Sampling temperature of every decision call (K2G: greedy)."""
    bootstrap_resamples: Annotated[int, POSITIVE] = 10000
    """Item-bootstrap resamples of every interval (K2G §4.3: 10,000)."""
    confidence: Annotated[float, LEVEL] = 0.95
    """Level of every interval, as a proportion (K2G: 95% percentile intervals)."""
    lambdas: Annotated[tuple[float, ...], Bound(0)] = (0.5, 1.0, 1.5)
    """Weights of productive abstention in cost-sensitive reliability R_lambda (K2G §6.9)."""
    ece_bins: Annotated[int, POSITIVE] = 10
    """Equal-width confidence bins of the answered-item ECE and the reliability diagram (K2G: 10)."""
    audit_top_features: Annotated[int, COUNT] = 10
    """Separability audit: probe words reported per half (the probe itself is App. F's style AUC)."""


@dataclass(frozen=True)
class EvidenceParams:
    """The Evidence Sufficiency Benchmark's five levels on our questions (:mod:`declinecraft.views.evidence`).

    Sizes left at 0 (or -1 where 0 means something else) take the answer stage's setting, so the
    view's retrieval and output budget match the main grid unless a run says otherwise.
    """

    enabled: bool = True
    """Run the view (``make all`` runs it by default); false writes a status file only."""
    models: tuple[str, ...] = ()
    """Registry ids of the models under test; () = the answer stage's models."""
    thinking: tuple[str, ...] = ("off",)
    """Thinking settings ("off", "on") for switchable models; others run their only mode."""
    prompts: tuple[str, ...] = ("P1", "P2", "P3")
    """ESB's prompt strategies (§4.3): P1 standard (answer from the passages), P2 sufficiency-aware,
    P3 CoT + sufficiency (all three in our words); J2, an extra variant, is our own J.2 answer prompt."""
    limit_questions: Annotated[int, COUNT] = 0
    """Questions to build levels for, answerable share kept (``answer.select_questions`` with the
    run's seed, so the answer stage's limit picks the same questions); 0 = the whole benchmark."""
    k: Annotated[int, COUNT] = 0
    """Chunks of L2 (the target and k-1 retrieved others), L3 and T; 0 = ``answer.k``."""
    pipeline: str = ""
    """Retriever of L2 and T; "" = ``answer.pipeline`` (the hybrid retriever)."""
    context_chars: Annotated[int, Bound(-1)] = -1
    """Cut each chunk to this many characters in prompts; 0 = whole chunks; -1 = ``answer.context_chars``."""
    conflict_model: str = ""
    """Registry id of the model that picks the value to alter when no rule applies (L5);
    "" = ``generate.generator``; "none" = rules only (such facts get no L5, counted)."""
    conflict_max_tokens: Annotated[int, TOKENS] = 96
    """Output budget of each conflict call (a short JSON object), tokens."""
    accuracy_judges: tuple[str, ...] = ()
    """Accuracy judges of L1-L2 answers; () = ``judge.accuracy_judges``."""
    max_tokens: Annotated[int, TOKENS_OR_0] = 0
    """Output budget of each answer call, tokens; 0 = ``answer.max_tokens``."""
    temperature: Annotated[float, TEMPERATURE] = 0.0
    """Sampling temperature of every answer and conflict call."""
    bootstrap_resamples: Annotated[int, POSITIVE] = 2000
    """Bootstrap resamples over questions of every interval (ESB §5.4: 2,000)."""
    confidence: Annotated[float, LEVEL] = 0.95
    """Level of every interval, as a proportion."""
    alpha: Annotated[float, LEVEL] = 0.05
    """A prompt effect is significant when its Benjamini-Hochberg q value is below alpha."""


@dataclass(frozen=True)
class AnalysisParams:
    """§4, Appendix A and H: statistics."""

    bootstrap_resamples: Annotated[int, POSITIVE] = 1000
    """Bootstrap resamples over questions (accuracy intervals) and items (Table 10); App. H: 1000."""
    confidence: Annotated[float, LEVEL] = 0.95
    """Level of every interval (Wilson, bootstrap, t), as a proportion."""
    alpha: Annotated[float, LEVEL] = 0.05
    """A comparison is significant when its Benjamini-Hochberg q value is below alpha."""
    min_n: Annotated[int, COUNT] = 0
    """The small-n rule (:mod:`declinecraft.core.small_n`): the fewest questions (items, models,
    configurations) a number must rest on to be stated as a finding in the claims check, the prose,
    the tables and the views; below it a number is printed with its n and "not interpretable at
    this n". 0 = the claims check's minimum: each test's own, and for other numbers the smallest n
    at which an exact sign test can reach p < alpha (6 at alpha = 0.05)."""
    min_attempt: Annotated[float, PROPORTION] = 0.95
    """Attempt-rate requirement (proportion) of the illustrative frontier point of App. A.7."""
    min_protocol: Annotated[float, PROPORTION] = 0.8
    """The share of a view's replies that must follow its protocol (a parsable decision, a stated
    confidence where the protocol asks for one, not cut at the output budget) for its behavioural
    numbers to be read; below it they print as "not interpretable: the models did not follow the
    protocol (k of n)". 0.8: a reply in five may stray."""
    max_leakage: Annotated[float, PROPORTION] = 0.2
    """The accuracy without retrieval on unanswerable questions above which run health flags a
    model released before the corpus cut-off: it cannot know what the wiki added later, so such a
    score points to a judge, an oracle or questions that are not unanswerable (0.2: a fifth of full
    credit, room for a judge's occasional half point)."""
    min_judge_kappa: Annotated[float, Bound(-1.0, 1.0)] = 0.4
    """The weighted Cohen's kappa two accuracy judges must reach on the same answers; below it run
    health warns that their scores barely agree (0.4: the lower edge of "moderate" agreement,
    Landis and Koch 1977)."""
    judge_score_prefix: str = "score_"
    """Prefix of the per-judge score columns in judged.parquet (``score_<judge model id>``)."""
    extra_runs: tuple[str, ...] = ()
    """Other runs whose judged responses join this analysis as ablation rows (e.g. ``k10`` for the
    k=10 comparison of App. A.2); a run without outputs is skipped with a note."""
    annotation_part1: Annotated[int, COUNT] = 70
    """Part 1 of the human validation: answers to unanswerable questions to label (App. I)."""
    annotation_part2: Annotated[int, COUNT] = 30
    """Part 2 of the human validation: attempted answers to score for accuracy (App. I)."""

    @property
    def finding_n(self) -> int:
        """The n a number needs to be stated as a finding: ``min_n``, or the claims check's minimum
        at ``alpha`` when 0 (:func:`declinecraft.core.small_n.threshold`)."""
        return small_n.threshold(self.min_n, self.alpha)


@dataclass(frozen=True)
class PaperParams:
    """The paper build: tables, figures, macros, PDF."""

    build_pdf: bool = True
    """Build the PDF with latexmk when a TeX installation is present (else say it was skipped)."""
    figure_formats: tuple[str, ...] = ("pdf", "png")
    """File formats every figure is saved in."""
    figure_dpi: Annotated[int, POSITIVE] = 200
    """Resolution of raster figure files (PNG), dots per inch."""
    example_questions: Annotated[int, POSITIVE] = 10
    """How many questions (the first by id) the qualitative-examples appendix prints, each with
    every response to it; the text says when the run has more."""
    example_chars: Annotated[int, POSITIVE] = 600
    """Characters of a response the qualitative-examples appendix prints before cutting it (…)."""
