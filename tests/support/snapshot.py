"""Behaviour snapshots of the `zabmc` command line, to prove that a reshaping of the code changes
nothing a user can observe.

    python tests/support/snapshot.py capture TREE OUTDIR   # run every command against TREE
    python tests/support/snapshot.py compare DIR_A DIR_B   # exit 1 and a diff if any differ
    python tests/support/snapshot.py list                  # the commands, one a line

`capture` runs a fixed list of commands (`commands()` below, 307: every `zabmc` command line of
README.md that needs no real ZooKeeper server, `--help` of every command, the listings, the
corpus replays, small checks of every model family, simulator runs, graphs, checkpoints, and bad
input) against the zabmc source tree TREE: each one runs `python -m zabmc ...` with PYTHONPATH=TREE
(so that `zabmc` and `models` are imported from TREE, whatever is installed; capture checks this
first and stops if not), in a fresh temporary directory as its working directory, into which the
input files it names (traces of TREE/tests/corpus, at the same relative paths, or small files
written by this module) are copied first. A command is one or more such invocations run in turn in
the same directory (e.g. `check --checkpoint ck` then `check --resume ck`). For each invocation
OUTDIR/<command>.json holds its argv, exit code, stdout, stderr and every file in the directory
after it (inputs left unchanged excepted): the text of text files up to 512 KiB, the SHA-256 and
size of bigger or binary ones (checkpoint .bin files, simulator dumps). OUTDIR/index.json lists the
commands with the tree, its commit and the run times (which `compare` ignores). Commands run two
at a time (`--jobs`), each invocation with a time limit (`--timeout`, 120 s); a whole capture took
2m44s and 3m14s on this two-core machine while other work loaded it (load average 6).

The environment of every run is pinned, so that it does not depend on the caller's: PYTHONPATH is
TREE only; PYTHONHASHSEED=0 (set iteration order; a capture with random hash seeds agreed with
the baseline too when this module was written, so nothing captured depends on it yet);
COLUMNS=80, LINES=24, TERM=dumb, NO_COLOR, TZ=UTC, LC_ALL=LANG=C.UTF-8, PYTHONIOENCODING=utf-8;
PYTHONDONTWRITEBYTECODE=1 (nothing is written into TREE); TMPDIR a fresh private directory per
command (the spill directories of `check` go there, and `check` removes stale ones it finds in
TMPDIR, which must not be another run's); ZABMC_*, SPARK_*, PYSPARK_* variables are removed.
Standard input is /dev/null, so nothing is a terminal (no live progress displays, no colours).

Normalisation. Only what differs from one run to the next of the same code is rewritten, in every
captured stream and text file; everything else is compared byte for byte:

1. paths: TREE's absolute path (as given and resolved) becomes `<TREE>`, the command's working
   directory `<TMP>` and its TMPDIR `<TMPDIR>` (they are fresh random names);
2. `progress: depth ...` lines of `zabmc check` (printed every 5 s of wall time while a search
   runs, so how many there are depends on the machine's speed and load) are removed; no other
   line is ever removed;
3. the summary tables of `check` (safety and liveness): in the rows `time`, `distinct states/s`
   and `peak RSS` the seconds, the rate and the MiB (and bytes per state) become `<SECONDS>`,
   `<RATE>`, `<MiB>` (`<BYTES>`); because rich right-aligns a table's values to its widest one,
   whose width then changes with the timings, the padding between label and value in the rows of
   such a table is collapsed to two spaces (labels and values are otherwise kept);
4. in JSON output, the values of the keys `elapsed_seconds`, `elapsed_seconds_before_resume`,
   `states_per_second` (wall time), `peak_rss_bytes`, `peak_rss_bytes_per_state` (the process's
   measured memory) and `memory_limit` (by default half of the machine's MemAvailable at the time)
   become a placeholder string;
5. `checkpoint: level ... written to DIR in 0.1s`: the seconds become `<SECONDS>`;
6. in a checkpoint's manifest.json (only there): `written_at` (the wall clock), `extra.elapsed`
   (seconds) and the top-level `xxh3`, the checksum of the manifest's body, which contains those
   two; the checksums of the checkpoint's data files are kept (those files are compared by
   SHA-256 too).

No stream of any command is dropped: none turned out to be nondeterministic beyond the above.

The baseline is a capture of the tree at commit 0007f22 ("reports: ZOOKEEPER-4643 at Remix's
grain rerun at 24ac1d0"), the last commit before issue #61's reshaping, taken from a detached
git worktree of it; a second capture of the same tree compared equal to the first (the check that
the normalisation misses nothing nondeterministic). Make it, and check a tree against it, with

    git worktree add --detach /tmp/zabmc-base 0007f22
    python tests/support/snapshot.py capture /tmp/zabmc-base /tmp/snap-base
    python tests/support/snapshot.py capture /tmp/zabmc-base /tmp/snap-base2
    python tests/support/snapshot.py compare /tmp/snap-base /tmp/snap-base2   # must say equal
    python tests/support/snapshot.py capture . /tmp/snap-new
    python tests/support/snapshot.py compare /tmp/snap-base /tmp/snap-new

(this module from the branch that has it, the tree from 0007f22: only TREE's code is run).

Commands whose bounds are smaller than README.md's say so in a comment where they are listed
(README.md's versions run for minutes). `zabmc real` is run only on inputs it refuses with exit 2
before starting any server (README's `zabmc real TRACE` lines need ZooKeeper servers); README's
`sweep` and `--engine spark` lines (a JVM, a Spark cluster, Spark's own logs) and `zabmc gate` /
`mutate --run` (minutes) are not run, only their `--help` and listings.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import dataclasses
import difflib
import glob
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

#: files bigger than this, or not UTF-8 text, are kept as their SHA-256 and size only
TEXT_LIMIT = 512 * 1024
#: the default time limit of one invocation, in seconds
TIMEOUT = 120.0
#: commands run at once (this machine has two cores, shared)
JOBS = 2
FORMAT = "zabmc-cli-snapshot"
FORMAT_VERSION = 1


# --- the commands -----------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class Command:
    """One snapshot entry: `steps` are zabmc argv lists (after `python -m zabmc`), run in turn in
    one fresh directory; `inputs` are TREE-relative files copied there at the same relative path;
    `files` are (name, text) files written there first; `dirs` directories made there first."""

    name: str
    steps: tuple
    inputs: tuple = ()
    files: tuple = ()
    dirs: tuple = ()


def _cmd(name, *steps, inputs=(), files=(), dirs=()) -> Command:
    steps = tuple(tuple(s.split()) if isinstance(s, str) else tuple(s) for s in steps)
    return Command(name, steps, tuple(inputs), tuple(files), tuple(dirs))


DB19 = "tests/corpus/db19"
ZK = "tests/corpus/zk"
LPO = f"{DB19}/bag-reordered-propose.trace.json"  # README's example trace
SCHEDULE = f"{ZK}/truncate-keeps-uncommitted.schedule.json"  # a schedule, not a trace
ZK4646 = f"{ZK}/zookeeper-4646.trace.json"
ZK4712 = f"{ZK}/zookeeper-4712.trace.json"  # model zk-3.9.2-shutdown: no real counterpart

SUBCOMMANDS = ("check", "export", "gate", "graph", "invariants", "models", "mutate", "real",
               "replay", "show", "simulate", "sweep")

# docs/partition-scripts.md's example, and its two refused scripts
LEADER_CRASH_ZPS = """\
# crash the established leader right after its first proposal, restart it later
model db19
seed 1
nodes 3
rounds 400
proposals 3
at 101 crash 2      # node 2 leads epoch 1; its Propose of zab-0 is still in flight
at 350 restart 2    # it comes back Looking, with zab-0 still in its history
"""
BAD_ORDER_ZPS = "model db19\nseed 1\nnodes 3\nrounds 400\nat 100 cut 0 1\nat 50 heal 0 1\n"
BAD_RESTART_ZPS = "nodes 3\nrounds 400\nat 10 restart 2\n"
BAD_KEYWORD_ZPS = "nodes 3\nrounds 400\nat 10 frobnicate 2\n"


def _help_and_listings() -> list:
    out = [_cmd("help", "--help"), _cmd("help-short", "-h"), _cmd("version", "--version"),
           _cmd("no-arguments", [])]
    out += [_cmd(f"help-{c}", [c, "--help"]) for c in SUBCOMMANDS]
    out += [
        _cmd("models", "models"),
        _cmd("models-json", "models --json"),
        _cmd("invariants", "invariants"),  # README
        _cmd("invariants-json", "invariants --json"),
        _cmd("gate-list", "gate --list"),
        # README: `$ zabmc gate --list --model ...`
        _cmd("gate-list-zab", "gate --list --model zab"),
        _cmd("gate-list-zab-omega", "gate --list --model zab-omega"),
        _cmd("gate-list-zk-fixed", "gate --list --model zk-fixed"),
        _cmd("mutate-zab", "mutate --model zab"),  # docs/mutation.md: the list only
        _cmd("mutate-zab-json", "mutate --model zab --json"),
        _cmd("mutate-zab-index", "mutate --model zab --index 13"),
        _cmd("mutate-db19", "mutate --model db19"),
        _cmd("mutate-zk", "mutate --model zk"),
    ]
    return out


def _readme() -> list:
    """README.md's `zabmc` lines (and the `$ zabmc` lines of its gate listings), in its order."""
    return [
        _cmd("readme-simulate-seed42", "simulate --seed 42 --nodes 3 --rounds 2000 --proposals 10 "
             "--check"),
        _cmd("readme-check-reordered-propose",
             "check --nodes 2 --network bag --max-timeouts 1 --proposals 2"),
        # README: --walks 20000 (over a minute); the same search with 2000 walks, which find
        # sane-history too, and README's `zabmc replay zabmc-db19-sane-history.trace.json`
        _cmd("readme-check-random-all-replay",
             "check --nodes 3 --network bag --max-timeouts 2 --strategy random --walks 2000 --all",
             "replay zabmc-db19-sane-history.trace.json"),
        _cmd("readme-check-crash-gap", "check --nodes 2 --max-crashes 1"),
        _cmd("readme-export-then-simulate", f"export {LPO} -o lpo.zps",
             "simulate --seed 0 --nodes 2 --rounds 30 --proposals 2 --partition-script lpo.zps "
             "--check", inputs=[LPO]),
        _cmd("readme-liveness-zab-1419", "check --model zab-1419 --liveness --proposals 0 "
             "--depth 80"),
        # README: ZOOKEEPER-4646 with --proposals 2 (a minute or more); with --proposals 1 the
        # same search finds sane-history and prefix broken in about 12 s
        _cmd("readme-zk-4646-dfs", "check --model zk --nodes 3 --proposals 1 --max-timeouts 1 "
             "--max-crashes 1 --depth 30 --strategy dfs"),
        _cmd("readme-zk-2354-load-exception", "check --model zk-3.9.2-epoch --nodes 3 "
             "--proposals 1 --max-crashes 1 --depth 20 --invariant load-exception"),
        # README's gate listings (`zabmc gate --list --model ...`); the runs that take more than
        # a few seconds here run with a smaller --depth / --walks, said in each name's comment
        _cmd("readme-gate-zab-1", "check --model zab --network fifo --nodes 3 --proposals 2 "
             "--depth 100 -q"),
        _cmd("readme-gate-zab-2", "check --model zab --network fifo --nodes 2 --proposals 2 "
             "--depth 80 --liveness --require-complete -q"),
        # README: --nodes 3 --depth 80 (minutes); depth 12
        _cmd("readme-gate-zab-3", "check --model zab --network fifo --nodes 3 --proposals 2 "
             "--depth 12 --liveness --require-complete -q"),
        # README: --depth 100 (about 25 s); depth 20
        _cmd("readme-gate-zab-4", "check --model zab --network fifo --nodes 2 --proposals 2 "
             "--max-timeouts 1 --max-drops 1 --max-heartbeats 1 --max-crashes 2 --depth 20 -q"),
        # README: --depth 100 (minutes); depth 14
        _cmd("readme-gate-zab-5", "check --model zab --network fifo --nodes 2 --proposals 2 "
             "--max-timeouts 3 --max-drops 2 --max-heartbeats 2 --depth 14 -q"),
        # README: --depth 24 (about a minute); depth 14
        _cmd("readme-gate-zab-6", "check --model zab --network fifo --nodes 3 --proposals 2 "
             "--max-crashes 1 --depth 14 -q"),
        # README: --depth 23 (minutes); depth 13
        _cmd("readme-gate-zab-7", "check --model zab --network fifo --nodes 3 --proposals 2 "
             "--max-timeouts 1 --depth 13 -q"),
        # README: --walks 20000 (about a minute); 1000 walks
        _cmd("readme-gate-zab-8", "check --model zab --network fifo --nodes 3 --proposals 2 "
             "--max-timeouts 2 --max-drops 1 --max-heartbeats 1 --max-crashes 1 --depth 60 "
             "--strategy random --seed 1 --walks 1000 -q"),
        # README: --depth 200 (minutes); depth 16
        _cmd("readme-gate-zab-9", "check --model zab --network fifo --nodes 3 --proposals 1 "
             "--max-timeouts 1 --depth 16 --reduction por --require-complete -q"),
        # README: --depth 200 (minutes); depth 16
        _cmd("readme-gate-zab-omega", "check --model zab-omega --network fifo --nodes 3 "
             "--proposals 1 --max-timeouts 1 --depth 16 --reduction por --require-complete -q"),
        _cmd("readme-gate-zk-fixed-1", "check --model zk-fixed --network fifo --nodes 2 "
             "--proposals 2 --max-timeouts 1 --max-crashes 1 --depth 100 --require-complete -q"),
        _cmd("readme-gate-zk-fixed-2", "check --model zk-fixed --network fifo --nodes 3 "
             "--proposals 2 --depth 100 --require-complete -q"),
        # README: --depth 24 (about 45 s); depth 14
        _cmd("readme-gate-zk-fixed-3", "check --model zk-fixed --network fifo --nodes 3 "
             "--proposals 2 --max-timeouts 1 --depth 14 -q"),
        # README: --depth 30 (about 45 s); depth 16
        _cmd("readme-gate-zk-fixed-4", "check --model zk-fixed --network fifo --nodes 3 "
             "--proposals 2 --max-crashes 1 --depth 16 -q"),
        # README: --depth 100 (about a minute); depth 16
        _cmd("readme-gate-zk-fixed-5", "check --model zk-fixed --network fifo --nodes 2 "
             "--proposals 2 --max-timeouts 2 --max-drops 1 --max-crashes 2 --depth 16 "
             "--require-complete -q"),
        # README: --walks 10000 (about a minute); 500 walks
        _cmd("readme-gate-zk-fixed-6", "check --model zk-fixed --network fifo --nodes 3 "
             "--proposals 2 --max-timeouts 2 --max-drops 1 --max-heartbeats 1 --max-crashes 2 "
             "--depth 60 --strategy random --seed 1 --walks 500 -q"),
        # README: --max-states 800000 (minutes); 20000
        _cmd("readme-gate-zk-fixed-7", "check --model zk-fixed --network fifo --nodes 3 "
             "--proposals 2 --max-timeouts 1 --max-crashes 1 --depth 30 --strategy dfs "
             "--max-states 20000 -q"),
        # README: --depth 26 (minutes); depth 14
        _cmd("readme-gate-zk-fixed-8", "check --model zk-fixed --network fifo --nodes 3 "
             "--proposals 2 --max-drops 1 --depth 14 -q"),
        _cmd("readme-gate-zk-fixed-9", "check --model zk-fixed --network fifo --nodes 3 "
             "--proposals 2 --max-timeouts 2 --max-drops 1 --depth 10 -q"),
        # README's shell gate: --json and --trace-out into gate-out/ (README: --depth 100)
        _cmd("readme-json-gate", "check --model zab --network fifo --nodes 3 --proposals 2 "
             "--depth 30 --json --trace-out gate-out/cex.json", dirs=["gate-out"]),
        _cmd("readme-json-gate-violation", "check --model db19 --network bag --nodes 2 "
             "--max-timeouts 1 --depth 12 --json --trace-out gate-out/cex.json",
             dirs=["gate-out"]),
        # README: --nodes 3 --network bag --depth 14 (hours here); 2 nodes, depth 10
        _cmd("readme-checkpoint-resume",
             "check --nodes 2 --network bag --max-timeouts 1 --depth 10 --checkpoint ck/",
             "check --nodes 2 --network bag --max-timeouts 1 --depth 10 --resume ck/"),
        # README: --nodes 3 --depth 40 --workers 2 (a minute on both cores); depth 12
        _cmd("readme-workers", "check --nodes 3 --depth 12 --workers 2"),
    ]


