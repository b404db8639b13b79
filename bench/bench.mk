# bench/bench.mk - the benchmark suite (called by the top Makefile's `bench`
# target as `make -f bench/bench.mk bench BUILD=...`, after it has built
# $(BUILD)/libdualrev.a and installed hyperfine and libadolc-dev).
#
#   make -f bench/bench.mk bench-c BUILD=build   only build the C executables
#   make -f bench/bench.mk bench   BUILD=build   build them and run the driver
#
# BENCH_ARGS is passed to the driver (bench/run.py --help), e.g.
#   make bench BENCH_ARGS="--quick"  or  BENCH_ARGS="--only fdotprod".
#
# CoDiPack and Adept columns (bench/README.md, "CoDiPack and Adept columns"),
# from checkouts the user provides outside this repository:
#   CODIPACK_DIR  a CoDiPack 3.x checkout (holding include/codi.hpp)
#   ADEPT_DIR     an Adept 2 checkout or install prefix (holding include/adept.h)
#   ADEPT_LIB     the directory of its built libadept.a or libadept.so
#                 (default: $(ADEPT_DIR)/lib, else $(ADEPT_DIR)/adept/.libs)
# e.g.  make bench CODIPACK_DIR=/work/ext/codipack ADEPT_DIR=/work/ext/adept \
#                  ADEPT_LIB=/work/ext/adept-build

BUILD      ?= build
CC         ?= gcc
## CXX: the C++ compiler of the ADOL-C, CoDiPack and Adept programs
CXX        ?= g++
## BENCH_ARGS: arguments of bench/run.py
BENCH_ARGS ?=
## PYTHON: the Python of bench/run.py
PYTHON     ?= /usr/bin/python3

B := $(BUILD)/bench
LIB_A := $(BUILD)/libdualrev.a

BENCH_CFLAGS   := -std=c11 -O2 -g -Wall -Wextra -D_GNU_SOURCE -Iinclude -Ibench/c
BENCH_CXXFLAGS := -std=c++17 -O2 -g -Wall -D_GNU_SOURCE -Ibench/c
BLAS_CFLAGS = $(shell pkg-config --cflags openblas 2>/dev/null)
BLAS_LIBS = $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas)
# adolc.pc lists -lboost_system, which libadolc does not need (and which
# Debian's libadolc-dev does not pull in): leave it out.
ADOLC_CFLAGS = $(shell pkg-config --cflags adolc 2>/dev/null)
ADOLC_LIBS   = $(filter-out -lboost_system,$(shell pkg-config --libs adolc 2>/dev/null || echo -ladolc))

# The C++ AD tools are compiled as they are meant to be used: -O3
# -march=native, asserts off.
TOOL_CXXFLAGS := -std=c++17 -O3 -march=native -DNDEBUG -g -Wall -D_GNU_SOURCE -Ibench/c

## CODIPACK_DIR: a CoDiPack checkout: adds its column
CODIPACK_DIR ?=
## ADEPT_DIR: an Adept 2 checkout: adds its column
ADEPT_DIR    ?=
## ADEPT_LIB: the directory of Adept's libadept.a (found in ADEPT_DIR when built there)
ADEPT_LIB    ?= $(firstword $(foreach d,$(ADEPT_DIR)/lib $(ADEPT_DIR)/adept/.libs,\
                  $(if $(wildcard $(d)/libadept.a $(d)/libadept.so),$(d))))
# a static libadept.a is linked in whole; a shared one with an rpath.  An
# Adept configured with BLAS / LAPACK needs them (OpenBLAS carries both),
# and its configure turns OpenMP on where the compiler has it: a static
# library with OpenMP calls in it gets -fopenmp at the link.  (Adept's
# Jacobian goes parallel only for more than 4 outputs; frotvecquat has 3.)
ADEPT_LINK   = $(if $(wildcard $(ADEPT_LIB)/libadept.a),$(ADEPT_LIB)/libadept.a,\
                 -L$(ADEPT_LIB) -Wl,-rpath,$(abspath $(ADEPT_LIB)) -ladept)
ADEPT_OMP    = $(if $(wildcard $(ADEPT_LIB)/libadept.a),$(if $(shell nm $(ADEPT_LIB)/libadept.a 2>/dev/null | grep -m1 -e GOMP_ -e omp_get_),-fopenmp))
## ADEPT_LDLIBS: the libraries Adept's program links
ADEPT_LDLIBS ?= $(BLAS_LIBS) $(ADEPT_OMP)

