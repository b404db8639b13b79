# dualrev - build, test, demo, bench.  `make help` lists the targets.
#
# BUILD=dir puts every output under dir (several builds can run side by side).
# SAN=address,undefined or SAN=thread builds everything with that sanitizer.

BUILD   ?= build
PREFIX  ?= /usr/local
CC      ?= gcc
SAN     ?=
OPT     ?= -O2

# Debian packages of each part are listed once, in tools/deps.sh
DEPS    := sh tools/deps.sh
# the sanitizer builds use clang (its UBSan also checks pointer arithmetic
# on NULL); SAN_CC=gcc works too
SAN_CC  ?= clang

BLAS_CFLAGS = $(shell pkg-config --cflags openblas 2>/dev/null)
BLAS_LIBS   = $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas)

SANFLAGS := $(if $(SAN),-fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all,)
override CC := $(if $(SAN),$(SAN_CC),$(CC))
CFLAGS_ALL = -std=c11 $(OPT) -g -Wall -Wextra -Wshadow -fPIC -fvisibility=hidden \
             -D_GNU_SOURCE -Iinclude -Icbits $(BLAS_CFLAGS) $(SANFLAGS) $(CFLAGS)
LIBS_ALL   = $(BLAS_LIBS) -lpthread -lm

# the engine's C sources are listed once, in the library's c-sources field of
# dualrev.cabal (the Haskell package compiles the same files, and its own
# adapters under haskell/cbits, which the C library leaves out)
LIB_SRC  := $(filter cbits/%.c,$(shell awk '/^[^ \t]/ { lib = ($$1 == "library") } \
                         lib && /c-sources:/ { on = 1; sub(/.*c-sources:/, "") } \
                         on && /:/ && !/c-sources:/ { on = 0 } \
                         on { for (i = 1; i <= NF; i++) print $$i }' dualrev.cabal))
# the version is written once, in dualrev.cabal
VERSION  := $(shell sed -n 's/^version: *//p' dualrev.cabal)
LIB_OBJ  := $(patsubst cbits/%.c,$(BUILD)/obj/%.o,$(LIB_SRC))
LIB_A    := $(BUILD)/libdualrev.a
LIB_SO   := $(BUILD)/libdualrev.so

TEST_SRC     := $(wildcard tests/test_*.c)
TEST_SUPPORT := $(wildcard tests/support/*.c)
TEST_BIN     := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))
# tests run under ThreadSanitizer (the fork-join ones, and recorders in jobs)
TSAN_TESTS   ?= $(wildcard tests/test_parallel*.c tests/test_array_parallel*.c) tests/test_recorder.c \
                tests/test_external.c tests/test_checkpoint.c tests/test_replay_fork.c

# examples/mpi_*.c need MPI: built by make mpi (below), not by make demo
EXAMPLE_SRC := $(filter-out examples/mpi_%.c,$(wildcard examples/*.c))
EXAMPLE_BIN := $(patsubst examples/%.c,$(BUILD)/examples/%,$(EXAMPLE_SRC))

.PHONY: all lib deps deps-bench deps-fuzz check-lib check-test test test-all test-examples \
        test-c test-sanitize test-far test-tsan test-hs stress-hs test-quickstart check-layers \
        demo demo-run bench install clean help mpi mpi-build test-mpi test-mpi-run

all: lib

help:
	@echo "make            build $(LIB_A) and $(LIB_SO) (needs a C compiler and OpenBLAS)"
	@echo "make deps       install the Debian packages of the tests and the demo (apt-get)"
	@echo "make demo       build and run the examples"
	@echo "make test       C tests (plain, ASan+UBSan, far arguments, TSan), the MPI test (if MPI is"
	@echo "                installed) and Haskell tests"
	@echo "make check-layers  no file of cbits/ uses a layer above its own (cbits/LAYERS)"
	@echo "make stress-hs  the Haskell stress test for DUALREV_STRESS_SECONDS (default 3)"
	@echo "make bench      benchmarks (hyperfine), markdown table"
	@echo "make mpi        the MPI gradient helper and $(BUILD)/examples/mpi_mlp (installs Open MPI)"
	@echo "make test-mpi   mpirun -np 1, 2, 3 of mpi_mlp --check (skipped without MPI)"
	@echo "make fuzz       the differential fuzz target for FUZZ_SECONDS (default 60)"
	@echo "make install PREFIX=/usr/local"

# --------------------------------------------------------------- packages
# `make` needs no root: it only checks (one line naming the packages);
# `make test` and `make demo` install what is missing through `make deps`.
deps:
	@$(DEPS) ensure lib test hs
deps-bench:
	@$(DEPS) ensure lib bench
deps-fuzz:
	@$(DEPS) ensure lib fuzz
check-lib:
	@$(DEPS) check lib
check-test:
	@$(DEPS) check lib test

# ---------------------------------------------------------------- library
lib: $(LIB_A) $(LIB_SO)

$(BUILD)/obj/%.o: cbits/%.c $(wildcard cbits/*/*.h) include/dualrev.h | check-lib
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(LIB_A): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# no file of cbits/ includes or calls a layer above its own (cbits/README.md):
# the includes, and the symbols each layer's objects leave undefined
check-layers: $(LIB_OBJ)
	@sh tools/check-layers.sh $(BUILD)/obj