def _corpus(tree: str) -> list:
    """The corpus replays: replay, show and export (partition script, its JSON, and for the zk
    family the ZooKeeper schedule) of every trace of tests/corpus/db19 and tests/corpus/zk."""
    out = []
    for sub in (DB19, ZK):
        for path in sorted(glob.glob(os.path.join(tree, sub, "*.trace.json"))):
            rel = f"{sub}/{os.path.basename(path)}"
            stem = os.path.basename(path)[:-len(".trace.json")]
            fam = os.path.basename(sub)
            out += [
                _cmd(f"corpus-{fam}-{stem}-replay", ["replay", rel], inputs=[rel]),
                _cmd(f"corpus-{fam}-{stem}-show", ["show", rel, "-o", "out.html"], inputs=[rel]),
                _cmd(f"corpus-{fam}-{stem}-export", ["export", rel, "-o", "out.zps"],
                     inputs=[rel]),
                _cmd(f"corpus-{fam}-{stem}-export-json",
                     ["export", rel, "--format", "json", "-o", "out.json"], inputs=[rel]),
            ]
            if fam == "zk":
                out.append(_cmd(f"corpus-{fam}-{stem}-export-zookeeper",
                                ["export", rel, "--format", "zookeeper", "-o", "schedule.json"],
                                inputs=[rel]))
    return out


