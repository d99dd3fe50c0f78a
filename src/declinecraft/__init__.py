"""DeclineCraft: a RAG abstention benchmark from the Minecraft Wiki, reproducible end to end.

The library is layered, one sub-package per part of the pipeline (lowest first): ``core``;
``runtime`` (the machinery: processes, locks, the cache's file, builds, replay); ``llm``,
``corpus``, ``retrieval``; ``construction``, ``evaluation``; ``views``; ``analysis``; ``paper``;
and ``explore``, which reads stage files only. A lower part never imports a higher one.
Each stage's entry point is a ``run(cfg)`` in its part (the README lists them).
"""

__version__ = "0.1.0"
