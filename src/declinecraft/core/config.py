"""Run configuration: ``params/<run>.yaml`` → a frozen, typed, validated :class:`RunConfig`.

A params file has one block per stage, in run order (:data:`BLOCKS`: the stages that
:mod:`declinecraft.core.stages` declares, from ``corpus`` to ``paper``), the ``llm`` block, and four
top-level keys: ``base``, ``description``, ``seed`` and ``models_file``. Each stage's declaration
names its block's dataclass; the dataclasses, one per block with every field documented, are in
:mod:`declinecraft.core.params`. This module loads, inherits, validates and stamps them. The run's
name is the file's stem, so two params files can never write into each other's ``outputs/<run>/``.

A file may say ``base: default`` to inherit every block of ``params/default.yaml`` and override a
few keys. A stage whose parameters (and all of its upstream stages' parameters, and the seed) equal
the base's is *owned* by the base run: its outputs are read from ``outputs/<base>/`` instead of
being recomputed (:meth:`RunConfig.owner`).

Unknown keys are errors that name the file and the key path: a typo never silently falls back to
a default.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
import types
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import yaml

from declinecraft.core import bounds, catalogue, paths, retrieval_device, stages
from declinecraft.core.declaration import EVERY_MODEL
from declinecraft.core.params import (  # noqa: F401  (re-exported: modules import the blocks from here)
    AnalysisParams,
    AnswerParams,
    CorpusParams,
    EvidenceParams,
    GenerateParams,
    IndexParams,
    JudgeParams,
    Know2GuessParams,
    LLMParams,
    PaperParams,
    VerifyParams,
)


class ConfigError(ValueError):
    """A params file is invalid; the message names the file and the key."""


#: Each stage's params block and its dataclass, in run order (from the stages' declarations).
BLOCKS: dict[str, type] = {block: stage.params for block, stage in catalogue.STAGES.items()}

TOP_LEVEL_KEYS = {"base", "description", "seed", "models_file", "simulated", "llm", *BLOCKS}


@dataclass(frozen=True)
class RunConfig:
    """Everything one run needs, frozen: each stage's block (``cfg.answer``), and ``llm``. Build it with :func:`load`.

    The blocks are those the stages declare, read as attributes; a block of a new stage is there
    without a change here. The annotations under ``TYPE_CHECKING`` only tell the type checker the
    blocks' types (``cfg.answer.k`` is an ``int``); a block they do not name reads as ``Any``.
    """

    run: str
    root: Path
    params_file: Path
    blocks: tuple[tuple[str, Any], ...]
    """Each stage's block by name, in run order."""
    llm: LLMParams
    seed: int = 0
    description: str = ""
    models_file: str = "params/models.yaml"
    simulated: bool = False
    """A run against the simulated cluster (``make simulate``): every figure, table and page is
    stamped SIMULATED and none of its numbers is a result."""
    base: RunConfig | None = None

    if TYPE_CHECKING:
        corpus: ClassVar[CorpusParams]
        index: ClassVar[IndexParams]
        generate: ClassVar[GenerateParams]
        verify: ClassVar[VerifyParams]
        answer: ClassVar[AnswerParams]
        judge: ClassVar[JudgeParams]
        know2guess: ClassVar[Know2GuessParams]
        evidence: ClassVar[EvidenceParams]
        analysis: ClassVar[AnalysisParams]
        paper: ClassVar[PaperParams]

    def __getattr__(self, name: str) -> Any:
        blocks = self.__dict__.get("blocks")
        if blocks is not None and not name.startswith("_"):
            for block, value in blocks:
                if block == name:
                    return value
        raise AttributeError(f"{type(self).__name__!s} has no attribute or block {name!r}")

    def block(self, name: str) -> Any:
        """Return one block by name (a key of :data:`BLOCKS`, or ``llm``)."""
        if name not in BLOCKS and name != "llm":
            raise KeyError(name)
        return getattr(self, name)

    def with_blocks(self, **blocks: Any) -> RunConfig:
        """A copy with some blocks replaced (``cfg.with_blocks(answer=...)``)."""
        if unknown := sorted(set(blocks) - set(BLOCKS) - {"llm"}):
            raise KeyError(f"no block {unknown[0]!r}")
        llm = blocks.pop("llm", self.llm)
        return dataclasses.replace(self, blocks=tuple((b, blocks.get(b, v)) for b, v in self.blocks), llm=llm)

    def block_dict(self, name: str) -> dict[str, Any]:
        """Return one block as plain data (what papermill shows and the stage stamp hashes)."""
        plain: dict[str, Any] = _to_plain(dataclasses.asdict(self.block(name)))
        return plain

    def owner(self, stage: str) -> str:
        """Return the run whose outputs hold ``stage``: this run, or the base run when this stage
        and every stage whose outputs it reads (directly or not, :func:`catalogue.upstream`) are
        configured identically."""
        if self.base is None:
            return self.run
        upstream = [*catalogue.upstream(stage), stage]
        same = self.seed == self.base.seed and all(self.block_dict(b) == self.base.block_dict(b) for b in upstream)
        return self.base.owner(stage) if same else self.run

    def run_dir(self, run: str | None = None) -> Path:
        """Return ``outputs/<run>/`` (this run by default)."""
        return paths.outputs_dir(self.root) / (run or self.run)

    def stage_dir(self, stage: str) -> Path:
        """Return the folder a stage's outputs are read from (its owner's) — and written to when
        this run owns it."""
        return self.run_dir(self.owner(stage)) / catalogue.notebook(stage)

    @property
    def cache_dir(self) -> Path:
        """Caches shared by every run (LLM calls, embeddings, model files)."""
        return paths.cache_dir(self.root)

    def resolve(self, relative: str) -> Path:
        """Return a project-relative path from the params as an absolute path."""
        path = Path(relative)
        return path if path.is_absolute() else self.root / path

    def to_dict(self) -> dict[str, Any]:
        """Return the resolved configuration as plain data (no secrets ever live in params)."""
        out: dict[str, Any] = {
            "run": self.run,
            "base": self.base.run if self.base else None,
            "seed": self.seed,
            "description": self.description,
            "models_file": self.models_file,
        }
        if self.simulated:  # only where set: the resolved params of every other run are unchanged
            out["simulated"] = True
        out.update({name: self.block_dict(name) for name in [*BLOCKS, "llm"]})
        return out


