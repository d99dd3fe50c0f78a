"""The progress bar of a batch of model calls: rate and ETA of the calls sent, cache hits and
failures alongside."""

from __future__ import annotations

import time

from tqdm import tqdm


class Progress:
    """tqdm bar (rate and ETA of sent calls) with cache hits and failures in its postfix."""

    def __init__(self, total: int | None, hits: int, failed: int, desc: str, *, enabled: bool) -> None:
        self.hits, self.failed, self._shown = hits, failed, 0.0
        self.bar = tqdm(
            total=total,
            initial=hits,
            desc=desc,
            unit="call",
            disable=not enabled,
            mininterval=0.5,
            smoothing=0.05,
            dynamic_ncols=True,
        )
        self.bar.set_postfix_str(self._postfix(), refresh=hits > 0)

    def _postfix(self) -> str:
        return f"cached={self.hits} failed={self.failed}"

    def cached(self, *, failed: bool) -> None:
        """Count one call answered from the cache (or by an identical call already out)."""
        self.hits += 1
        self.step(failed=failed)

    def step(self, *, failed: bool) -> None:
        """Count one call sent (and whether it failed)."""
        self.failed += failed
        now = time.monotonic()
        if failed or now - self._shown > 0.5:
            self.bar.set_postfix_str(self._postfix(), refresh=False)
            self._shown = now
        self.bar.update(1)

    def close(self) -> None:
        """Show the final counts and close the bar."""
        self.bar.set_postfix_str(self._postfix(), refresh=False)
        self.bar.close()
