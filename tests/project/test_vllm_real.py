"""A real vLLM serves the project's calls: the fault suite's tiny run with its model under test,
SmolLM2-135M, on vLLM, through answer and judge, in a copy of the project with its own cache.

Every other role is the fault suite's scripted setup (the fake hosted models of tests/support/fake_model.py,
answering at once), so the run's time is vLLM's: starting it and answering. The views are off (each
stage starts its own server, 30-70 s for vLLM on 2 CPU cores).

Checked: every call to vLLM is answered; the same prompts have the same keys (so a second run
answers from the cache, which the CPU tests check for every engine) and the same answers on a
restarted server; a vLLM server killed under a batch is restarted (as llama.cpp's
are); no process is left behind. And vLLM's own batch runner (`vllm run-batch`, no server) answers a
handful of exported calls that `make batch-import`'s code folds into the cache. Needs the engine of
`make vllm` (`make test-vllm` builds it first)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from declinecraft.core import paths, registry
from declinecraft.llm import batch_files, serve, vllm_engine
from declinecraft.llm.cache import Cache, CallRecord, open_cache
from declinecraft.llm.client import Request, connect, run_batch
from declinecraft.runtime import group_guard
from tests.support import fake_openai, faults, keys, projects

pytestmark = [pytest.mark.vllm, pytest.mark.slow, pytest.mark.timeout(3600)]


PARAMS, RUN, MODEL = "params/vllm-smoke.yaml", "vllm-smoke", "smollm2-135m-vllm"


ENDPOINT = "vllm:smollm2-135m"


SMOKE_PARAMS = f"""\
description: The scripted fault-suite run with its model under test, SmolLM2-135M, on vLLM.
base: scripted
answer: {{models: [{MODEL}]}}
know2guess: {{enabled: false}}
evidence: {{enabled: false}}
"""


@dataclass
class Project:
    root: Path
    cache: Path
    env: dict[str, str]
    seconds: float


def make_all(project: Project) -> str:
    # Not niced (unlike the fault suite's runs): vLLM and llama.cpp at nice 19 beside other work on
    # two cores slowed a 48-token call to 73 s.
    process = subprocess.Popen(
        ["make", "--no-print-directory", "all", f"PARAMS={PARAMS}"],
        cwd=project.root,
        env=project.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    out, _ = process.communicate(timeout=3000)
    text = out.decode(errors="replace")
    assert process.returncode == 0, text[-4000:]
    return text


def vllm_logs(cache: Path) -> list[Path]:
    return sorted(serve.servers_dir(cache).glob(f"{MODEL}-*.log"))


def vllm_records(cache: Path) -> list[CallRecord]:
    with open_cache(cache) as store:
        return store.records(endpoint=ENDPOINT)


def cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def wait_gone(marker: str, timeout: float = 30.0) -> list[int]:
    deadline = time.monotonic() + timeout
    while (left := faults.processes_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.5)
    return left


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Project]:
    """The run, once, cold: the scripted models in every role but one, the answers from vLLM."""
    shared = paths.cache_dir(projects.REPO)
    if vllm_engine.locate(shared) is None:
        pytest.skip("no vLLM engine: `make test-vllm` builds it (make vllm) before running this")
    base = tmp_path_factory.mktemp("vllm-real")
    fake = fake_openai.start(latency=0.02, respond="tests.support.fake_model:reply", port=serve.free_port())
    try:
        root, cache = faults.scripted_project(base / "project", fake.base_url), base / "cache"
        models = root / "params" / "models_scripted.yaml"
        entries = yaml.safe_load(models.read_text())
        entries["models"][MODEL] = yaml.safe_load((root / "params" / "models.yaml").read_text())["models"][MODEL]
        models.write_text(yaml.safe_dump(entries, sort_keys=True))
        (root / PARAMS).write_text(SMOKE_PARAMS)
        cache.mkdir()
        (cache / "vllm").symlink_to(vllm_engine.engine_dir(shared))  # the engine and converted folders
        handle = Project(root, cache, faults.make_env(cache, {"OPENROUTER_API_KEY": keys.planted_key("vllm")}), 0.0)
        start = time.monotonic()
        make_all(handle)
        handle.seconds = time.monotonic() - start
        faults.report({"fault": "vllm-real run", "seconds": round(handle.seconds), "calls": len(vllm_records(cache))})
        yield handle
        assert wait_gone(str(cache)) == [], "processes of the run are left behind"
    finally:
        fake.stop()


def test_every_call_answered(project: Project) -> None:
    """The run asked vLLM, from one server start, and every call it sent has an answer."""
    records = vllm_records(project.cache)
    assert records and all(r.status == "ok" and r.text for r in records), [r.error for r in records if r.status != "ok"]
    assert len(vllm_logs(project.cache)) == 1
    assert wait_gone(str(project.cache)) == []


def test_restarted_and_killed_server_same_answers(project: Project, tmp_path: Path) -> None:
    """The run's prompts, sent again to a new server that is killed under the batch, come back
    from the restarted server with the first run's answers; no server process is left."""
    spec = registry.get_model(project.root / "params" / "models.yaml", MODEL)
    stored = vllm_records(project.cache)
    requests = []
    for record in stored:
        body = json.loads(record.request)
        fixed = {"messages", "max_tokens", "temperature"}
        requests.append(
            Request(
                messages=tuple(body["messages"]),
                max_tokens=body["max_tokens"],
                temperature=body["temperature"],
                prompt_version=record.prompt_version,
                params={k: v for k, v in body.items() if k not in fixed},
            )
        )
    os.environ["DECLINECRAFT_TEST_MARK"] = marker = f"vllm-real-{os.getpid()}"  # inherited by the servers
    try:
        with Cache(tmp_path / "calls.sqlite") as fresh, connect(spec, fresh, project.cache) as client:
            assert [client.key(r) for r in requests] == [r.key for r in stored]  # same bodies, same identity
            killed: list[int] = []

            def kill_after_first_answer() -> None:
                deadline = time.monotonic() + 600
                while fresh.count() < 1 and time.monotonic() < deadline:
                    time.sleep(0.2)
                guard = client.server.servers[-1].process if client.server and client.server.servers else None
                # The API server itself (below the project's guard), as an out-of-memory kill would.
                api = [p for p in group_guard.descendants(guard.pid) if b"api_server" in cmdline(p)] if guard else []
                if api and len(requests) > 1:
                    os.kill(api[0], signal.SIGKILL)
                    killed.append(api[0])

            killer = threading.Thread(target=kill_after_first_answer, daemon=True)
            killer.start()
            results = client.run(requests, progress=False)
            killer.join(timeout=30)
            assert killed and client.server is not None and client.server.restarts == 1
            assert all(r.ok for r in results)
            again = {r.key: r.text for r in fresh.records()}  # raw texts, as stored by the first run
        assert again == {r.key: r.text for r in stored}
        assert wait_gone(marker) == []
    finally:
        os.environ.pop("DECLINECRAFT_TEST_MARK", None)


