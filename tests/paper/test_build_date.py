"""Tests for declinecraft.paper.build_date: the run's date comes from its inputs, never the clock."""

from __future__ import annotations

import datetime as dt

import pytest

from declinecraft.core.params import CorpusParams
from declinecraft.paper import build_date


class TestBuildDate:
    def test_snapshot_day(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Without SOURCE_DATE_EPOCH the date is midnight UTC of the corpus snapshot day."""
        monkeypatch.delenv(build_date.ENV, raising=False)
        when = build_date.build_date(CorpusParams(snapshot="2026-09-08", cutoff="2025-03-31"))
        assert when == dt.datetime(2026, 9, 8, tzinfo=dt.UTC)
        assert build_date.epoch(when) == 1788825600

    def test_cutoff_without_snapshot(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A snapshot left to the newest revision ("") falls back to the cut-off day."""
        monkeypatch.delenv(build_date.ENV, raising=False)
        assert build_date.build_date(CorpusParams(snapshot="", cutoff="2025-03-31")).date() == dt.date(2025, 3, 31)

    def test_environment_overrides(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """SOURCE_DATE_EPOCH, when set, is the date."""
        monkeypatch.setenv(build_date.ENV, "86400")
        assert build_date.build_date(CorpusParams()) == dt.datetime(1970, 1, 2, tzinfo=dt.UTC)

    @pytest.mark.parametrize(
        ("env", "snapshot", "match"), [("soon", "2026-09-08", "SOURCE_DATE_EPOCH"), ("", "Sept", "corpus.snapshot")]
    )
    def test_bad_input(self, monkeypatch: pytest.MonkeyPatch, env: str, snapshot: str, match: str) -> None:
        """A date that is not one fails naming where it came from."""
        monkeypatch.setenv(build_date.ENV, env)
        with pytest.raises(ValueError, match=match):
            build_date.build_date(CorpusParams(snapshot=snapshot))
