"""Fault suite on whole runs: kill -9 of `make all` at seeded moments, two runs at once, secrets.

Every run happens in a copy of the project with its own cache folder (tests/support/faults.py).
The models are either the scripted hosted models (the session's fake OpenAI server, `scripted_api`, answering through
tests/support/fake_model.py: every stage has real work, answers depend only on the request, so whole runs
can be compared byte for byte) or SmolLM2-135M on the project's own llama.cpp server
(``params/faults.yaml``), whose byte-identity across a kill needs a deterministic server.

Counted per kill: calls stored before the kill, stored calls re-sent on the rerun (goal 0), calls
sent anew, processes left over, duplicated rows, files differing from an uninterrupted cold run.
With ``FAULTS_REPORT=<file>`` each outcome is appended there as one JSON line."""

from __future__ import annotations

import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest

from declinecraft.llm import serve
from declinecraft.runtime import system_packages
from tests.support import fake_openai, faults

pytestmark = [pytest.mark.faults, pytest.mark.slow, pytest.mark.timeout(7200)]


RUN_TIMEOUT_S = 3600


KILLS = 5


#: Stage files compared byte for byte between a resumed and an uninterrupted run.
COMPARED = ("04_verify/benchmark.parquet", "paper/numbers.tex", "paper/view_numbers.tex")


@dataclass(frozen=True)
class Setup:
    """One model setup of the suite: the params file and what the runs need."""

    name: str
    params: str
    run: str


SETUPS = {
    "scripted": Setup("scripted", faults.SCRIPTED_PARAMS_FILE, faults.SCRIPTED_RUN),
    "smollm2": Setup("smollm2", faults.FAULTS_PARAMS, "faults"),
}


def project(root: Path, setup: Setup, scripted_api: fake_openai.FakeServer) -> Path:
    root.mkdir(parents=True)
    return faults.scripted_project(root, scripted_api.base_url) if setup.name == "scripted" else faults.copy_tree(root)


def env_for(cache: Path) -> dict[str, str]:
    return faults.make_env(cache, {"OPENROUTER_API_KEY": faults.PLANTED})


def finish(process: subprocess.Popen[bytes], timeout: float = RUN_TIMEOUT_S) -> str:
    out, _ = process.communicate(timeout=timeout)
    return out.decode(errors="replace")


def run_dir(root: Path, setup: Setup) -> Path:
    return root / "outputs" / setup.run


def stored(cache: Path) -> dict[str, str]:
    """key -> last message text of every stored call."""
    path = cache / "llm" / "calls.sqlite"
    if not path.is_file():
        return {}
    with sqlite3.connect(path) as db:
        rows = db.execute("SELECT key, request FROM calls").fetchall()
    return {key: str(json.loads(body)["messages"][-1]["content"]) for key, body in rows}


def server_requests(cache: Path) -> int:
    """Chat requests the run's local llama.cpp servers answered, counted from their access logs
    (:func:`serve.servers_dir`, one line per request): the real-server setup's request counter."""
    return sum(
        log.read_text(errors="replace").count('"POST /v1/chat/completions ')
        for log in serve.servers_dir(cache).glob("*.log")
    )


def duplicated_rows(run: Path) -> dict[str, int]:
    """Rows repeated in the files whose rows are records with an id (0 everywhere is the goal)."""
    id_columns = {
        "04_verify/benchmark.parquet": ["id"],
        "05_answer/responses.parquet": ["response_id"],
        "06_judge/labels.parquet": ["response_id", "judge", "role"],
        "06_judge/judged.parquet": ["response_id"],
    }
    out = {}
    for name, columns in id_columns.items():
        if (run / name).is_file():
            frame = pl.read_parquet(run / name, columns=columns)
            out[name] = frame.height - frame.unique().height
    return out


def compared_bytes(run: Path) -> dict[str, bytes]:
    files = {name: run / name for name in COMPARED}
    files.update({f"paper/tables/{p.name}": p for p in sorted((run / "paper" / "tables").glob("*.tex"))})
    return {name: path.read_bytes() for name, path in files.items() if path.is_file()}


