"""The corpus part (§3.1, App. D): MediaWiki pages to C_pre / C_post to chunks.

``wiki`` reads exports, ``crawl`` the MediaWiki API, ``clean`` turns wikitext into text,
``corpora`` splits pages at the cut-off and chunks them; ``stage`` is notebook 01's entry point.
"""

from declinecraft.corpus.corpora import Corpus, build, chunk

__all__ = ["Corpus", "build", "chunk"]
