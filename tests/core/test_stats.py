"""Tests for declinecraft.core.stats: published values, hand-worked examples and reference libraries."""

from __future__ import annotations

import math
import time
import warnings
from fractions import Fraction

import numpy as np
import polars as pl
import pytest
import scipy.stats as st
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from declinecraft.core import stats

# Agreement with the reference libraries: equal up to a few units in the last place.
CLOSE = {"rel": 1e-12, "abs": 1e-15}


def random_counts(seed: int, size: int = 2000) -> tuple[np.ndarray, np.ndarray]:
    """Random (k, n) with 1 <= n <= 3000 and every edge k = 0 and k = n well represented."""
    rng = np.random.default_rng(seed)
    n = rng.integers(1, 3000, size)
    k = np.select([rng.random(size) < 0.1, rng.random(size) < 0.1], [0, n], rng.integers(0, n + 1))
    return k, n


def table8_family(condition: str) -> list[tuple[int, int]]:
    """A->D / D->A counts of the 13 switchable-thinking models, one BH family (Table 8).

    The tables seed shows 5 of the 13 rows; the other 8 are reconstructed so that the family
    matches the paper's text: without retrieval 372 A->D against 51 D->A with 9 of 13
    significant (the three Qwen3.5 models contribute few pairs); with single-shot RAG 315
    against 133, significant for 6 models plus 1 in reverse.
    """
    if condition == "no_rag":
        shown = [(27, 7), (10, 2), (12, 0), (30, 12), (22, 4)]
        rebuilt = [(60, 5), (55, 6), (50, 4), (52, 6), (48, 3), (2, 1), (1, 0), (3, 1)]
    else:
        shown = [(25, 2), (58, 3), (23, 10), (14, 8), (2, 21)]
        rebuilt = [(50, 10), (45, 12), (40, 8), (30, 9), (8, 12), (6, 10), (7, 14), (7, 14)]
    return shown + rebuilt


class TestWilson:
    @pytest.mark.parametrize(
        ("k", "n", "published"),
        [
            (242, 300, (0.758, 0.847)),  # Table 2, Gemma 4 26B-A4B CAR 80.7%
            (668, 700, (0.936, 0.967)),  # Table 2, Gemma 4 26B-A4B Attempt 95.4%
            (250, 300, (0.787, 0.871)),  # Table 2, Gemma 4 31B CAR 83.3%
            (670, 700, (0.939, 0.970)),  # Table 2, Gemma 4 31B Attempt 95.7%
        ],
    )
    def test_published(self, k: int, n: int, published: tuple[float, float]) -> None:
        """Reproduces Table 2's Wilson brackets to 3 decimals."""
        low, high = stats.wilson(k, n)
        assert (round(low, 3), round(high, 3)) == published

    @pytest.mark.parametrize(("k", "n"), [(0, 10), (10, 10), (3, 17), (50, 100), (0, 1), (1, 1)])
    def test_statsmodels(self, k: int, n: int) -> None:
        """Matches statsmodels' Wilson interval to rounding, including the k=0 and k=n edges."""
        want = proportion_confint(k, n, method="wilson")
        assert stats.wilson(k, n) == pytest.approx(want, **CLOSE)

    @pytest.mark.parametrize("confidence", [0.8, 0.95, 0.99])
    def test_statsmodels_arrays(self, confidence: float) -> None:
        """The vectorised form matches statsmodels to rounding on 2,000 random counts."""
        k, n = random_counts(int(confidence * 100))
        low, high = stats.wilson_arrays(k, n, confidence)
        want = proportion_confint(k, n, alpha=1 - confidence, method="wilson")
        assert low == pytest.approx(want[0], **CLOSE) and high == pytest.approx(want[1], **CLOSE)

    @pytest.mark.parametrize(
        ("k", "n", "stored"),
        [
            (242, 300, (0.7582162445043988, 0.8473627331445462)),
            (3, 17, (0.06191126637620997, 0.41029458568834126)),
            (17, 17, (0.8156818649911483, 1.0)),
            (0, 17, (0.0, 0.1843181350088518)),
        ],
    )
    def test_stored_bits(self, k: int, n: int, stored: tuple[float, float]) -> None:
        """Bounds are stored unrounded, so they must keep their exact bits (statsmodels' differ)."""
        assert stats.wilson(k, n) == stored

    def test_wider_at_99(self) -> None:
        """A higher confidence gives a wider interval."""
        lo95, hi95 = stats.wilson(30, 100)
        lo99, hi99 = stats.wilson(30, 100, confidence=0.99)
        assert lo99 < lo95 and hi99 > hi95

    def test_empty(self) -> None:
        """n = 0 gives (nan, nan)."""
        assert all(math.isnan(v) for v in stats.wilson(0, 0))

    @pytest.mark.parametrize(("k", "n"), [(-1, 5), (6, 5)])
    def test_bad_counts(self, k: int, n: int) -> None:
        """k outside [0, n] is rejected."""
        with pytest.raises(ValueError, match="0 <= k <= n"):
            stats.wilson(k, n)