def _checks() -> list:
    """Small `zabmc check` runs of each model family, with the options users combine."""
    out = []
    # db19: the lab design (bag and fifo)
    db = "check --nodes 2 --network bag --max-timeouts 1 --depth 12"
    out += [
        _cmd("check-db19", db),
        _cmd("check-db19-json", f"{db} --json"),
        _cmd("check-db19-quiet", f"{db} -q"),
        _cmd("check-db19-trace-out", f"{db} --trace-out cex.json"),
        _cmd("check-db19-trace-out-devnull", f"{db} --trace-out /dev/null"),
        _cmd("check-db19-html", f"{db} --html chart.html"),
        _cmd("check-db19-all", f"{db} --all --trace-out cex.json"),
        _cmd("check-db19-all-json", f"{db} --all --json"),
        _cmd("check-db19-dfs", f"{db} --strategy dfs"),
        _cmd("check-db19-dfs-no-shorten", f"{db} --strategy dfs --no-shorten"),
        _cmd("check-db19-random", f"{db} --strategy random --seed 3 --walks 200"),
        _cmd("check-db19-random-json", f"{db} --strategy random --seed 3 --walks 200 --json"),
        _cmd("check-db19-invariant", f"{db} --invariant agreement --invariant prefix"),
        _cmd("check-db19-no-invariants", "check --nodes 2 --network bag --depth 10 "
             "--no-invariants"),
        _cmd("check-db19-fifo-ok", "check --nodes 2 --depth 14"),
        _cmd("check-db19-fifo-require-complete", "check --nodes 2 --depth 8 --require-complete"),
        _cmd("check-db19-fifo-por", "check --nodes 3 --proposals 1 --depth 14 --reduction por"),
        _cmd("check-db19-fifo-por-sleep", "check --nodes 3 --proposals 1 --depth 12 "
             "--reduction por+sleep --json"),
        _cmd("check-db19-liveness", "check --nodes 2 --proposals 1 --max-timeouts 1 --depth 30 "
             "--liveness"),
        _cmd("check-db19-checkpoint-json",
             "check --nodes 2 --network bag --max-timeouts 1 --depth 9 --checkpoint ck "
             "--checkpoint-every 0 --json",
             "check --nodes 2 --network bag --max-timeouts 1 --depth 9 --resume ck --json"),
        _cmd("check-db19-checkpoint-refused",
             "check --nodes 2 --depth 6 --checkpoint ck -q",
             "check --nodes 2 --depth 6 --checkpoint ck -q",
             "check --nodes 2 --depth 7 --resume ck -q",
             "check --nodes 2 --depth 6 --checkpoint ck --force -q"),
        _cmd("check-db19-memory-limit", f"{db} --memory-limit 1M --json"),  # levels spilled
        _cmd("check-db19-max-states-dfs", "check --nodes 3 --depth 30 --strategy dfs "
             "--max-states 3000"),
    ]
    # zab: the DSN 2011 protocol (fifo only)
    zab = "check --model zab --nodes 2 --proposals 2 --max-timeouts 1 --max-crashes 1 --depth 16"
    out += [
        _cmd("check-zab", zab),
        _cmd("check-zab-json", f"{zab} --json"),
        _cmd("check-zab-dfs", f"{zab} --strategy dfs -q"),
        _cmd("check-zab-random", f"{zab} --strategy random --seed 7 --walks 300"),
        _cmd("check-zab-por", "check --model zab --nodes 3 --proposals 1 --max-timeouts 1 "
             "--depth 14 --reduction por --json"),
        _cmd("check-zab-1419-trace-out", "check --model zab-1419 --nodes 2 --proposals 1 "
             "--max-timeouts 2 --depth 16 --trace-out z.json"),
        _cmd("check-zab-liveness-json", "check --model zab --nodes 2 --proposals 1 --depth 40 "
             "--liveness --json"),
        _cmd("check-zab-1419-liveness-json", "check --model zab-1419 --liveness --proposals 0 "
             "--nodes 3 --depth 40 --json --trace-out lasso.json"),
        _cmd("check-zab-1419-liveness-show",
             "check --model zab-1419 --liveness --proposals 0 --depth 40 -q "
             "--trace-out lasso.json",
             "replay lasso.json", "show lasso.json -o lasso.html"),
        _cmd("check-zab-checkpoint-resume",
             f"{zab} --checkpoint ck --checkpoint-every 0 -q",
             f"{zab} --resume ck"),
    ]
    # zk: ZooKeeper's own ZAB (and its fixed version)
    zk = "check --model zk --nodes 3 --proposals 2 --max-timeouts 1 --max-crashes 1 --depth 12"
    out += [
        _cmd("check-zk", zk),
        _cmd("check-zk-json", f"{zk} --json"),
        # ZOOKEEPER-4646's window (tests/corpus/zk/zookeeper-4646-window.trace.json)
        _cmd("check-zk-dfs-trace-out", "check --model zk --nodes 2 --proposals 1 --max-timeouts 1 "
             "--max-crashes 1 --depth 20 --invariant ack-before-disk --strategy dfs "
             "--trace-out zk.json",
             "replay zk.json", "show zk.json -o zk.html",
             "export zk.json --format zookeeper -o schedule.json"),
        # ZOOKEEPER-4394 (tests/corpus/zk/zookeeper-4394.trace.json)
        _cmd("check-zk-sync-exception-json", "check --model zk --nodes 3 --proposals 1 --depth 20 "
             "--invariant sync-exception --json"),
        _cmd("check-zk-random", f"{zk} --strategy random --seed 2 --walks 200 --json"),
        _cmd("check-zk-all-html", f"{zk} --all --html chart.html -q"),
        _cmd("check-zk-checkpoint-resume", f"{zk} --checkpoint ck -q", f"{zk} --resume ck -q"),
        _cmd("check-zk-3.7.0-epoch", "check --model zk-3.7.0-epoch --nodes 3 --proposals 1 "
             "--max-crashes 1 --depth 16 --invariant load-exception --json"),
        # what this command ran at the baseline as `--model zk-3.8.0`, then another name of zk
        # (0007f22 zabmc/model.py); since f0fa8a4 zk-3.8.0 is the release model, not this one
        _cmd("check-zk-2-nodes-crash", "check --model zk --nodes 2 --proposals 1 --max-crashes 1 "
             "--depth 14"),
        _cmd("check-zk-fle", "check --model zk-fle --nodes 3 --proposals 1 --max-timeouts 1 "
             "--depth 9"),
        _cmd("check-zk-fixed", "check --model zk-fixed --nodes 3 --proposals 2 --max-timeouts 1 "
             "--max-crashes 1 --depth 12"),
        _cmd("check-zk-fixed-json", "check --model zk-fixed --nodes 2 --proposals 2 "
             "--max-timeouts 1 --max-crashes 1 --depth 100 --require-complete --json"),
        _cmd("check-zk-fixed-dfs", "check --model zk-fixed --nodes 3 --proposals 1 "
             "--max-timeouts 1 --depth 20 --strategy dfs --max-states 5000"),
        _cmd("check-zk-fixed-random", "check --model zk-fixed --nodes 3 --proposals 2 "
             "--max-timeouts 1 --max-crashes 1 --depth 30 --strategy random --seed 5 "
             "--walks 200"),
        _cmd("check-zk-fixed-por", "check --model zk-fixed --nodes 3 --proposals 1 "
             "--max-timeouts 1 --depth 12 --reduction por"),
        _cmd("check-zk-fixed-liveness", "check --model zk-fixed --nodes 2 --proposals 1 "
             "--depth 30 --liveness"),
    ]
    return out


