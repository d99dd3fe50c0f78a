"""01_corpus: the two corpora and their chunks (§3.1, Appendix D)."""

from __future__ import annotations

from declinecraft.core.declaration import Stage, writer
from declinecraft.core.params import CorpusParams

_write = writer("corpus", "01_corpus")

_PAGES = "one row per page (title, revision_id, timestamp, created, text)"
_CHUNKS = "one row per chunk (chunk_id, title, text, url, revision_id, timestamp, corpus)"
CORPUS_PAGES_PRE = _write("pages_pre.parquet", f"C_pre: {_PAGES}")
CORPUS_PAGES_POST = _write("pages_post.parquet", f"C_post: {_PAGES}")
CORPUS_CHUNKS_PRE = _write("chunks_pre.parquet", f"C_pre: {_CHUNKS}")
CORPUS_CHUNKS_POST = _write("chunks_post.parquet", f"C_post: {_CHUNKS}")
CORPUS_DROPPED = _write("dropped.parquet", "every page left out (title, corpus, reason, detail)")
CORPUS_STATS = _write("stats.csv", "pages, chunks and drops per corpus")
CORPUS_MANIFEST = _write("manifest.json", "the input's sha256 or crawl statistics, params and counts")
#: Each corpus's chunks and pages by corpus name.
CORPUS_CHUNKS = {"pre": CORPUS_CHUNKS_PRE, "post": CORPUS_CHUNKS_POST}
CORPUS_PAGES = {"pre": CORPUS_PAGES_PRE, "post": CORPUS_PAGES_POST}

STAGE = Stage(
    block="corpus",
    notebook="01_corpus",
    params=CorpusParams,
    run="declinecraft.corpus.stage:run",
    about="MediaWiki to C_pre / C_post to chunks (§3.1, App. D)",
    reads=(),
    data=lambda cfg: [cfg.corpus.dump] if cfg.corpus.source == "dump" else [],
)
