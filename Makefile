# dualrev - build, test, demo, bench.  `make help` lists the targets and
# settings, from the `##` notes beside them (tools/make-help.sh).

## BUILD: the directory of every output (several builds can run side by side)
BUILD   ?= build
## PREFIX: where make install puts the library, its headers and dualrev.pc
PREFIX  ?= /usr/local
## DESTDIR: a staging root that make install and uninstall put before PREFIX
## CC: the C compiler (make's own default: cc)
## SAN: a sanitizer for the whole build (address,undefined or thread), with SAN_CC
SAN     ?=
## OPT: the library's optimisation flags
OPT     ?= -O2
## CFLAGS: C flags added after the build's own

# Debian packages of each part are listed once, in tools/deps.sh
DEPS    := sh tools/deps.sh
# the sanitizer builds use clang (its UBSan also checks pointer arithmetic
# on NULL); SAN_CC=gcc works too
## SAN_CC: the compiler of the SAN= builds
SAN_CC  ?= clang

BLAS_CFLAGS = $(shell pkg-config --cflags openblas 2>/dev/null)
BLAS_LIBS   = $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas)

SANFLAGS := $(if $(SAN),-fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all,)
override CC := $(if $(SAN),$(SAN_CC),$(CC))
# the engine's sources and flags, those of dualrev.cabal (cbits/engine.mk)
include cbits/engine.mk
CFLAGS_ALL = $(ENGINE_CFLAGS) $(OPT) -g -Iinclude -Icbits $(BLAS_CFLAGS) $(SANFLAGS) $(CFLAGS)
LIBS_ALL   = $(BLAS_LIBS) -lpthread -lm

LIB_SRC  := $(ENGINE_SRC)
# the public headers: the umbrella dualrev.h and the headers it includes
# (include/dualrev/, its private part in include/dualrev/internal/)
PUBLIC_HDRS := include/dualrev.h $(wildcard include/dualrev/*.h include/dualrev/*/*.h)
# the version is written once, in dualrev.cabal
VERSION  := $(shell sed -n 's/^version: *//p' dualrev.cabal)
LIB_OBJ  := $(patsubst cbits/%.c,$(BUILD)/obj/%.o,$(LIB_SRC))
LIB_A    := $(BUILD)/libdualrev.a
# the shared library is libdualrev.so.VERSION, its soname libdualrev.so.MAJOR
# (programs linked against it load any release of that major version), and
# libdualrev.so links to it for -ldualrev
SONAME   := libdualrev.so.$(firstword $(subst ., ,$(VERSION)))
SO_FILE  := libdualrev.so.$(VERSION)
LIB_SO   := $(BUILD)/libdualrev.so

