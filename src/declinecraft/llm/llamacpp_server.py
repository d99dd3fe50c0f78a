"""The embedded llama.cpp server, made deterministic whatever it served before.

``python -m declinecraft.llm.llamacpp_server [llama_cpp.server arguments]`` runs llama-cpp-python's
own OpenAI-compatible server with one change: prompt-prefix reuse is cut back to a whole number of
prompt batches (``--n_batch`` tokens) that the previous prompt itself filled.

Why: llama.cpp evaluates a prompt in batches of ``n_batch`` tokens, and a batch's arithmetic
depends on its size (the CPU kernels differ by shape). Plain prefix reuse starts the rest of a
prompt at wherever the shared prefix ended, so the same prompt is cut into different batches
depending on what the server answered before, and its answer at temperature 0 can change (a
killed-and-resumed run then wrote a different benchmark). With reuse aligned to batch boundaries,
every prompt is evaluated in the batches ``[0, B), [B, 2B), …`` whatever the cache held, and the
reused key/value entries are exactly those a whole evaluation computes: the answer is a function
of the prompt alone. Generated tokens are never reused (they were decoded one at a time).
The price is the partial batch at the end of each shared prefix; ``benchmarks/bench_serving.py``
measures it against no reuse and against plain reuse.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any

import llama_cpp


def aligned_reuse(cached: Sequence[int], prompt: Sequence[int], cached_prompt_len: int, batch: int) -> int:
    """Return how many leading tokens of ``prompt`` may be reused from ``cached``.

    That is the common prefix, cut to the part of the previous prompt (never its generated tokens),
    rounded down to a multiple of ``batch``, and at most ``len(prompt) - 1`` so the last prompt
    token is always evaluated (its logits start the answer).
    """
    common = 0
    for a, b in zip(cached[:cached_prompt_len], prompt[: len(prompt) - 1], strict=False):
        if a != b:
            break
        common += 1
    return (common // batch) * batch


class AlignedLlama(llama_cpp.Llama):
    """``llama_cpp.Llama`` whose prompt-prefix reuse starts only at a batch boundary."""

    _prompt_len = 0

    def generate(
        self, tokens: Sequence[int], *args: Any, reset: bool = True, **kwargs: Any
    ) -> Generator[int, Sequence[int] | None, None]:
        """Cut the reusable prefix to :func:`aligned_reuse`, then generate as the base class does
        (every other argument passed on unchanged)."""
        tokens = list(tokens)
        if reset and self.n_tokens > 0:
            keep = aligned_reuse(self._input_ids.tolist(), tokens, self._prompt_len, self.n_batch)
            if keep == 0:
                self.reset()
            else:
                self.n_tokens = keep  # the base class then reuses exactly ``keep`` tokens
        self._prompt_len = len(tokens)
        kwargs["reset"] = reset
        return super().generate(tokens, *args, **kwargs)


def main() -> None:
    """Serve with llama-cpp-python's server, its models loaded as :class:`AlignedLlama`."""
    llama_cpp.Llama = AlignedLlama  # type: ignore[misc]  # the server builds its models from this name
    from llama_cpp.server.__main__ import main as serve_main

    serve_main()


if __name__ == "__main__":
    main()
