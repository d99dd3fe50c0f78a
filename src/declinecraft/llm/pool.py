"""The stages' thin adapter to the LLM layer: one local model server at a time.

:class:`ModelPool` hands out :data:`calls.Ask` callables (templated :class:`calls.Call` in,
:class:`calls.Reply` out) for registry models. It keeps at most one model's connection open:
asking for another model closes the previous one, which stops its local server. Servers start
lazily through :func:`~declinecraft.llm.client.connect`, at the first cache miss, so a fully cached rerun starts none.

It is also where a failed model stops a stage, for every stage alike: it counts each model's
calls and failures, and :meth:`ModelPool.close` (the end of the stage) raises :class:`ModelFailed`
when a model's failures exceed ``llm.max_failed_share`` of its calls, or all of them failed.
Failures cached by an earlier run are re-sent unless ``llm.retry_failures`` is false.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Sequence
from contextlib import ExitStack
from datetime import UTC, datetime
from typing import Any, Protocol

from declinecraft.core import prompts, registry
from declinecraft.core.config import RunConfig
from declinecraft.llm import batch_files
from declinecraft.llm.cache import open_cache
from declinecraft.llm.calls import Ask, Call, Reply, to_reply
from declinecraft.llm.client import Budget, Client, LLMError, Request, connect


class ModelFailed(LLMError):
    """A model's calls failed beyond the run's tolerance (``llm.max_failed_share``); the message
    names the model, the count and the first error."""


@dataclasses.dataclass
class Tally:
    """One model's calls in a stage (results returned, identical requests each counted)."""

    calls: int = 0
    failed: int = 0
    first_error: str = ""

    def add(self, errors: Sequence[str | None]) -> None:
        self.calls += len(errors)
        for error in errors:
            if error is not None:
                self.failed += 1
                self.first_error = self.first_error or error


def check_failures(tallies: dict[str, Tally], max_failed_share: float) -> None:
    """Raise :class:`ModelFailed` for the first model whose every call failed, or whose failures
    exceed ``max_failed_share`` of its calls."""
    for model_id, tally in tallies.items():
        if tally.failed and (tally.failed == tally.calls or tally.failed > max_failed_share * tally.calls):
            what = "every call" if tally.failed == tally.calls else f"more than {max_failed_share:.0%} of the calls"
            raise ModelFailed(
                f"model {model_id!r}: {tally.failed} of {tally.calls} calls failed ({what}; llm.max_failed_share "
                f"is {max_failed_share:g}); first error: {tally.first_error}. The failures are cached and "
                "re-sent on the next run (llm.retry_failures)"
            )


class Models(Protocol):
    """What the stage needs from the model layer (:class:`ModelPool`; fakes in tests)."""

    def thinking_switch(self, model_id: str) -> str:
        """The registry's ``thinking`` field: none, always or switchable."""
        ...

    def asker(self, model_id: str, *, thinking: str | None, max_tokens: int, temperature: float = 0.0) -> Ask:
        """A batch callable for one model and setting."""
        ...

    def release(self) -> None:
        """Stop the current model's server."""
        ...


