# The two commands of the README, and a few conveniences. Each installs what is missing first.
.PHONY: dev test bench load fuzz setup build review

dev:        ## serve the worker at http://127.0.0.1:8787 (local D1 + Durable Objects)
	bash scripts/dev.sh

test:       ## install what is missing, then run every test (native, wasm build, end-to-end)
	bash scripts/test.sh

bench:      ## benchmarks (tokenizer, engines); prints ratios measured in one run
	bash scripts/bench.sh

load:       ## load run against wrangler dev on loopback (bounded in time; not part of `make test`)
	bash scripts/load.sh

fuzz:       ## cargo-fuzz every target 10 min each (FUZZ_SECONDS), one at a time; not part of test
	bash scripts/fuzz.sh

review:     ## fleet review: checkpoint report per family + review/out/report.html (local D1; REMOTE=1: deployed)
	bash scripts/review.sh

setup:
	bash scripts/setup.sh

build:
	bash scripts/build.sh