def _simulate_and_graph() -> list:
    return [
        _cmd("simulate", "simulate"),
        _cmd("simulate-json", "simulate --seed 7 --nodes 3 --rounds 300 --proposals 4 --json"),
        _cmd("simulate-trace", "simulate --seed 3 --nodes 3 --rounds 150 --proposals 2 --trace"),
        _cmd("simulate-check-ok", "simulate --seed 1 --nodes 3 --rounds 1000 --proposals 5 "
             "--check"),
        _cmd("simulate-check-invariant", "simulate --seed 42 --nodes 3 --rounds 2000 "
             "--proposals 10 --check --invariant agreement --json"),
        _cmd("simulate-partition", "simulate --seed 5 --nodes 3 --rounds 500 --proposals 3 "
             "--partition 0,1,1,0 --check --trace"),
        _cmd("simulate-dump", "simulate --seed 9 --nodes 2 --rounds 200 --proposals 2 "
             "--dump run.dump"),
        _cmd("simulate-zab", "simulate --model zab --seed 4 --nodes 3 --rounds 500 "
             "--proposals 3 --check --json"),
        _cmd("simulate-script-check", "simulate --partition-script leader-crash.zps --check",
             files=[("leader-crash.zps", LEADER_CRASH_ZPS)]),
        _cmd("simulate-script-trace", "simulate --partition-script leader-crash.zps --trace",
             files=[("leader-crash.zps", LEADER_CRASH_ZPS)]),
        _cmd("simulate-script-json", "simulate --partition-script leader-crash.zps --check "
             "--json", files=[("leader-crash.zps", LEADER_CRASH_ZPS)]),
        _cmd("simulate-script-restart-250",
             "simulate --partition-script leader-crash-250.zps --check",
             files=[("leader-crash-250.zps",
                     LEADER_CRASH_ZPS.replace("at 350 restart", "at 250 restart"))]),
        # docs/partition-scripts.md: a crash trace exported, then its script run
        _cmd("export-crash-then-simulate",
             "check --nodes 2 --max-crashes 1 --depth 30 --trace-out crash.json -q",
             "export crash-local-primary-order.json -o crash.zps",
             "simulate --partition-script crash.zps --check"),
        _cmd("export-json-stdout", ["export", LPO, "--format", "json", "-q"], inputs=[LPO]),
        _cmd("export-stdout-no-shrink", ["export", LPO, "--no-shrink"], inputs=[LPO]),
        _cmd("export-budget-exhausted", ["export", LPO, "--max-runs", "2", "--seeds", "1"],
             inputs=[LPO]),
        _cmd("replay-quiet-html", ["replay", LPO, "-q", "--html", "chart.html"], inputs=[LPO]),
        _cmd("graph-json", "graph --nodes 2 --proposals 1 -o g.json"),
        _cmd("graph-graphml", "graph --nodes 2 --proposals 1 -o g.graphml"),
        _cmd("graph-dot", "graph --model zab --nodes 2 --proposals 1 --max-timeouts 1 --depth 12 "
             "-o g.dot"),
        _cmd("graph-gexf", "graph --nodes 2 --network bag --proposals 1 --depth 6 -o g.gexf"),
        _cmd("graph-format-flag", "graph --nodes 2 --proposals 1 --invariant agreement "
             "--format json -o graph.out"),
        _cmd("graph-zk-json", "graph --model zk --nodes 2 --proposals 1 --depth 10 -o zk.json"),
    ]


