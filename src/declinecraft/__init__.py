"""DeclineCraft: a RAG abstention benchmark from the Minecraft Wiki, reproducible end to end.

Stage modules follow the paper's vocabulary (``wiki``, ``clean``, ``corpus``, ``embed``, ``index``,
``retrieve``, ``llm``, ``cache``, ``generate``, ``verify``, ``audit``, ``answer``, ``judge``,
``metrics``, ``stats``, ``plots``, ``report``, ``explore``); import them by name, e.g.
``from declinecraft import corpus, stats``.
"""

__version__ = "0.1.0"
