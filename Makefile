# flowtrack — build, test and measure.
#
#   make run    a real process end to end (see README)
#   make quick  the loop to run while working: gofmt, vet, staticcheck,
#               go test -short ./..., the SDK's unit tests (a few minutes)
#   make test   every test: vet, staticcheck, race tests, fuzz smoke, examples,
#               wasm, SDK and browser tests (what CI runs; about 20 minutes)
#   make bench  benchmarks on the reference workloads

GO       ?= go
export FLOWTRACK_EXTERNAL ?= $(abspath ../shared/conformance)

.PHONY: all build wasm wasm-check check fmt-check vet staticcheck tidy-check quick test race restore-hosts stress fuzz examples run bench bench-dmn size clean

all: build

# wasm builds the WebAssembly module from wasm/ (go generate ./host): into
# host/flowtrack.wasm.gz, which host/ embeds and git keeps so that a plain
# clone builds, and host/flowtrack.wasm for the SDK and the benchmarks. The
# module is pre-initialised (host/internal/modulegen/preinit.go runs its
# _initialize in wazero's interpreter and keeps the result: about 0.9 s of
# CPU), so with Go's build cache a rebuild of an unchanged module takes
# about a second. wasm-check fails when the committed module is not what the
# sources build (run make wasm and commit host/flowtrack.wasm.gz); make
# test runs it first, before anything rebuilds the module.
WASM := host/flowtrack.wasm

wasm:
	$(GO) generate ./host

wasm-check:
	$(GO) run ./host/internal/modulegen -dir host -check

build: wasm
	$(GO) build ./...

vet: wasm
	$(GO) vet ./...
	GOOS=wasip1 GOARCH=wasm $(GO) vet ./wasm
	GOOS=wasip1 GOARCH=wasm $(GO) vet -tags extism ./wasm
	@# The server's NATS stays out of the module (flowtrack serve runs the native engine).
	@! GOOS=wasip1 GOARCH=wasm $(GO) list -deps ./wasm | grep nats-io || (echo "the wasm module imports NATS" && false)

staticcheck: wasm
	$(GO) tool staticcheck ./...

tidy-check:
	$(GO) mod tidy -diff

fmt-check:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1)

# check is the static gate: formatting, vet, staticcheck, tidy go.mod.
check: vet staticcheck tidy-check fmt-check

# race runs everything under -race, then the engine's own tests again with
# direct resumption as the default (the conformance corpus plays both modes
# itself, as the native and native-direct runners).
race: wasm
	$(GO) test -race -count=1 -timeout 30m ./...
	$(GO) test -race -count=1 -tags flowtrack_direct ./engine/...

# restore-hosts moves every scenario, after every step, from the native
# engine to the module in wazero, to the SDK in Node (one node process on
# sdk-js/dist, hence sdk) and back to the native engine in the other
# resumption mode (conformance/checkpoint_test.go, node_test.go), and
# plays it on the embedded store and on the JetStream store reopened after
# every step (conformance/store_test.go, jetstore_test.go); they skip
# themselves under -race, where a module, a store file or a stream per
# step takes too long, and under -short (make quick). TestScenariosJetStored
# ran nowhere in make test before (skipped under race, which is where make
# test runs the conformance package): it is here now.
restore-hosts: sdk
	$(GO) test -count=1 -run '^(TestScenariosAcrossHosts|TestNodeRotation(Protocol|Document|Stuck)|TestScenariosStored|TestScenariosJetStored)$$' ./conformance

# fuzz gives each fuzz target a short run (minimizing a crasher is capped,
# or the fuzzer spends its whole budget shrinking). Budgets are counts of
# runs, about what a few seconds give on this machine, not durations: at
# the end of a -fuzztime duration Go 1.26's fuzzing coordinator can fail a
# target with "context deadline exceeded" and no failing input (Go issue
# 75804, fixed in 1.27), which failed a CI rehearsal.
FUZZ = $(GO) test -run='^$$' -fuzzminimizetime=2s
fuzz:
	$(FUZZ) -fuzz=FuzzImport -fuzztime=30000x ./engine/internal/bpmnxml
	$(FUZZ) -fuzz=FuzzDMN -fuzztime=20000x ./engine/internal/decision
	$(FUZZ) -fuzz=FuzzCompileEval -fuzztime=50000x ./engine/internal/expr
	$(FUZZ) -fuzz=FuzzEval -fuzztime=20000x ./engine/internal/expr
	$(FUZZ) -fuzz=FuzzEvent_AppendJSON -fuzztime=80000x ./engine/internal/runtime
	$(FUZZ) -fuzz=FuzzRequest -fuzztime=2500x ./internal/dispatch
	$(FUZZ) -fuzz=FuzzAppendString -fuzztime=300000x ./internal/jsontext
	$(FUZZ) -fuzz='^FuzzRestore$$' -fuzztime=15000x ./engine
	$(FUZZ) -fuzz='^FuzzRestoreInstance$$' -fuzztime=2000x ./engine
	$(FUZZ) -fuzz='^FuzzRestoreInstanceDoc$$' -fuzztime=400x ./engine

