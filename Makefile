# The two set-up commands of the README. Both install zabmc (editable) with what they need first.
PY ?= python3
PIP_FLAGS ?= -q --disable-pip-version-check --root-user-action=ignore

.PHONY: check gate test test-fast install install-test bench

install:
	$(PY) -m pip install $(PIP_FLAGS) -e .

# The picture tests draw in a real browser: Debian's chromium, installed here when it is missing
# and apt-get can (otherwise those tests are skipped, saying why).
install-test:
	$(PY) -m pip install $(PIP_FLAGS) -e '.[test,spark]'
	@command -v chromium >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1 || \
	  (apt-get install -y -q chromium >/dev/null 2>&1 || \
	   (apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium >/dev/null 2>&1)) || \
	  echo "chromium could not be installed: the browser tests will be skipped"

# The main job: exhaustive check of the db-19 protocol, 3 nodes, depth 40, in-process engine.
check: install
	zabmc check --nodes 3 --depth 40

# The CI invariant gate: the zab model (DSN 2011 ZAB) checked with every default property, within
# bounds that finish in about three minutes here (figures in reports/verification.md). The first,
# second and fourth runs exhaust their state spaces; the third explores every path of up to 23
# events with two proposals and one election timeout. The last two give nodes crashes to spend
# (a crashed node keeps only its durable fields and may restart at any step): two crashes with
# timeouts, drops and heartbeats on two nodes, exhaustively, and one crash on three nodes, every
# path of up to 24 events; they catch the crash mutations of tests/test_zab_mutations.py. Each run
# prints its summary (a few lines); a violation prints the counterexample, writes
# zabmc-zab-<property>.trace.json and exits 10, which stops make.
define GATE
zabmc check --model zab --network fifo --nodes 3 --proposals 2 --depth 100 -q
zabmc check --model zab --network fifo --nodes 2 --proposals 2 --max-timeouts 3 --max-drops 2 --max-heartbeats 2 --depth 100 -q
zabmc check --model zab --network fifo --nodes 3 --proposals 2 --max-timeouts 1 --depth 23 -q
zabmc check --model zab --network fifo --nodes 2 --proposals 2 --max-timeouts 1 --max-drops 1 --max-heartbeats 1 --max-crashes 2 --depth 100 -q
zabmc check --model zab --network fifo --nodes 3 --proposals 2 --max-crashes 1 --depth 24 -q
endef

gate: install
	$(GATE)

# The whole test suite, slow and Spark tests included, then the invariant gate (this is what
# .ci/run runs).
test: install-test
	$(PY) -m pytest -q -p no:cacheprovider
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