# only dr_* symbols are exported (visibility plus a version script)
$(LIB_SO): $(LIB_OBJ) cbits/exports.map
	$(CC) -shared $(SANFLAGS) -Wl,--version-script=cbits/exports.map \
	    -Wl,-soname,libdualrev.so.0 -o $@ $(LIB_OBJ) $(LIBS_ALL)
	ln -sf libdualrev.so $(BUILD)/libdualrev.so.0

# ------------------------------------------------------------------ tests
$(BUILD)/tests/%: tests/%.c $(TEST_SUPPORT) $(wildcard tests/support/*.h) $(LIB_A) | check-test
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests/support $< $(TEST_SUPPORT) $(LIB_A) -o $@ \
	    $$(pkg-config --cflags --libs cmocka) $(LIBS_ALL)

test-c: $(TEST_BIN)
	@set -e; for t in $(TEST_BIN); do echo "== $$t"; $$t; done

test-sanitize:
	$(MAKE) BUILD=$(BUILD)/asan SAN=address,undefined OPT=-O1 test-c

# OpenBLAS synchronises its own worker threads in code ThreadSanitizer does
# not see, so a product computed by them and read by our code would be
# reported as a race that is not ours: OpenBLAS runs single-threaded here
# (the library already keeps it single-threaded inside parallel jobs)
test-tsan:
	@if [ -n "$(TSAN_TESTS)" ]; then \
	  OPENBLAS_NUM_THREADS=1 $(MAKE) BUILD=$(BUILD)/tsan SAN=thread OPT=-O1 \
	    TEST_SRC="$(TSAN_TESTS)" test-c; \
	else echo "no fork-join tests yet"; fi

# the C suite again, under ASan+UBSan, with arguments more than 5 nodes back
# recorded as far nodes (cbits/record/nary.c), so that every test exercises them
test-far:
	$(MAKE) BUILD=$(BUILD)/far SAN=address,undefined OPT=-O1 \
	  CFLAGS="$(CFLAGS) -DDR_NEAR_MAX=5" test-c

# what CI runs: packages first (only those missing), then every suite
test:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory test-all
test-all: check-layers test-c test-sanitize test-far test-tsan test-examples test-mpi \
          test-hs test-quickstart

# the Haskell package's test suites (haskell/haskell.mk)
test-hs:
	$(MAKE) -f haskell/haskell.mk test-hs BUILD=$(BUILD)

# the Haskell stress test alone, for DUALREV_STRESS_SECONDS (make test-hs
# runs it for 3 s): make stress-hs DUALREV_STRESS_SECONDS=600
stress-hs:
	$(MAKE) -f haskell/haskell.mk stress-hs BUILD=$(BUILD)

# the README's C and Haskell quick starts, run outside the checkout
test-quickstart: lib
	$(MAKE) -f haskell/haskell.mk quickstart BUILD=$(BUILD)

# --------------------------------------------------------------- examples
$(BUILD)/examples/%: examples/%.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $< $(LIB_A) -o $@ $(LIBS_ALL)

# the C examples check what they compute (their exit status)
test-examples: $(EXAMPLE_BIN)
	@for e in $(EXAMPLE_BIN); do $$e >/dev/null || { echo "$$e failed"; exit 1; }; done
	@echo "test-examples: ok: $(notdir $(EXAMPLE_BIN))"

demo:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory demo-run
demo-run: $(EXAMPLE_BIN)
	@for e in $(EXAMPLE_BIN); do echo "== $$e"; $$e || exit 1; done
	@$(MAKE) --no-print-directory -f haskell/haskell.mk demo-hs BUILD=$(BUILD)

# -------------------------------------------------------------------- MPI
# The optional part (include/dualrev_mpi.h, cbits/mpi/): the gradient summed
# across ranks and examples/mpi_mlp.c, compiled with mpicc around the
# library's compiler, never into the library.  `make mpi` installs Open MPI
# when it is missing; `make test-mpi` (part of `make test`) only runs where
# mpicc and mpirun are found, and otherwise says it skipped.
MPICC   ?= mpicc
MPIRUN  ?= mpirun
MPI_OBJ := $(BUILD)/obj/mpi/allreduce.o
MPI_BIN := $(BUILD)/examples/mpi_mlp
# Open MPI: oversubscription allowed (more ranks than cores), shared memory
# between the ranks of one machine (no network needed), no single-copy
# transfer (CMA, which containers often forbid), root allowed where the tests
# run as root (CI); one OpenBLAS thread per rank, as the ranks share the cores
MPIRUN_FLAGS ?= --oversubscribe
MPI_ENV := OPENBLAS_NUM_THREADS=1 OMPI_MCA_btl=self,vader \
           OMPI_MCA_btl_vader_single_copy_mechanism=none \
           $(if $(filter 0,$(shell id -u)),OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)

mpi:
	@MPICC=$(MPICC) MPIRUN=$(MPIRUN) $(DEPS) ensure mpi
	@$(MAKE) --no-print-directory mpi-build
mpi-build: $(MPI_BIN) $(MPI_BIN)-chunked

MPI_HDRS := include/dualrev_mpi.h include/dualrev.h
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
test-mpi:
	@if MPICC=$(MPICC) MPIRUN=$(MPIRUN) $(DEPS) check mpi 2>/dev/null; then \
	  $(MAKE) --no-print-directory test-mpi-run; \
	else echo "test-mpi: skipped, MPI not installed (make mpi installs libopenmpi-dev openmpi-bin)"; fi
test-mpi-run: mpi-build
	@set -e; for np in 1 2 3; do \
	  echo "== $(MPIRUN) -np $$np $(MPI_BIN) --check"; \
	  $(MPI_ENV) $(MPIRUN) $(MPIRUN_FLAGS) -np $$np $(MPI_BIN) --check; done
	@echo "== $(MPIRUN) -np 2 $(MPI_BIN)-chunked --check"
	@$(MPI_ENV) $(MPIRUN) $(MPIRUN_FLAGS) -np 2 $(MPI_BIN)-chunked --check

# ------------------------------------------------------------ benchmarks
bench: deps-bench lib
	@$(MAKE) -f bench/bench.mk bench BUILD=$(BUILD)

# ------------------------------------------------------------------- fuzz
# the differential fuzz target (tests/fuzz/README.md): make fuzz
# [FUZZ_SECONDS=60], make fuzz-smoke (CI), make fuzz-regress (the corpus once)
fuzz fuzz-smoke fuzz-build: deps-fuzz
include tests/fuzz/fuzz.mk

# --------------------------------------------------------------- install
install: lib
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 include/dualrev.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(LIB_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIB_SO) $(DESTDIR)$(PREFIX)/lib/libdualrev.so.0
	ln -sf libdualrev.so.0 $(DESTDIR)$(PREFIX)/lib/libdualrev.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' dualrev.pc.in \
	    > $(DESTDIR)$(PREFIX)/lib/pkgconfig/dualrev.pc

clean:
	rm -rf $(BUILD) dist-newstyle haskell/dist-newstyle
