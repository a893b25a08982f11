"""The CI invariant gate, as data: the one list of runs that `zabmc gate` runs, `make gate`
calls, the test suite runs one test each of (tests/test_gate_runs.py, so `make test` and CI run
them; runs 9 and 10 there to their first 28 levels, runs 8 and 17 on their first half), `zabmc mutate` scores mutants against, and docs/gate.md shows (`zabmc gate --list`). Each
run is the flags of one `zabmc check`, cheapest first within each model, so that a broken model
fails fast; a run fails the gate when it exits non-zero (10: a violation, whose
counterexample is printed and saved; 4: a `--require-complete` run that did not exhaust its space).

zab (ZAB as DSN 2011 describes it), every default property; figures in reports/verification.md.
Runs 1, 4 and 5 exhaust their state spaces; 6 and 7 explore every path of up to 24 and 23 events
(6 with one crash: a crashed node keeps only its durable fields and may restart at any step; 4
with two). Runs 2 and 3 check liveness: once faults stop, a leader is elected and every proposal
commits (a fair cycle or dead end that never gets there is a lasso counterexample); their spaces
are finite, so one that reaches the depth bound (elections that never settle, epochs growing
forever) fails too (--require-complete, exit 4). Run 8 takes 20,000 seeded random walks of up to
60 events with every kind of fault, deeper than the exhaustive runs reach; the seed makes it
reproducible and its counterexample is shortened by replay. Runs 9 and 10 exhaust three nodes with
a proposal and a timeout, on zab and on zab-omega (votes by node id, so Phase 1 must recover
history), under partial-order reduction (docs/reduction.md: an exhausted reduced space has the
full one's verdict), about a CPU minute and a half each on a two-core CI machine.

zk-fixed, the ZooKeeper model with the fixes of ZOOKEEPER-3911 and -4646 (models/zk; safety only:
no run checks a zk model's liveness, reports/liveness.md has it), in about 100 CPU seconds:
exhaustive on two nodes with faults and on three without (--require-complete), every path of up to
24 events with a timeout and of up to 30 with a crash, seeded random walks with every fault, a
depth-first search of the known bugs' bounds capped at its first 800,000 states (the same states on
every run; zk and zk-pre3911 fail it with their bugs, 29 events deep: within their first 723,978
and 538,595 states, where the complete search of zk-fixed takes some 14 CPU minutes), and every
path of up to 26 events with a lost message and of up to 10 with a lost message and two timeouts
(the mutation campaign's wider random search found mutants there, 26 and 10 events deep, that the
others miss).
"""

from __future__ import annotations

from zabmc.core.errors import UsageError

#: the gate's runs of `zab`
ZAB = (
    "--model zab --network fifo --nodes 3 --proposals 2 --depth 100",
    "--model zab --network fifo --nodes 2 --proposals 2 --depth 80 --liveness --require-complete",
    "--model zab --network fifo --nodes 3 --proposals 2 --depth 80 --liveness --require-complete",
    "--model zab --network fifo --nodes 2 --proposals 2 --max-timeouts 1 --max-drops 1 "
    "--max-heartbeats 1 --max-crashes 2 --depth 100",
    "--model zab --network fifo --nodes 2 --proposals 2 --max-timeouts 3 --max-drops 2 "
    "--max-heartbeats 2 --depth 100",
    "--model zab --network fifo --nodes 3 --proposals 2 --max-crashes 1 --depth 24",
    "--model zab --network fifo --nodes 3 --proposals 2 --max-timeouts 1 --depth 23",
    "--model zab --network fifo --nodes 3 --proposals 2 --max-timeouts 2 --max-drops 1 "
    "--max-heartbeats 1 --max-crashes 1 --depth 60 --strategy random --seed 1 --walks 20000",
    # exhaustive under partial-order reduction (docs/reduction.md): every state of three nodes with
    # a proposal and a timeout, where stale-epoch-proposal breaks sane-history 27 events deep
    "--model zab --network fifo --nodes 3 --proposals 1 --max-timeouts 1 --depth 200 "
    "--reduction por --require-complete",
)

#: the gate's run of `zab-omega` (votes ordered by node id only, so that Phase 1 must recover what
#: the elected node lacks): the same exhaustive reduced search, where skip-history-selection
#: breaks sane-history (with zab's own election no bounded search of three nodes can tell)
ZAB_OMEGA = (
    "--model zab-omega --network fifo --nodes 3 --proposals 1 --max-timeouts 1 --depth 200 "
    "--reduction por --require-complete",
)

#: the gate's runs of `zk-fixed` (issue #23 point 5)
ZK_FIXED = (
    "--model zk-fixed --network fifo --nodes 2 --proposals 2 --max-timeouts 1 --max-crashes 1 "
    "--depth 100 --require-complete",
    "--model zk-fixed --network fifo --nodes 3 --proposals 2 --depth 100 --require-complete",
    "--model zk-fixed --network fifo --nodes 3 --proposals 2 --max-timeouts 1 --depth 24",
    "--model zk-fixed --network fifo --nodes 3 --proposals 2 --max-crashes 1 --depth 30",
    "--model zk-fixed --network fifo --nodes 2 --proposals 2 --max-timeouts 2 --max-drops 1 "
    "--max-crashes 2 --depth 100 --require-complete",
    "--model zk-fixed --network fifo --nodes 3 --proposals 2 --max-timeouts 2 --max-drops 1 "
    "--max-heartbeats 1 --max-crashes 2 --depth 60 --strategy random --seed 1 --walks 10000",
    "--model zk-fixed --network fifo --nodes 3 --proposals 2 --max-timeouts 1 --max-crashes 1 "
    "--depth 30 --strategy dfs --max-states 800000",
    "--model zk-fixed --network fifo --nodes 3 --proposals 2 --max-drops 1 --depth 26",
    "--model zk-fixed --network fifo --nodes 3 --proposals 2 --max-timeouts 2 --max-drops 1 "
    "--depth 10",
)

#: every run of the gate, in the order `zabmc gate` runs them
RUNS = ZAB + ZAB_OMEGA + ZK_FIXED

#: what `zabmc mutate --run` scores a model's mutants against: the runs of the models that share
#: its handler module (zab's include the zab-omega run, so a mutant of models/zab is judged by
#: both, as `make gate` judges it)
MUTATION_GATES = {"zab": ZAB + ZAB_OMEGA, "zab-omega": ZAB_OMEGA, "zk-fixed": ZK_FIXED}


def model_of(run: str) -> str:
    """The model a run's flags name."""
    words = run.split()
    return words[words.index("--model") + 1]


def command(run: str) -> str:
    """The shell command of a run, as `make gate` has always printed it."""
    return f"zabmc check {run} -q"


def runs(model: str | None = None) -> tuple:
    """The gate's runs, or those of one model (a one-line error if it has none)."""
    if model is None:
        return RUNS
    chosen = tuple(r for r in RUNS if model_of(r) == model)
    if not chosen:
        models = sorted({model_of(r) for r in RUNS})
        raise UsageError(f"the gate has no run of model {model} (it has runs of "
                         f"{', '.join(models)})")
    return chosen
