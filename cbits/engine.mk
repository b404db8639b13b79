# cbits/engine.mk - the engine's C sources and compiler flags, read from the
# library stanza of dualrev.cabal, where the Haskell package (which compiles
# the same files) needs them written: one list and one set of flags for every
# build of the engine (the Makefile, tests/fuzz/fuzz.mk).  The optimisation
# level is each build's own (cabal check rejects it in cc-options; cabal
# gives C -O2 itself).  cbits/mpi/ needs MPI and is no part of the engine.

ifndef ENGINE_SRC
# the words of a field of the library stanza (comment lines skipped)
cabal_lib_field = $(shell awk -v f='$(1):' ' \
    /^[ \t]*--/ { next } \
    /^[^ \t]/ { lib = ($$1 == "library"); on = 0; next } \
    lib && $$1 ~ /:$$/ { on = ($$1 == f); if (on) $$1 = "" } \
    on { for (i = 1; i <= NF; i++) if ($$i != "") print $$i }' dualrev.cabal)

# the package's own adapters (haskell/cbits) are listed there too
ENGINE_SRC    := $(filter cbits/%.c,$(call cabal_lib_field,c-sources))
ENGINE_CFLAGS := $(call cabal_lib_field,cc-options)
endif
