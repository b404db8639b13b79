# The Haskell package: built with cabal, offline, from Debian's GHC packages.
# Called from the top-level Makefile:  make -f haskell/haskell.mk <target> BUILD=...
#
# CABAL_DIR points at a directory of our own holding haskell/cabal.config (no
# package repository, offline), so cabal never tries the network.

SHELL    := /bin/bash
BUILD    ?= build
HS_BUILD := $(abspath $(BUILD))/hs
export CABAL_DIR := $(HS_BUILD)/cabal-home
CABAL    := cabal --builddir=$(HS_BUILD)/dist
# the package's version, read from its cabal file (where it is written)
VERSION  := $(shell sed -n 's/^version: *//p' dualrev.cabal)

.PHONY: hs-config hs-deps hs-lib check-cabal check-doctest test-hs hs-check-rebuild hs-build-tests hs-test-suites \
        hs-compile-fail stress-hs test-ad-compare quickstart demo-hs bench-hs \
        gradbench-hs-tool test-gradbench-hs

hs-config: ## check the packages, set up the offline cabal configuration
	@sh tools/deps.sh check lib hs
	@mkdir -p $(CABAL_DIR)
	@cp haskell/cabal.config $(CABAL_DIR)/config

# the steps that build from the checkout: the configuration, and stale
# objects dropped first.  The quick start and cabal check work on a tarball
# and need only the configuration, so that they may run beside a build
# without these rules deleting its files as they go
hs-deps: hs-config $(HS_BUILD)/c-headers.stamp $(HS_BUILD)/th-sources.stamp ## hs-config, and drop objects a changed header or splice would leave stale

# cabal rebuilds a C source when it changes, not when a header does: when a
# header changes, drop the package's C objects so none is built against an
# old struct layout, and the library's build record, without which cabal
# would find the package up to date and keep linking the objects it built
# before (when no source file changed too); the record is under opt/ at
# optimization: 2 (cabal.project)
$(HS_BUILD)/c-headers.stamp: $(wildcard cbits/*/*.h) include/dualrev.h \
                              $(wildcard include/dualrev/*.h include/dualrev/*/*.h)
	@mkdir -p $(HS_BUILD)
	@if [ -d $(HS_BUILD)/dist ]; then find $(HS_BUILD)/dist -path '*cbits*' \( -name '*.o' -o -name '*.dyn_o' \) -delete; \
	  rm -f $(HS_BUILD)/dist/build/*/*/dualrev-$(VERSION)/cache/build \
	        $(HS_BUILD)/dist/build/*/*/dualrev-$(VERSION)/opt/cache/build; fi
	@touch $@

# GHC does not recompile a module when only the Template Haskell code that
# its splices run has changed (its interface may stay the same): when the
# front end's sources change, drop the objects of the components that use
# the splices (test suites, examples, benchmarks), so none keeps code that
# an older front end generated
TH_SOURCES := $(wildcard haskell/src/Numeric/*.hs haskell/src/Numeric/DualRev/*.hs haskell/src/Numeric/DualRev/Internal/*/*.hs haskell/src/Numeric/DualRev/Internal/*/*/*.hs)
$(HS_BUILD)/th-sources.stamp: $(TH_SOURCES)
	@mkdir -p $(HS_BUILD)
	@if [ -d $(HS_BUILD)/dist ]; then find $(HS_BUILD)/dist -path '*/dualrev-$(VERSION)/[tx]/*' \( -name '*.o' -o -name '*.dyn_o' -o -name '*.hi' -o -name '*.dyn_hi' \) -delete; fi
	@rm -rf $(HS_BUILD)/gradbench-hs
	@touch $@

hs-lib: hs-deps ## build the Haskell library
	$(CABAL) build -v1 dualrev:lib:dualrev

