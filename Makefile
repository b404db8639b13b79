# dualrev - build, test, demo, bench.  `make help` lists the targets.
#
# BUILD=dir puts every output under dir (several builds can run side by side).
# SAN=address,undefined or SAN=thread builds everything with that sanitizer.

BUILD   ?= build
PREFIX  ?= /usr/local
CC      ?= gcc
SAN     ?=
OPT     ?= -O2

C_DEBS     := pkg-config libcmocka-dev libopenblas-dev
BENCH_DEBS := hyperfine libadolc-dev
HS_DEBS    := ghc cabal-install libghc-hspec-dev libghc-quickcheck2-dev

BLAS_CFLAGS = $(shell pkg-config --cflags openblas 2>/dev/null)
BLAS_LIBS   = $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas)

SANFLAGS := $(if $(SAN),-fsanitize=$(SAN) -fno-omit-frame-pointer -fno-sanitize-recover=all,)
CFLAGS_ALL = -std=c11 $(OPT) -g -Wall -Wextra -Wshadow -fPIC -fvisibility=hidden \
             -D_GNU_SOURCE -Iinclude -Icbits $(BLAS_CFLAGS) $(SANFLAGS) $(CFLAGS)
LIBS_ALL   = $(BLAS_LIBS) -lpthread -lm

LIB_SRC  := $(wildcard cbits/*.c)
LIB_OBJ  := $(patsubst cbits/%.c,$(BUILD)/obj/%.o,$(LIB_SRC))
LIB_A    := $(BUILD)/libdualrev.a
LIB_SO   := $(BUILD)/libdualrev.so

TEST_SRC     := $(wildcard tests/test_*.c)
TEST_SUPPORT := $(wildcard tests/support/*.c)
TEST_BIN     := $(patsubst tests/%.c,$(BUILD)/tests/%,$(TEST_SRC))
# tests run under ThreadSanitizer (the fork-join ones, and recorders in jobs)
TSAN_TESTS   ?= $(wildcard tests/test_parallel*.c tests/test_array_parallel*.c) tests/test_recorder.c

EXAMPLE_SRC := $(wildcard examples/*.c)
EXAMPLE_BIN := $(patsubst examples/%.c,$(BUILD)/examples/%,$(EXAMPLE_SRC))

.PHONY: all lib deps-c deps-bench deps-hs test test-c test-sanitize test-far test-tsan \
        test-hs demo bench install clean help

all: lib

help:
	@echo "make            build $(LIB_A) and $(LIB_SO)"
	@echo "make demo       build and run the examples"
	@echo "make test       C tests (plain, ASan+UBSan, far arguments, TSan) and Haskell tests"
	@echo "make bench      benchmarks (hyperfine), markdown table"
	@echo "make install PREFIX=/usr/local"

# --------------------------------------------------------------- packages
$(BUILD)/.deps-c:
	@mkdir -p $(BUILD)
	@sh tools/ensure-debs.sh $(C_DEBS)
	@touch $@
deps-c: $(BUILD)/.deps-c
deps-bench: deps-c
	@sh tools/ensure-debs.sh $(BENCH_DEBS)
deps-hs: deps-c
	@sh tools/ensure-debs.sh $(HS_DEBS)

# ---------------------------------------------------------------- library
lib: $(LIB_A) $(LIB_SO)

$(BUILD)/obj/%.o: cbits/%.c $(wildcard cbits/*.h) include/dualrev.h | $(BUILD)/.deps-c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c $< -o $@

$(LIB_A): $(LIB_OBJ)
	@rm -f $@
	ar rcs $@ $^

# only dr_* symbols are exported (visibility plus a version script)
$(LIB_SO): $(LIB_OBJ) cbits/exports.map
	$(CC) -shared $(SANFLAGS) -Wl,--version-script=cbits/exports.map \
	    -Wl,-soname,libdualrev.so.0 -o $@ $(LIB_OBJ) $(LIBS_ALL)

# ------------------------------------------------------------------ tests
$(BUILD)/tests/%: tests/%.c $(TEST_SUPPORT) $(wildcard tests/support/*.h) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests/support $< $(TEST_SUPPORT) $(LIB_A) -o $@ \
	    $$(pkg-config --cflags --libs cmocka) $(LIBS_ALL)

test-c: $(TEST_BIN)
	@set -e; for t in $(TEST_BIN); do echo "== $$t"; $$t; done

test-sanitize:
	$(MAKE) BUILD=$(BUILD)/asan SAN=address,undefined OPT=-O1 test-c

test-tsan:
	@if [ -n "$(TSAN_TESTS)" ]; then \
	  $(MAKE) BUILD=$(BUILD)/tsan SAN=thread OPT=-O1 \
	    TEST_SRC="$(TSAN_TESTS)" test-c; \
	else echo "no fork-join tests yet"; fi

# the C suite again, under ASan+UBSan, with arguments more than 5 nodes back
# recorded as far nodes (cbits/nary.c), so that every test exercises them
test-far:
	$(MAKE) BUILD=$(BUILD)/far SAN=address,undefined OPT=-O1 \
	  CFLAGS="$(CFLAGS) -DDR_NEAR_MAX=5" test-c

test: test-c test-sanitize test-far test-tsan test-hs

# the Haskell package's test suites (haskell/haskell.mk)
test-hs:
	$(MAKE) -f haskell/haskell.mk test-hs BUILD=$(BUILD)

# --------------------------------------------------------------- examples
$(BUILD)/examples/%: examples/%.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $< $(LIB_A) -o $@ $(LIBS_ALL)

demo: $(EXAMPLE_BIN)
	@for e in $(EXAMPLE_BIN); do echo "== $$e"; $$e || exit 1; done
	@$(MAKE) --no-print-directory -f haskell/haskell.mk demo-hs BUILD=$(BUILD)

# ------------------------------------------------------------ benchmarks
bench: lib deps-bench
	@$(MAKE) -f bench/bench.mk bench BUILD=$(BUILD)

# --------------------------------------------------------------- install
install: lib
	install -d $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib/pkgconfig
	install -m 644 include/dualrev.h $(DESTDIR)$(PREFIX)/include/
	install -m 644 $(LIB_A) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(LIB_SO) $(DESTDIR)$(PREFIX)/lib/libdualrev.so.0
	ln -sf libdualrev.so.0 $(DESTDIR)$(PREFIX)/lib/libdualrev.so
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|0.1.0|' dualrev.pc.in \
	    > $(DESTDIR)$(PREFIX)/lib/pkgconfig/dualrev.pc

clean:
	rm -rf $(BUILD) dist-newstyle haskell/dist-newstyle