def _bad_input() -> list:
    """Refused input: exit 2 with one line on stderr (`zabmc: error: ...`)."""
    db19 = f"{DB19}/fifo-crash-follower-gap.trace.json"
    return [
        _cmd("bad-unknown-command", "frobnicate"),
        _cmd("bad-unknown-model", "check --model nope"),
        _cmd("bad-unknown-model-simulate", "simulate --model nope"),
        _cmd("bad-unknown-invariant", "check --invariant nope"),
        _cmd("bad-unknown-invariant-simulate", "simulate --check --invariant nope"),
        _cmd("bad-unknown-option", "check --frobnicate"),
        _cmd("bad-not-an-integer", "check --nodes x"),
        _cmd("bad-network-choice", "check --network tcp"),
        _cmd("bad-zab-bag", "check --model zab --network bag"),  # README's example of exit 2
        _cmd("bad-simulate-zk", "simulate --model zk"),
        _cmd("bad-simulate-nodes", "simulate --nodes 10"),
        _cmd("bad-dfs-checkpoint", "check --strategy dfs --checkpoint ck"),
        _cmd("bad-resume-missing", "check --resume nock"),
        _cmd("bad-graph-extension", "graph --nodes 2 -o g.txt"),
        _cmd("bad-graph-too-big", "graph --nodes 3 -o g.json --max-states 10"),
        _cmd("bad-mutate-model", "mutate --model nope"),
        _cmd("bad-mutate-index", "mutate --model zab --index 100000"),
        _cmd("bad-replay-missing", "replay missing.trace.json"),
        _cmd("bad-replay-not-json", "replay notes.txt", files=[("notes.txt", "not json\n")]),
        _cmd("bad-replay-empty-object", "replay e.json", files=[("e.json", "{}\n")]),
        _cmd("bad-replay-schedule", ["replay", SCHEDULE], inputs=[SCHEDULE]),
        _cmd("bad-replay-truncated", "replay cut.json",
             files=[("cut.json", '{"format": "zabmc-trace", "version": 2, "model": "db19"')]),
        _cmd("bad-show-schedule", ["show", SCHEDULE, "-o", "s.html"], inputs=[SCHEDULE]),
        _cmd("bad-show-onto-input", ["show", LPO, "-o", LPO], inputs=[LPO]),
        _cmd("bad-show-missing", "show missing.trace.json -o m.html"),
        _cmd("bad-export-missing", "export missing.trace.json -o m.zps"),
        _cmd("bad-export-not-json", "export notes.txt -o m.zps",
             files=[("notes.txt", "not json\n")]),
        _cmd("bad-export-schedule", ["export", SCHEDULE, "-o", "m.zps"], inputs=[SCHEDULE]),
        _cmd("bad-export-zookeeper-db19", ["export", LPO, "--format", "zookeeper", "-o",
                                           "s.json"], inputs=[LPO]),
        _cmd("bad-script-order", "simulate --partition-script bad.zps",
             files=[("bad.zps", BAD_ORDER_ZPS)]),
        _cmd("bad-script-restart-up", "simulate --partition-script bad.zps",
             files=[("bad.zps", BAD_RESTART_ZPS)]),
        _cmd("bad-script-keyword", "simulate --partition-script bad.zps",
             files=[("bad.zps", BAD_KEYWORD_ZPS)]),
        _cmd("bad-script-missing", "simulate --partition-script none.zps"),
        # `zabmc real` on what it refuses before starting any server (no ZooKeeper is run)
        _cmd("real-db19-trace", ["real", db19], inputs=[db19]),
        _cmd("real-not-json", "real notes.txt", files=[("notes.txt", "not json\n")]),
        _cmd("real-missing-file", "real missing.trace.json"),
        _cmd("real-empty-object", "real e.json", files=[("e.json", "{}\n")]),
        _cmd("real-no-counterpart", ["real", ZK4712], inputs=[ZK4712]),
        _cmd("real-no-source", "real"),
        _cmd("real-source-and-random", ["real", db19, "--random", "1"], inputs=[db19]),
        _cmd("real-random-zero", "real --random 0"),
        _cmd("real-random-servers", "real --random 1 --servers 2"),
        _cmd("real-zookeeper-not-dir", ["real", "--zookeeper", "nodir", db19], inputs=[db19]),
    ]