# cabal check on the package as cabal sdist makes it (what is distributed),
# failing on its warnings too (cabal 3.4 exits 0 on some, such as -O2 in
# ghc-options).  Not in the checkout: there, finding .git, cabal also asks
# for a source-repository stanza, which needs the project's public address
# (none is recorded yet)
check-cabal: hs-config ## cabal check on the package's tarball, failing on its warnings too
	@rm -rf $(HS_BUILD)/check && mkdir -p $(HS_BUILD)/check
	@$(CABAL) sdist -v0 -o $(HS_BUILD)/check
	@tar -xzf $(HS_BUILD)/check/dualrev-$(VERSION).tar.gz -C $(HS_BUILD)/check
	@out=$$(cd $(HS_BUILD)/check/dualrev-$(VERSION) && cabal check 2>&1); status=$$?; echo "$$out"; \
	  [ $$status = 0 ] && ! echo "$$out" | grep -qiE '^(warning|error)'

# the test suites (the corpus; arrays and fork-join; the stress test, for
# 3 s), the overloaded mode's, taped gradients' and second order's tests
# again on two capabilities (where (|*|) forks), the compile-fail cases,
# the documentation's examples, and the comparison with ad where ad is
# installed.  Once the library is built, the other steps depend on it
# alone: with make -j they run beside the test suites' build (only it runs
# cabal on the build folder; the others call ghc with the package
# databases)
test-hs: hs-check-rebuild hs-test-suites hs-compile-fail check-doctest test-ad-compare test-gradbench-hs ## every Haskell test suite, the compile-fail cases, the documentation's examples, the comparison with ad, dualrev-hs's tests

# (+, here and below: the script runs make, which then shares make -j's
# job slots)
hs-check-rebuild: ## check that a changed C header drops the package's C objects (tools/check-hs-rebuild.sh)
	+sh tools/check-hs-rebuild.sh

hs-build-tests: hs-lib ## build the Haskell test suites
	$(CABAL) build -v1 dualrev:tests

hs-test-suites: hs-build-tests ## run the Haskell test suites, and the overloaded, taped and second-order tests on two capabilities
	$(CABAL) test -v1 dualrev:tests --test-show-details=direct
	"$$($(CABAL) list-bin -v0 dualrev:test:dualrev-test)" --match "/Overloaded/" --match "/tapedGrad/" \
	  --match "/derivatives inside differentiable code/" --match "/forward mode and second order/" +RTS -N2 -RTS

hs-compile-fail: hs-lib ## the compile-fail cases (haskell/test/compile-fail)
	sh haskell/test/compile-fail/run.sh ghc $(INPLACE_DBS) -package dualrev

# the stress test (haskell/test-stress) alone; test-hs runs it for its
# default 3 s among the suites.  DUALREV_STRESS_SECONDS, _THREADS and _ONLY
# pass through the environment
stress-hs: hs-deps ## the stress test alone
	$(CABAL) build -v1 dualrev:test:dualrev-test-stress
	"$$($(CABAL) list-bin -v0 dualrev:test:dualrev-test-stress)"

# every `>>>` example of the Haddock documentation, run by doctest (Debian
# package doctest) on the modules' sources, with the C engine of the built
# package (tools/check-doctest.sh); fails unless each example ran and shows
# what its comment says
check-doctest: hs-lib ## run every >>> example of the Haddock documentation (doctest)
	sh tools/check-doctest.sh $(INPLACE_DBS)

# Numeric.DualRev.AD against the ad package it imitates (haskell/test-ad):
# built with ghc against the in-place library, only where ad 4.5 is
# installed, since ad is no dependency of the package
GHC_VERSION := $(shell ghc --numeric-version 2>/dev/null)
INPLACE_DBS = $(foreach db,$(wildcard $(CABAL_DIR)/store/ghc-$(GHC_VERSION)/package.db) $(HS_BUILD)/dist/packagedb/ghc-$(GHC_VERSION),-package-db $(db))

