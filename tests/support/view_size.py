"""The views' tables at the paper's size: 27 models, each view's prompts and conditions.

The models are the paper's (:func:`paper_size.paper_models`, by id as the views name them), a few
with thinking on, so the view figures meet the paper's longest labels and its number of rows and
legend entries. Values are random in [0, 1]: the tables test layout, not statistics.
"""

from __future__ import annotations

import numpy as np
import polars as pl

from declinecraft.views.evidence.calibration import LEVELS
from declinecraft.views.evidence.classes import L5_TYPES
from declinecraft.views.know2guess.plots import SEGMENTS
from declinecraft.views.know2guess.protocol import STANDARD
from tests.support import paper_size

#: The evidence view's prompts (one panel each).
ESB_PROMPTS = ("P1", "P2", "P3", "J2")
#: Know2Guess's outcome columns.
OUTCOMES = tuple(column for column, _, _ in SEGMENTS)


def configs() -> list[dict[str, str]]:
    """(model, thinking) of the 27 configurations: every fifth model with thinking on."""
    return [
        {"model": m, "thinking": "on" if i % 5 == 4 else "off"} for i, (m, _, _) in enumerate(paper_size.paper_models())
    ]


def _rates(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rates with an interval around each: (value, low, high)."""
    value = rng.uniform(0, 1, n)
    return value, np.clip(value - 0.1, 0, 1), np.clip(value + 0.1, 0, 1)


def esb_tables(seed: int = 5) -> dict[str, pl.DataFrame]:
    """The evidence view's curve, l5_types, position_bias and summary tables."""
    rng = np.random.default_rng(seed)
    keys = [{**c, "prompt": p} for c in configs() for p in ESB_PROMPTS]
    curve = pl.DataFrame([{**k, "level": lv} for k in keys for lv in LEVELS])
    value, low, high = _rates(rng, curve.height)
    curve = curve.with_columns(abstention=pl.Series(value), low=pl.Series(low), high=pl.Series(high))
    types = []
    for k in keys:
        shares = rng.dirichlet(np.ones(len(L5_TYPES)))
        types += [{**k, "order": "all", "type": t, "share": float(s)} for t, s in zip(L5_TYPES, shares, strict=True)]
    bias = pl.DataFrame(keys).with_columns(
        abstain_gold_first=pl.Series(rng.uniform(0, 1, len(keys))),
        abstain_conflict_first=pl.Series(rng.uniform(0, 1, len(keys))),
        abstain_p=pl.Series(rng.choice([0.5, 0.3, 0.04, 0.004, 0.0004], len(keys))),
    )
    acc, acc_low, acc_high = _rates(rng, len(keys))
    over, over_low, over_high = _rates(rng, len(keys))
    summary = pl.DataFrame(keys).with_columns(
        accuracy=pl.Series(acc),
        accuracy_low=pl.Series(acc_low),
        accuracy_high=pl.Series(acc_high),
        over_answer=pl.Series(over),
        over_answer_low=pl.Series(over_low),
        over_answer_high=pl.Series(over_high),
    )
    return {"curve": curve, "l5_types": pl.DataFrame(types), "position_bias": bias, "summary": summary}


def k2g_tables(seed: int = 5) -> dict[str, pl.DataFrame]:
    """Know2Guess's cost-sensitive, calibration, outcomes and parser-sensitivity tables (both
    conditions, the standard prompt read by both parsers and one control prompt)."""
    rng = np.random.default_rng(seed)
    keys = [
        {**c, "condition": cond, "prompt": prompt, "parser": parser}
        for c in configs()
        for cond in ("no_rag", "single")
        for prompt in (STANDARD, "compact")
        for parser in ("strict", "normalized")
    ]
    lams = (0.0, 0.5, 1.0, 1.5, 2.0)
    cost = pl.DataFrame([{**k, "lam": lam, "reliability": float(rng.uniform())} for k in keys for lam in lams])
    calibration = pl.DataFrame(
        [
            {
                **k,
                "bin": b,
                "confidence": (b + 0.5) / 10,
                "accuracy": float(rng.uniform()),
                "n": int(rng.integers(1, 9)),
            }
            for k in keys
            for b in range(10)
        ]
    )
    outcomes = pl.DataFrame(
        [
            {**k, **{column: int(v) for column, v in zip(OUTCOMES, rng.integers(0, 20, len(OUTCOMES)), strict=True)}}
            for k in keys
        ]
    ).with_columns(n=pl.sum_horizontal(*OUTCOMES))
    parser = pl.DataFrame(
        [
            {**k, "metric": "reliability", "base_value": float(b), "value": float(min(1.0, b + rng.uniform(0, 0.1)))}
            for k in keys
            if k["parser"] == "strict"
            for b in [rng.uniform()]
        ]
    )
    return {"cost_sensitive": cost, "calibration": calibration, "outcomes": outcomes, "parser_sensitivity": parser}
