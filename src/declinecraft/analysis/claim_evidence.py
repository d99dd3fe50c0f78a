"""The evidence for the claims check: how each kind of claim is read off the analysis tables.

Each reader builds a function of the analysis tables (by name, as
:func:`declinecraft.analysis.analyze.analyze` returns them) and the run's :class:`Context` that
returns an :class:`Evidence`: this run's value, whether the claim holds, the n the test rests on and
the smallest n at which the test can give a result. :mod:`declinecraft.analysis.claims` pairs each
with its claim and verdict.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

import polars as pl

from declinecraft.core.config import RunConfig
from declinecraft.core.small_n import counted, min_n_rank, min_n_sign, threshold

Tables = Mapping[str, pl.DataFrame]
#: Thinking settings that are a model's own switch; anything else (e.g. prompted reasoning) is not.
NATIVE_THINKING = frozenset({"on", "off"})
#: Plurals of the units an association is computed over (``associations.unit``).
PLURAL = {"model": "models", "family": "families", "configuration": "configurations"}


@dataclass(frozen=True)
class Evidence:
    """What a run shows about one claim, before the verdict."""

    run_value: str
    """This run's value as printed (e.g. "3 of 10 configurations")."""
    holds: bool | None = None
    """Whether the data show what the claim says; None when the test is undefined."""
    n: int = 0
    """Sample size the test rests on (configurations, models, paired questions)."""
    min_n: int = 1
    """Smallest n at which the test can give a result (see :func:`min_n_sign`, :func:`min_n_rank`)."""
    unit: str = "items"
    """What n counts, for the reason."""
    untestable: str = ""
    """Why the run cannot test the claim at all (empty when it can)."""


@dataclass(frozen=True)
class Context:
    """What the claims need from the run besides its result tables."""

    alpha: float = 0.05
    """Significance threshold (``analysis.alpha``)."""
    thinking: tuple[str, ...] = ("off",)
    """The run's thinking settings (``answer.thinking``); only "on"/"off" are a native switch."""
    no_input: str = ""
    """Why the analysis had no judged responses (every claim is then not testable)."""
    min_n: int = 0
    """The small-n rule's threshold (``analysis.min_n``); 0 = each test's own minimum."""

    def needs(self, evidence: Evidence) -> int:
        """The n ``evidence`` needs for a verdict (:func:`declinecraft.core.small_n.threshold`)."""
        return threshold(self.min_n, self.alpha, floor=evidence.min_n)


def context_from_config(cfg: RunConfig, no_input: str = "") -> Context:
    """The :class:`Context` of a run, from its params."""
    return Context(
        alpha=cfg.analysis.alpha, thinking=tuple(cfg.answer.thinking), no_input=no_input, min_n=cfg.analysis.min_n
    )


def _rows(t: Tables, table: str, **where: Any) -> pl.DataFrame:
    """Rows of ``table`` matching ``where`` (an empty frame when the run has no such table)."""
    frame = t.get(table)
    if frame is None:
        return pl.DataFrame()
    for key, value in where.items():
        if key not in frame.columns:
            return frame.head(0)
        frame = frame.filter(pl.col(key).cast(pl.String).fill_null("") == str(value))
    return frame


def _pct(x: float) -> str:
    return "n/a" if x is None or math.isnan(x) else f"{100 * x:.1f}%"


def _p(p: float) -> str:
    """``p=0.12``, ``p=0.004``, ``p<0.001`` or ``p=n/a``."""
    if p is None or math.isnan(p):
        return "p=n/a"
    return "p<0.001" if p < 0.001 else f"p={p:.3f}" if p < 0.01 else f"p={p:.2f}"


def _mean_of(t: Tables, condition: str) -> float:
    row = _rows(t, "condition_means", condition=condition, metric="car")
    return float(row["mean"][0]) if row.height and row["mean"][0] is not None else float("nan")


def thinking_problem(t: Tables, ctx: Context) -> str:
    """Why the run's thinking comparisons are not a native on/off switch ("" when they are)."""
    other = [v for v in ctx.thinking if v not in NATIVE_THINKING]
    if other:
        return (
            f"thinking is {', '.join(other)} reasoning, not a native thinking switch (answer.thinking: "
            f"{', '.join(ctx.thinking)})"
        )
    if set(ctx.thinking) != NATIVE_THINKING:
        return f"no model with switchable thinking (answer.thinking: {', '.join(ctx.thinking)})"
    return "" if _native_models(t) else "no model with switchable thinking"