def commands(tree: str) -> list:
    """The snapshot's commands, in a fixed order (the corpus part lists TREE's traces)."""
    out = (_help_and_listings() + _readme() + _corpus(tree) + _checks() + _simulate_and_graph()
           + _bad_input())
    names = [c.name for c in out]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise SystemExit(f"snapshot: duplicate command names: {sorted(dup)}")
    return out


# --- normalisation ----------------------------------------------------------------------------

_PROGRESS = re.compile(r"^progress: depth \d+, [\d,]+ states, [\d,]+ distinct, .*, "
                       r"[\d,]+ distinct/s, \d+s\n?", re.M)
#: a row of a rich table without borders: one space, a label, two or more spaces, a value, one
#: space (labels and values hold single spaces only)
_ROW = re.compile(r"^ (\S+(?: \S+)*) {2,}(\S+(?: \S+)*) $")
_SECONDS = re.compile(r"\b\d+\.\d+s\b")
_TIMED_ROWS = {
    "time": lambda v: _SECONDS.sub("<SECONDS>", v),
    "distinct states/s": lambda v: re.sub(r"^[\d,]+$", "<RATE>", v),
    "peak RSS": lambda v: re.sub(r", [\d,]+ bytes per distinct state$",
                                 ", <BYTES> bytes per distinct state",
                                 re.sub(r"^[\d,]+\.\d MiB", "<MiB> MiB", v)),
}
_JSON_TIMED = re.compile(r'("(?:elapsed_seconds|elapsed_seconds_before_resume|states_per_second'
                         r'|peak_rss_bytes|peak_rss_bytes_per_state|memory_limit)": *)'
                         r'-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?')
_CHECKPOINT_LINE = re.compile(r"^(checkpoint: level \d+, .* MB written to .* in )\d+\.\d+s$", re.M)


