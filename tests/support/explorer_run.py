"""A hand-built run with known answers for the explorer's tests: questions, chunks, judged responses,
and a project that holds them."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl

from declinecraft.core import config
from tests.support import projects, synthetic

CONFIGS = (("m1", "off"), ("m1", "on"), ("m2", "off"))


SETTINGS = {"no_rag": ("none", 0), "single": ("hybrid", 5), "iterative": ("hybrid", 5)}


QUESTIONS = [
    {
        "id": "q-sulfur",
        "answerable": False,
        "scenario": "I am flying with my Elytra and boost with a firework rocket.",
        "asked_question": "What are the distinct archetypes of the Sulfur Cube entity?",
        "fact": "Twelve archetypes.",
        "target_chunk_id": "Sulfur_Cube#0",
        "target_title": "Sulfur Cube",
        "scenario_chunk_ids": ["Elytra#0", "Firework#0"],
    },
    {
        "id": "q-copper",
        "answerable": False,
        "scenario": "I ride my horse across the plains.",
        "asked_question": "How many armor points does copper horse armor give?",
        "fact": "Four points.",
        "target_chunk_id": "Copper_Horse_Armor#0",
        "target_title": "Copper Horse Armor",
        "scenario_chunk_ids": ["Horse#0"],
    },
    {
        "id": "q-panda",
        "answerable": True,
        "scenario": "I am breeding pandas in the bamboo jungle.",
        "asked_question": "How do main and hidden genes decide a playful panda?",
        "fact": "Dominant main gene.",
        "target_chunk_id": "Panda#0",
        "target_title": "Panda",
        "scenario_chunk_ids": ["Bamboo#0"],
    },
    {
        "id": "q-spider",
        "answerable": True,
        "scenario": "I sneak on a slime block while a cave spider attacks.",
        "asked_question": "Which mob makes a cave spider run away?",
        "fact": "Armadillos scare spiders.",
        "target_chunk_id": "Cave_Spider#0",
        "target_title": "Cave Spider",
        "scenario_chunk_ids": ["Slime_Block#0"],
    },
]


CHUNKS = [
    "Elytra#0",
    "Firework#0",
    "Horse#0",
    "Horse_Armor#0",
    "Magma_Cube#0",
    "Panda#0",
    "Bamboo#0",
    "Cave_Spider#0",
    "Slime_Block#0",
    "Leather#0",
]


POST = ["Sulfur_Cube#0", "Copper_Horse_Armor#0"]


RETRIEVED = {
    "q-sulfur": ["Elytra#0", "Firework#0", "Leather#0"],
    "q-copper": ["Horse#0", "Horse_Armor#0", "Leather#0"],
    "q-panda": ["Bamboo#0", "Panda#0", "Leather#0"],
    "q-spider": ["Slime_Block#0", "Leather#0", "Horse#0"],
}


#: (question, model, thinking, setting) -> (label, score_j1, score_j2); everything else takes the default.
DEFAULT = {
    "q-sulfur": ("ABSTAIN", None, None),
    "q-copper": ("ABSTAIN", None, None),
    "q-panda": ("ANSWER", 1.0, 1.0),
    "q-spider": ("ABSTAIN", 0.0, 0.0),
}


SPECIAL = {
    ("q-sulfur", "m1", "off", "no_rag"): ("ANSWER", None, None),
    ("q-sulfur", "m1", "off", "iterative"): ("ANSWER", None, None),  # the Sulfur Cube: A single -> X iterative
    ("q-copper", "m1", "on", "no_rag"): ("DENY", None, None),  # thinking off -> on: A -> D
    ("q-copper", "m2", "off", "iterative"): (None, None, None),  # budget exhausted
    ("q-panda", "m1", "off", "iterative"): ("ANSWER", 1.0, 0.0),  # judges disagree
}


RULE_DIFFERS = ("q-panda", "m2", "off", "single")  # LLM judge ANSWER, rule_label ABSTAIN


def _rounds(qid: str) -> str:
    first = {
        "index": 0,
        "queries": [qid],
        "chunk_ids": RETRIEVED[qid],
        "stop": None,
        "reflection": {
            "status": "insufficient",
            "assessment": "Insufficient",
            "missing_info": "what it is",
            "follow_ups": ["Magma Cube sizes"],
        },
    }
    return json.dumps(
        [
            first,
            {
                "index": 1,
                "queries": ["Magma Cube sizes"],
                "chunk_ids": ["Magma_Cube#0"],
                "reflection": None,
                "stop": "max_rounds",
            },
        ]
    )


def build_tables() -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(benchmark, judged, references, chunks) of the hand-built run."""
    bench = pl.DataFrame(
        [
            {
                **q,
                "question": f"{q['scenario']} {q['asked_question']}",
                "target_url": f"https://wiki.test/{q['target_title']}",
            }
            for q in QUESTIONS
        ]
    )
    rows = []
    answerable = {q["id"]: q["answerable"] for q in QUESTIONS}
    plan = [(c, *SETTINGS[c]) for c in SETTINGS] + [("single", "bm25", 5)]
    for q in QUESTIONS:
        qid = q["id"]
        for model, thinking in CONFIGS:
            for condition, pipeline, k in plan:
                if pipeline == "bm25" and model != "m2":
                    continue  # an ablation row: single-shot BM25 for m2 only
                setting = condition if pipeline != "bm25" else "single/bm25/k5"
                label, j1, j2 = SPECIAL.get((qid, model, thinking, setting), DEFAULT[qid])
                ids = (
                    []
                    if condition == "no_rag"
                    else RETRIEVED[qid] + (["Magma_Cube#0"] if condition == "iterative" else [])
                )
                text = {
                    "ABSTAIN": "The provided context does not contain the answer.",
                    "DENY": "There is **no such thing**: <b>none</b>.",  # markdown, and HTML to escape
                    "ANSWER": f"It is answered ({qid}).",
                }.get(label or "", "")
                if (qid, model, thinking, setting) == ("q-sulfur", "m1", "off", "iterative"):
                    text = "The Magma Cube (sometimes called a 'Sulfur Cube') comes in three size-based archetypes."
                rows.append(
                    {
                        "response_id": f"{qid}/{model}/{thinking}/{setting}",
                        "question_id": qid,
                        "answerable": answerable[qid],
                        "model": model,
                        "thinking": thinking,
                        "condition": condition,
                        "pipeline": pipeline,
                        "k": k,
                        "scenario": True,
                        "prompt_variant": "default",
                        "query": qid,
                        "response": text,
                        "thinking_trace": "hmm, let me think" if thinking == "on" else "",
                        "finish_reason": "length" if label is None else "stop",
                        "budget_exhausted": label is None,
                        "cache_key": "k",
                        "retrieved_chunk_ids": ids,
                        "component_ranks": json.dumps([{"bm25": i + 1, "dense": len(ids) - i} for i in range(len(ids))])
                        if ids
                        else None,
                        "rounds": _rounds(qid) if condition == "iterative" else None,
                        "n_rounds": 2 if condition == "iterative" else None,
                        "completion_tokens": 10,
                        "error": None,
                        "label": label,
                        "label_unparsable": False,
                        "label_source": "llm",
                        "rule_label": "ABSTAIN" if (qid, model, thinking, setting) == RULE_DIFFERS else label,
                        "score_j1": j1,
                        "score_j2": j2,
                        "accuracy": None if j1 is None else (j1 + j2) / 2,
                        "accuracy_complete": j1 is not None,
                        "question": "joined by the judge stage",
                        "reference": f"reference of {qid}",
                    }
                )
    judged = pl.DataFrame(
        rows,
        schema_overrides={"score_j1": pl.Float64, "score_j2": pl.Float64, "accuracy": pl.Float64, "label": pl.String},
    )
    refs = pl.DataFrame(
        {"question_id": [q["id"] for q in QUESTIONS], "reference": [f"ref {q['id']}" for q in QUESTIONS]}
    )
    chunks = pl.DataFrame(
        {
            "chunk_id": CHUNKS + POST,
            "title": [c.split("#")[0].replace("_", " ") for c in CHUNKS + POST],
            "url": [f"https://wiki.test/{c.split('#')[0]}" for c in CHUNKS + POST],
            "text": [f"[Page: {c.split('#')[0]}] text of {c}" for c in CHUNKS + POST],
            "corpus": ["pre"] * len(CHUNKS) + ["post"] * len(POST),
        }
    )
    return bench, judged, refs, chunks