def _native_models(t: Tables) -> list[str]:
    """Models run with thinking both on and off whose registry entry has a native thinking switch."""
    grid = _rows(t, "main_grid")
    if grid.height == 0 or "thinking_mode" not in grid.columns:
        return []
    native = grid.filter((pl.col("thinking_mode") == "switchable") & pl.col("thinking").is_in(list(NATIVE_THINKING)))
    both = native.group_by("model").agg(pl.col("thinking").n_unique().alias("n")).filter(pl.col("n") == 2)
    return sorted(both["model"].to_list())


def significant_count(
    comparison: str, want: str, *, condition: str = "", thinking: bool = False
) -> Callable[[Tables, Context], Evidence]:
    """Per-configuration exact McNemar tests (BH within the main grid): the claim holds when at least
    half of the testable ones move significantly in the ``want`` direction and none the other way."""
    other = "decrease" if want == "increase" else "increase"

    def get(t: Tables, ctx: Context) -> Evidence:
        if thinking and (why := thinking_problem(t, ctx)):
            return Evidence("n/a", untestable=why)
        tests = _rows(t, "paired_tests", family="main_grid", comparison=comparison, condition=condition)
        if thinking:
            tests = tests.filter(pl.col("model").is_in(_native_models(t)))
        if tests.height == 0:
            return Evidence("n/a", untestable=f"no {comparison} comparisons in this run")
        need = min_n_sign(ctx.alpha)
        testable = tests.filter((pl.col("n_pairs") >= need) & pl.col("p").is_not_nan())
        sig = testable["significant"].fill_null(False)
        up = int((sig & (testable["direction"] == want)).sum())
        down = int((sig & (testable["direction"] == other)).sum())
        value = f"{up} of {tests.height} significant {want}s, {down} {other}s"
        if testable.height < tests.height:
            value += f" ({testable.height} with at least {need} pairs)"
        holds = testable.height > 0 and 2 * up >= testable.height and down == 0
        return Evidence(value, holds, int(cast(int, tests["n_pairs"].max())), need, "paired questions (most per test)")

    return get


def mean_change(
    quantity: str,
    sign: int,
    *,
    condition: str = "",
    means: tuple[str, str] | None = None,
    significant: bool = False,
    thinking: bool = False,
    unit: str = "configurations",
) -> Callable[[Tables, Context], Evidence]:
    """The mean paired difference over configurations (``model_differences``): with ``sign`` +1 or
    -1 the claim holds when the mean has that sign (and, if ``significant``, the Wilcoxon
    signed-rank p is below alpha); with ``sign`` 0 (no effect) when that p is at least alpha."""

    def get(t: Tables, ctx: Context) -> Evidence:
        if thinking and (why := thinking_problem(t, ctx)):
            return Evidence("n/a", untestable=why)
        row = _rows(t, "model_differences", quantity=quantity, condition=condition)
        if row.height == 0:
            return Evidence("n/a", untestable=f"no {quantity} results in this run")
        n, mean, p = int(row["n"][0]), row["mean"][0], row["wilcoxon_p"][0]
        mean = float("nan") if mean is None else float(mean)
        p = float("nan") if p is None else float(p)
        value = f"{100 * mean:+.1f} points" if not math.isnan(mean) else "n/a"
        if means:
            value = f"{_pct(_mean_of(t, means[0]))} to {_pct(_mean_of(t, means[1]))} ({value})"
        value += f", Wilcoxon {_p(p)}"
        if math.isnan(mean) or ((significant or sign == 0) and math.isnan(p)):
            holds = None
        elif sign == 0:
            holds = p >= ctx.alpha
        else:
            holds = sign * mean > 0 and (not significant or p < ctx.alpha)
        return Evidence(value, holds, n, min_n_sign(ctx.alpha), unit)

    return get


def association(name: str, want: str) -> Callable[[Tables, Context], Evidence]:
    """A Spearman association (``associations``): ``want`` is "none" (holds when p >= alpha) or
    "positive" / "negative" (holds when rho has that sign and p < alpha)."""

    def get(t: Tables, ctx: Context) -> Evidence:
        row = _rows(t, "associations", name=name)
        if row.height == 0:
            return Evidence("n/a", untestable=f"no {name} association in this run")
        n, rho, p = int(row["n"][0]), row["rho"][0], row["p"][0]
        rho = float("nan") if rho is None else float(rho)
        p = float("nan") if p is None else float(p)
        value = "n/a" if math.isnan(rho) else f"rho={rho:+.2f}, {_p(p)}, n={n}"
        if math.isnan(rho) or math.isnan(p):
            holds = None
        elif want == "none":
            holds = p >= ctx.alpha
        else:
            holds = (rho > 0 if want == "positive" else rho < 0) and p < ctx.alpha
        unit = str(row["unit"][0])
        return Evidence(value, holds, n, min_n_rank(ctx.alpha), PLURAL.get(unit, unit))

    return get