def load(params_file: str | Path) -> RunConfig:
    """Read, inherit and validate a params file.

    Raises:
        ConfigError: unknown key, wrong type, missing base, or a base cycle — naming file and key.
    """
    return _load(Path(params_file).resolve(), seen=())


def _load(path: Path, seen: tuple[Path, ...]) -> RunConfig:
    if path in seen:
        raise ConfigError(f"{path}: 'base' inheritance cycle through {', '.join(map(str, seen))}")
    if not path.is_file():
        raise ConfigError(f"params file not found: {path}")
    root = paths.find_root(path)
    if problem := paths.stale_install(root):
        raise ConfigError(problem)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: top level must be a mapping of blocks")
    unknown = sorted(set(raw) - TOP_LEVEL_KEYS)
    if unknown:
        raise ConfigError(
            f"{path}: unknown top-level key {unknown[0]!r} (allowed: {', '.join(sorted(TOP_LEVEL_KEYS))})"
        )
    base_file = (root / "params" / f"{raw.get('base')}.yaml").resolve()
    if raw.get("base") and not base_file.is_file():
        raise ConfigError(f"{path}: base: {raw['base']!r} names {base_file}, which does not exist")
    base = _load(base_file, seen=(*seen, path)) if raw.get("base") else None
    blocks = {name: _block(raw, name, cls, base.block_dict(name) if base else {}, path) for name, cls in BLOCKS.items()}
    _check_verifier(blocks["generate"], blocks["verify"], path)
    _check_ablation_models(blocks["answer"], path)
    llm = _block(raw, "llm", LLMParams, base.block_dict("llm") if base else {}, path)
    try:
        retrieval_device.gpu_of(llm.retrieval_device)
    except ValueError as exc:
        raise ConfigError(f"{path}: llm.{exc}") from None
    checked = {**blocks, "llm": llm}
    if problems := [p for name, block in checked.items() for p in bounds.check(name, block, f"{path}: {name}")]:
        raise ConfigError("\n".join(problems))
    return RunConfig(
        run=path.stem,
        root=root,
        params_file=path,
        seed=int(raw.get("seed", base.seed if base else 0)),
        description=str(raw.get("description", "")),
        models_file=str(raw.get("models_file", base.models_file if base else "params/models.yaml")),
        simulated=bool(raw.get("simulated", base.simulated if base else False)),
        base=base,
        blocks=tuple(blocks.items()),
        llm=llm,
    )


