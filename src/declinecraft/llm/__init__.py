"""The one path to every model (docs/design.md, its invariants: one path to every model).

``calls`` holds the templated :class:`~declinecraft.llm.calls.Call` and its
:class:`~declinecraft.llm.calls.Reply`; ``pool`` hands stages one model's batch callable at a
time; ``client`` turns calls into cached requests (``request`` builds their bodies), ``transport``
sends them through the openai SDK (``throttle`` keeps them under an entry's rate limits), ``batch``
sends them through a provider's batch API instead (``batch_lines`` holds the JSONL formats,
``batch_files`` writes them for ``vllm run-batch`` and reads the results back), ``spend`` keeps
a run's budget, ``cache`` stores every record (content-addressed SQLite; ``pages`` reads a damaged one page by
page for its salvage), ``responses`` parses answers,
``serve`` and ``parent_death`` run local llama.cpp / vLLM servers that die with their starter,
``supervisor`` restarts one that dies under a batch.
"""