def every_configuration(family: str, comparison: str, sign: int, missing: str) -> Callable[[Tables, Context], Evidence]:
    """An ablation's paired CAR differences (``paired_tests``): the claim holds when every tested
    configuration moves in direction ``sign`` (``missing`` says why a run may lack the ablation)."""

    def get(t: Tables, ctx: Context) -> Evidence:
        tests = _rows(t, "paired_tests", family=family)
        if tests.height == 0:
            return Evidence("n/a", untestable=missing)
        tests = tests.filter(pl.col("comparison") == comparison).filter(pl.col("diff").is_not_nan())
        if tests.height == 0:
            return Evidence("n/a", untestable=f"no {comparison.replace('_vs_', ' against ')} comparison in this run")
        moved = int((sign * tests["diff"] > 0).sum())
        mean = cast(float, tests["diff"].mean())
        value = f"{moved} of {counted(tests.height, 'configurations')} (mean {100 * mean:+.1f} points)"
        return Evidence(value, moved == tests.height, tests.height, min_n_sign(ctx.alpha), "configurations")

    return get


def k_ten(t: Tables, ctx: Context) -> Evidence:
    """Ten against five chunks (``paired_tests``, family ``k_sweep``): holds when the mean paired CAR
    difference over the configurations run at both is negative."""
    tests = _rows(t, "paired_tests", family="k_sweep")
    if tests.height == 0:
        return Evidence("n/a", untestable="one k only (answer.k_sweep is empty)")
    tests = tests.filter(pl.col("comparison") == "10_vs_5").filter(pl.col("diff").is_not_nan())
    if tests.height == 0:
        return Evidence("n/a", untestable="no single-shot run at both k=5 and k=10")
    mean = float(cast(float, tests["diff"].mean()))
    base, other = float(cast(float, tests["car_base"].mean())), float(cast(float, tests["car_other"].mean()))
    value = f"{_pct(base)} to {_pct(other)} ({100 * mean:+.1f} points)"
    return Evidence(value, mean < 0, tests.height, min_n_sign(ctx.alpha), "configurations")


def both_higher(t: Tables, ctx: Context) -> Evidence:
    """Configurations whose CAR and attempt rate are both higher with single-shot RAG than without
    (``direction_counts``): holds when they are a majority."""
    row = _rows(t, "direction_counts")
    if row.height == 0:
        return Evidence("n/a", untestable="no single-shot and no-RAG results to compare")
    n, both = int(row["n"][0]), int(row["both_higher"][0])
    return Evidence(
        f"{both} of {counted(n, 'configurations')}", 2 * both > n, n, min_n_sign(ctx.alpha), "configurations"
    )


def transitions(kind: str) -> Callable[[Tables, Context], Evidence]:
    """Matched thinking off/on answers without retrieval (``thinking_transitions``): ``lost`` holds
    when most abstentions lost to thinking became denials; ``excess`` when at least half of the
    testable models show a significant excess of A->D over D->A and none the reverse."""

    def get(t: Tables, ctx: Context) -> Evidence:
        if why := thinking_problem(t, ctx):
            return Evidence("n/a", untestable=why)
        pairs = _rows(t, "thinking_transitions", condition="no_rag").filter(pl.col("model").is_in(_native_models(t)))
        if pairs.height == 0:
            return Evidence("n/a", untestable="no matched thinking pairs without retrieval")
        need = min_n_sign(ctx.alpha)
        if kind == "lost":
            ad, ax = int(pairs["a_to_d"].sum()), int(pairs["a_to_x"].sum())
            share = ad / (ad + ax) if ad + ax else float("nan")
            value = f"{_pct(share)} ({ad} of {ad + ax} lost abstentions)"
            return Evidence(value, None if math.isnan(share) else share > 0.5, ad + ax, need, "lost abstentions")
        testable = pairs.filter(pl.col("a_to_d") + pl.col("d_to_a") >= need)
        sig = testable["sig_ad"].fill_null(False)
        towards = int((sig & (testable["a_to_d"] > testable["d_to_a"])).sum())
        away = int((sig & (testable["a_to_d"] < testable["d_to_a"])).sum())
        value = f"{towards} of {counted(pairs.height, 'models')} ({away} the reverse)"
        holds = testable.height > 0 and 2 * towards >= testable.height and away == 0
        most = int(cast(int, (pairs["a_to_d"] + pairs["d_to_a"]).max()))
        return Evidence(value, holds, most, need, "A-D pairs (most per model)")

    return get