TOOL_BENCH := $(if $(CODIPACK_DIR),$(B)/codipack-bench) \
              $(if $(ADEPT_DIR),$(B)/adept-bench)

C_BENCH := $(B)/dualrev-bench $(B)/primal-bench $(B)/floor-bench $(B)/adolc-bench $(B)/adolc-second-order
HDR := bench/c/bench_common.h bench/c/bench_particle.h
# the library's public headers: dualrev.h and those it includes
DR_HDRS := include/dualrev.h $(wildcard include/dualrev/*.h include/dualrev/*/*.h)
# the forward passes the C++ tools' programs share
CXX_HDR := $(HDR) bench/c/bench_programs.hpp

# Optional extra executables, built when their sources are there (the driver
# adds their rows when they exist): the fork-join fparticles and the
# bulk-array networks with their primal twin.
EXTRA_BENCH := $(if $(wildcard bench/c/fparticles_par.c),$(B)/fparticles-par) \
               $(if $(wildcard bench/c/nn_array_bench.c),$(B)/nn-array-bench $(B)/nn-primal-bench)

.PHONY: bench bench-c bench-extra bench-deps bench-hs-build bench-tools

bench-c: ## the C benchmark programs
bench-c: $(C_BENCH) $(B)/profile-phases $(B)/forward-bench $(B)/second-order-bench \
         $(B)/fork-fold $(B)/scaling-bench $(B)/dualrev-replay-bench bench-tools

# CoDiPack and Adept: built only when their checkouts are named; a missing
# or broken checkout is an error when it is named (so it is not silently
# left out of the table).
bench-tools: $(TOOL_BENCH) ## the CoDiPack and Adept programs, where CODIPACK_DIR and ADEPT_DIR are set
ifeq ($(CODIPACK_DIR)$(ADEPT_DIR),)
	@echo "bench: no CoDiPack / Adept columns; add them with CODIPACK_DIR=<checkout> ADEPT_DIR=<checkout> [ADEPT_LIB=<dir of libadept.a>] (bench/README.md)"
else ifeq ($(CODIPACK_DIR),)
	@echo "bench: no CoDiPack column; add it with CODIPACK_DIR=<checkout holding include/codi.hpp> (bench/README.md)"
else ifeq ($(ADEPT_DIR),)
	@echo "bench: no Adept column; add it with ADEPT_DIR=<checkout> [ADEPT_LIB=<dir of libadept.a>] (bench/README.md)"
endif

$(B)/codipack-bench: bench/c/codipack_bench.cpp $(CXX_HDR) $(wildcard $(CODIPACK_DIR)/include/codi.hpp)
	@test -f "$(CODIPACK_DIR)/include/codi.hpp" || \
	  { echo "bench: CODIPACK_DIR=$(CODIPACK_DIR) has no include/codi.hpp"; exit 1; }
	@mkdir -p $(B)
	$(CXX) $(TOOL_CXXFLAGS) -I$(CODIPACK_DIR)/include $< -o $@ -lm

$(B)/adept-bench: bench/c/adept_bench.cpp $(CXX_HDR) $(wildcard $(ADEPT_DIR)/include/adept.h $(ADEPT_LIB)/libadept.a)
	@test -f "$(ADEPT_DIR)/include/adept.h" || \
	  { echo "bench: ADEPT_DIR=$(ADEPT_DIR) has no include/adept.h"; exit 1; }
	@test -n "$(ADEPT_LIB)" && test -d "$(ADEPT_LIB)" || \
	  { echo "bench: no built Adept library: set ADEPT_LIB to the directory of libadept.a (bench/README.md)"; exit 1; }
	@mkdir -p $(B)
	$(CXX) $(TOOL_CXXFLAGS) -I$(ADEPT_DIR)/include $< -o $@ $(ADEPT_LINK) $(ADEPT_LDLIBS) -lm

# the programs recorded once and replayed (column "dualrev replay"; its
# REPLAY_BENCH_MODE=record2/record1 runs measure what recording costs)
$(B)/dualrev-replay-bench: bench/c/replay_bench.cpp $(CXX_HDR) $(LIB_A) $(DR_HDRS)
	@mkdir -p $(B)
	$(CXX) $(BENCH_CXXFLAGS) -Iinclude $< $(LIB_A) -o $@ $(BLAS_LIBS) -lpthread -lm

