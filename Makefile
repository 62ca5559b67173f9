# flowtrack — build, test and measure.
#
#   make run    a real process end to end (see README)
#   make test   every test: vet, staticcheck, race tests, fuzz smoke, examples
#   make bench  benchmarks on the reference workloads

GO       ?= go
export FLOWTRACK_EXTERNAL ?= $(abspath ../shared/conformance)

.PHONY: all build check vet staticcheck tidy-check test race fuzz examples run bench clean

all: build

build:
	$(GO) build ./...

vet:
	$(GO) vet ./...

staticcheck:
	$(GO) tool staticcheck ./...

# check is the quick gate: formatting, vet, staticcheck, tidy go.mod.
check: vet staticcheck
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); echo "gofmt: files above need formatting"; exit 1)

race:
	$(GO) test -race -count=1 ./...

fuzz:
	$(GO) test -run='^$$' -fuzz=FuzzImport -fuzztime=10s ./engine/internal/bpmnxml

examples:
	@for d in $$(ls -d examples/*/ 2>/dev/null); do \
		if [ -f $$d/main.go ]; then echo "example $$d"; $(GO) run ./$$d || exit 1; fi; \
	done

test: check race fuzz examples

run:
	$(GO) run ./examples/native

bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./engine/...

clean:
	rm -rf bin