class TestWilsonArrays:
    def test_matches_scalar(self) -> None:
        """The vectorised form equals the scalar one element by element, n=0 giving NaN."""
        low, high = stats.wilson_arrays([242, 0, 5], [300, 0, 9])
        assert (low[0], high[0]) == pytest.approx(stats.wilson(242, 300))
        assert np.isnan(low[1]) and np.isnan(high[1])
        assert (low[2], high[2]) == pytest.approx(stats.wilson(5, 9))

    def test_empty_like_statsmodels(self) -> None:
        """n = 0 gives NaN bounds, as statsmodels does, without warnings."""
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            low, high = stats.wilson_arrays([0, 1], [0, 2])
        with np.errstate(divide="ignore", invalid="ignore"):
            want = proportion_confint(np.array([0, 1]), np.array([0, 2]), method="wilson")
        assert np.isnan(want[0][0]) and np.isnan(low[0]) and np.isnan(high[0])
        assert (low[1], high[1]) == pytest.approx((want[0][1], want[1][1]), **CLOSE)


class TestBootstrapMeans:
    def test_same_as_explicit_indexing(self) -> None:
        """Equals the percentile bootstrap computed by indexing with the same integer matrix."""
        x = np.random.default_rng(3).choice([0.0, 0.5, 1.0], size=(4, 50))
        low, high = stats.bootstrap_means(x, n_resamples=200, seed=7)
        idx = np.random.default_rng(7).integers(0, 50, size=(200, 50))
        means = x[:, idx].mean(axis=2)
        assert low == pytest.approx(np.quantile(means, 0.025, axis=1))
        assert high == pytest.approx(np.quantile(means, 0.975, axis=1))

    def test_nan_is_missing(self) -> None:
        """NaN cells are left out of a row's mean; an all-NaN row gives NaN."""
        x = np.array([[1.0, 1.0, np.nan, 1.0], [np.nan] * 4])
        low, high = stats.bootstrap_means(x)
        assert (low[0], high[0]) == (1.0, 1.0)
        assert np.isnan(low[1]) and np.isnan(high[1])

    def test_items_cluster(self) -> None:
        """With ``items``, an entry is a sum over items and the row mean is over items: the same
        interval as resampling questions of the unrolled item matrix, item counts kept per question."""
        values = np.random.default_rng(5).choice([0.0, 1.0], size=(2, 30))
        sums = np.vstack([values[0] + values[1], values[0]])
        items = np.vstack([np.full(30, 2.0), np.ones(30)])
        low, high = stats.bootstrap_means(sums, n_resamples=300, seed=2, items=items)
        idx = np.random.default_rng(2).integers(0, 30, size=(300, 30))
        pooled = sums[0][idx].sum(axis=1) / 60.0
        assert (low[0], high[0]) == pytest.approx((np.quantile(pooled, 0.025), np.quantile(pooled, 0.975)))
        alone_low, alone_high = stats.bootstrap_means(values[:1], n_resamples=300, seed=2)
        assert (low[1], high[1]) == pytest.approx((alone_low[0], alone_high[0]))

    def test_normal_width(self) -> None:
        """Interval width is close to the normal-theory 2 x 1.96 x SE."""
        x = np.random.default_rng(0).integers(0, 2, size=(1, 1000)).astype(float)
        low, high = stats.bootstrap_means(x)
        se = x.std() / np.sqrt(x.size)
        assert high[0] - low[0] == pytest.approx(2 * 1.96 * se, rel=0.15)

    def test_fast(self) -> None:
        """40 configs x 3 conditions x 1,000 questions x 1,000 resamples takes under a second."""
        x = np.random.default_rng(1).choice([0.0, 0.5, 1.0], size=(120, 1000))
        start = time.perf_counter()
        low, _ = stats.bootstrap_means(x)
        assert time.perf_counter() - start < 1.0
        assert low.shape == (120,)

    def test_no_columns(self) -> None:
        """A matrix without questions gives NaN per row."""
        low, high = stats.bootstrap_means(np.empty((2, 0)))
        assert np.isnan(low).all() and np.isnan(high).all()