# the cost of second order (not run by the driver; bench/README.md)
$(B)/second-order-bench: bench/c/second_order_bench.c $(LIB_A) $(DR_HDRS)
	@mkdir -p $(B)
	$(CC) $(BENCH_CFLAGS) $< $(LIB_A) -o $@ $(BLAS_LIBS) -lpthread -lm

# forward and vector mode against reverse sweeps (not run by the driver;
# bench/README.md, "Forward and vector mode")
$(B)/forward-bench: bench/c/forward_bench.c $(LIB_A) $(DR_HDRS)
	@mkdir -p $(B)
	$(CC) $(BENCH_CFLAGS) $< $(LIB_A) -o $@ $(BLAS_LIBS) -lpthread -lm

# profiling aid (not run by the driver): fdotprod's time phase by phase
$(B)/profile-phases: bench/c/profile_phases.c $(HDR) $(LIB_A) $(DR_HDRS)
	@mkdir -p $(B)
	$(CC) $(BENCH_CFLAGS) $< $(LIB_A) -o $@ $(BLAS_LIBS) -lpthread -lm

# profiling aid (not run by the driver): the parallel sweep of forked folds
$(B)/fork-fold: bench/c/fork_fold.c $(LIB_A) $(DR_HDRS)
	@mkdir -p $(B)
	$(CC) $(BENCH_CFLAGS) $< $(LIB_A) -o $@ $(BLAS_LIBS) -lpthread -lm

# parallel scaling of fork-join recording and sweeps (not run by the
# driver; bench/README.md, "Parallel scaling")
$(B)/scaling-bench: bench/c/scaling_bench.c $(LIB_A) $(DR_HDRS)
	@mkdir -p $(B)
	$(CC) $(BENCH_CFLAGS) $< $(LIB_A) -o $@ $(BLAS_LIBS) -lpthread -lm

# the scaling programs linked statically, to run on another machine that
# has no OpenBLAS (bench/scaling.sh runs them; bench/README.md, "Parallel
# scaling").  STATIC_BLAS: the static OpenBLAS and what it needs.
## STATIC_BLAS: the static OpenBLAS and its libraries, for scaling-static
STATIC_BLAS ?= /usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.a -lgfortran -lquadmath
SCALING_STATIC := $(B)/static/scaling-bench $(B)/static/nn-array-bench $(B)/static/fparticles-par
.PHONY: scaling-static
scaling-static: $(SCALING_STATIC) ## the scaling programs, statically linked, in $(BUILD)/bench/static
$(B)/static/scaling-bench: bench/c/scaling_bench.c $(LIB_A) $(DR_HDRS)
	@mkdir -p $(B)/static
	$(CC) -static $(BENCH_CFLAGS) $< $(LIB_A) -o $@ $(STATIC_BLAS) -lpthread -lm
$(B)/static/nn-array-bench: bench/c/nn_array_bench.c $(HDR) $(LIB_A) $(DR_HDRS)
	@mkdir -p $(B)/static
	$(CC) -static $(BENCH_CFLAGS) $(BLAS_CFLAGS) $< $(LIB_A) -o $@ $(STATIC_BLAS) -lpthread -lm
$(B)/static/fparticles-par: bench/c/fparticles_par.c $(HDR) $(LIB_A) $(DR_HDRS)
	@mkdir -p $(B)/static
	$(CC) -static $(BENCH_CFLAGS) $< $(LIB_A) -o $@ $(STATIC_BLAS) -lpthread -lm

# a failure to build an extra must not stop the rest of the suite
bench-extra: $(C_BENCH) ## the optional programs (fork-join fparticles, array networks)
	@for x in $(EXTRA_BENCH); do \
	  $(MAKE) -f bench/bench.mk BUILD=$(BUILD) $$x || \
	    echo "bench: $$x failed to build; its rows are skipped"; \
	done

$(B)/fparticles-par: bench/c/fparticles_par.c $(HDR) $(LIB_A) $(DR_HDRS)
	@mkdir -p $(B)
	$(CC) $(BENCH_CFLAGS) $< $(LIB_A) -o $@ $(BLAS_LIBS) -lpthread -lm

