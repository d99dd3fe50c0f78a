"""The default run (`make all`, ``outputs/default/``) for the tests that check its outputs: its
config, or a skip when it is not built, and what its stages looked up."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from declinecraft.core import catalogue, config, registry
from declinecraft.runtime import bundle, replay
from tests.support import projects

PARAMS = projects.REPO / "params" / "default.yaml"


def ran(cfg: config.RunConfig, block: str) -> Path:
    """The file that shows stage ``block`` ran: its manifest, or for a stage without one its first
    declared output."""
    try:
        return catalogue.manifest(block).path(cfg)
    except KeyError:
        return next(a.path(cfg) for a in catalogue.writes(block) if a.required(cfg))


def config_or_skip(*blocks: str) -> config.RunConfig:
    """The default run's config; skip the test when a stage of ``blocks`` has not run there."""
    cfg = config.load(PARAMS)
    if missing := [p for p in (ran(cfg, block) for block in blocks) if not p.is_file()]:
        pytest.skip(f"default run not built: {missing[0].relative_to(projects.REPO)} is missing (run `make all`)")
    return cfg


def llm_keys(cfg: config.RunConfig, block: str) -> set[str]:
    """The cache keys of the model calls stage ``block`` looked up: its ledger, which is what a
    bundle of the run holds and a replay of it reads."""
    return {key for _, key in replay.ledger_read(bundle.ledger_path(cfg, catalogue.notebook(block)))["llm"]}


def thinking_switch(cfg: config.RunConfig) -> Callable[[str], str]:
    """The registry's ``thinking`` field of a model of the run (none, always or switchable)."""
    specs = registry.load_models(cfg.resolve(cfg.models_file))
    return lambda model: specs[model].thinking