class TestBootstrapMeanCi:
    def test_row_of_batch(self) -> None:
        """Equals the corresponding row of bootstrap_means with the same seed."""
        x = np.random.default_rng(5).random((3, 80))
        low, high = stats.bootstrap_means(x, seed=11)
        assert stats.bootstrap_mean_ci(x[1], seed=11) == pytest.approx((low[1], high[1]))

    def test_seeded(self) -> None:
        """The same seed reproduces the interval; another seed changes it."""
        v = np.random.default_rng(2).random(100)
        assert stats.bootstrap_mean_ci(v, seed=1) == stats.bootstrap_mean_ci(v, seed=1)
        assert stats.bootstrap_mean_ci(v, seed=1) != stats.bootstrap_mean_ci(v, seed=2)

    def test_brackets_mean(self) -> None:
        """The interval contains the sample mean."""
        v = np.random.default_rng(4).random(200)
        low, high = stats.bootstrap_mean_ci(v)
        assert low < v.mean() < high

    @pytest.mark.parametrize("values", [[], [np.nan, np.nan]])
    def test_empty(self, values: list[float]) -> None:
        """No data gives (nan, nan)."""
        assert all(math.isnan(v) for v in stats.bootstrap_mean_ci(values))


class TestMcnemarExact:
    @pytest.mark.parametrize(("b", "c"), [(12, 0), (10, 2), (23, 10), (3, 13), (7, 7), (1, 0)])
    def test_binomtest(self, b: int, c: int) -> None:
        """Equals scipy's two-sided exact binomial test at 1/2 on the discordant pairs."""
        assert stats.mcnemar_exact(b, c) == pytest.approx(st.binomtest(b, b + c).pvalue)

    def test_binomtest_bits(self) -> None:
        """Is scipy's binomtest bit for bit, in both orders, over every table with b + c <= 60."""
        for n in range(1, 61):
            for b in range(n + 1):
                want = st.binomtest(b, n, 0.5).pvalue
                assert stats.mcnemar_exact(b, n - b) == stats.mcnemar_exact(n - b, b) == want

    @pytest.mark.parametrize(("b", "c"), [(17, 18), (36, 35), (50, 49)])
    def test_one_apart(self, b: int, c: int) -> None:
        """|b - c| = 1 with b + c odd: the two tails cover every outcome, so p is exactly 1."""
        assert stats.mcnemar_exact(b, c) == 1.0

    def test_twelve_zero(self) -> None:
        """12 / 0 alone gives p = 2 / 2^12."""
        assert stats.mcnemar_exact(12, 0) == pytest.approx(2 / 4096)

    def test_symmetric(self) -> None:
        """Swapping b and c leaves p unchanged."""
        assert stats.mcnemar_exact(3, 9) == stats.mcnemar_exact(9, 3)

    def test_no_discordant(self) -> None:
        """Zero discordant pairs give p = 1."""
        assert stats.mcnemar_exact(0, 0) == 1.0

    def test_negative(self) -> None:
        """Negative counts are rejected."""
        with pytest.raises(ValueError, match="non-negative"):
            stats.mcnemar_exact(-1, 3)