$(B)/nn-array-bench: bench/c/nn_array_bench.c $(HDR) $(LIB_A) $(DR_HDRS)
	@mkdir -p $(B)
	$(CC) $(BENCH_CFLAGS) $(BLAS_CFLAGS) $< $(LIB_A) -o $@ $(BLAS_LIBS) -lpthread -lm

$(B)/nn-primal-bench: bench/c/nn_array_bench.c $(HDR)
	@mkdir -p $(B)
	$(CC) $(BENCH_CFLAGS) $(BLAS_CFLAGS) -DNN_PRIMAL $< -o $@ $(BLAS_LIBS) -lpthread -lm

$(B)/dualrev-bench: bench/c/dualrev_bench.c $(HDR) $(LIB_A) $(DR_HDRS)
	@mkdir -p $(B)
	$(CC) $(BENCH_CFLAGS) $< $(LIB_A) -o $@ $(BLAS_LIBS) -lpthread -lm

$(B)/primal-bench: bench/c/primal_bench.c $(HDR)
	@mkdir -p $(B)
	$(CC) $(BENCH_CFLAGS) $< -o $@ -lm

$(B)/floor-bench: bench/c/floor_bench.c $(HDR)
	@mkdir -p $(B)
	$(CC) $(BENCH_CFLAGS) $< -o $@ -lm

$(B)/adolc-bench: bench/c/adolc_bench.cpp $(CXX_HDR)
	@mkdir -p $(B)
	$(CXX) $(BENCH_CXXFLAGS) $(ADOLC_CFLAGS) $< -o $@ $(ADOLC_LIBS) -lm

$(B)/adolc-second-order: bench/c/adolc_second_order.cpp
	@mkdir -p $(B)
	$(CXX) $(BENCH_CXXFLAGS) $(ADOLC_CFLAGS) $< -o $@ $(ADOLC_LIBS) -lm

$(LIB_A):
	$(MAKE) BUILD=$(BUILD) lib

# hyperfine, ADOL-C, python3 for the driver and gnuplot for the chart
# (tools/deps.sh, group bench; the driver skips the chart if gnuplot is
# missing)
bench-deps: ## install the benchmarks' Debian packages
	@sh tools/deps.sh ensure bench || echo "bench: some benchmark packages could not be installed"

# The Haskell bench executables (dualrev-hs-bench, ad-bench) are built by
# haskell/haskell.mk into $(B)/hs/ when the Haskell front end exists; a
# failure there must not stop the C benchmarks.
bench-hs-build: ## the Haskell benchmark programs (haskell/haskell.mk bench-hs)
	@if [ -f haskell/haskell.mk ]; then \
	  $(MAKE) -f haskell/haskell.mk bench-hs BUILD=$(BUILD) || \
	    echo "bench: building the Haskell bench executables failed; their rows are skipped"; \
	fi

bench: bench-deps bench-c bench-extra bench-hs-build ## build every program, run them (bench/run.py), then bench-checkpoint
	$(PYTHON) bench/run.py --build $(BUILD) $(BENCH_ARGS)
	@$(MAKE) -f bench/bench.mk --no-print-directory BUILD=$(BUILD) bench-checkpoint

# fparticles over 10^6 steps: time per gradient and peak memory, recorded
# step by step and with checkpointing (each in a process of its own: peak
# memory is per process).  CKPT_STEPS and CKPT_SNAPSHOTS change the runs.
## CKPT_STEPS: the steps of make bench-checkpoint's loop
CKPT_STEPS     ?= 1000000
## CKPT_SNAPSHOTS: the runs of make bench-checkpoint: plain, then snapshot intervals
CKPT_SNAPSHOTS ?= plain 100000 10000 1000
.PHONY: bench-checkpoint
bench-checkpoint: $(B)/checkpoint-bench ## fparticles over CKPT_STEPS steps, plain and checkpointed: time and peak memory
	@for s in $(CKPT_SNAPSHOTS); do $(B)/checkpoint-bench $(CKPT_STEPS) $$s 3; done

$(B)/checkpoint-bench: bench/c/checkpoint_bench.c $(HDR) $(LIB_A) $(DR_HDRS)
	@mkdir -p $(B)
	$(CC) $(BENCH_CFLAGS) $< $(LIB_A) -o $@ $(BLAS_LIBS) -lpthread -lm