def _check_verifier(generate: GenerateParams, verify: VerifyParams, path: Path) -> None:
    """§3.3: a separate model checks the generator's questions (and, for Table 9, every compared
    generator's), unless the run says otherwise."""
    if verify.self_verification:
        return
    if verify.verifier == generate.generator:
        raise ConfigError(
            f"{path}: verify.verifier {verify.verifier!r} is also the generator; the paper verifies with a "
            "separate model (set verify.self_verification: true to allow it, a recorded deviation)"
        )
    comparison = verify.comparison_verifier or verify.verifier
    if generate.generators and comparison in {generate.generator, *generate.generators}:
        raise ConfigError(
            f"{path}: verify.comparison_verifier {comparison!r} is also one of the compared generators; "
            "Table 9 checks every generator with a separate model (set verify.self_verification: true to allow it)"
        )


def ablation_names(answer: AnswerParams) -> list[str]:
    """The names of a run's ablation settings, the keys ``answer.ablation_models`` may use:
    ``k=<k>`` per k of the sweep, each pipeline, ``no_scenario``, ``temporal_prompt``."""
    names = [f"k={k}" for k in answer.k_sweep] + list(answer.pipelines)
    return names + ["no_scenario"] * answer.no_scenario + ["temporal_prompt"] * answer.temporal_prompt


def _check_ablation_models(answer: AnswerParams, path: Path) -> None:
    """``answer.ablation_models`` names ablation settings of the run and models under test only."""
    names = ablation_names(answer)
    for name, models in answer.ablation_models.items():
        if name not in names:
            raise ConfigError(
                f"{path}: answer.ablation_models.{name}: not an ablation setting of this run "
                f"(its settings: {', '.join(names) or 'none'})"
            )
        if bad := [m for m in models if m not in answer.models]:
            raise ConfigError(f"{path}: answer.ablation_models.{name}: {bad[0]!r} is not one of answer.models")


def _block(raw: dict[str, Any], name: str, cls: type, inherited: dict[str, Any], path: Path) -> Any:
    given = raw.get(name) or {}
    if not isinstance(given, dict):
        raise ConfigError(f"{path}: block {name!r} must be a mapping")
    return _build(cls, {**inherited, **given}, f"{path}: {name}")


def _build(cls: type, values: dict[str, Any], where: str) -> Any:
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise ConfigError(f"{where}: unknown key {unknown[0]!r} (allowed: {', '.join(sorted(names))})")
    kwargs = {key: _coerce(value, hints[key], f"{where}.{key}") for key, value in values.items()}
    return cls(**kwargs)


def _coerce(value: Any, hint: Any, where: str) -> Any:
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in typing.get_args(hint):
            return None
        hint = next(a for a in typing.get_args(hint) if a is not type(None))
        origin = typing.get_origin(hint)
    if origin is dict:
        if not isinstance(value, dict):
            raise ConfigError(f"{where}: expected a mapping, got {value!r}")
        _, item = typing.get_args(hint)
        return {str(k): _coerce(v, item, f"{where}.{k}") for k, v in value.items()}
    if origin is tuple:
        if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where}: expected a list, got {value!r}")
        (item,) = typing.get_args(hint)[:1]
        return tuple(_coerce(v, item, f"{where}[{i}]") for i, v in enumerate(value))
    if hint is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{where}: expected true/false, got {value!r}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{where}: expected an integer, got {value!r}")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"{where}: expected a number, got {value!r}")
        return float(value)
    if hint is str:
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise ConfigError(f"{where}: expected a string, got {value!r}")
        return str(value)
    return value


def _to_plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _to_plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_to_plain(v) for v in value]
    return value


def write_stamps(cfg: RunConfig, *, dry: bool = False) -> list[Path]:
    """Write ``outputs/<run>/params/<block>.yaml`` for every stage (only when changed) and the
    resolved config; return the files that changed (with ``dry``, that would change: nothing is written).

    Make depends on these files, so editing one block of a params file reruns only that stage
    and the stages downstream of it.
    """
    folder = cfg.run_dir() / "params"
    changed = []
    params_file = cfg.params_file.relative_to(cfg.root).as_posix()
    for name in BLOCKS:
        # Papermill reads this file with -f: the notebook sees its run and its own block.
        payload = {"params_file": params_file, "seed": cfg.seed, name: cfg.block_dict(name)}
        target = folder / f"{name}.yaml"
        if paths.write_text_if_changed(target, yaml.safe_dump(payload, sort_keys=True), dry=dry):
            changed.append(target)
    # Which run's outputs each stage reads (Make includes this to wire a derived run to its base).
    owners = "".join(f"OWNER_{cfg.run}_{name} := {cfg.owner(name)}\n" for name in BLOCKS)
    if paths.write_text_if_changed(folder / "owners.mk", owners, dry=dry):
        changed.append(folder / "owners.mk")
    resolved = folder / "resolved.yaml"
    text = yaml.safe_dump(cfg.to_dict(), sort_keys=False)
    if paths.write_text_if_changed(resolved, text, dry=dry):
        changed.append(resolved)
    return changed


