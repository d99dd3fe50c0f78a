"""The model-dependent fields of a request body: how thinking is switched, and how an answer is
constrained to a set of choices, per backend and models-file entry (:mod:`declinecraft.llm.client`
builds the rest of the body)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any, Literal

from declinecraft.core.registry import ModelSpec
from declinecraft.llm.transport import LLMError

ThinkingMode = Literal["on", "off", "prompt"]


def thinking_body(spec: ModelSpec, thinking: ThinkingMode | None) -> tuple[str, dict[str, Any]]:
    """Resolve a request's thinking setting for one model: ``(mode, body fields to send)``.

    ``thinking_switch`` is a dotted body path set to true/false (``chat_template_kwargs.
    enable_thinking``, OpenRouter's ``reasoning.enabled``) or ``reasoning_effort`` (on: the entry's
    ``reasoning_effort`` or "medium"; off: "none").

    Raises:
        LLMError: "off" for an always-thinking model, "on" for one without native thinking.
    """
    kind = spec.thinking
    mode = thinking or ("on" if kind == "always" else "off")
    if kind == "always" and mode != "on":
        raise LLMError(f"model {spec.id!r} always thinks: thinking={mode!r} is not possible")
    if kind in ("none", "") and mode == "on":
        raise LLMError(f"model {spec.id!r} has no native thinking: use thinking='prompt' (labeled) instead")
    switch = spec.thinking_switch
    if not switch or (kind == "always" and switch != "reasoning_effort"):
        if kind == "switchable":
            raise LLMError(f"model {spec.id!r}: switchable thinking needs a thinking_switch in the models file")
        return mode, {}
    on = mode == "on"
    if switch == "reasoning_effort":
        return mode, {"reasoning_effort": str(spec.extra.get("reasoning_effort", "medium")) if on else "none"}
    body: dict[str, Any] = {}
    node = body
    *parents, leaf = switch.split(".")
    for part in parents:
        node = node.setdefault(part, {})
    node[leaf] = on
    return mode, body


def choice_constraint(spec: ModelSpec, choices: Sequence[str]) -> dict[str, Any]:
    """Body fields that restrict the answer to one of ``choices``: a GBNF grammar for llama.cpp
    (both its server and llama-cpp-python's), vLLM's structured outputs, nothing for a hosted API
    (whose answer is then parsed as any other)."""
    if spec.backend == "llamacpp":
        return {"grammar": "root ::= " + " | ".join(json.dumps(c) for c in choices)}
    if spec.backend == "vllm":
        return {"structured_outputs": {"choice": list(choices)}}
    return {}
