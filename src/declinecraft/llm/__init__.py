"""The one path to every model (docs/design.md, its invariants: one path to every model).

``calls`` holds the templated :class:`~declinecraft.llm.calls.Call` and its
:class:`~declinecraft.llm.calls.Reply`; ``pool`` hands stages one model's batch callable at a
time; ``client`` turns calls into cached requests (``request`` builds their bodies), ``transport``
sends them through the openai SDK (``throttle`` keeps them under an entry's rate limits), ``batch``
sends them through a provider's batch API instead (``batch_lines`` holds the JSONL formats,
``batch_files`` writes them for ``vllm run-batch`` and reads the results back), ``spend`` keeps
a run's budget, ``cache`` stores every record (content-addressed SQLite; its file checks and the
page-by-page reader its salvage uses are :mod:`declinecraft.runtime`'s ``cache_file`` and
``cache_recovery``), ``responses`` parses answers, ``serve`` runs local llama.cpp / vLLM servers
that die with their starter (:mod:`declinecraft.runtime.parent_death`), ``supervisor`` restarts one
that dies under a batch.
"""