@pytest.fixture(scope="module")
def reference(
    tmp_path_factory: pytest.TempPathFactory, scripted_api: fake_openai.FakeServer, request: pytest.FixtureRequest
) -> dict:
    """An uninterrupted cold run of each setup: its files, duration and stage timeline. The
    scripted one is the session's (``scripted_run``, shared with the replay-bundle test)."""
    done: dict[str, dict] = {}

    def get(name: str) -> dict:
        if name == "scripted" and name not in done:
            shared: faults.ScriptedRun = request.getfixturevalue("scripted_run")
            done[name] = {
                "root": shared.root,
                "cache": shared.cache,
                "seconds": shared.seconds,
                "files": compared_bytes(run_dir(shared.root, SETUPS[name])),
                "calls": len(stored(shared.cache)),
                "log": shared.log,
                "sent_key": shared.sent_key,
            }
        if name not in done:
            setup = SETUPS[name]
            base = tmp_path_factory.mktemp(f"ref-{name}")
            root, cache = project(base / "project", setup, scripted_api), base / "cache"
            start = time.monotonic()
            out = finish(faults.make_all(root, env_for(cache), setup.params))
            elapsed = time.monotonic() - start
            sent_key = f"Bearer {faults.PLANTED}" in scripted_api.stats()["auth"]
            assert (run_dir(root, setup) / "executed" / "10_paper.ipynb").is_file(), out[-3000:]
            done[name] = {
                "root": root,
                "cache": cache,
                "seconds": elapsed,
                "files": compared_bytes(run_dir(root, setup)),
                "calls": len(stored(cache)),
                "log": out,
                "sent_key": sent_key,
            }
        return done[name]

    return get  # type: ignore[return-value]


def moments(total_s: float, n: int = KILLS, seed: int = 0) -> list[float]:
    """n seeded kill times, one drawn uniformly in each of n equal slices of 5%-95% of a run."""
    rng = random.Random(seed)
    low, span = 0.05 * total_s, 0.9 * total_s / n
    return [round(low + span * i + rng.uniform(0, span), 1) for i in range(n)]


def running_stage(run: Path) -> str:
    running = sorted((run / "executed").glob(".*.running.ipynb")) if (run / "executed").is_dir() else []
    return running[0].name.split(".")[1] if running else "(between stages)"


@pytest.mark.long_faults
@pytest.mark.parametrize("index", range(KILLS))
@pytest.mark.parametrize("setup_name", ["scripted", "smollm2"])
def test_kill_and_resume(
    setup_name: str, index: int, reference, scripted_api: fake_openai.FakeServer, tmp_path: Path
) -> None:
    """kill -9 of `make all` (its whole process group) at a seeded moment, then a rerun to the end:
    no stored call re-sent, no process left, no duplicated row, the uninterrupted run's files."""
    setup, ref = SETUPS[setup_name], reference(setup_name)
    at = moments(ref["seconds"])[index]
    root, cache = project(tmp_path / "project", setup, scripted_api), tmp_path / "cache"
    process = faults.make_all(root, env_for(cache), setup.params)
    time.sleep(at)
    stage = running_stage(run_dir(root, setup))
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=60)
    deadline = time.monotonic() + 30
    while (left := faults.processes_with(str(cache))) and time.monotonic() < deadline:
        time.sleep(0.5)
    before, served_before = stored(cache), server_requests(cache)
    scripted_api.reset()
    out = finish(faults.make_all(root, env_for(cache), setup.params))
    stats = scripted_api.stats()
    after = stored(cache)
    if setup.name == "scripted":
        # A stored call re-sent shows as a request beyond the new calls with the same text (several
        # calls can share a last message, e.g. a judge's re-ask turn, so texts alone do not suffice).
        requests = stats["requests"]
        new_texts = Counter(text for key, text in after.items() if key not in before)
        resent = sum(max(0, stats["by_text"].get(t, 0) - new_texts[t]) for t in set(before.values()))
    else:
        # The real server logs every request it answers: any beyond the new calls was a re-send
        # (or a retry, which counts against the run too).
        requests = server_requests(cache) - served_before
        resent = requests - (len(after) - len(before))
    files = compared_bytes(run_dir(root, setup))
    differing = sorted(n for n in set(files) | set(ref["files"]) if files.get(n) != ref["files"].get(n))
    dupes = duplicated_rows(run_dir(root, setup))
    faults.report(
        {
            "fault": "kill -9 make all",
            "setup": setup.name,
            "moment": index,
            "at_s": at,
            "stage": stage,
            "run_s": round(ref["seconds"]),
            "stored_before": len(before),
            "resent_stored": resent,
            "from_cache": len(before) - resent,
            "sent_anew": len(after) - len(before),
            "requests": requests,
            "left_over": len(left),
            "duplicated_rows": sum(dupes.values()),
            "differing_files": differing,
        }
    )
    assert (run_dir(root, setup) / "executed" / "10_paper.ipynb").is_file(), out[-3000:]
    assert left == [], f"processes left after the kill: {left}"
    assert set(before) <= set(after)
    assert resent == 0, f"{resent} request(s) beyond the {len(after) - len(before)} new calls"
    assert sum(dupes.values()) == 0, dupes
    assert differing == [], f"files differ from the uninterrupted run: {differing}"


