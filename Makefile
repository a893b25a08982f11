# The two set-up commands of the README. Both install zabmc (editable) with what they need first.
PY ?= python3
PIP_FLAGS ?= -q --disable-pip-version-check --root-user-action=ignore

.PHONY: check gate test test-fast install install-test bench mutate

install:
	$(PY) -m pip install $(PIP_FLAGS) -e .

# The picture tests draw in a real browser: Debian's chromium, installed here when it is missing
# and apt-get can (otherwise those tests are skipped, saying why).
# The real-ZooKeeper tests (tests/test_real_ensemble.py, marked `real`) need Debian's zookeeper
# package (ZooKeeper 3.8.0 and its jars), kazoo (the `real` extra) and, for the fault hooks,
# Byteman's jar alone: `apt-get download` + `dpkg-deb -x` into ~/.cache/zabmc/byteman (or
# $$XDG_CACHE_HOME/zabmc/byteman), where zabmc.real.install.find_byteman looks, without the
# package's dependencies. Missing, they are skipped saying why; under CI=true, make fails here.
install-test:
	$(PY) -m pip install $(PIP_FLAGS) -e '.[test,spark,bench,real]'
	@command -v chromium >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1 || \
	  (apt-get install -y -q chromium >/dev/null 2>&1 || \
	   (apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium >/dev/null 2>&1)) || \
	  echo "chromium could not be installed: the browser tests will be skipped"
	@test -f /usr/share/java/zookeeper.jar || { \
	  log=$$(mktemp); \
	  { command -v apt-get >/dev/null 2>&1 || { echo "no apt-get on this machine" >$$log; false; }; } && \
	  { apt-get install -y -q zookeeper >$$log 2>&1 || \
	    { apt-get update -q >>$$log 2>&1 && apt-get install -y -q zookeeper >>$$log 2>&1; }; } || { \
	    echo "zookeeper could not be installed ($$(tail -n 1 $$log)): the real-ZooKeeper tests will be skipped"; \
	    rm -f $$log; test "$$CI" != true || exit 1; }; rm -f $$log; }
	@$(PY) -c 'import sys; from zabmc.real.install import find_byteman; sys.exit(find_byteman() is None)' || { \
	  dest=$$($(PY) -c 'from zabmc.real.install import byteman_cache_jar as b; print(b().parents[3])'); \
	  tmp=$$(mktemp -d); \
	  { command -v apt-get >/dev/null 2>&1 && { (cd $$tmp && apt-get download -q libbyteman-java >$$tmp/log 2>&1) || \
	    { apt-get update -q >>$$tmp/log 2>&1 && (cd $$tmp && apt-get download -q libbyteman-java >>$$tmp/log 2>&1); }; } && \
	    mkdir -p $$dest && dpkg-deb -x $$tmp/libbyteman-java_*.deb $$dest; } || { \
	    echo "Byteman could not be fetched ($$(tail -n 1 $$tmp/log 2>/dev/null)): the tests of fault hooks will be skipped"; \
	    rm -rf $$tmp; test "$$CI" != true || exit 1; }; rm -rf $$tmp; }

# The main job: exhaustive check of the db-19 protocol, 3 nodes, depth 40, in-process engine.
check: install
	zabmc check --nodes 3 --depth 40

