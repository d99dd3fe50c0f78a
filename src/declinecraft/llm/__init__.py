"""The one path to every model (docs/design.md, its invariants: one path to every model).

``calls`` holds the templated :class:`~declinecraft.llm.calls.Call` and its
:class:`~declinecraft.llm.calls.Reply`; ``pool`` hands stages one model's batch callable at a
time; ``client`` turns calls into cached requests, ``transport`` sends them through the openai
SDK, ``cache`` stores every record (content-addressed SQLite; ``pages`` reads a damaged one page by
page for its salvage), ``responses`` parses answers,
``serve`` and ``parent_death`` run local llama.cpp / vLLM servers that die with their starter,
``supervisor`` restarts one that dies under a batch.
"""