class TestBenjaminiHochberg:
    def test_statsmodels(self) -> None:
        """Equals statsmodels' fdr_bh on unsorted p values."""
        p = np.array([0.04, 0.001, 0.3, 0.02, 0.9, 0.012, 0.049])
        assert stats.benjamini_hochberg(p) == pytest.approx(multipletests(p, method="fdr_bh")[1])

    @pytest.mark.parametrize("seed", range(5))
    def test_libraries_random(self, seed: int) -> None:
        """Matches scipy and statsmodels to rounding on random families, ties included."""
        rng = np.random.default_rng(seed)
        p = np.round(rng.random(40) ** 3, 2 if seed % 2 else 12)
        q = stats.benjamini_hochberg(p)
        assert q == pytest.approx(st.false_discovery_control(p), **CLOSE)
        assert q == pytest.approx(multipletests(p, method="fdr_bh")[1], **CLOSE)

    def test_correctly_rounded(self) -> None:
        """For McNemar-like p values (short binary fractions) q is the exact value rounded once.

        p = 3/256 in a family of 14 at rank 5 gives q = 0.0328125, a six-decimal midpoint:
        scaling by 14/5 first (scipy) lands one bit below it, so the stored 0.032813 would read
        0.032812.
        """
        rng = np.random.default_rng(0)
        for _ in range(200):
            p = rng.integers(0, 2**20, rng.integers(1, 40)) / 2**20
            m, order = p.size, np.argsort(p, kind="stable")
            exact = [Fraction(v) * m / (i + 1) for i, v in enumerate(p[order])]
            want = np.empty(m)
            want[order] = [float(min(1, *exact[i:])) for i in range(m)]
            assert stats.benjamini_hochberg(p).tolist() == want.tolist()
        family = np.array([1e-4] * 4 + [3 / 256] + [0.9] * 9)
        assert stats.benjamini_hochberg(family)[4] == 0.0328125

    def test_hand(self) -> None:
        """Hand-computed: p = (0.01, 0.04, 0.03) gives q = (0.03, 0.04, 0.04)."""
        assert stats.benjamini_hochberg([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.04, 0.04])

    def test_monotone_capped(self) -> None:
        """q values follow the order of p and never exceed 1."""
        p = np.random.default_rng(0).random(50)
        q = stats.benjamini_hochberg(p)
        assert np.all(np.diff(q[np.argsort(p)]) >= 0) and q.max() <= 1.0 and np.all(q >= p - 1e-12)

    def test_nan(self) -> None:
        """NaN passes through and is not counted in m."""
        q = stats.benjamini_hochberg([0.01, np.nan, 0.04])
        assert np.isnan(q[1]) and q[[0, 2]] == pytest.approx([0.02, 0.04])

    @pytest.mark.parametrize("condition", ["no_rag", "single_shot"])
    def test_table8(self, condition: str) -> None:
        """Table 8: 12/0 stays significant after BH, 10/2 and 23/10 do not, despite p < 0.05."""
        family = table8_family(condition)
        p = np.array([stats.mcnemar_exact(b, c) for b, c in family])
        q = stats.benjamini_hochberg(p)
        significant = dict(zip(family, q < 0.05, strict=True))
        if condition == "no_rag":
            assert p[1] < 0.05 and not significant[(10, 2)] and significant[(12, 0)]
            assert sum(a for a, _ in family) == 372 and sum(d for _, d in family) == 51
            assert int((q < 0.05).sum()) == 9
        else:
            assert p[2] < 0.05 and not significant[(23, 10)] and significant[(2, 21)]
            assert sum(a for a, _ in family) == 315 and sum(d for _, d in family) == 133
            assert int((q < 0.05).sum()) == 7

    def test_empty(self) -> None:
        """An empty family gives an empty array, and an all-NaN one all NaN."""
        assert stats.benjamini_hochberg([]).size == 0
        assert np.isnan(stats.benjamini_hochberg([np.nan, np.nan])).all()