# The CI invariant gate: the zab model (DSN 2011 ZAB) checked with every default property, cheapest
# run first, in about two minutes here (figures in reports/verification.md). Runs 1, 4 and 5
# exhaust their state spaces; 6 and 7 explore every path of up to 24 and 23 events (6 with one
# crash: a crashed node keeps only its durable fields and may restart at any step; 4 with two).
# Runs 2 and 3 check liveness: once faults stop, a leader is elected and every proposal commits
# (a fair cycle or dead end that never gets there is a lasso counterexample); their spaces are
# finite, so one that reaches the depth bound (elections that never settle, epochs growing
# forever) fails too (--require-complete, exit 4). Run 8 takes 10,000
# seeded random walks of up to 60 events with every kind of fault, deeper than the exhaustive runs
# reach; the seed makes it reproducible and its counterexample is shortened by replay. Runs 9 and
# 10 exhaust three nodes with a proposal and a timeout, on zab and on zab-omega (votes by node id,
# so Phase 1 must recover history), under partial-order reduction (docs/reduction.md: an exhausted
# reduced space has the full one's verdict), about a minute each. Each run
# prints its summary (a few lines); a violation prints the counterexample, writes
# zabmc-zab-<property>.trace.json (a lasso: .lasso.json) and exits 10, which stops make. Which
# one-line bugs the gate catches: reports/verification.md, "Mutation score" (make mutate).
# The last nine runs gate zk-fixed, the ZooKeeper model with the fixes of ZOOKEEPER-3911 and -4646
# (models/zk; safety only: the zk models have no liveness properties), in about 100 CPU seconds:
# exhaustive on two nodes with faults and on three without (--require-complete), every path of up
# to 24 events with a timeout and of up to 30 with a crash, seeded random walks with every fault,
# a depth-first search of the known bugs' bounds capped at its first 800,000 states (the same
# states on every run; zk and zk-pre3911 fail it with their bugs, 29 events deep), and every path
# of up to 26 events with a lost message and of up to 10 with a lost message and two timeouts.
define GATE
zabmc check --model zab --network fifo --nodes 3 --proposals 2 --depth 100 -q
zabmc check --model zab --network fifo --nodes 2 --proposals 2 --depth 80 --liveness --require-complete -q
zabmc check --model zab --network fifo --nodes 3 --proposals 2 --depth 80 --liveness --require-complete -q
zabmc check --model zab --network fifo --nodes 2 --proposals 2 --max-timeouts 1 --max-drops 1 --max-heartbeats 1 --max-crashes 2 --depth 100 -q
zabmc check --model zab --network fifo --nodes 2 --proposals 2 --max-timeouts 3 --max-drops 2 --max-heartbeats 2 --depth 100 -q
zabmc check --model zab --network fifo --nodes 3 --proposals 2 --max-crashes 1 --depth 24 -q
zabmc check --model zab --network fifo --nodes 3 --proposals 2 --max-timeouts 1 --depth 23 -q
zabmc check --model zab --network fifo --nodes 3 --proposals 2 --max-timeouts 2 --max-drops 1 --max-heartbeats 1 --max-crashes 1 --depth 60 --strategy random --seed 1 --walks 10000 -q
zabmc check --model zab --network fifo --nodes 3 --proposals 1 --max-timeouts 1 --depth 200 --reduction por --require-complete -q
zabmc check --model zab-omega --network fifo --nodes 3 --proposals 1 --max-timeouts 1 --depth 200 --reduction por --require-complete -q
zabmc check --model zk-fixed --network fifo --nodes 2 --proposals 2 --max-timeouts 1 --max-crashes 1 --depth 100 --require-complete -q
zabmc check --model zk-fixed --network fifo --nodes 3 --proposals 2 --depth 100 --require-complete -q
zabmc check --model zk-fixed --network fifo --nodes 3 --proposals 2 --max-timeouts 1 --depth 24 -q
zabmc check --model zk-fixed --network fifo --nodes 3 --proposals 2 --max-crashes 1 --depth 30 -q
zabmc check --model zk-fixed --network fifo --nodes 2 --proposals 2 --max-timeouts 2 --max-drops 1 --max-crashes 2 --depth 100 --require-complete -q
zabmc check --model zk-fixed --network fifo --nodes 3 --proposals 2 --max-timeouts 2 --max-drops 1 --max-heartbeats 1 --max-crashes 2 --depth 60 --strategy random --seed 1 --walks 10000 -q
zabmc check --model zk-fixed --network fifo --nodes 3 --proposals 2 --max-timeouts 1 --max-crashes 1 --depth 30 --strategy dfs --max-states 800000 -q
zabmc check --model zk-fixed --network fifo --nodes 3 --proposals 2 --max-drops 1 --depth 26 -q
zabmc check --model zk-fixed --network fifo --nodes 3 --proposals 2 --max-timeouts 2 --max-drops 1 --depth 10 -q
endef

gate: install
	$(GATE)

# The whole test suite, slow and Spark tests included, then the invariant gate (this is what
# .ci/run runs).
test: install-test
	$(PY) -m pytest -q -p no:cacheprovider --durations=25
	$(GATE)

# The quick inner loop: skips tests marked slow or spark.
test-fast: install-test
	$(PY) -m pytest -q -m "not slow and not spark"

# Every benchmark that writes reports/benchmarks.md (tens of minutes; needs a quiet machine).
bench: install-test
	$(PY) benchmarks/sim_bench.py
	$(PY) benchmarks/explore_bench.py --write
	$(PY) benchmarks/ceiling_bench.py
	$(PY) benchmarks/spark_bench.py
	$(PY) benchmarks/tlc_bench.py

# The gate's mutation score: every single-point mutant of models/zab/handlers.py run against the
# gate's searches and wider ones, classified, and written to reports/verification.md ("Mutation
# score"); results are cached in reports/mutants.json, so a rerun does only what changed (a fresh
# campaign takes about 110 minutes on two cores). A benchmark, not part of CI.
# `make mutate MODEL=zk-fixed`: the same for the 309 mutants of models/zk/handlers.py against
# zk-fixed's gate runs (cache reports/mutants-zk-fixed.json, section "Mutation score: zk-fixed";
# a fresh campaign takes about two and a half hours on two cores).
MODEL ?= zab
mutate: install
	$(PY) benchmarks/mutation_report.py --model $(MODEL) --jobs 2 --write
