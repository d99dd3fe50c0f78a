"""The stages' thin adapter to the LLM layer: every separate endpoint busy at once.

:class:`ModelPool` hands out :data:`calls.Ask` callables (templated :class:`calls.Call` in,
:class:`calls.Reply` out) for registry models. Outside :func:`each_model` it keeps one model's
connection open: asking for another model closes the previous one, which stops its local server.
:func:`each_model` runs a stage's work for several models at once, as many as fit
(:mod:`declinecraft.llm.resources`): every hosted or external endpoint at once, each at its own
concurrency, and the servers the run starts as the machine's GPUs, cores and memory allow. Where
no two can run together (the offline run's llama.cpp servers on a small machine) the models run
one after another in their order, exactly as before. A GPU that ``llm.retrieval_device: cuda:N``
keeps for the embedder and the reranker is lent to no server. Servers start lazily through
:func:`~declinecraft.llm.client.connect`, at the first cache miss, so a fully cached rerun starts none;
under Make a server stays up for the run's later stages (:mod:`declinecraft.llm.kept`), and
"stops its local server" above means this stage no longer uses it.

It is also where a failed model stops a stage, for every stage alike: it counts each model's
calls and failures, and :meth:`ModelPool.close` (the end of the stage) raises :class:`ModelFailed`
when a model's failures exceed ``llm.max_failed_share`` of its calls, or all of them failed.
Failures cached by an earlier run are re-sent unless ``llm.retry_failures`` is false.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar

from declinecraft.core import paths, prompts, registry, retrieval_device
from declinecraft.core.config import RunConfig
from declinecraft.llm import batch_files, kept, resources
from declinecraft.llm.cache import open_cache
from declinecraft.llm.calls import Ask, Call, Reply, to_reply
from declinecraft.llm.client import Budget, Client, LLMError, Request, connect

T = TypeVar("T")


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
    """Clients for a run's models: one open connection (and local server) at a time, or, inside
    :meth:`each`, one per model running."""

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
            where=str(paths.under(cfg.params_file, cfg.root)),
        )
        """The run's caps and spend so far (``llm.budget_usd``, ``llm.budget_tokens``)."""
        self._open: dict[str, tuple[ExitStack, Client]] = {}
        self._together = False  # inside each(): models open side by side, each released by its lane
        self._lent: dict[str, dict[str, Any]] = {}  # inside each(): what a declared server was lent
        self._lock = threading.RLock()
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
        """The client of ``model_id``; outside :meth:`each`, any other model's is closed (and its
        server stopped) first."""
        with self._lock:
            if model_id in self._open:
                return self._open[model_id][1]
            spec = self.spec(model_id)
            if not self._together:
                self.release()
            stack = ExitStack()
            lent = self._lent.get(model_id)
            if lent is None and resources.starts_server(spec) and (gpus := self.server_gpus()) is not None:
                lent = {"gpus": gpus}  # a server that declares nothing: every GPU but the retrieval models'
            connected = stack.enter_context(
                connect(spec, self.cache, self.cfg.cache_dir, budget=self.budget, **(lent or {}))
            )
            self._open[model_id] = (stack, connected)
            return connected

    def server_gpus(self) -> tuple[int, ...] | None:
        """The GPUs a server the run starts may use when ``llm.retrieval_device`` keeps one for
        the embedder and the reranker (every other GPU), else None (every GPU).

        Raises:
            ResourceError: the kept GPU is not one of the machine's.
        """
        kept = retrieval_device.gpu_of(self.cfg.llm.retrieval_device)
        return None if kept is None else resources.for_servers(resources.machine(), kept)[1]

    def release(self, model_id: str | None = None) -> None:
        """Close a model's connection and stop its server (every open one when no model is named).

        Inside :meth:`each` a stage's own ``release()`` calls close nothing: each model is
        released when its work ends."""
        with self._lock:
            if model_id is None and self._together:
                return
            for name in [model_id] if model_id is not None else list(self._open):
                if name in self._open:
                    self._open.pop(name)[0].close()

    def each(self, model_ids: Sequence[str], work: Callable[[str], T], *, keep_last: bool = False) -> list[T]:
        """Run ``work(model)`` for every model, as many at once as fit; results in model order.

        Each model's connection is released when its work ends. Every model's needs are checked
        against the machine before any work starts. When no two models can run together the work
        runs in this thread, one model after another in their order (each released after its
        work, but the last one with ``keep_last``: a later phase may ask it again), exactly as a
        plain loop would. Otherwise each model runs in its own thread once
        the :class:`~declinecraft.llm.resources.Gate` admits it; every model's work is finished
        before the first error (in model order) is raised, so no model's answers are lost.

        Raises:
            ResourceError: an entry declares more than the machine has, or ``llm.retrieval_device``
                keeps a GPU it lacks (before anything starts).
        """
        ids = list(dict.fromkeys(model_ids))
        has, lendable = resources.for_servers(
            resources.machine(), retrieval_device.gpu_of(self.cfg.llm.retrieval_device)
        )
        needs = [resources.needs(self.spec(m), has) for m in ids]
        if not resources.can_overlap(needs, has):
            results = []
            for i, model in enumerate(ids):
                results.append(work(model))
                if not (keep_last and i == len(ids) - 1):
                    self.release()
            return results
        gate = resources.Gate(has, ids, lendable, kept.held_gpus(self.cfg.cache_dir, kept.run_pid()))
        outcome: dict[str, tuple[bool, Any]] = {}

        def lane(need: resources.Needs) -> None:
            gpus = gate.acquire(need)
            if need.declared and need.endpoint is None:  # a server the run starts: its own GPUs and cores
                cores = int(need.machine.cores)
                self._lent[need.model] = {"gpus": gpus, **({"threads": cores} if cores >= 1 else {})}
            try:
                outcome[need.model] = (True, work(need.model))
            except BaseException as exc:  # handed to the calling thread
                outcome[need.model] = (False, exc)
            finally:
                self.release(need.model)
                self._lent.pop(need.model, None)
                gate.release(need, gpus)

        self.release()
        for model in ids:  # failures are checked in model order, whichever model ends first
            self.tallies.setdefault(model, Tally())
        self._together = True
        try:
            threads = [threading.Thread(target=lane, args=(n,), name=f"model-{n.model}", daemon=True) for n in needs]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        finally:
            self._together = False
        for model in ids:
            ok, value = outcome[model]
            if not ok:
                raise value
        return [outcome[m][1] for m in ids]

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
            requests = _Built(
                calls, lambda c: self.request(c, thinking=thinking, max_tokens=max_tokens, temperature=temperature)
            )
            results = self.client(model_id).run(
                requests,
                progress=self.progress,
                desc=f"{model_id}:{calls[0].prompt}",
                retry_failures=self.cfg.llm.retry_failures,
                failed_before=self._started,
            )
            replies = [to_reply(r) for r in results]
            with self._lock:
                self.calls += len(results)
                self.tallies.setdefault(model_id, Tally()).add([r.error for r in replies])
            return replies

        return ask


class _Built:
    """The requests of a batch of calls, each built only when the client's window takes it
    (:meth:`~declinecraft.llm.client.Client.astream`); sized, for the progress bar's total."""

    def __init__(self, calls: Sequence[Call], build: Callable[[Call], Request]) -> None:
        self.calls, self.build = calls, build

    def __len__(self) -> int:
        return len(self.calls)

    def __iter__(self) -> Iterator[Request]:
        return (self.build(call) for call in self.calls)


def each_model(
    models: Models, model_ids: Sequence[str], work: Callable[[str], T], *, keep_last: bool = False
) -> list[T]:
    """Run ``work(model)`` for every model (each once), results in model order: at once where a
    :class:`ModelPool` schedules them so (:meth:`ModelPool.each`), else one after another, each
    model released after its work (the last one too, unless ``keep_last``)."""
    if isinstance(models, ModelPool):
        return models.each(model_ids, work, keep_last=keep_last)
    ids = list(dict.fromkeys(model_ids))
    results = []
    for i, model in enumerate(ids):
        results.append(work(model))
        if not (keep_last and i == len(ids) - 1):
            models.release()
    return results


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