def write_project(folder: Path) -> config.RunConfig:
    """A throwaway project whose default run holds the hand-built run's outputs (k10 derives from it)."""
    (folder / "params").mkdir(parents=True)
    shutil.copy(projects.REPO / "pyproject.toml", folder / "pyproject.toml")
    for name in ("default.yaml", "k10.yaml"):
        shutil.copy(projects.REPO / "params" / name, folder / "params" / name)
    cfg = config.load(folder / "params" / "default.yaml")
    bench, judged, refs, chunks = build_tables()
    for stage, name, frame in (
        ("verify", "benchmark", bench),
        ("judge", "judged", judged),
        ("judge", "references", refs),
    ):
        cfg.stage_dir(stage).mkdir(parents=True, exist_ok=True)
        frame.write_parquet(cfg.stage_dir(stage) / f"{name}.parquet")
    cfg.stage_dir("corpus").mkdir(parents=True)
    for corpus in ("pre", "post"):
        chunks.filter(pl.col("corpus") == corpus).drop("corpus").write_parquet(
            cfg.stage_dir("corpus") / f"chunks_{corpus}.parquet"
        )
    return cfg


def paper_sized_project(
    folder: Path, *, n_configs: int = 40, n_questions: int = 1000, ablations: bool = False
) -> config.RunConfig:
    """A project whose default run holds a synthetic benchmark, judged table (``n_configs`` x 3
    conditions x ``n_questions``, with response texts, thinking traces, retrieved chunk ids and
    iterative rounds) and corpus chunks: the explorer at the paper's size. ``ablations`` adds the
    single-shot ablation rows of up to 12 models (:func:`~tests.support.synthetic.synthetic_judged`)."""
    (folder / "params").mkdir(parents=True)
    shutil.copy(projects.REPO / "pyproject.toml", folder / "pyproject.toml")
    shutil.copy(projects.REPO / "params" / "default.yaml", folder / "params" / "default.yaml")
    cfg = config.load(folder / "params" / "default.yaml")
    judged = synthetic.synthetic_judged(n_configs, n_questions, seed=0, ablations=ablations)
    n_ans = int(judged.filter("answerable")["question_id"].n_unique())
    ids = [f"q{i:04d}" for i in range(n_questions)]
    chunk = pl.format("Page_{}#{}", pl.col("n") % 500, pl.col("n") % 7)
    bench = (
        pl.DataFrame({"id": ids, "answerable": [i < n_ans for i in range(n_questions)]})
        .with_row_index("n")
        .with_columns(
            scenario=pl.format("I am exploring biome {} with a copper pickaxe while it rains.", "n"),
            asked_question=pl.format("What does feature {} drop when mined?", "n"),
            fact=pl.format("Feature {} drops two items.", "n"),
            target_chunk_id=chunk,
            target_title=pl.format("Page {}", pl.col("n") % 500),
            target_url=pl.format("https://wiki.test/Page_{}", pl.col("n") % 500),
            scenario_chunk_ids=pl.concat_list(
                pl.format("Page_{}#0", (pl.col("n") * 7) % 500), pl.format("Page_{}#1", (pl.col("n") * 11) % 500)
            ),
        )
        .with_columns(question=pl.concat_str("scenario", "asked_question", separator=" "))
        .drop("n")
    )
    rows = (
        judged.with_row_index("n")
        .with_columns(
            response_id=pl.col("n").cast(pl.String),
            response=pl.format("Response {}: ", "n") + pl.lit("the answer is probably a block of something. " * 6),
            thinking_trace=pl.when(pl.col("thinking") == "on").then(pl.lit("Let me think about this step. " * 30)),
            rule_label=pl.col("label"),
            finish_reason=pl.lit("stop"),
            error=pl.lit(None, pl.String),
            retrieved_chunk_ids=pl.when(pl.col("condition") != "no_rag").then(
                pl.concat_list([pl.format("Page_{}#0", (pl.col("n") + i) % 500) for i in range(5)])
            ),
            component_ranks=pl.when(pl.col("condition") != "no_rag").then(
                pl.lit(json.dumps([{"bm25": i + 1, "dense": 5 - i} for i in range(5)]))
            ),
            rounds=pl.when(pl.col("condition") == "iterative").then(
                pl.lit(
                    json.dumps(
                        [
                            {
                                "index": 0,
                                "queries": ["q"],
                                "chunk_ids": ["Page_1#0"],
                                "stop": "sufficient",
                                "reflection": {
                                    "status": "sufficient",
                                    "assessment": "Sufficient",
                                    "missing_info": "",
                                    "follow_ups": [],
                                },
                            }
                        ]
                    )
                )
            ),
        )
        .drop("n")
    )
    for stage, name, frame in (("verify", "benchmark", bench), ("judge", "judged", rows)):
        cfg.stage_dir(stage).mkdir(parents=True, exist_ok=True)
        frame.write_parquet(cfg.stage_dir(stage) / f"{name}.parquet")
    cfg.stage_dir("corpus").mkdir(parents=True)
    titles = pl.DataFrame({"p": list(range(500))})
    for corpus in ("pre", "post"):
        chunks = titles.join(pl.DataFrame({"j": list(range(7))}), how="cross").select(
            chunk_id=pl.format("Page_{}#{}", "p", "j"),
            title=pl.format("Page {}", "p"),
            url=pl.format("https://wiki.test/Page_{}", "p"),
            text=pl.format("[Page: Page {}] chunk {} text.", "p", "j"),
        )
        (chunks if corpus == "pre" else chunks.head(0)).write_parquet(
            cfg.stage_dir("corpus") / f"chunks_{corpus}.parquet"
        )
    return cfg