TEST_SRC     := $(wildcard tests/test_*.c)
TEST_SUPPORT := $(wildcard tests/support/*.c)
TEST_BIN     := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))
# tests run under ThreadSanitizer (the fork-join ones, and recorders in jobs)
## TSAN_TESTS: the C tests that make test-tsan runs (their sources)
TSAN_TESTS   ?= $(wildcard tests/test_parallel*.c tests/test_array_parallel*.c) tests/test_recorder.c \
                tests/test_external.c tests/test_checkpoint.c tests/test_replay_fork.c

# examples/mpi_*.c need MPI: built by make mpi (below), not by make demo
EXAMPLE_SRC := $(filter-out examples/mpi_%.c,$(wildcard examples/*.c))
EXAMPLE_BIN := $(patsubst examples/%.c,$(BUILD)/examples/%,$(EXAMPLE_SRC))

# the Haskell stress test's settings, read from the environment
## DUALREV_STRESS_SECONDS: how long make stress-hs runs (3 s in make test-hs)
## DUALREV_STRESS_THREADS: the stress test's threads (8)
## DUALREV_STRESS_ONLY: only the stress test's items whose name contains this

.PHONY: all lib deps deps-bench deps-fuzz check-lib check-test test test-all test-examples \
        test-c test-sanitize test-far test-tsan test-hs test-not-hs check-cabal check-doctest check-generated check-headers stress-hs test-quickstart check-layers \
        demo demo-run bench install install-mpi uninstall test-install clean help check-help check-md-links check-sources mpi mpi-build test-mpi test-mpi-run

all: lib ## the library (same as make lib)

# the makefiles whose notes make help reads (the top one first)
HELP_FILES := Makefile cbits/engine.mk tests/fuzz/fuzz.mk gradbench/gradbench.mk haskell/haskell.mk bench/bench.mk

help: ## this list: every target and setting, one line each
	@sh tools/make-help.sh $(HELP_FILES)

# every relative link of the repository's markdown files resolves
check-md-links: ## check the relative links (and #anchors) of every *.md
	@sh tools/check-md-links.sh

# every target and setting of the makefiles has its line in make help
check-help: ## check that every target and setting has a ## note for make help
	@sh tools/make-help.sh --check $(HELP_FILES) && echo "check-help: ok"

# --------------------------------------------------------------- packages
# `make` needs no root: it only checks (one line naming the packages);
# `make test` and `make demo` install what is missing through `make deps`.
deps: ## install the Debian packages of the library, the tests and the Haskell package (apt-get)
	@$(DEPS) ensure lib test hs
deps-bench: ## install the Debian packages of the benchmarks
	@$(DEPS) ensure lib bench
deps-fuzz: ## install the Debian packages of the fuzz target
	@$(DEPS) ensure lib fuzz
check-lib: ## say which packages the library lacks, installing nothing
	@$(DEPS) check lib
check-test: ## say which packages the C tests lack, installing nothing
	@$(DEPS) check lib test

# ---------------------------------------------------------------- library
lib: $(LIB_A) $(LIB_SO) ## BUILD/libdualrev.a and the shared library (a C compiler and OpenBLAS)

$(BUILD)/obj/%.o: cbits/%.c $(wildcard cbits/*/*.h) $(PUBLIC_HDRS) | check-lib
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(LIB_A): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# no file of cbits/ includes or calls a layer above its own (cbits/README.md):
# the includes, and the symbols each layer's objects leave undefined
check-layers: $(LIB_OBJ) ## no file of cbits/ uses a layer above its own (cbits/LAYERS)
	@sh tools/check-layers.sh $(BUILD)/obj

# every C file of the engine's layers is in dualrev.cabal's c-sources, the
# one list of the engine's sources (cbits/mpi/ needs MPI and is no part of it)
check-sources: ## check that dualrev.cabal's c-sources list every C file of cbits/ (but cbits/mpi/)
	@missing="$(filter-out $(ENGINE_SRC) cbits/mpi/%,$(wildcard cbits/*/*.c))"; \
	if [ -n "$$missing" ]; then echo "check-sources: not in dualrev.cabal's c-sources: $$missing"; exit 1; fi; \
	echo "check-sources: ok: $(words $(ENGINE_SRC)) engine sources, all in dualrev.cabal"

# what is generated from another file is what its generator makes of it
# (what follows from the array primitives' declarations: tools/gen-arrays.py)
check-generated: ## the files generated from the array primitives' declarations are up to date (tools/gen-arrays.py)
	@python3 tools/gen-arrays.py --check

# each public header compiles on its own, as C and (where a C++ compiler is
# found) as C++, and the private ones refuse to be included directly
check-headers: ## check that each header of include/dualrev/ compiles alone (C, and C++ for its extern "C")
	@sh tools/check-headers.sh

# only dr_* symbols are exported (visibility plus a version script)
$(BUILD)/$(SO_FILE): $(LIB_OBJ) cbits/exports.map
	$(CC) -shared $(SANFLAGS) -Wl,--version-script=cbits/exports.map \
	    -Wl,-soname,$(SONAME) -o $@ $(LIB_OBJ) $(LIBS_ALL)
$(LIB_SO): $(BUILD)/$(SO_FILE)
	ln -sf $(SO_FILE) $(BUILD)/$(SONAME)
	ln -sf $(SONAME) $@