class ModelPool:
    """Clients for a run's models, one open connection (and local server) at a time."""

    def __init__(self, cfg: RunConfig, *, progress: bool = False) -> None:
        self.cfg = cfg
        self.progress = progress
        self.specs = registry.load_models(cfg.resolve(cfg.models_file))
        self.cache = open_cache(cfg.cache_dir)
        self.budget = Budget(
            self.cache,
            cfg.run,
            usd=cfg.llm.budget_usd,
            tokens=cfg.llm.budget_tokens,
            where=str(
                cfg.params_file.relative_to(cfg.root) if cfg.params_file.is_relative_to(cfg.root) else cfg.params_file
            ),
        )
        """The run's caps and spend so far (``llm.budget_usd``, ``llm.budget_tokens``)."""
        self._stack: ExitStack | None = None
        self._current: tuple[str, Client] | None = None
        self._prompts: dict[str, prompts.Prompt] = {}
        self.calls = 0
        self.tallies: dict[str, Tally] = {}
        """Calls and failures per model id this stage, for :func:`check_failures`."""
        self._started = datetime.now(UTC).isoformat(timespec="milliseconds")

    def spec(self, model_id: str) -> registry.ModelSpec:
        """The registry entry of a model, with an error naming the models file."""
        if model_id not in self.specs:
            raise registry.RegistryError(
                f"{self.cfg.models_file}: no model {model_id!r} (known: {', '.join(sorted(self.specs))})"
            )
        return self.specs[model_id]

    def thinking_switch(self, model_id: str) -> str:
        """The registry's thinking field of a model: none, always or switchable."""
        return self.spec(model_id).thinking

    def client(self, model_id: str) -> Client:
        """The client of ``model_id``, closing (and stopping the server of) any other model first."""
        if self._current and self._current[0] == model_id:
            return self._current[1]
        spec = self.spec(model_id)
        self.release()
        self._stack = ExitStack()
        connected = self._stack.enter_context(connect(spec, self.cache, self.cfg.cache_dir, budget=self.budget))
        self._current = (model_id, connected)
        return connected

    def release(self) -> None:
        """Close the open connection and stop its server, if any."""
        if self._stack is not None:
            self._stack.close()
        self._stack, self._current = None, None

    def close(self) -> None:
        """Release the model and close the cache; then, unless an error is already on its way,
        fail the stage if a model failed beyond ``llm.max_failed_share``.

        Raises:
            BatchExported: under ``make batch-export``, the calls were written to batch files.
            ModelFailed: naming the model, the count and the first error.
        """
        self.release()
        self.cache.close()
        tallies, self.tallies = self.tallies, {}  # checked once, however often closed
        if sys.exc_info()[0] is None:  # called from a `finally` while another error propagates: keep that one
            batch_files.stop_if_exported()  # make batch-export: the calls were written, not answered
            check_failures(tallies, self.cfg.llm.max_failed_share)

    def __enter__(self) -> ModelPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def prompt(self, name: str) -> prompts.Prompt:
        """A template of ``params/prompts/`` (loaded once)."""
        if name not in self._prompts:
            self._prompts[name] = prompts.load(name, self.cfg.root)
        return self._prompts[name]

    def request(self, call: Call, *, thinking: str | None, max_tokens: int, temperature: float) -> Request:
        """The LLM-layer request of a templated call (history turns appended after the prompt)."""
        base = Request.from_prompt(
            self.prompt(call.prompt),
            dict(call.fields),
            max_tokens=call.max_tokens or max_tokens,
            thinking=thinking,
            temperature=temperature,
            tag=call.prompt,
            choices=call.choices,
        )
        if not call.history:
            return base
        extra = tuple({"role": role, "content": text} for role, text in call.history)
        return dataclasses.replace(base, messages=base.messages + extra)

    def asker(self, model_id: str, *, thinking: str | None, max_tokens: int, temperature: float = 0.0) -> Ask:
        """An :data:`~declinecraft.llm.calls.Ask` for one model, thinking setting and output budget.

        The connection is taken when the callable runs, so askers of several models can be made
        up front; running one switches the open server to its model.
        """

        def ask(calls: Sequence[Call]) -> list[Reply]:
            if not calls:
                return []
            requests = [
                self.request(c, thinking=thinking, max_tokens=max_tokens, temperature=temperature) for c in calls
            ]
            results = self.client(model_id).run(
                requests,
                progress=self.progress,
                desc=f"{model_id}:{calls[0].prompt}",
                retry_failures=self.cfg.llm.retry_failures,
                failed_before=self._started,
            )
            self.calls += len(results)
            replies = [to_reply(r) for r in results]
            self.tallies.setdefault(model_id, Tally()).add([r.error for r in replies])
            return replies

        return ask


def _first_line(text: str) -> str:
    lines = [line.strip() for line in (text or "").splitlines() if line.strip()]
    return lines[0] if lines else ""


def rewriter(ask: Ask, prompt: str = "rewrite_query") -> Any:
    """A batch query rewriter for the ``+rewrite`` pipelines (``pipelines.Rewrite``).

    A failed, exhausted or empty rewrite returns "" and the retriever searches the original query.
    """

    def rewrite(queries: list[str]) -> list[str]:
        replies = ask([Call(prompt, {"query": q}) for q in queries])
        return [_first_line(r.text) if not (r.error or r.budget_exhausted) else "" for r in replies]

    return rewrite
