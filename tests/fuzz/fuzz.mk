# tests/fuzz/fuzz.mk - the differential fuzz target (tests/fuzz/README.md).
#
#   make fuzz                 build and fuzz for FUZZ_SECONDS (default 60)
#   make fuzz-smoke           a short run (20 s) for CI
#   make fuzz-regress         every corpus file once, no libFuzzer (gcc)
#   make fuzz-build           only build $(BUILD)/fuzz/fuzz_dualrev
#
# The library sources are compiled again with clang and the fuzzer's
# coverage instrumentation plus ASan and UBSan (UB is fatal).  Fuzzing runs
# on a copy of tests/fuzz/corpus under $(BUILD)/fuzz/work: new inputs go
# there, never into the repository.  One process (no -jobs: libFuzzer would
# then log to fuzz-N.log in the current directory).  FUZZ_FLAGS adds
# libFuzzer options;
# FUZZ_CFLAGS adds compile flags (e.g. -DFUZZ_KNOWN_NONE: no guards of
# known defects, fuzz_ref.h).

BUILD        ?= build
## FUZZ_CC: the fuzz target's compiler (with libFuzzer)
FUZZ_CC      ?= clang
## FUZZ_SECONDS: how long make fuzz runs, in seconds
FUZZ_SECONDS ?= 60
## FUZZ_MAXLEN: the longest input libFuzzer makes, in bytes
FUZZ_MAXLEN  ?= 2048
## FUZZ_TIMEOUT: seconds after which one input counts as a hang
FUZZ_TIMEOUT ?= 60
## FUZZ_FLAGS: more libFuzzer options
FUZZ_FLAGS   ?=
## FUZZ_CFLAGS: more compile flags of the fuzz target (e.g. -DFUZZ_KNOWN_NONE)
FUZZ_CFLAGS  ?=
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_BIN     := $(FUZZ_DIR)/fuzz_dualrev
FUZZ_DRV     := $(FUZZ_DIR)/fuzz_regress
FUZZ_CORPUS  := tests/fuzz/corpus
# the target's sources: the decoder and first-order operations, the
# reference, and one file per area of the API (tests/fuzz/README.md)
FUZZ_SRC     := $(addprefix tests/fuzz/,fuzz_dualrev.c fuzz_ref.c \
                  fuzz_modes.c fuzz_second_order.c fuzz_loops.c \
                  fuzz_external.c fuzz_tapes.c fuzz_replay.c \
                  fuzz_statements.c)
FUZZ_SRC_HDR := tests/fuzz/fuzz_ref.h tests/fuzz/fuzz_model.h
FUZZ_WORK    := $(FUZZ_DIR)/work

FUZZ_BLAS_CFLAGS := $(shell pkg-config --cflags openblas 2>/dev/null)
FUZZ_BLAS_LIBS   := $(shell pkg-config --libs openblas 2>/dev/null || echo -lopenblas)
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all \
                -fno-omit-frame-pointer
# the engine's sources and flags (cbits/engine.mk: those of dualrev.cabal)
include cbits/engine.mk
FUZZ_CF      := $(ENGINE_CFLAGS) -O1 -g -Iinclude -Icbits \
                $(FUZZ_BLAS_CFLAGS) $(FUZZ_CFLAGS)
FUZZ_LIB_SRC := $(ENGINE_SRC)
FUZZ_LIB_OBJ := $(patsubst cbits/%.c,$(FUZZ_DIR)/obj/%.o,$(FUZZ_LIB_SRC))
FUZZ_HDRS    := $(wildcard cbits/*/*.h) include/dualrev.h \
                $(wildcard include/dualrev/*.h include/dualrev/*/*.h)
FUZZ_RUN_ENV := OPENBLAS_NUM_THREADS=1 \
                ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
                UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

.PHONY: fuzz fuzz-smoke fuzz-build fuzz-regress

$(FUZZ_DIR)/obj/%.o: cbits/%.c $(FUZZ_HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CF) -fsanitize=fuzzer-no-link $(FUZZ_SAN) -c $< -o $@

$(FUZZ_BIN): $(FUZZ_SRC) $(FUZZ_SRC_HDR) $(FUZZ_LIB_OBJ) $(FUZZ_HDRS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CF) -fsanitize=fuzzer $(FUZZ_SAN) \
	    $(FUZZ_SRC) $(FUZZ_LIB_OBJ) -o $@ \
	    $(FUZZ_BLAS_LIBS) -lpthread -lm

# the plain driver: gcc, no sanitizers needed (add them with FUZZ_CFLAGS)
$(FUZZ_DRV): $(FUZZ_SRC) $(FUZZ_SRC_HDR) $(FUZZ_LIB_SRC) $(FUZZ_HDRS)
	@mkdir -p $(dir $@)
	$(CC) $(FUZZ_CF) -DFUZZ_DRIVER $(FUZZ_SRC) \
	    $(FUZZ_LIB_SRC) -o $@ $(FUZZ_BLAS_LIBS) -lpthread -lm

fuzz-build: $(FUZZ_BIN) ## only build BUILD/fuzz/fuzz_dualrev (clang, libFuzzer)

fuzz: $(FUZZ_BIN) ## the differential fuzz target for FUZZ_SECONDS (tests/fuzz/README.md)
	@rm -rf $(FUZZ_WORK) && mkdir -p $(FUZZ_WORK)/corpus $(FUZZ_WORK)/artifacts
	cp $(FUZZ_CORPUS)/* $(FUZZ_WORK)/corpus/
	$(FUZZ_RUN_ENV) $(FUZZ_BIN) -max_total_time=$(FUZZ_SECONDS) \
	    -max_len=$(FUZZ_MAXLEN) -timeout=$(FUZZ_TIMEOUT) -rss_limit_mb=2048 \
	    -print_final_stats=1 \
	    -artifact_prefix=$(FUZZ_WORK)/artifacts/ $(FUZZ_FLAGS) \
	    $(FUZZ_WORK)/corpus

fuzz-smoke: ## make fuzz for 20 s (CI)
	@$(MAKE) --no-print-directory -f tests/fuzz/fuzz.mk fuzz BUILD=$(BUILD) \
	    FUZZ_SECONDS=20

fuzz-regress: $(FUZZ_DRV) ## every corpus file once, built with CC, no libFuzzer
	OPENBLAS_NUM_THREADS=1 $(FUZZ_DRV) $(FUZZ_CORPUS)