def test_two_runs_at_once(reference, scripted_api: fake_openai.FakeServer) -> None:
    """Two `make all` on one run: the second refuses at once naming the lock. Then a SIGTERM to the
    first's make alone (what `kill PID` or a scheduler sends) ends its stage too: no process of the
    run is left writing without the lock. A third `make all` finishes with the files intact."""
    ref = reference("scripted")
    root, setup = ref["root"], SETUPS["scripted"]
    (run_dir(root, setup) / "executed" / "10_paper.ipynb").unlink()  # the paper stage reruns
    first = faults.make_all(root, env_for(ref["cache"]), setup.params)
    time.sleep(3)
    second = faults.make_all(root, env_for(ref["cache"]), setup.params)
    refused = finish(second, timeout=120)
    log = run_dir(root, setup) / "logs" / "10_paper.running.log"
    deadline = time.monotonic() + 120  # until the stage's notebook runs its cells in a kernel
    while time.monotonic() < deadline and "Executing Cell 3-" not in (log.read_text() if log.is_file() else ""):
        time.sleep(0.2)
    first.send_signal(signal.SIGTERM)  # make's pid only, not its process group
    first.wait(timeout=120)  # make's own end; its output reaches EOF only when every writer is gone
    deadline = time.monotonic() + 10  # the paper stage alone takes longer: an orphan would still run
    while (left := faults.processes_with(str(ref["cache"]))) and time.monotonic() < deadline:
        time.sleep(0.5)
    out = finish(first, timeout=120)
    third = faults.make_all(root, env_for(ref["cache"]), setup.params)
    again = finish(third)
    faults.report(
        {
            "fault": "two make all at once, then SIGTERM to the first make",
            "setup": "scripted",
            "second_rc": second.returncode,
            "first_rc": first.returncode,
            "left": len(left),
            "third_rc": third.returncode,
        }
    )
    assert second.returncode != 0 and "run 'scripted' is busy" in refused and "outputs/scripted/.lock" in refused
    assert ">> [scripted] 10_paper" in out and first.returncode != 0, out[-3000:]
    assert left == [], f"processes of the run left after SIGTERM to make: {left}"
    assert third.returncode == 0, again[-3000:]
    assert compared_bytes(run_dir(root, setup)) == ref["files"]