def fingerprint(data: Any) -> str:
    """Return a short stable hash of plain data (used to version indexes and outputs by params)."""
    blob = json.dumps(_to_plain(data), sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def check_models(cfg: RunConfig) -> None:
    """Check that every model the run names is an entry of its models file (before any stage runs).

    Raises:
        ConfigError: the models file is missing or unreadable, or lacks a named model; the message
            names the params file, the models file and the unknown ids.
    """
    from declinecraft.core.registry import RegistryError, load_models  # core-internal, no cycle

    models_file = cfg.resolve(cfg.models_file)
    try:
        known = load_models(models_file)
    except RegistryError as exc:
        raise ConfigError(f"{cfg.params_file}: models_file: {exc}") from None
    if unknown := sorted(m for m in referenced_models(cfg) if m and m not in known):
        raise ConfigError(
            f"{cfg.params_file}: model {', '.join(map(repr, unknown))} is not in {models_file} "
            f"(known: {', '.join(sorted(known))})"
        )


def _main(argv: list[str]) -> int:
    """``python -m declinecraft.core.config stamp [--dry] params/x.yaml``: validate and write the stage
    stamps (with ``--dry``, print the ones that would change and write nothing)."""
    dry = "--dry" in argv
    argv = [a for a in argv if a != "--dry"]
    if len(argv) != 2 or argv[0] not in {"stamp", "check", "run-name"}:
        print("usage: python -m declinecraft.core.config {stamp [--dry]|check|run-name} PARAMS_FILE", file=sys.stderr)
        return 2
    try:
        cfg = load(argv[1])
        if argv[0] != "run-name":
            check_models(cfg)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if argv[0] == "stamp":
        chain: RunConfig | None = cfg
        stale = []
        while chain is not None:  # a derived run reads its base's outputs: stamp the base too
            stale += write_stamps(chain, dry=dry)
            chain = chain.base
        print(cfg.run)
        if dry:  # make -n: say which stamps would change instead of writing them
            print(*(p.relative_to(cfg.root).as_posix() for p in stale))
    elif argv[0] == "run-name":
        print(cfg.run)
    else:
        print(f"{cfg.params_file}: ok (run {cfg.run!r})")
    return 0


def for_notebook(params_file: str | Path, **injected: Any) -> RunConfig:
    """Load the run a notebook was given and check the blocks papermill injected with ``-f``.

    ``params_file`` may be project-relative; it is resolved from the notebook's working folder
    upwards. Each injected block must equal the block loaded from the file: a mismatch means the
    stage stamp is stale and is an error, not a silent choice between the two. Inside a stage run
    by the Makefile (``DECLINECRAFT_STAGE``), asking for another stage's file that the stage does
    not declare it reads fails from here on (:func:`declinecraft.core.stages.guard_reads`).
    """
    stages.guard_reads()
    path = Path(params_file) if Path(params_file).is_absolute() else paths.find_root(Path.cwd()) / params_file
    cfg = load(path)
    for name, block in injected.items():
        if block and _to_plain(block) != cfg.block_dict(name):
            raise ConfigError(f"{path}: injected {name!r} block differs from the file; rerun via make")
    return cfg


def stage_models(cfg: RunConfig, block: str) -> set[str]:
    """The model ids a stage's declared model roles name under ``cfg`` (every one the run names
    for a stage that reports on them all)."""
    stage = catalogue.stage(block)
    if EVERY_MODEL in stage.models:
        return referenced_models(cfg)
    return {m for role in stage.models for m in stage.role_models(cfg, role)}


def referenced_models(cfg: RunConfig) -> set[str]:
    """Return every model id a run names, in every role a stage declares (generators and the
    comparison verifier included)."""
    return {
        m
        for stage in catalogue.STAGES.values()
        for role in stage.models
        if role != EVERY_MODEL
        for m in stage.role_models(cfg, role)
    }


if __name__ == "__main__":
    raise SystemExit(_main(sys.argv[1:]))