def _tables(text: str) -> str:
    """Rule 3: the rows of a summary table that has a timed row, values normalised and padding
    collapsed."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if not _ROW.match(lines[i]):
            i += 1
            continue
        j = i
        while j < len(lines) and _ROW.match(lines[j]):
            j += 1
        rows = [_ROW.match(x).groups() for x in lines[i:j]]
        if any(label in _TIMED_ROWS for label, _ in rows):
            lines[i:j] = [f" {label}  {_TIMED_ROWS.get(label, lambda v: v)(value)} "
                          for label, value in rows]
        i = j
    return "\n".join(lines)


class Normaliser:
    def __init__(self, tree: str, tmp: str, tmpdir: str):
        pairs = {}
        for path, tag in ((tree, "<TREE>"), (tmp, "<TMP>"), (tmpdir, "<TMPDIR>")):
            for p in (os.path.abspath(path), os.path.realpath(path)):
                pairs[p.rstrip("/")] = tag
        # longest first, so that a path inside another is replaced as itself
        self.paths = [(re.compile(re.escape(p) + r"(?![\w.-])"), tag)
                      for p, tag in sorted(pairs.items(), key=lambda x: -len(x[0]))]

    def text(self, s: str) -> str:
        for rx, tag in self.paths:
            s = rx.sub(tag, s)
        s = _PROGRESS.sub("", s)
        s = _tables(s)
        s = _JSON_TIMED.sub(r'\1"<NORMALISED>"', s)
        s = _CHECKPOINT_LINE.sub(r"\1<SECONDS>", s)
        return s

    def file(self, relpath: str, s: str) -> str:
        s = self.text(s)
        if os.path.basename(relpath) == "manifest.json" and '"zabmc-bfs-checkpoint"' in s:
            s = re.sub(r'("written_at": *)\d+(?:\.\d+)?', r'\1"<TIME>"', s)
            s = re.sub(r'("extra": *\{[^{}]*"elapsed": *)\d+(?:\.\d+)?', r'\1"<SECONDS>"', s)
            s = re.sub(r'("xxh3": *)"[0-9a-f]+"(\}\s*)$', r'\1"<XXH3>"\2', s)
        return s


# --- capture ----------------------------------------------------------------------------------

def _env(tree: str, tmpdir: str) -> dict:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ZABMC_", "SPARK_", "PYSPARK_", "PYTHON", "COLUMNS", "LINES",
                                "FORCE_COLOR", "NO_COLOR", "CLICOLOR", "TTY_", "LC_", "TERM"))}
    env.update(PYTHONPATH=tree, PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1",
               PYTHONIOENCODING="utf-8", COLUMNS="80", LINES="24", TERM="dumb", NO_COLOR="1",
               TZ="UTC", LC_ALL="C.UTF-8", LANG="C.UTF-8", TMPDIR=tmpdir)
    return env


def _decode(b: bytes) -> str:
    return b.decode("utf-8", errors="backslashreplace")


def _files(cwd: str, norm: Normaliser, inputs: dict) -> dict:
    """Every file and empty directory under `cwd` but the inputs left as they were."""
    out = {}
    for root, dirs, names in os.walk(cwd):
        dirs.sort()
        rel_root = os.path.relpath(root, cwd)
        if not dirs and not names and rel_root != ".":
            out[rel_root + "/"] = {"kind": "empty directory"}
        for n in sorted(names):
            full = os.path.join(root, n)
            rel = os.path.relpath(full, cwd)
            if os.path.islink(full):
                out[rel] = {"kind": "symlink", "target": norm.text(os.readlink(full))}
                continue
            with open(full, "rb") as f:
                data = f.read()
            if inputs.get(rel) == data:
                continue
            entry = {"kind": "file"}
            text = None
            if len(data) <= TEXT_LIMIT and b"\0" not in data:
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError:
                    pass
            if text is not None:
                text = norm.file(rel, text)
                b = text.encode("utf-8")
                entry.update(size=len(b), sha256=hashlib.sha256(b).hexdigest(), text=text)
            else:
                entry.update(size=len(data), sha256=hashlib.sha256(data).hexdigest(),
                             binary=True)
            if rel in inputs:
                entry["input changed"] = True
            out[rel] = entry
    return dict(sorted(out.items()))


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_command(cmd: Command, tree: str, timeout: float) -> dict:
    """Run `cmd` against TREE in fresh directories; the normalised record of every step."""
    tmp = tempfile.mkdtemp(prefix="zabmc-snap-")
    tmpdir = tempfile.mkdtemp(prefix="zabmc-snap-tmpdir-")
    norm = Normaliser(tree, tmp, tmpdir)
    t0 = time.monotonic()
    record = {"name": cmd.name, "steps": []}
    try:
        inputs = {}
        for d in cmd.dirs:
            os.makedirs(os.path.join(tmp, d), exist_ok=True)
        for rel in cmd.inputs:
            dest = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(os.path.join(tree, rel), dest)
            with open(dest, "rb") as f:
                inputs[rel] = f.read()
        for name, text in cmd.files:
            with open(os.path.join(tmp, name), "w", encoding="utf-8") as f:
                f.write(text)
            inputs[name] = text.encode("utf-8")
        env = _env(tree, tmpdir)
        for argv in cmd.steps:
            step = {"argv": ["zabmc", *argv]}
            proc = subprocess.Popen([sys.executable, "-m", "zabmc", *argv], cwd=tmp, env=env,
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, start_new_session=True)
            try:
                out, err = proc.communicate(timeout=timeout)
                step["exit_code"] = proc.returncode
            except subprocess.TimeoutExpired:
                _kill(proc)
                out, err = proc.communicate()
                step["exit_code"] = f"timeout after {timeout:g}s"
            finally:
                _kill(proc)  # anything the command left running in its session
            step["stdout"] = norm.text(_decode(out))
            step["stderr"] = norm.text(_decode(err))
            step["files"] = _files(tmp, norm, inputs)
            record["steps"].append(step)
            if isinstance(step["exit_code"], str):
                break  # a step that timed out: the next ones would only time out too
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(tmpdir, ignore_errors=True)
    record["seconds"] = round(time.monotonic() - t0, 2)
    return record


def _check_imports(tree: str) -> None:
    """Stop unless `zabmc` and `models` import from TREE under the environment the runs get."""
    tmp = tempfile.mkdtemp(prefix="zabmc-snap-")
    try:
        r = subprocess.run([sys.executable, "-c", "import zabmc, models; "
                            "print(zabmc.__file__); print(models.__file__)"],
                           cwd=tmp, env=_env(tree, tmp), capture_output=True, text=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    files = r.stdout.split()
    root = os.path.realpath(tree) + os.sep
    if r.returncode != 0 or len(files) != 2 or not all(
            os.path.realpath(f).startswith(root) for f in files):
        raise SystemExit(f"snapshot: zabmc and models do not import from {tree}:\n"
                         f"{r.stdout}{r.stderr}")


def _git_head(tree: str) -> dict:
    def git(*args):
        r = subprocess.run(["git", "-C", tree, *args], capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else None
    return {"commit": git("rev-parse", "HEAD"),
            "dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}


def _file_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", name) + ".json"


def capture(tree: str, outdir: str, jobs: int, timeout: float, only: str | None) -> int:
    tree = os.path.abspath(tree)
    if not os.path.isfile(os.path.join(tree, "zabmc", "__main__.py")):
        raise SystemExit(f"snapshot: {tree} is not a zabmc source tree (no zabmc/__main__.py)")
    if os.path.isdir(outdir) and os.listdir(outdir):
        raise SystemExit(f"snapshot: {outdir} is not empty; choose a new directory")
    _check_imports(tree)
    cmds = commands(tree)
    if only:
        cmds = [c for c in cmds if re.search(only, c.name)]
    os.makedirs(outdir, exist_ok=True)
    t0 = time.monotonic()
    # the commands with the most steps first, so that the two workers end together
    order = sorted(range(len(cmds)), key=lambda i: -len(cmds[i].steps))
    seconds = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(run_command, cmds[i], tree, timeout): cmds[i] for i in order}
        for n, fut in enumerate(concurrent.futures.as_completed(futures), 1):
            rec = fut.result()
            seconds[rec["name"]] = rec.pop("seconds")
            with open(os.path.join(outdir, _file_name(rec["name"])), "w", encoding="utf-8") as f:
                json.dump(rec, f, indent=1, ensure_ascii=False)
                f.write("\n")
            codes = ",".join(str(s["exit_code"]) for s in rec["steps"])
            print(f"[{n}/{len(cmds)}] {rec['name']}: exit {codes} "
                  f"({seconds[rec['name']]:.1f}s)", file=sys.stderr, flush=True)
    total = time.monotonic() - t0
    index = {
        "format": FORMAT, "version": FORMAT_VERSION, "tree": tree, "git": _git_head(tree),
        "python": sys.version.split()[0], "jobs": jobs, "timeout": timeout,
        "partial": bool(only), "capture_seconds": round(total, 1),
        "commands": [{"name": c.name, "file": _file_name(c.name), "seconds": seconds[c.name]}
                     for c in cmds],
    }
    with open(os.path.join(outdir, "index.json"), "w", encoding="utf-8") as f:
        json.dump(index, f, indent=1)
        f.write("\n")
    timeouts = [c.name for c in cmds if _has_timeout(outdir, c.name)]
    print(f"captured {len(cmds)} commands from {tree} into {outdir} in {total:.0f}s"
          + (f"; timed out: {', '.join(timeouts)}" if timeouts else ""), file=sys.stderr)
    return 0


def _has_timeout(outdir: str, name: str) -> bool:
    with open(os.path.join(outdir, _file_name(name)), encoding="utf-8") as f:
        return any(isinstance(s["exit_code"], str) for s in json.load(f)["steps"])


# --- compare ----------------------------------------------------------------------------------

#: a diff longer than this many lines is cut, and lines longer than this many characters
DIFF_LINES = 80
LINE_CHARS = 240


def _diff(a: str, b: str, label: str) -> list:
    al, bl = a.splitlines(keepends=False), b.splitlines(keepends=False)
    if len(al) <= 3 and len(bl) <= 3 and max(map(len, al + bl), default=0) > LINE_CHARS:
        # one long line each (a JSON file written without indentation): diff it pretty-printed
        try:
            al = json.dumps(json.loads(a), indent=1, sort_keys=True).splitlines()
            bl = json.dumps(json.loads(b), indent=1, sort_keys=True).splitlines()
            label += " (JSON, re-indented for the diff)"
        except ValueError:
            pass
    out = list(difflib.unified_diff(al, bl, f"A/{label}", f"B/{label}", n=2, lineterm=""))
    cut = len(out) - DIFF_LINES
    out = [x if len(x) <= LINE_CHARS else x[:LINE_CHARS] + f" ...[{len(x) - LINE_CHARS} more]"
           for x in out[:DIFF_LINES]]
    if cut > 0:
        out.append(f"... [{cut} more diff lines]")
    return out


def _compare_files(fa: dict, fb: dict, where: str) -> list:
    out = []
    for path in sorted(set(fa) | set(fb)):
        a, b = fa.get(path), fb.get(path)
        if a == b:
            continue
        if a is None or b is None:
            out.append(f"  file {path}: only in {'B' if a is None else 'A'}")
            continue
        if "text" in a and "text" in b and a["text"] != b["text"]:
            out.append(f"  file {path}: contents differ")
            out += ["    " + x for x in _diff(a["text"], b["text"], f"{where}/{path}")]
        else:
            keys = sorted(k for k in set(a) | set(b) if k != "text" and a.get(k) != b.get(k))
            out.append(f"  file {path}: " + "; ".join(f"{k} {a.get(k)!r} -> {b.get(k)!r}"
                                                    for k in keys))
    return out


def _compare_command(ra: dict, rb: dict) -> list:
    out = []
    sa, sb = ra["steps"], rb["steps"]
    if len(sa) != len(sb):
        out.append(f"  steps: {len(sa)} in A, {len(sb)} in B")
    for k, (a, b) in enumerate(zip(sa, sb)):
        where = f"{ra['name']}[{k}]"
        head = f" step {k}: {' '.join(a['argv'])}"
        lines = []
        if a["argv"] != b["argv"]:
            lines.append(f"  argv differs: {' '.join(b['argv'])!r} in B")
        if a["exit_code"] != b["exit_code"]:
            lines.append(f"  exit code: {a['exit_code']} in A, {b['exit_code']} in B")
        for stream in ("stdout", "stderr"):
            if a[stream] != b[stream]:
                lines.append(f"  {stream} differs:")
                lines += ["    " + x for x in _diff(a[stream], b[stream], f"{where}/{stream}")]
        lines += _compare_files(a["files"], b["files"], where)
        if lines:
            out += [head] + lines
    return out


def _load_index(d: str) -> dict:
    path = os.path.join(d, "index.json")
    try:
        with open(path, encoding="utf-8") as f:
            index = json.load(f)
    except (OSError, ValueError) as e:
        raise SystemExit(f"snapshot: cannot read {path}: {e}")
    if index.get("format") != FORMAT:
        raise SystemExit(f"snapshot: {path} is not a {FORMAT} index")
    return index


def _describe(label: str, d: str, index: dict) -> str:
    git = index["git"]
    return (f"{label}: {d} (tree {index['tree']}, commit {git['commit']}"
            f"{', uncommitted changes' if git['dirty'] else ''}"
            f"{', a partial capture (--only)' if index['partial'] else ''})")


def compare(dir_a: str, dir_b: str) -> int:
    ia, ib = _load_index(dir_a), _load_index(dir_b)
    print(_describe("A", dir_a, ia))
    print(_describe("B", dir_b, ib))
    ca = {c["name"]: c["file"] for c in ia["commands"]}
    cb = {c["name"]: c["file"] for c in ib["commands"]}
    names = [c["name"] for c in ia["commands"]] + [n for n in cb if n not in ca]
    differ = []
    for name in names:
        if name not in cb or name not in ca:
            differ.append((name, [f"  only in {'A' if name in ca else 'B'}"]))
            continue
        with open(os.path.join(dir_a, ca[name]), encoding="utf-8") as f:
            ra = json.load(f)
        with open(os.path.join(dir_b, cb[name]), encoding="utf-8") as f:
            rb = json.load(f)
        lines = _compare_command(ra, rb)
        if lines:
            differ.append((name, lines))
    for name, lines in differ:
        print(f"\n=== {name}")
        print("\n".join(lines))
    if differ:
        print(f"\n{len(differ)} of {len(names)} commands differ: "
              + ", ".join(n for n, _ in differ))
        return 1
    print(f"all {len(names)} commands equal")
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="snapshot.py", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="what", required=True)
    c = sub.add_parser("capture", help="run every command against TREE into OUTDIR")
    c.add_argument("tree")
    c.add_argument("outdir")
    c.add_argument("--jobs", type=int, default=JOBS, help=f"commands at once [{JOBS}]")
    c.add_argument("--timeout", type=float, default=TIMEOUT,
                   help=f"seconds per invocation [{TIMEOUT:g}]")
    c.add_argument("--only", metavar="REGEX", help="only the commands whose name matches "
                   "(a partial capture, for trying commands out)")
    d = sub.add_parser("compare", help="the commands whose results differ; exit 1 if any")
    d.add_argument("dir_a")
    d.add_argument("dir_b")
    ls = sub.add_parser("list", help="print the commands")
    ls.add_argument("--tree", default=os.path.join(os.path.dirname(__file__), "..", ".."),
                    help="the tree whose corpus is listed [this checkout]")
    a = p.parse_args(argv)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `compare A B | head` ends quietly
    if a.what == "capture":
        return capture(a.tree, a.outdir, max(1, a.jobs), a.timeout, a.only)
    if a.what == "compare":
        return compare(a.dir_a, a.dir_b)
    for cmd in commands(os.path.abspath(a.tree)):
        print(f"{cmd.name}: " + " ; ".join("zabmc " + " ".join(s) for s in cmd.steps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
