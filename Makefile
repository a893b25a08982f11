# The two set-up commands of the README. Both install zabmc (editable) with what they need first.
PY ?= python3
PIP_FLAGS ?= -q --disable-pip-version-check --root-user-action=ignore

.PHONY: check test test-fast install install-test bench

install:
	$(PY) -m pip install $(PIP_FLAGS) -e .

install-test:
	$(PY) -m pip install $(PIP_FLAGS) -e '.[test,spark]'

# The main job: exhaustive check of the db-19 protocol, 3 nodes, depth 40, in-process engine.
check: install
	zabmc check --nodes 3 --depth 40

# The whole test suite, slow and Spark tests included (this is what .ci/run runs).
test: install-test
	$(PY) -m pytest -q -p no:cacheprovider

# The quick inner loop: skips tests marked slow or spark.
test-fast: install-test
	$(PY) -m pytest -q -m "not slow and not spark"

bench: install-test
	$(PY) benchmarks/run.py
