"""The retrieval part (App. D, E; stage 02): chunk vectors in LanceDB, BM25 in Tantivy, six pipelines.

``stage`` builds the index (``index``) with an embedder (``embed``, the ``embedder`` protocol,
``embedding_cache``, ``hashing`` for tests); ``retrieve.Retriever`` opens it and runs the
``pipelines`` (BM25 analysis in ``bm25``, RRF and the :class:`~declinecraft.retrieval.fusion.Hit`
type in ``fusion``, the cross-encoder in ``rerank``); ``diagnostics`` measures Hit@k.
"""
