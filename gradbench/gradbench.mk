# gradbench/gradbench.mk - dualrev-c, the GradBench tool in C
# (gradbench/README.md), its tests, and the run of GradBench's evals against
# it and dualrev-hs (the tool in Haskell, built by haskell/haskell.mk);
# included by the Makefile.

## GRADBENCH_DIR: a checkout of github.com/gradbench/gradbench, for make gradbench
GRADBENCH_DIR ?=
## GRADBENCH_EVALS: the evals make gradbench runs
GRADBENCH_EVALS ?= hello det lse llsq ode kmeans gmm lstm ba ht saddle particle
## GRADBENCH_TOOLS: the tools make gradbench runs them against (ours, GradBench's C++ tools and its haskell by name)
GRADBENCH_TOOLS ?= dualrev-c dualrev-hs manual adol-c haskell
## GRADBENCH_CODIPACK_DIR: a CoDiPack 2.3.1 checkout, to add GradBench's tool codipack
GRADBENCH_CODIPACK_DIR ?=
## GRADBENCH_AD_DB: a GHC package db holding ad, for GradBench's tool haskell (else ad where ghc-pkg finds it; without ad it is skipped)
GRADBENCH_AD_DB ?=
## GRADBENCH_PYTHON: the Python (with numpy, scipy, pydantic) of the evals and the relay
GRADBENCH_PYTHON ?= /usr/bin/python3
## GRADBENCH_ARGS: arguments of gradbench/run.py (sizes, seconds: gradbench/README.md)
GRADBENCH_ARGS ?=

GB_DIR     := $(BUILD)/gradbench
GB_TOOL    := $(GB_DIR)/dualrev-c
GB_TEST    := $(GB_DIR)/test_gbtool
GB_SRC     := $(filter-out gradbench/dualrev-c/main.c gradbench/dualrev-c/test_%.c,\
                $(wildcard gradbench/dualrev-c/*.c))
GB_HDR     := $(wildcard gradbench/dualrev-c/*.h) include/dualrev.h \
              $(wildcard include/dualrev/*.h include/dualrev/*/*.h)
# the tool's own code (each eval's primal) built as GradBench builds the
# C++ tools it runs beside (cpp/common.mk: -O3, -march=native when built
# on the machine that runs it); the engine is libdualrev.a as installed
GB_CFLAGS  := -std=c11 -O3 -march=native -g -Wall -Wextra -D_GNU_SOURCE -Iinclude \
              $(shell pkg-config --cflags jansson 2>/dev/null) $(SANFLAGS) $(CFLAGS)
GB_LIBS    := $(shell pkg-config --libs jansson 2>/dev/null || echo -ljansson) $(LIBS_ALL)

.PHONY: gradbench-tool gradbench-hs-tool test-gradbench test-gradbench-hs gradbench

gradbench-tool: $(GB_TOOL) ## BUILD/gradbench/dualrev-c, the GradBench tool on libdualrev (needs libjansson-dev)

gradbench-hs-tool: ## BUILD/gradbench/dualrev-hs, the GradBench tool in Haskell (needs aeson: make deps)
	$(MAKE) -f haskell/haskell.mk gradbench-hs-tool BUILD=$(BUILD)

# (make test-hs runs it too)
test-gradbench-hs: ## dualrev-hs's tests: each eval's derivatives against finite differences, a protocol session
	$(MAKE) -f haskell/haskell.mk test-gradbench-hs BUILD=$(BUILD)

$(GB_TOOL): gradbench/dualrev-c/main.c $(GB_SRC) $(GB_HDR) $(LIB_A) | check-lib
	@pkg-config --exists jansson || { echo "dualrev-c needs jansson: install libjansson-dev (make deps)"; exit 1; }
	@mkdir -p $(dir $@)
	$(CC) $(GB_CFLAGS) gradbench/dualrev-c/main.c $(GB_SRC) $(LIB_A) -o $@ $(GB_LIBS)

$(GB_TEST): gradbench/dualrev-c/test_gbtool.c $(GB_SRC) $(GB_HDR) $(LIB_A) | check-test
	@mkdir -p $(dir $@)
	$(CC) $(GB_CFLAGS) gradbench/dualrev-c/test_gbtool.c $(GB_SRC) $(LIB_A) -o $@ \
	    $$(pkg-config --cflags --libs cmocka) $(GB_LIBS)

# no GradBench needed: a scripted protocol session, and every eval's
# derivatives against central finite differences
test-gradbench: $(GB_TEST) $(GB_TOOL) ## dualrev-c's tests: a protocol session and each eval's derivatives against finite differences
	$(GB_TEST)
	@sh gradbench/test_session.sh $(GB_TOOL)

# every eval of GRADBENCH_EVALS against every tool of GRADBENCH_TOOLS, through
# the relay; writes BUILD/gradbench/results.md and fails if an output is
# judged invalid
GB_WANT_HS := $(filter dualrev-hs,$(GRADBENCH_TOOLS))
gradbench: ## run GradBench's evals against dualrev-c and dualrev-hs (GRADBENCH_DIR=checkout), write BUILD/gradbench/results.md
	@if [ -z "$(GRADBENCH_DIR)" ]; then \
	  echo "make gradbench: set GRADBENCH_DIR to a GradBench checkout (gradbench/README.md)"; exit 2; fi
	@GRADBENCH_PYTHON=$(GRADBENCH_PYTHON) $(DEPS) ensure lib gradbench $(if $(filter dualrev-hs haskell,$(GRADBENCH_TOOLS)),hs)
	@$(MAKE) --no-print-directory $(GB_TOOL)
	$(if $(GB_WANT_HS),@$(MAKE) --no-print-directory -f haskell/haskell.mk gradbench-hs-tool BUILD=$(BUILD))
	$(GRADBENCH_PYTHON) gradbench/run.py --gradbench $(GRADBENCH_DIR) --tool-bin $(GB_TOOL) \
	  $(if $(GB_WANT_HS),--hs-bin $(GB_DIR)/dualrev-hs) \
	  --out $(GB_DIR) --evals "$(GRADBENCH_EVALS)" --tools "$(GRADBENCH_TOOLS)" \
	  $(if $(GRADBENCH_CODIPACK_DIR),--codipack $(GRADBENCH_CODIPACK_DIR)) \
	  $(if $(GRADBENCH_AD_DB),--ad-db $(GRADBENCH_AD_DB)) $(GRADBENCH_ARGS)