# stress repeats the concurrency-sensitive tests (inbound delivery, the
# event-based gateway races, joins and the loop-owned view) 40 times in a
# row under -race, as SRD-027 and SRD-028 require, kills each store's
# crash-test child 40 times (make test's race run kills it 4 times), kills
# and restarts (or cuts off) a random member of the 3-node cluster 12 times
# (make test: 2), runs 8 slow-disk fault rounds of it (make test: 2), plays every
# conformance scenario 10 times per Go runner, requiring one history order
# (the SDK's share, 20 times, is stress-sdk; with three Go runners that takes about
# ten minutes on a loaded 2-core machine, past go test's default timeout).
STRESS_RUN = Inbound|EventGateway|Message|Signal|Timer|Observer|Boundary_JobCompletion
# HOSTILE_RUN is the hostile-input suite (issue #22): budgets, hostile
# expressions and values, times out of range, calls after Close, strict
# requests; stress repeats it and fuzzes evaluation and requests longer.
HOSTILE_RUN = Hostile|Budget|OutOfRange|VariableDepth|AfterClose|Observer|Strict|Latin1|UTF8
stress:
	$(GO) test -race -count=40 -run '$(STRESS_RUN)' ./engine
	$(GO) test -race -count=20 -tags flowtrack_direct -run '$(STRESS_RUN)' ./engine
	$(GO) test -race -count=40 ./engine/internal/runtime ./engine/internal/eventhub
	$(GO) test -race -count=40 -tags flowtrack_direct ./engine/internal/runtime
	$(GO) test -count=1 -timeout 30m -run TestScenarioOrder ./conformance -conformance.repeat=10 -conformance.all-hosts
	$(GO) test -race -count=5 -run '$(HOSTILE_RUN)' ./engine ./internal/dispatch
	$(GO) test -count=1 -run '^TestStore_Crash$$' ./engine/boltstore ./engine/jetstore -crash.kills=40
	$(GO) test -count=1 -timeout 20m -run '^TestCluster_KillRestart$$' ./cluster -cluster.kills=12
	$(GO) test -count=1 -timeout 20m -run '^TestCluster_SlowDisk$$' ./cluster -cluster.slowrounds=8
	$(FUZZ) -fuzz=FuzzEval -fuzztime=300000x ./engine/internal/expr
	$(FUZZ) -fuzz=FuzzRequest -fuzztime=30000x ./internal/dispatch
	$(MAKE) stress-sdk

