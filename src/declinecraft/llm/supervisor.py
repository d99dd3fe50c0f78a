"""A local model server that is restarted, a bounded number of times, when it dies mid-batch.

:func:`declinecraft.llm.client.connect` wraps every llama.cpp / vLLM server in a
:class:`LocalServer`: started at the first cache miss, watched through its process, and replaced
when the process exits under a call (killed, out of memory). The client then sends the lost call
again (:class:`~declinecraft.llm.transport.ServerGone` is never recorded as a failure), so a
restart loses nothing; past ``max_restarts`` the batch fails with a message naming the model and
the server's log file, and a rerun resumes from the cache.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from declinecraft.core.registry import ModelSpec
from declinecraft.llm.transport import LLMError
from declinecraft.runtime.process_exit import exit_description, log_tail

log = logging.getLogger(__name__)

#: Restarts of a local server that died under a batch before the batch fails.
MAX_SERVER_RESTARTS = 2


class LocalServer:
    """One model's local server, started at the first cache miss and restarted when it dies.

    A server that dies (killed, out of memory) is restarted at most ``max_restarts`` times per
    connection; one more death fails the batch with an :class:`LLMError` naming the model and the
    server's log file. Calls answered before are in the cache, so a rerun resumes from there.
    """

    def __init__(
        self,
        spec: ModelSpec,
        cache_dir: Path,
        *,
        max_restarts: int = MAX_SERVER_RESTARTS,
        gpus: Sequence[int] | None = None,
        threads: int | None = None,
    ) -> None:
        self.spec, self.cache_dir, self.max_restarts = spec, cache_dir, max_restarts
        self._lent: dict[str, Any] = {}
        """What the server was lent (``serve.start``'s ``gpus``: None, all GPUs it sees;
        ``n_threads``: None, llama.cpp's default), passed only when lent."""
        if gpus is not None:
            self._lent["gpus"] = tuple(gpus)
        if threads is not None:
            self._lent["n_threads"] = threads
        self.servers: list[Any] = []
        """Every server started, the running one last (each is stopped on close)."""
        self.restarts = 0
        self.generation = 0
        """Bumped by each restart: callers that saw an older one know the restart was done."""
        self._lock = threading.Lock()

    def urls(self) -> tuple[str, ...]:
        """The running server's base URL, starting it on first use."""
        with self._lock:
            if not self.servers:
                self.servers.append(self._start())
            return (self.servers[-1].base_url,)

    def _start(self) -> Any:
        """A server the run keeps up (:mod:`~declinecraft.llm.kept`) under Make, unless one that
        ``python -m declinecraft.llm.serve`` runs is found; else one for this connection."""
        from declinecraft.llm import kept, serve

        pid = kept.run_pid()
        if pid is None or serve.find_running(self.spec, self.cache_dir):
            return serve.start(self.spec, self.cache_dir, **self._lent)
        return kept.start(self.spec, self.cache_dir, pid, **self._lent)

    def alive(self) -> bool:
        """False once the running server's process has exited (True for a reused, shared one)."""
        with self._lock:
            process = getattr(self.servers[-1], "process", None) if self.servers else None
        return process is None or process.poll() is None

    def restart(self, generation: int, reason: str) -> tuple[str, ...]:
        """Start a new server unless another caller already did since ``generation``.

        Raises:
            LLMError: the server died more than ``max_restarts`` times; names the model, how the
                last one ended (the signal, e.g. SIGSEGV) and quotes the end of its log.
        """
        with self._lock:
            if generation == self.generation and self.servers:
                dead = self.servers[-1]
                process, log_file = getattr(dead, "process", None), getattr(dead, "log_file", None)
                code = process.poll() if process is not None else None
                how = exit_description(code)
                if self.restarts >= self.max_restarts:
                    tail = log_tail(log_file)
                    raise LLMError(
                        f"model {self.spec.id!r}: its local server died {self.restarts + 1} times, the last "
                        f"{how} ({reason}). The end of its log {log_file}:\n{tail}\nThe calls answered so far "
                        "are cached: rerun to resume."
                    )
                self.restarts += 1
                log.warning(
                    "%s: local server %s, restart %d of %d (log %s)",
                    self.spec.id,
                    how,
                    self.restarts,
                    self.max_restarts,
                    log_file,
                )
                dead.stop()
                self.servers.append(self._start())
                self.generation += 1
            return (self.servers[-1].base_url,)

    def close(self) -> None:
        """Stop every server this connection started (a kept one stays up for the run)."""
        with self._lock:
            for server in self.servers:
                server.stop()
