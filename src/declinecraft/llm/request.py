"""One chat request, fully explicit, and the exact body sent for it (which is keyed).

:class:`Request` is what callers build (messages, output budget, sampling, thinking, JSON mode);
:func:`request_body` turns it into the body a model's endpoint receives, and
:func:`endpoint_identity` says which model service answers it. Both are part of a call's cache key
(:func:`declinecraft.llm.cache.call_key`). :mod:`declinecraft.llm.client` re-exports all three.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from declinecraft.core import bounds, prompts
from declinecraft.core.registry import ModelSpec
from declinecraft.llm import serve
from declinecraft.llm.body_fields import ThinkingMode, choice_constraint, thinking_body
from declinecraft.llm.responses import reasoning_prompt
from declinecraft.llm.transport import LLMError

#: Stand-in for native thinking on models without a switch (labeled thinking_mode "prompt"): our
#: instruction, params/prompts/think_prompted.txt (see responses.reasoning_prompt).
REASONING_PROMPT = reasoning_prompt()


@dataclass(frozen=True)
class Request:
    """One chat call, fully explicit. Everything except ``tag`` is part of the cache key."""

    messages: tuple[Mapping[str, Any], ...]
    """Chat messages (``{"role": ..., "content": ...}``), sent as given."""
    max_tokens: int
    """Output budget in tokens, thinking included (the paper: 16,000)."""
    temperature: float = 0.0
    thinking: ThinkingMode | None = None
    """None = the model's fixed behaviour: off where switchable or absent, on where always."""
    json_mode: bool = False
    """Ask for a JSON object (``response_format`` where the model allows it) and parse the answer."""
    choices: tuple[str, ...] = ()
    """The only answers allowed (:func:`choice_constraint`); empty: free text."""
    prompt_version: str = ""
    """Version of the template the messages came from (:attr:`prompts.Prompt.version`)."""
    params: Mapping[str, Any] = field(default_factory=dict)
    """Further body fields (top_p, seed, stop...), merged into the request body."""
    tag: str = ""
    """The caller's row id (question, condition...), carried to the result; not keyed."""

    @classmethod
    def from_prompt(
        cls,
        prompt: prompts.Prompt,
        fields: Mapping[str, Any],
        *,
        max_tokens: int,
        system: str | None = None,
        **options: Any,
    ) -> Request:
        """Render ``prompt`` with ``fields`` into one user message (after an optional system one)."""
        messages = ([{"role": "system", "content": system}] if system else []) + [
            {"role": "user", "content": prompt.render(**fields)}
        ]
        return cls(messages=tuple(messages), max_tokens=max_tokens, prompt_version=prompt.version, **options)

    @classmethod
    def from_text(cls, text: str, *, max_tokens: int, **options: Any) -> Request:
        """One user message."""
        return cls(messages=({"role": "user", "content": text},), max_tokens=max_tokens, **options)


# --- request bodies --------------------------------------------------------------------------


def endpoint_identity(spec: ModelSpec, base_urls: Sequence[str] = (), cache_dir: Path | None = None) -> dict[str, str]:
    """Return what identifies the model service in the cache key.

    Local servers: backend, served name, revision, weights and the server program: llama.cpp's
    flavour and prompt batch, or (for a vLLM server the project starts from ``cache_dir``) vLLM's
    wheel, version, eager or compiled, and the model folder's hash (:func:`.serve.server_identity`);
    never the port. A hosted API: also its base URL
    (two providers may serve different builds under one name).
    """
    identity = {
        "backend": spec.backend,
        "model": spec.served_name,
        "revision": spec.revision or "",
        "weights": str(spec.gguf.get("sha256") or spec.hf_repo or ""),
    }
    identity |= serve.server_identity(spec, cache_dir)
    if not spec.is_local:
        identity["base_url"] = (spec.base_url or (base_urls[0] if base_urls else "")).rstrip("/")
    return identity


def _merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    for name, value in extra.items():
        if isinstance(value, Mapping) and isinstance(base.get(name), dict):
            base[name] = _merge(dict(base[name]), value)
        else:
            base[name] = value
    return base


def request_body(spec: ModelSpec, request: Request) -> tuple[str, dict[str, Any]]:
    """Return ``(thinking_mode, body)``: the exact body sent (without ``model``), which is keyed.

    Raises:
        LLMError: an output budget below 1 token (a server may read -1 or 0 as "no limit").
    """
    if isinstance(request.max_tokens, bool) or not 1 <= request.max_tokens <= bounds.MAX_TOKENS:
        raise LLMError(
            f"model {spec.id!r}: max_tokens {request.max_tokens!r} is not an output budget (needs 1 to "
            f"{bounds.MAX_TOKENS:,} tokens; a server may read -1 or 0 as no limit); nothing was sent"
        )
    mode, switch = thinking_body(spec, request.thinking)
    messages = [dict(m) for m in request.messages]
    if mode == "prompt":
        if messages and messages[0].get("role") == "system":
            messages[0]["content"] = f"{REASONING_PROMPT}\n\n{messages[0]['content']}"
        else:
            messages.insert(0, {"role": "system", "content": REASONING_PROMPT})
    body: dict[str, Any] = {"messages": messages, "temperature": request.temperature}
    body[str(spec.extra.get("max_tokens_field", "max_tokens"))] = request.max_tokens
    if request.json_mode and spec.extra.get("response_format", True) is not False:
        body["response_format"] = {"type": "json_object"}
    if request.choices:
        body |= choice_constraint(spec, request.choices)
    return mode, _merge(_merge(body, switch), request.params)