examples: wasm
	@for d in $$(ls -d examples/*/ 2>/dev/null); do \
		if [ -f $$d/main.go ]; then echo "example $$d"; $(GO) run ./$$d || exit 1; fi; \
	done

# test is the full suite, the one .ci/run calls. Its parts run in this
# order; each is a target of its own, described where it is defined:
# wasm-check first, before anything rebuilds the committed module.
# This is the only declaration of test's prerequisites: add a new part
# here, not on a "test:" line of its own.
test: wasm-check check race restore-hosts stress fuzz examples \
	test-wasm test-feelin test-sdk test-browser test-extism test-camunda flake-short

# quick is the loop to run while working: static checks, every Go test
# in -short mode (the long runs skip themselves there and name the target
# that runs them: stress, restore-hosts, race), and the SDK's unit tests
# (SDK_UNIT_TESTS: every test file of sdk-js/test but the conformance
# corpus, the packed tarball and the remote mode against a server, which
# test-sdk runs). It builds the module and the SDK first, as vet and the
# SDK tests need them, but installs the SDK's npm dependencies only when
# package-lock.json changed (sdk-build), where sdk runs npm ci every time.
SDK_UNIT_TESTS = $(filter-out test/conformance.test.mjs test/pack.test.mjs test/remote.test.mjs,$(patsubst sdk-js/%,%,$(wildcard sdk-js/test/*.test.mjs)))
quick: fmt-check vet staticcheck sdk-build
	$(GO) test -short ./...
	cd sdk-js && node --test $(SDK_UNIT_TESTS)

# flake runs the tests that wait on NATS, JetStream and each other (the
# stores engine/jetstore and engine/boltstore, the cluster, the server, the
# Go client and the host) as CI runs them, on a busy machine: side by side
# under -race, repeated (FLAKE_STORE_COUNT times for the stores,
# FLAKE_COUNT for the others), with one bounded busy loop per core
# competing for the CPU, stopped at the end (issue #41). The tests wait
# for states, never for fixed times; the bounds of their waits stretch by
# FLAKE_SLOW (internal/testtime, FLOWTRACK_TEST_SLOW). Run it in full
# before resolving an issue that touches these packages; make test runs
# its short form, flake-short (two passes of the stores, one of the
# cluster's failover-under-load and messages-across-partitions tests, under
# the competing load), beside the race run's single pass of all.
FLAKE_STORE_COUNT ?= 20
FLAKE_COUNT       ?= 10
FLAKE_SLOW        ?= 3
FLAKE_TIMEOUT     ?= 180m
FLAKE_SHORT_RUN    = TestCluster_(MessagesAcrossPartitions|FailoverUnderLoad)
.PHONY: flake flake-short flake-run
flake:
	@$(MAKE) --no-print-directory flake-run FLAKE_PKGS='./cluster ./server ./client ./host' FLAKE_RUN=.
flake-short:
	@$(MAKE) --no-print-directory flake-run FLAKE_STORE_COUNT=2 FLAKE_COUNT=1 FLAKE_PKGS=./cluster FLAKE_RUN='$(FLAKE_SHORT_RUN)'
flake-run:
	@pids=""; \
	for i in $$(seq $$(nproc)); do timeout 4h sh -c 'while :; do :; done' >/dev/null 2>&1 & pids="$$pids $$!"; done; \
	trap 'kill $$pids 2>/dev/null; true' EXIT INT TERM; \
	export FLOWTRACK_TEST_SLOW=$(FLAKE_SLOW); \
	$(GO) test -race -count=$(FLAKE_STORE_COUNT) -timeout $(FLAKE_TIMEOUT) ./engine/jetstore ./engine/boltstore & s=$$!; \
	$(GO) test -race -count=$(FLAKE_COUNT) -timeout $(FLAKE_TIMEOUT) -run '$(FLAKE_RUN)' $(FLAKE_PKGS) & c=$$!; \
	rs=0; wait $$s || rs=$$?; rc=0; wait $$c || rc=$$?; \
	echo "flake: stores x$(FLAKE_STORE_COUNT) exit $$rs; $(FLAKE_PKGS) x$(FLAKE_COUNT) exit $$rc"; \
	test $$rs -eq 0 && test $$rc -eq 0

# run deploys and runs a real order process through the CLI, i.e. through
# the wasm module in wazero. It uses the committed module when that was
# built from the sources as they are (modulegen -fresh reads the digest of
# its sources the module's gzip header records: a second or two, no
# build), and otherwise says so and builds it first (make wasm), printing
# each step.
run:
	@if $(GO) run ./host/internal/modulegen -dir host -fresh; then \
		echo "make run: host/flowtrack.wasm.gz is current: no module to build"; \
	else \
		echo "make run: building the module first (make wasm)"; \
		$(MAKE) --no-print-directory wasm || exit 1; \
	fi
	@echo "make run: building the CLI and running examples/native/order.bpmn"
	$(GO) run ./cmd/flowtrack run examples/native/order.bpmn --vars '{"amount":250}'

# bench measures every host (native, wazero, Node through the SDK) on the
# reference and bench/workloads processes, parks 100k instances, times cold
# starts, measures the cluster on 1, 2 and 3 nodes beside the bbolt store
# (flowbench cluster), and prints one table (bench/README.md); results in
# bench/results/.
# The Go benchmarks run once each (-benchtime=1x) so they keep working.
# bench-peer installs the peer engine for the peer rows (issue #21).
bench: sdk bench-peer
	@mkdir -p bench/results
	$(GO) test -run='^$$' -bench=. -benchtime=1x ./engine/... ./host/... ./internal/tracing > bench/results/go-bench.txt
	$(GO) build -o bin/flowbench ./bench/cmd/flowbench
	bin/flowbench all
	$(MAKE) bench-extism
	$(MAKE) bench-dmn-hosts

# bench-dmn measures DMN evaluations per second on every host: native
# (engine/internal/decision BenchmarkEvaluate), the module in wazero
# (host BenchmarkEvaluateDecision) and the SDK in Node
# (bench/node/decisions.mjs), on the same models and inputs: a 100-rule,
# 5-input table (FIRST, COLLECT SUM) and a small DRD (docs/dmn.md, Speed).
bench-dmn: sdk
	$(MAKE) bench-dmn-hosts

.PHONY: bench-dmn-hosts
bench-dmn-hosts:
	@mkdir -p bench/results
	cd engine/internal/decision && $(GO) test -run='^$$' -bench='^BenchmarkEvaluate$$' -benchtime=2s . | tee ../../../bench/results/dmn-native.txt
	$(GO) test -run='^$$' -bench='^BenchmarkEvaluateDecision$$' -benchtime=2s ./host | tee bench/results/dmn-wazero.txt
	node bench/node/decisions.mjs | tee bench/results/dmn-node.jsonl

# bench-peer installs bench/peer's driver dependencies: bpmn-engine, the
# JavaScript BPMN engine, at the version package-lock.json pins. Without
# them flowbench all skips its peer part and says so.
.PHONY: bench-peer
bench-peer:
	cd bench/peer && $(NPM_CI)

# size prints the module's size raw and gzipped, then where its bytes go
# (sections, the largest packages and functions) from a build of the same
# module that keeps its name section (the committed one is built -s).
size: wasm
	$(GO) run ./cmd/flowtrack-size $(WASM)
	cd host && GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -trimpath -buildvcs=false -o ../bin/flowtrack-named.wasm ../wasm
	$(GO) run ./cmd/flowtrack-size -profile 40 bin/flowtrack-named.wasm

clean:
	rm -rf bin $(WASM)

# --- conformance and single-threaded wasm tests -------------------------
.PHONY: conformance test-wasm

# conformance prints one line per scenario and runner, the summaries, the
# betsy table per group and the MIWG import counts (FLOWTRACK_EXTERNAL),
# then the FEEL TCK table per group, its wrong results and the line
# "feel-tck: N/1857 agree" (conformance-feel alone; conformance-feel-update
# rewrites the ratchet engine/internal/expr/testdata/feel-tck-agree.txt),
# then the DMN TCK table per level and folder and "dmn-tck: N/M"
# (conformance-dmn).
conformance:
	$(GO) test -race -c -o bin/conformance.test ./conformance
	cd conformance && ../bin/conformance.test -test.count=1 -conformance.report
	$(MAKE) conformance-feel
	$(MAKE) conformance-dmn

# test-feelin is the FEEL differential test: generated expressions run
# here and through feelin, an independent implementation in JavaScript
# (Node runs it once over the whole corpus); every disagreement must be a
# known class, listed with who is right per the DMN spec.
.PHONY: test-feelin
test-feelin:
	cd engine/internal/expr/feelin && $(NPM_CI)
	cd engine/internal/expr && $(GO) test -count=1 -run '^TestFeelin_Differential$$' -args -feelin

.PHONY: conformance-feel conformance-feel-update
conformance-feel:
	cd engine/internal/expr && $(GO) test -count=1 -run '^TestFeelTCK$$' -args -feeltck.report

conformance-feel-update:
	cd engine/internal/expr && $(GO) test -count=1 -run '^TestFeelTCK$$' -args -feeltck.update

# conformance-dmn runs every test case of the DMN TCK (compliance levels 2
# and 3, $(FLOWTRACK_EXTERNAL)/dmn-tck) and prints the table per level and
# folder, each failing case with why, and the line "dmn-tck: N/M";
# conformance-dmn-update rewrites the ratchet
# engine/internal/decision/testdata/dmn-tck-pass.txt (docs/dmn.md).
.PHONY: conformance-dmn conformance-dmn-update
conformance-dmn:
	cd engine/internal/decision && $(GO) test -count=1 -run '^TestDMNTCK$$' -args -dmntck.report

conformance-dmn-update:
	cd engine/internal/decision && $(GO) test -count=1 -run '^TestDMNTCK$$' -args -dmntck.update

# test-wasm runs the engine's own tests compiled to wasip1/wasm under the
# wazero CLI (no -race there: wasm has one thread), at the wazero version
# go.mod uses, installed into bin/.
WAZERO_VERSION = $(shell $(GO) list -m -f '{{.Version}}' github.com/tetratelabs/wazero)

bin/wazero-$(WAZERO_VERSION):
	GOBIN=$(abspath bin) $(GO) install github.com/tetratelabs/wazero/cmd/wazero@$(WAZERO_VERSION)
	touch $@

# The stores (engine/boltstore, engine/jetstore) are native only: a file
# database and a NATS server have no place inside the module.
test-wasm: bin/wazero-$(WAZERO_VERSION)
	PATH="$(abspath bin):$$($(GO) env GOROOT)/lib/wasm:$$PATH" GOWASIRUNTIME=wazero \
		GOOS=wasip1 GOARCH=wasm $(GO) test -count=1 $$($(GO) list ./engine/... | grep -v -e /engine/boltstore -e /engine/jetstore)

# test-camunda drives flowtrack serve --http with Camunda 8's own clients
# (server/rest/clienttest: @camunda8/orchestration-cluster-api and the
# 8.8 SDK's REST worker, at the versions package-lock.json pins): on one
# node, with Basic and OAuth authentication (auth.test.mjs), then on a
# three-node cluster that loses a node in the middle.
.PHONY: test-camunda
test-camunda:
	cd server/rest/clienttest && $(NPM_CI) && npm test && FLOWTRACK_CLUSTER=1 node --test clients.test.mjs

# --- JavaScript SDK, Node example, browser simulator ---------------------
.PHONY: sdk test-sdk test-browser bench-sdk stress-sdk

NPM_CI = npm ci --no-audit --no-fund --prefer-offline
CHROMIUM ?= /usr/bin/chromium

# sdk builds the npm package (sdk-js/dist, flowtrack.wasm included).
sdk: wasm
	cd sdk-js && $(NPM_CI) && npm run build

# sdk-build is sdk for make quick: npm ci only when the lock file is newer
# than the install it made (npm writes node_modules/.package-lock.json).
.PHONY: sdk-build
sdk-build: wasm sdk-js/node_modules/.package-lock.json
	cd sdk-js && npm run build

sdk-js/node_modules/.package-lock.json: sdk-js/package-lock.json
	cd sdk-js && $(NPM_CI)

# test-sdk: SDK tests, conformance scenarios through the SDK (compared with
# the native engine), the packed tarball in a fresh project, the Node example,
# and the nats-only Node job worker against a flowtrack serve it starts.
test-sdk: sdk
	cd sdk-js && npm test
	cd examples/node && $(NPM_CI) && node main.js
	cd examples/node-worker && $(NPM_CI) && npm test

# test-browser runs the SDK's own test files in headless Chromium (the
# system's; no browser is ever downloaded), on a page and in a Web Worker,
# from a Vite production build (about 20 s), then drives the token
# simulator and the Extism plug-in example's page.
test-browser: sdk
	@test -x $(CHROMIUM) || [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null || \
		{ echo "test-browser: installing Debian's chromium"; apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }
	@test -x $(CHROMIUM) || { echo "test-browser: no Chromium at $(CHROMIUM); install it (Debian: apt-get install -y chromium) or pass CHROMIUM=/path"; exit 1; }
	cd sdk-js && CHROMIUM=$(CHROMIUM) npm run test:browser
	cd examples/browser-simulator && $(NPM_CI) && CHROMIUM=$(CHROMIUM) npm test
	cd examples/extism && $(NPM_CI) && CHROMIUM=$(CHROMIUM) npm test

# test-extism runs the Extism plug-in (host/flowtrack.extism.wasm, built
# by make wasm) from Node with the Extism JS SDK: examples/extism/main.mjs
# checks its own result (make examples runs the Go side, main.go).
.PHONY: test-extism
test-extism: wasm
	cd examples/extism && $(NPM_CI) && node main.mjs

# bench-extism: straight-10 and message through the Extism plug-in in the
# Extism JS SDK beside the SDK, in Node (the Go side is
# BenchmarkExtism_Workloads in host/extism, part of the Go benchmarks).
.PHONY: bench-extism
bench-extism: sdk
	@mkdir -p bench/results
	cd examples/extism && $(NPM_CI) && node bench.mjs | tee ../../bench/results/extism-node.txt

# stress-sdk plays every conformance scenario 20 times through the SDK.
stress-sdk: sdk
	cd sdk-js && FLOWTRACK_REPEAT=20 node --test test/conformance.test.mjs

bench-sdk: sdk
	cd sdk-js && node bench/bench.mjs
