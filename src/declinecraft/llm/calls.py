"""The one templated call and reply that every stage exchanges with the LLM layer.

A stage never builds chat messages itself: it names a prompt of ``params/prompts/`` and fills its
fields (:class:`Call`), and gets back what the stage keeps of the call's record (:class:`Reply`).
:data:`Ask` is the batch callable that runs calls for one model and setting; tests script it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from declinecraft.llm.responses import Result


@dataclass(frozen=True)
class Call:
    """One templated chat call: a template of ``params/prompts/`` and its fields."""

    prompt: str
    """Template name (file stem in ``params/prompts/``)."""
    fields: Mapping[str, str] = field(hash=False)
    """Values of the template's ``{placeholders}``."""
    max_tokens: int | None = None
    """Output budget of this call; None: the asker's budget."""
    history: tuple[tuple[str, str], ...] = ()
    """(role, text) turns sent after the rendered template (a judge's re-ask)."""
    choices: tuple[str, ...] = ()
    """The only answers allowed, where the backend can constrain decoding
    (:attr:`declinecraft.llm.client.Request.choices`)."""


@dataclass(frozen=True)
class Reply:
    """What one call returned (the LLM layer's record, reduced to what the stages need)."""

    text: str
    """Final answer text, thinking removed ('' for a failed call)."""
    thinking: str | None = None
    finish_reason: str | None = "stop"
    budget_exhausted: bool = False
    """The output budget ran out before any final answer (§4.1, App. H)."""
    cache_key: str | None = None
    """Key of the call's record in the LLM cache."""
    error: str | None = None
    """Why the call failed; None for an answered call."""
    completion_tokens: int | None = None


#: ``ask(calls)`` -> one reply per call, in order (one model, thinking setting and budget).
Ask = Callable[[Sequence[Call]], list[Reply]]


def to_reply(result: Result) -> Reply:
    """Reduce an LLM-layer result to what the stages keep (a failure keeps its error)."""
    return Reply(
        text=result.text if result.ok else "",
        thinking=result.thinking or None,
        finish_reason=result.finish_reason,
        budget_exhausted=result.budget_exhausted,
        cache_key=result.key,
        error=None if result.ok else (result.error or "failed"),
        completion_tokens=result.completion_tokens,
    )
