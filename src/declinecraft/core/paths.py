"""Where things live: the project root, run outputs, the shared caches.

Every path is absolute and derived from an explicit starting point (a params file, a notebook's
folder), so a notebook opened in JupyterLab and one run by papermill from the Makefile agree.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: Environment variable that moves the shared caches (LLM responses, embeddings, model files).
CACHE_ENV = "DECLINECRAFT_CACHE"
#: Where annotators' label files of App. I's sheet go (the analysis stage reads them), one folder per run.
ANNOTATIONS = "data/annotations"
#: Where annotators' label files of ESB's validation sheet go (the evidence view reads them), one folder per run.
EVIDENCE_ANNOTATIONS = "data/evidence_annotations"


def find_root(start: str | os.PathLike[str] | None = None) -> Path:
    """Return the project root: the nearest folder at or above ``start`` holding ``pyproject.toml``
    and ``params/``.

    Raises:
        FileNotFoundError: no such folder above ``start``.
    """
    here = Path(start or Path.cwd()).resolve()
    if here.is_file():
        here = here.parent
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file() and (folder / "params").is_dir():
            return folder
    raise FileNotFoundError(f"no DeclineCraft project (pyproject.toml + params/) at or above {here}")


def under(path: Path, root: Path) -> Path:
    """``path`` from ``root`` when it lies under it (how outputs and messages name a project's
    files, the same on every checkout), else as given."""
    return path.relative_to(root) if path.is_relative_to(root) else path


def paper_dirs(root: Path, run: str) -> tuple[Path, Path]:
    """``(figures, paper)`` folders of a run: the project's own for ``default``, else under outputs/<run>/."""
    if run == "default":
        return root / "figures", root / "paper"
    return outputs_dir(root) / run / "figures", outputs_dir(root) / run / "paper"


def stale_install(root: Path, *, prefix: Path | None = None, package: Path | None = None) -> str | None:
    """Say why, when this checkout's own environment (``<root>/.venv``) imports the package from
    somewhere else: a checkout moved or copied together with its ``.venv`` keeps the editable
    install of the old place, and would silently run the old place's code.

    Args:
        root: the checkout (:func:`find_root`).
        prefix: the running environment (default ``sys.prefix``); another environment than the
            checkout's own (CI's, a test's ``PYTHONPATH``) is never judged.
        package: the folder the package was imported from (default: this one's).

    Returns:
        The message naming both places and the fix, or None.
    """
    prefix = Path(prefix or sys.prefix).resolve()
    package = Path(package or Path(__file__).resolve().parents[1]).resolve()
    here = (root / "src" / "declinecraft").resolve()
    if (root / ".venv").is_symlink():  # a linked environment is shared on purpose (the fault suite's copies)
        return None
    if prefix != (root / ".venv").resolve() or package == here:
        return None
    return (
        f"{root}: its .venv imports declinecraft from {package}, not from {here}: the checkout was moved or "
        "copied with its .venv, whose editable install still points to the old place. Install it here again: "
        f"{root / '.venv' / 'bin' / 'pip'} install --no-deps -e {root}"
    )


def cache_dir(root: Path) -> Path:
    """Return the folder of caches shared by all runs (never deleted by ``make clean``)."""
    override = os.environ.get(CACHE_ENV)
    path = Path(override).resolve() if override else root / ".cache"
    path.mkdir(parents=True, exist_ok=True)
    return path


def outputs_dir(root: Path) -> Path:
    """Return the folder that holds one sub-folder per run."""
    return root / "outputs"


@contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``target`` and move it into place only if the block succeeds.

    A run killed half-way never leaves a truncated file under the final name, so Make and the
    resume logic can trust that any file that exists is complete.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    tmp_path.chmod(0o644)  # mkstemp makes 0600; outputs are meant to be shared and read
    try:
        yield tmp_path
        os.replace(tmp_path, target)
    except OSError as exc:  # a full disk, a lost mount: say which output could not be written
        raise OSError(exc.errno, f"could not write {target} ({exc.strerror or exc}); the earlier file is kept") from exc
    except Exception as exc:
        # Writers that wrap the OS error (polars: "... No space left on device (os error 28)").
        if "os error" not in str(exc) and "No space left" not in str(exc):
            raise
        raise OSError(f"could not write {target} ({exc}); the earlier file is kept") from exc
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


def write_text_atomic(target: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` to ``target`` atomically and return the path."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(target)


def write_text_if_changed(target: str | os.PathLike[str], text: str, *, dry: bool = False) -> bool:
    """Write ``text`` only when it differs from the file's content; return whether it wrote (with
    ``dry``, whether it would have, writing nothing).

    Keeping the old modification time when nothing changed is what lets Make skip a stage whose
    parameters were not touched.
    """
    target = Path(target)
    if target.is_file() and target.read_text(encoding="utf-8") == text:
        return False
    if not dry:
        write_text_atomic(target, text)
    return True