def test_secrets_never_written(reference, scripted_api: fake_openai.FakeServer) -> None:
    """A planted API key, used by every call of a paper-shaped hosted run, is in no written file."""
    ref = reference("scripted")
    assert ref["sent_key"] and ref["calls"] > 0  # the key was really used, by every hosted call
    places = [ref["root"] / "outputs", ref["cache"], ref["root"] / "figures", ref["root"] / "paper"]
    leaks, scanned = [], 0
    for place in places:
        for path in (p for p in place.rglob("*") if p.is_file()):
            scanned += 1
            if faults.PLANTED.encode() in path.read_bytes():
                leaks.append(str(path))
    faults.report({"fault": "planted API key", "setup": "scripted", "files_scanned": scanned, "leaks": len(leaks)})
    assert scanned > 50 and leaks == [] and faults.PLANTED not in ref["log"]


TEX_MISSING = system_packages.absent(system_packages.TEX)


TITLES = ("Cake & Pie_50% #1 {$~^} \\ Größe", "Ghastling_Ä & {Ø} 100% #2 $~^\\ Ñandú")


@pytest.mark.skipif(bool(TEX_MISSING), reason=f"the PDF needs TeX: {TEX_MISSING} (make setup installs it)")
def test_special_titles_reach_explorer_and_pdf(reference, tmp_path: Path) -> None:
    """Titles with & _ # % $ ~ ^ { } \\ and non-ASCII letters: exact in chunks and benchmark, escaped
    in the explorer page, and both the run's PDF and a page of the escaped titles build."""
    import html
    import shutil

    from declinecraft.paper import latex

    ref = reference("scripted")
    root, run = ref["root"], run_dir(ref["root"], SETUPS["scripted"])
    chunks = pl.read_parquet(root / "outputs" / "faults" / "01_corpus" / "chunks_pre.parquet")
    post = pl.read_parquet(root / "outputs" / "faults" / "01_corpus" / "chunks_post.parquet")
    titles = set(chunks["title"]) | set(post["title"])
    assert set(TITLES) <= titles
    headed = [text for text in chunks["text"] if text.startswith(f"[Page: {TITLES[0]}]")]
    assert headed, "no chunk is headed by the special title"
    bench = pl.read_parquet(run / "04_verify" / "benchmark.parquet")
    in_bench = [t for t in TITLES if t in set(bench["target_title"])]
    done = subprocess.run(
        ["nice", "make", "--no-print-directory", "report", "PARAMS=params/scripted.yaml"],
        cwd=root,
        env=env_for(ref["cache"]),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    page = (run / "explorer" / "index.html").read_text(encoding="utf-8")
    # The first page keeps its question list as JSON in a script element (tojson escapes <, >, & and
    # ', so no title can end the element; the page writes it with textContent).
    found = re.search(r'<script type="application/json" id="dc-data">(.*?)</script>', page, re.S)
    assert found is not None and "&" not in found[1]
    listed = json.dumps(json.loads(found[1]), ensure_ascii=False)
    missing = [t for t in in_bench if json.dumps(t, ensure_ascii=False)[1:-1] not in listed]
    assert missing == [], missing
    # Each question's own file holds its page link as escaped HTML, in JSON.
    shards = "".join(p.read_text(encoding="utf-8") for p in (run / "explorer" / "questions").glob("*.js"))
    unescaped = [t for t in in_bench if json.dumps(html.escape(t))[1:-1] not in shards]
    assert unescaped == [], unescaped
    assert (run / "paper" / "main.pdf").is_file()
    faults.report(
        {"fault": "special titles", "setup": "scripted", "in_benchmark": len(in_bench), "explorer": True, "pdf": True}
    )
    if shutil.which("pdflatex"):
        doc = tmp_path / "titles.tex"
        body = "\n\n".join(latex.escape(t) for t in TITLES)
        doc.write_text(
            "\\documentclass{article}\\usepackage[T1]{fontenc}\\usepackage[utf8]{inputenc}"
            f"\\begin{{document}}\n{body}\n\\end{{document}}\n",
            encoding="utf-8",
        )
        built = subprocess.run(
            ["pdflatex", "-interaction=nonstopmode", "-halt-on-error", doc.name],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert built.returncode == 0 and (tmp_path / "titles.pdf").is_file(), built.stdout[-2000:]