def test_run_batch_answers_into_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A handful of calls exported for a batch run (nothing sent, no server started) are answered by
    `vllm run-batch` with the server's engine settings; imported, they are answered from the cache
    by a client that starts no server."""
    shared = paths.cache_dir(projects.REPO)
    engine = vllm_engine.locate(shared)
    if engine is None:
        pytest.skip("no vLLM engine: `make test-vllm` builds it (make vllm) before running this")
    spec = registry.get_model(projects.REPO / "params" / "models.yaml", MODEL)
    texts = ["Name one block in Minecraft.", "What do cows drop?", "Say hello.", "What is 2 + 2?"]
    requests = [Request.from_text(t, max_tokens=24) for t in texts]
    folder = tmp_path / "batches"
    monkeypatch.setenv(batch_files.EXPORT_ENV, str(folder))
    monkeypatch.setattr(batch_files, "_written", {})
    with Cache(tmp_path / "calls.sqlite") as store:
        with connect(spec, store, shared) as client:
            exported = run_batch(client, requests, progress=False)
            assert client.server is not None and client.server.servers == []  # nothing was started
        assert not any(r.ok for r in exported) and store.count() == 0
        infile, outfile = folder / f"{MODEL}.jsonl", tmp_path / "results.jsonl"
        model = serve.vllm_model(spec, shared, engine)
        command = vllm_engine.batch_command(spec, model, engine, infile, outfile)
        done = subprocess.run(
            command, env=vllm_engine.environment(shared, engine, spec), capture_output=True, text=True, timeout=1800
        )
        assert done.returncode == 0, done.stderr[-4000:]
        counts = batch_files.import_results(store, [outfile], [folder / f"{MODEL}.calls.jsonl"])
        assert counts == {"ok": len(texts), "failed": 0}
        monkeypatch.delenv(batch_files.EXPORT_ENV)
        with connect(spec, store, shared) as client:
            answered = run_batch(client, requests, progress=False)
            assert client.server is not None and client.server.servers == []
    assert all(r.ok and r.cached and r.text for r in answered)
    assert [r.key for r in answered] == [r.key for r in exported]
