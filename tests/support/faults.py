"""Builders for the fault suite (tests/faults/): whole-project copies and cache counts.

A fault test never touches the repository's own outputs or cache: it copies every tracked and
unignored file into a temporary folder (the virtual environment linked, not copied), points
``DECLINECRAFT_CACHE`` at a fresh folder, and runs Make there.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from declinecraft.llm.cache import Cache, cache_path
from tests.support import fake_openai, keys, projects

FAULTS_PARAMS = "params/faults.yaml"


def report(record: Mapping[str, object]) -> None:
    """Print one fault outcome and append it to $FAULTS_REPORT (JSON lines) when set."""
    line = json.dumps(record, sort_keys=True)
    print(line)
    if target := os.environ.get("FAULTS_REPORT"):
        with open(target, "a", encoding="utf-8") as out:
            out.write(line + "\n")


def copy_tree(target: Path) -> Path:
    """Copy the repository's tracked and unignored files to ``target`` and link its ``.venv``."""
    listed = (
        subprocess.run(
            ["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=projects.REPO, check=True, capture_output=True
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        source = projects.REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    (target / ".venv").symlink_to(projects.REPO / ".venv")
    return target


def make_env(cache: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a fault run: a private cache folder, no inherited API keys."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update({"DECLINECRAFT_CACHE": str(cache), "PYTHONHASHSEED": "0", **(extra or {})})
    return env


def make_all(
    project: Path, env: Mapping[str, str], params: str = FAULTS_PARAMS, **kwargs: object
) -> subprocess.Popen[bytes]:
    """Start ``nice make all PARAMS=…`` in ``project`` in its own process group."""
    return subprocess.Popen(
        ["nice", "make", "--no-print-directory", "all", f"PARAMS={params}"],
        cwd=project,
        env=dict(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        **kwargs,  # type: ignore[arg-type]
    )


def stored_keys(cache: Path) -> set[str]:
    """Keys of every call stored in the LLM cache of a cache folder (empty when there is none)."""
    path = cache_path(cache)
    if not path.is_file():
        return set()
    with Cache(path) as store:
        return {record.key for record in store.records()}


def scripted_models(base_url: str, key_env: str = "OPENROUTER_API_KEY") -> str:
    """A models file of two hosted models on the fake server (tests/support/fake_model.py answers them)."""
    entries = {
        name: {
            "family": "Scripted",
            "display_name": name,
            "backend": "openai",
            "served_name": f"vendor/{name}",
            "base_url": base_url,
            "api_key_env": key_env,
            "thinking": "none",
            "max_concurrency": 4,
            "release": "2024-01",
            "knowledge_cutoff": "not published",
            "params_total_b": 1,
        }
        for name in ("scripted-under-test", "scripted-judge")
    }
    return yaml.safe_dump({"models": entries}, sort_keys=True)


#: A paper-shaped run on hosted models (every role through an OpenAI-compatible API), tiny sizes.
SCRIPTED_PARAMS = """\
description: Fault-suite run against a fake OpenAI-compatible API (hosted models, keys from env).
base: faults
models_file: params/models_scripted.yaml
generate: {generator: scripted-judge}
verify: {verifier: scripted-judge}
answer: {models: [scripted-under-test], rewriter: scripted-judge}
judge: {response_judge: scripted-judge, oracle: scripted-judge, accuracy_judges: [scripted-judge]}
evidence: {conflict_model: scripted-judge, accuracy_judges: [scripted-judge]}
"""


def scripted_project(target: Path, base_url: str) -> Path:
    """A project copy whose ``params/scripted.yaml`` runs every role on the fake hosted models."""
    copy_tree(target)
    (target / "params" / "models_scripted.yaml").write_text(scripted_models(base_url), encoding="utf-8")
    (target / "params" / "scripted.yaml").write_text(SCRIPTED_PARAMS, encoding="utf-8")
    return target


def processes_with(marker: str) -> list[int]:
    """Pids of live processes whose environment holds ``marker`` (e.g. a run's cache folder)."""
    found = []
    needle = marker.encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if needle in (entry / "environ").read_bytes():
                state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
                if state != "Z":
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


#: The API key every scripted run sends (the secrets test looks for it in every written file).
PLANTED = keys.planted_key("planted")
SCRIPTED_PARAMS_FILE = "params/scripted.yaml"
SCRIPTED_RUN = "scripted"


@dataclass(frozen=True)
class ScriptedRun:
    """One uninterrupted cold ``make all`` of the scripted run: where it is, and what it took."""

    root: Path
    cache: Path
    env: dict[str, str]
    seconds: float
    log: str
    requests: int
    sent_key: bool


def scripted_run(base: Path, api: fake_openai.FakeServer) -> ScriptedRun:
    """Copy the project under ``base``, run ``make all PARAMS=params/scripted.yaml`` cold against
    the fake API ``api`` (its stats reset first), and check that the paper stage ran."""
    (base / "project").mkdir(parents=True)
    root, cache = scripted_project(base / "project", api.base_url), base / "cache"
    env = make_env(cache, {"OPENROUTER_API_KEY": PLANTED})
    api.reset()
    start = time.monotonic()
    process = make_all(root, env, SCRIPTED_PARAMS_FILE)
    out = process.communicate(timeout=3600)[0].decode(errors="replace")
    seconds = time.monotonic() - start
    stats = api.stats()
    executed = root / "outputs" / SCRIPTED_RUN / "executed" / "10_paper.ipynb"
    assert process.returncode == 0 and executed.is_file(), out[-3000:]
    return ScriptedRun(root, cache, env, seconds, out, stats["requests"], f"Bearer {PLANTED}" in stats["auth"])