test-ad-compare: hs-lib ## Numeric.DualRev.AD against the ad package (where ad 4.5 is installed)
	@if ghc-pkg --simple-output list ad 2>/dev/null | tr ' ' '\n' | grep -q '^ad-4\.5\.'; then \
	  mkdir -p $(HS_BUILD)/ad-compare && \
	  ghc -O2 -threaded -rtsopts $(INPLACE_DBS) -package dualrev -package ad -ihaskell/test -outputdir $(HS_BUILD)/ad-compare \
	    haskell/test-ad/AdCompare.hs -o $(HS_BUILD)/ad-compare/ad-compare >/dev/null && \
	  $(HS_BUILD)/ad-compare/ad-compare; \
	else echo "ad package not installed: ad comparison skipped"; fi

# the README's quick starts, outside the checkout (the Haskell one against
# the package's tarball); needs the C library built by the top Makefile
quickstart: hs-config ## the README's quick starts (tools/check-quickstart.sh)
	+sh tools/check-quickstart.sh $(BUILD)

demo-hs: hs-deps ## build and run haskell/examples/FitModel.hs
	@$(CABAL) build -v0 dualrev:exe:dualrev-demo
	@echo "== Haskell example (haskell/examples/FitModel.hs)"
	@$$($(CABAL) list-bin -v0 dualrev:exe:dualrev-demo)

bench-hs: hs-deps ## the Haskell benchmark programs, into BUILD/bench/hs
	$(CABAL) build -v1 dualrev:exe:dualrev-hs-bench dualrev:exe:dualrev-ad-bench
	@mkdir -p $(BUILD)/bench/hs
	cp "$$($(CABAL) list-bin -v0 dualrev:exe:dualrev-hs-bench)" $(BUILD)/bench/hs/dualrev-hs-bench
	cp "$$($(CABAL) list-bin -v0 dualrev:exe:dualrev-ad-bench)" $(BUILD)/bench/hs/dualrev-ad-bench
	@if ghc-pkg --simple-output list ad 2>/dev/null | grep -q .; then \
	  ghc -O2 -threaded -rtsopts -ibench/hs -outputdir $(HS_BUILD)/ad-bench bench/hs/AdBench.hs -o $(BUILD)/bench/hs/ad-bench >/dev/null; \
	else echo "ad package not installed: ad rows skipped"; rm -f $(BUILD)/bench/hs/ad-bench; fi

# dualrev-hs, the GradBench tool in Haskell (gradbench/README.md), and its
# tests: built with ghc against the in-place library, as the ad comparison
# is, since it needs aeson, which the package does not.  ghc --make finds
# what is up to date itself; the objects go where a change to the front
# end's sources deletes them (th-sources.stamp)
GB_HS_SRC := gradbench/dualrev-hs
GB_HS_OUT := $(HS_BUILD)/gradbench-hs
GB_HS_GHC  = ghc -O2 -Wall -threaded -rtsopts $(INPLACE_DBS) -package dualrev -package aeson -i$(GB_HS_SRC) \
             -outputdir $(GB_HS_OUT)

# an allocation area of 64 MB (GHC's default is 1 MB), as a program that
# allocates a result of megabytes per call is run for throughput:
# GradBench's own Haskell tool runs with 500 MB
gradbench-hs-tool: hs-lib ## BUILD/gradbench/dualrev-hs, the GradBench tool in Haskell (needs aeson: make deps)
	@mkdir -p $(GB_HS_OUT) $(BUILD)/gradbench
	$(GB_HS_GHC) -v0 "-with-rtsopts=-A64m" $(GB_HS_SRC)/Main.hs -o $(BUILD)/gradbench/dualrev-hs

# no GradBench needed: every eval's derivatives against central finite
# differences of its own primal, and a scripted protocol session
test-gradbench-hs: gradbench-hs-tool ## dualrev-hs's tests: each eval's derivatives against finite differences, a protocol session
	$(GB_HS_GHC) -v0 -main-is Test $(GB_HS_SRC)/Test.hs -o $(GB_HS_OUT)/test-dualrev-hs
	$(GB_HS_OUT)/test-dualrev-hs
	@sh gradbench/test_session.sh $(BUILD)/gradbench/dualrev-hs dualrev-hs
