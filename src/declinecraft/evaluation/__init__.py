"""Evaluating models on the benchmark (§4, App. A.2–A.4, E, H, I, J.2–J.3; stages 05 and 06).

``answer_stage`` (notebook 05) answers every setting with ``answer`` (no RAG, single-shot) and
``iterative`` (reflection rounds), showing chunks through ``context``; ``judge_stage`` (notebook
06) labels and scores the responses with ``judge`` (LLM judges), ``rule_labels`` (deterministic
labels) and ``metrics`` (CAR, attempt rate, accuracy, Bal. F1).
"""