class TestSpearman:
    @pytest.mark.parametrize("seed", [0, 1, 2])
    def test_scipy(self, seed: int) -> None:
        """Matches scipy.stats.spearmanr (rho and t-based p), with ties."""
        rng = np.random.default_rng(seed)
        x = rng.integers(0, 8, 40).astype(float)
        y = x + rng.normal(0, 4, 40)
        assert stats.spearman(x, y) == pytest.approx(tuple(st.spearmanr(x, y)))

    @pytest.mark.parametrize("seed", range(20))
    def test_scipy_close(self, seed: int) -> None:
        """Agrees with scipy to rounding on small and large samples with many ties."""
        rng = np.random.default_rng(seed)
        n = int(rng.integers(3, 80))
        x = rng.integers(0, 1 + seed % 6 + 1, n).astype(float)
        y = np.round(rng.normal(0, 1 + seed, n) + x * (seed % 3 - 1))
        res = st.spearmanr(x, y)
        assert stats.spearman(x, y) == pytest.approx((res.statistic, res.pvalue), **CLOSE)

    def test_perfect(self) -> None:
        """A monotone relation gives rho = 1 and p = 0 exactly (scipy is a bit off, ~1e-16)."""
        assert stats.spearman([1, 2, 3, 4], [10, 20, 35, 90]) == (1.0, 0.0)
        x = np.arange(25.0)
        assert stats.spearman(x, -(x**3)) == (-1.0, 0.0)
        assert st.spearmanr(x, -(x**3)).statistic == pytest.approx(-1.0, abs=1e-15)

    def test_drops_nan(self) -> None:
        """Pairs with NaN are dropped before ranking."""
        x, y = [1, 2, np.nan, 3, 4], [1, 3, 5, 2, 4]
        assert stats.spearman(x, y) == pytest.approx(stats.spearman([1, 2, 3, 4], [1, 3, 2, 4]))

    @pytest.mark.parametrize(("x", "y"), [([1, 2], [2, 1]), ([1, 1, 1, 1], [1, 2, 3, 4])])
    def test_undefined(self, x: list[float], y: list[float]) -> None:
        """Fewer than 3 pairs or a constant input give (nan, nan)."""
        assert all(math.isnan(v) for v in stats.spearman(x, y))

    def test_constant_like_scipy(self) -> None:
        """A constant input is undefined for scipy too."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", st.ConstantInputWarning)
            assert math.isnan(st.spearmanr([2, 2, 2, 2], [1, 2, 3, 4]).statistic)


class TestPartialRankAssociation:
    def test_partial_formula(self) -> None:
        """Equals the first-order partial correlation of the Spearman rhos, p from t(n - 3)."""
        rng = np.random.default_rng(8)
        c = rng.random(40)
        x, y = c + rng.normal(0, 0.3, 40), -c + rng.normal(0, 0.3, 40) + 0.2 * rng.random(40)
        rxy, rxc, ryc = (st.spearmanr(u, v)[0] for u, v in ((x, y), (x, c), (y, c)))
        want = (rxy - rxc * ryc) / math.sqrt((1 - rxc**2) * (1 - ryc**2))
        r, p = stats.partial_rank_association(x, y, c)
        t = want * math.sqrt(37 / (1 - want**2))
        assert r == pytest.approx(want) and p == pytest.approx(2 * st.t.sf(abs(t), 37))

    def test_removes_shared_covariate(self) -> None:
        """Variables driven only by the covariate correlate, but not once it is held fixed."""
        rng = np.random.default_rng(0)
        c = np.arange(40.0)
        x, y = c + rng.normal(0, 4, 40), c + rng.normal(0, 4, 40)
        assert stats.spearman(x, y)[0] > 0.8
        assert abs(stats.partial_rank_association(x, y, c)[0]) < 0.35

    def test_too_few(self) -> None:
        """Fewer than 4 rows give (nan, nan)."""
        assert all(math.isnan(v) for v in stats.partial_rank_association([1, 2, 3], [3, 1, 2], [1, 2, 3]))


class TestWilcoxonSignedRank:
    def test_scipy(self) -> None:
        """Matches scipy.stats.wilcoxon on per-model differences."""
        d = [-0.14, -0.2, -0.05, 0.03, -0.3, -0.12, -0.08, -0.25, 0.01, -0.18, -0.09, -0.11, -0.22]
        ref = st.wilcoxon(d)
        assert stats.wilcoxon_signed_rank(d) == pytest.approx((ref.statistic, ref.pvalue))

    def test_all_one_sign(self) -> None:
        """13 differences of one sign give the exact p = 2 / 2^13."""
        assert stats.wilcoxon_signed_rank(np.arange(1, 14) / 100)[1] == pytest.approx(2 / 8192)

    @pytest.mark.parametrize("d", [[0.0, 0.0, 0.0], [], [np.nan]])
    def test_no_differences(self, d: list[float]) -> None:
        """All-zero or empty differences give (nan, nan) instead of a crash."""
        assert all(math.isnan(v) for v in stats.wilcoxon_signed_rank(d))


class TestTInterval:
    def test_hand(self) -> None:
        """(1, 2, 3): mean 2, half-width t(0.975, 2) x 1 / sqrt(3)."""
        half = 4.302652729911275 / math.sqrt(3)
        assert stats.t_interval([1, 2, 3]) == pytest.approx((2.0, 2 - half, 2 + half))

    @pytest.mark.parametrize("confidence", [0.8, 0.9, 0.95, 0.99])
    def test_scipy(self, confidence: float) -> None:
        """Matches scipy.stats.t.interval around the mean with the standard error as scale."""
        v = np.random.default_rng(int(confidence * 100)).normal(0.4, 0.2, 13)
        want = st.t.interval(confidence, v.size - 1, loc=v.mean(), scale=st.sem(v))
        mean, low, high = stats.t_interval(v, confidence)
        assert mean == v.mean() and (low, high) == pytest.approx(want, **CLOSE)

    def test_identical_values(self) -> None:
        """Identical values give a zero-width interval at the mean (scipy's interval gives NaN)."""
        assert stats.t_interval([0.25, 0.25, 0.25]) == (0.25, 0.25, 0.25)

    def test_single(self) -> None:
        """One value gives its mean and NaN bounds."""
        mean, low, high = stats.t_interval([0.4])
        assert mean == 0.4 and math.isnan(low) and math.isnan(high)

    def test_empty(self) -> None:
        """No values give NaN everywhere."""
        assert all(math.isnan(v) for v in stats.t_interval([np.nan]))


def judge_scores(bias_own: float, leniency: float, noise: float, seed: int = 0) -> pl.DataFrame:
    """Long frame of three judges' scores: judge G adds leniency everywhere, bias_own on Gemma."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(200):
        for model, family in (
            ("gemma-a", "Gemma"),
            ("gemma-b", "Gemma"),
            ("llama", "Llama"),
            ("qwen", "Qwen"),
        ):
            base = rng.random()
            own = family == "Gemma"
            rows.append((q, model, family, "G", base + leniency + bias_own * own))
            rows.append((q, model, family, "Q", base + rng.normal(0, noise)))
            rows.append((q, model, family, "L", base + rng.normal(0, noise)))
    return pl.DataFrame(rows, schema=["question_id", "model", "family", "judge", "score"], orient="row")


class TestSelfPreference:
    def test_exact(self) -> None:
        """Without noise the estimate is exactly the planted own-family bias."""
        res = stats.self_preference(judge_scores(0.1, 0.05, 0.0), "G", "Gemma")
        assert (res.estimate, res.low, res.high) == pytest.approx((0.1, 0.1, 0.1))
        assert (res.n_own, res.n_other) == (400, 400)

    def test_leniency_removed(self) -> None:
        """A judge that is only lenient shows none (the own-family difference alone would)."""
        res = stats.self_preference(judge_scores(0.0, 0.2, 0.05), "G", "Gemma")
        assert res.low < 0.0 < res.high and abs(res.estimate) < 0.02

    def test_interval(self) -> None:
        """With noise the bootstrap interval brackets the planted bias and is seeded."""
        scores = judge_scores(0.03, 0.05, 0.1)
        res = stats.self_preference(scores, "G", "Gemma", seed=3)
        assert res.low < 0.03 < res.high and res.low > 0.0
        assert res == stats.self_preference(scores, "G", "Gemma", seed=3)

    def test_no_own_answers(self) -> None:
        """A family with no answers gives NaN."""
        assert math.isnan(stats.self_preference(judge_scores(0.1, 0.0, 0.0), "G", "Mistral").estimate)

    def test_unknown_judge(self) -> None:
        """A judge without scores is rejected by name."""
        with pytest.raises(ValueError, match="'X'"):
            stats.self_preference(judge_scores(0.1, 0.0, 0.0), "X", "Gemma")


class TestParetoFrontier:
    def test_hand(self) -> None:
        """Points beaten in CAR by one with at least their attempt rate fall off the frontier."""
        attempt = [0.99, 0.95, 0.90, 0.80, 0.96]
        car = [0.50, 0.80, 0.70, 0.90, 0.40]
        assert stats.pareto_frontier(attempt, car).tolist() == [True, True, False, True, False]

    def test_ties(self) -> None:
        """Identical points are both on the frontier; equal attempt with lower CAR is not."""
        assert stats.pareto_frontier([0.9, 0.9, 0.9], [0.5, 0.5, 0.4]).tolist() == [
            True,
            True,
            False,
        ]

    def test_nan(self) -> None:
        """A point with a NaN rate is never on the frontier and dominates nothing."""
        assert stats.pareto_frontier([0.9, np.nan], [0.5, 0.9]).tolist() == [True, False]


class TestThinkingTransitions:
    def test_counts(self) -> None:
        """Counts the four discordant cells, leaving out budget-exhausted pairs."""
        off = ["ABSTAIN", "ABSTAIN", "DENY", "ABSTAIN", "ANSWER", "ABSTAIN", None, "DENY"]
        on = ["DENY", "DENY", "ABSTAIN", "ANSWER", "ABSTAIN", None, "DENY", "DENY"]
        res = stats.thinking_transitions(off, on)
        assert {k: res[k] for k in ("n", "a_to_d", "d_to_a", "a_to_x", "x_to_a")} == {
            "n": 6,
            "a_to_d": 2,
            "d_to_a": 1,
            "a_to_x": 1,
            "x_to_a": 1,
        }
        assert res["p_ad"] == pytest.approx(stats.mcnemar_exact(2, 1))

    def test_table8_row(self) -> None:
        """A GLM-4.5-Air-like row (12 A->D, 0 D->A) gives p = 2 / 2^12."""
        off, on = ["ABSTAIN"] * 12 + ["ANSWER"] * 5, ["DENY"] * 12 + ["ANSWER"] * 5
        res = stats.thinking_transitions(off, on)
        assert res["p_ad"] == pytest.approx(2 / 4096) and res["p_ax"] == 1.0 and res["n"] == 17

    def test_empty(self) -> None:
        """No matched pairs give zero counts and p = 1."""
        res = stats.thinking_transitions([None], ["ABSTAIN"])
        assert res["n"] == 0 and res["p_ad"] == 1.0

    def test_bad_label(self) -> None:
        """An unknown label is rejected with its position."""
        with pytest.raises(ValueError, match=r"labels_on\[0\]"):
            stats.thinking_transitions(["ABSTAIN"], ["abstain"])