# ------------------------------------------------------------------ tests
$(BUILD)/tests/%: tests/%.c $(TEST_SUPPORT) $(wildcard tests/support/*.h) $(LIB_A) | check-test
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests/support $< $(TEST_SUPPORT) $(LIB_A) -o $@ \
	    $$(pkg-config --cflags --libs cmocka) $(LIBS_ALL)

test-c: $(TEST_BIN) ## the C tests (cmocka)
	@set -e; for t in $(TEST_BIN); do echo "== $$t"; $$t; done

test-sanitize: ## the C tests (and dualrev-c's) under AddressSanitizer and UBSan
	$(MAKE) BUILD=$(BUILD)/asan SAN=address,undefined OPT=-O1 test-c test-gradbench

# OpenBLAS synchronises its own worker threads in code ThreadSanitizer does
# not see, so a product computed by them and read by our code would be
# reported as a race that is not ours: OpenBLAS runs single-threaded here
# (the library already keeps it single-threaded inside parallel jobs)
test-tsan: ## the TSAN_TESTS under ThreadSanitizer
	@if [ -n "$(TSAN_TESTS)" ]; then \
	  OPENBLAS_NUM_THREADS=1 $(MAKE) BUILD=$(BUILD)/tsan SAN=thread OPT=-O1 \
	    TEST_SRC="$(TSAN_TESTS)" test-c; \
	else echo "no fork-join tests yet"; fi

# the C suite again, under ASan+UBSan, with arguments more than 5 nodes back
# recorded as far nodes (cbits/record/nary.c), so that every test exercises them
test-far: ## the C tests under ASan+UBSan with arguments recorded as far nodes
	$(MAKE) BUILD=$(BUILD)/far SAN=address,undefined OPT=-O1 \
	  CFLAGS="$(CFLAGS) -DDR_NEAR_MAX=5" test-c

# what CI runs: packages first (only those missing), then every suite
test: ## install what is missing (make deps), then every suite (make test-all)
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory test-all
## TEST_JOBS: how many steps of make test-all run at once
TEST_JOBS ?= 2
# The checks of a few seconds and the library first.  Then two lanes side
# by side: the Haskell package (its build, and its test suites' build, is
# the longest chain) and the rest (the quick starts, which build the package
# again from its tarball, then the C suites).  With TEST_JOBS=2 each lane
# runs its steps one after another until the other ends; each step's output
# is printed whole when it ends (make --output-sync), and the first failure
# fails the whole
test-all: ## every suite and check, installing nothing (TEST_JOBS steps at once)
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) --output-sync=target check-help check-md-links check-sources check-generated check-headers check-cabal check-layers
	@$(MAKE) --no-print-directory -j$(TEST_JOBS) --output-sync=target test-hs test-not-hs
test-not-hs: ## the quick starts, the C suites and the GradBench tool's tests (what make test-all runs beside test-hs)
	@$(MAKE) --no-print-directory test-quickstart test-c test-sanitize test-far test-tsan test-examples test-install test-mpi test-gradbench

# cabal check on the package (haskell/haskell.mk)
check-cabal: ## cabal check on the package's tarball (cabal sdist), failing on its warnings too
	$(MAKE) -f haskell/haskell.mk check-cabal BUILD=$(BUILD)

# the Haskell package's test suites (haskell/haskell.mk)
test-hs: ## the Haskell package's test suites
	$(MAKE) -f haskell/haskell.mk test-hs BUILD=$(BUILD)

# every `>>>` example of the Haskell documentation (doctest; make test-hs
# runs it too)
check-doctest: ## run every >>> example of the Haskell package's Haddock documentation (doctest)
	$(MAKE) -f haskell/haskell.mk check-doctest BUILD=$(BUILD)

# the Haskell stress test alone, for DUALREV_STRESS_SECONDS (make test-hs
# runs it for 3 s): make stress-hs DUALREV_STRESS_SECONDS=600
stress-hs: ## the Haskell stress test alone, for DUALREV_STRESS_SECONDS
	$(MAKE) -f haskell/haskell.mk stress-hs BUILD=$(BUILD)

# the README's C and Haskell quick starts, run outside the checkout
test-quickstart: lib ## the README's C and Haskell quick starts, outside the checkout
	$(MAKE) -f haskell/haskell.mk quickstart BUILD=$(BUILD)

# --------------------------------------------------------------- examples
$(BUILD)/examples/%: examples/%.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $< $(LIB_A) -o $@ $(LIBS_ALL)

# the C examples check what they compute (their exit status)
test-examples: $(EXAMPLE_BIN) ## build and run the C examples, which check their results
	@for e in $(EXAMPLE_BIN); do $$e >/dev/null || { echo "$$e failed"; exit 1; }; done
	@echo "test-examples: ok: $(notdir $(EXAMPLE_BIN))"

demo: ## install what is missing, then make demo-run
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory demo-run
demo-run: $(EXAMPLE_BIN) ## build and run the examples (C and Haskell)
	@for e in $(EXAMPLE_BIN); do echo "== $$e"; $$e || exit 1; done
	@$(MAKE) --no-print-directory -f haskell/haskell.mk demo-hs BUILD=$(BUILD)

# -------------------------------------------------------------------- MPI
# The optional part (include/dualrev_mpi.h, cbits/mpi/): the gradient summed
# across ranks and examples/mpi_mlp.c, compiled with mpicc around the
# library's compiler, never into the library.  `make mpi` installs Open MPI
# when it is missing; `make test-mpi` (part of `make test`) only runs where
# mpicc and mpirun are found, and otherwise says it skipped.
## MPICC: the MPI compiler wrapper
MPICC   ?= mpicc
## MPIRUN: the MPI launcher of make test-mpi
MPIRUN  ?= mpirun
MPI_OBJ := $(BUILD)/obj/mpi/allreduce.o
MPI_BIN := $(BUILD)/examples/mpi_mlp
# Open MPI: oversubscription allowed (more ranks than cores), shared memory
# between the ranks of one machine (no network needed), no single-copy
# transfer (CMA, which containers often forbid), root allowed where the tests
# run as root (CI); one OpenBLAS thread per rank, as the ranks share the cores
## MPIRUN_FLAGS: flags for MPIRUN in make test-mpi
MPIRUN_FLAGS ?= --oversubscribe
MPI_ENV := OPENBLAS_NUM_THREADS=1 OMPI_MCA_btl=self,vader \
           OMPI_MCA_btl_vader_single_copy_mechanism=none \
           $(if $(filter 0,$(shell id -u)),OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)

mpi: ## install Open MPI if missing, then make mpi-build
	@MPICC=$(MPICC) MPIRUN=$(MPIRUN) $(DEPS) ensure mpi
	@$(MAKE) --no-print-directory mpi-build
mpi-build: $(MPI_BIN) $(MPI_BIN)-chunked ## the MPI helper and BUILD/examples/mpi_mlp (needs mpicc)

MPI_HDRS := include/dualrev_mpi.h $(PUBLIC_HDRS)
$(MPI_OBJ): cbits/mpi/allreduce.c $(MPI_HDRS)
	@mkdir -p $(dir $@)
	OMPI_CC=$(CC) $(MPICC) $(CFLAGS_ALL) -c $< -o $@
# the helper summing in pieces of 4099 elements, so that make test-mpi runs
# its loop over pieces
$(MPI_OBJ:.o=-chunked.o): cbits/mpi/allreduce.c $(MPI_HDRS)
	@mkdir -p $(dir $@)
	OMPI_CC=$(CC) $(MPICC) $(CFLAGS_ALL) -DDR_MPI_MAX_COUNT=4099 -c $< -o $@
$(MPI_BIN) $(MPI_BIN)-chunked: $(MPI_BIN)%: examples/mpi_mlp.c $(MPI_OBJ:.o=%.o) $(MPI_HDRS) $(LIB_A)
	@mkdir -p $(dir $@)
	OMPI_CC=$(CC) $(MPICC) $(CFLAGS_ALL) $< $(MPI_OBJ:.o=$*.o) $(LIB_A) -o $@ $(LIBS_ALL)

# the sum of the shards' gradients against one process's gradient of the
# whole batch: one rank, two, three (an uneven split), two with the sum in
# pieces
test-mpi: ## make test-mpi-run where MPI is installed, else say it skipped
	@if MPICC=$(MPICC) MPIRUN=$(MPIRUN) $(DEPS) check mpi 2>/dev/null; then \
	  $(MAKE) --no-print-directory test-mpi-run; \
	else echo "test-mpi: skipped, MPI not installed (make mpi installs libopenmpi-dev openmpi-bin)"; fi
test-mpi-run: mpi-build ## mpirun -np 1, 2, 3 of mpi_mlp --check
	@set -e; for np in 1 2 3; do \
	  echo "== $(MPIRUN) -np $$np $(MPI_BIN) --check"; \
	  $(MPI_ENV) $(MPIRUN) $(MPIRUN_FLAGS) -np $$np $(MPI_BIN) --check; done
	@echo "== $(MPIRUN) -np 2 $(MPI_BIN)-chunked --check"
	@$(MPI_ENV) $(MPIRUN) $(MPIRUN_FLAGS) -np 2 $(MPI_BIN)-chunked --check

# ------------------------------------------------------------ benchmarks
bench: deps-bench lib ## the benchmarks (bench/bench.mk), a markdown table
	@$(MAKE) -f bench/bench.mk bench BUILD=$(BUILD)

# -------------------------------------------------------------- GradBench
# dualrev-c, a GradBench tool on the library, its tests (part of make test),
# and make gradbench GRADBENCH_DIR=<checkout> (gradbench/README.md)
include gradbench/gradbench.mk

# ------------------------------------------------------------------- fuzz
# the differential fuzz target (tests/fuzz/README.md): make fuzz
# [FUZZ_SECONDS=60], make fuzz-smoke (CI), make fuzz-regress (the corpus once)
fuzz fuzz-smoke fuzz-build: deps-fuzz
include tests/fuzz/fuzz.mk

# --------------------------------------------------------------- install
# what make install puts under DESTDIR/PREFIX, and make uninstall removes:
# the MPI helper only where MPICC is found, the rest always
# (every header of include/, the subfolders of include/dualrev/ too)
INSTALLED_HDRS := $(PUBLIC_HDRS) include/dualrev_mpi.h
INSTALLED     := $(INSTALLED_HDRS) lib/libdualrev.a \
                 lib/$(SO_FILE) lib/$(SONAME) lib/libdualrev.so lib/pkgconfig/dualrev.pc
INSTALLED_MPI := lib/libdualrev_mpi.a
MPI_LIB       := $(BUILD)/libdualrev_mpi.a
D := $(DESTDIR)$(PREFIX)

install: lib ## the library, its headers (MPI's too), dualrev.pc and, where MPICC is found, the MPI helper, under DESTDIR/PREFIX
	install -d $(D)/include $(D)/lib/pkgconfig $(addprefix $(D)/,$(sort $(patsubst %/,%,$(dir $(INSTALLED_HDRS)))))
	for h in $(INSTALLED_HDRS); do install -m 644 $$h $(D)/$$h || exit 1; done
	install -m 644 $(LIB_A) $(D)/lib/
	install -m 755 $(BUILD)/$(SO_FILE) $(D)/lib/
	ln -sf $(SO_FILE) $(D)/lib/$(SONAME)
	ln -sf $(SONAME) $(D)/lib/libdualrev.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' dualrev.pc.in \
	    > $(D)/lib/pkgconfig/dualrev.pc
	@if command -v $(MPICC) >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory install-mpi; \
	else echo "install: MPI helper ($(notdir $(MPI_LIB))) left out: no $(MPICC) (make mpi installs Open MPI)"; fi
install-mpi: $(MPI_LIB) ## only the MPI helper, libdualrev_mpi.a, under DESTDIR/PREFIX/lib (needs mpicc)
	install -d $(D)/lib
	install -m 644 $(MPI_LIB) $(D)/lib/

$(MPI_LIB): $(MPI_OBJ)
	@rm -f $@
	ar rcs $@ $^

uninstall: ## remove what make install put under DESTDIR/PREFIX (the same DESTDIR and PREFIX)
	rm -f $(addprefix $(D)/,$(INSTALLED) $(INSTALLED_MPI))
	rmdir $(D)/include/dualrev/internal $(D)/include/dualrev 2>/dev/null || true

# make install into a scratch prefix: a program built against what it put
# there, then make uninstall (tools/check-install.sh)
# (+: the script runs make, which then shares make -j's job slots)
test-install: lib ## install under a scratch prefix, build and run a program against it, uninstall
	+@sh tools/check-install.sh $(BUILD)

clean: ## remove BUILD and cabal's dist-newstyle folders
	rm -rf $(BUILD) dist-newstyle haskell/dist-newstyle
