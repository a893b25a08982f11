"""Explorer throughput and memory, against a naive baseline measured in the same run.

Workload: the 3-node db-19 space under FIFO links, 2 proposals, explored exhaustively to depth 20
(every state within the bound), with every default property and with none.

- zabmc: `zabmc.explore.bfs` as shipped: marshal-v2 encoding, memoised deliveries, sorted-run
  fingerprint set (16 B) plus uint32/uint16 parent pointers (6 B) per visited state.
- baseline: the same environment and kernel, but a hand-written per-field struct encoding
  (models/db19/codec.encode_node / encode_msg), no kernel memo, and a Python set of int
  fingerprints, as a first implementation would have it.
- zabmc with the cyclic collector on: `bfs` without its `collector_paused` wrapper, to show what
  pausing the collector (zabmc/explore/collector.py) is worth at this size.

Times are CPU seconds of this process (`time.process_time`), which the other load on a shared
machine disturbs less than wall time; the report gives ratios. Memory per visited state is the
visited set's own bytes divided by distinct states (tracemalloc for the Python set).

    python benchmarks/explore_bench.py [--depth 20] [--rounds 3] [--write [reports/benchmarks.md]]

With `--against REF` it measures instead this tree's `zabmc check` against the same command run
from commit REF (extracted with `git archive` into a temporary directory), on issue #19's space
(`TARGET`: db-19, 2 nodes, FIFO links, 3 proposals, 2 timeouts, 2 drops, 2 heartbeats, no
properties, exhaustive): fresh processes, alternating which tree goes first, CPU seconds of each
child process (`resource.RUSAGE_CHILDREN`), the minimum of `--rounds`; it checks that both trees
report the same distinct states, transitions and per-depth counts, and writes the
"## Successor loop (issue #19)" section.

    python benchmarks/explore_bench.py --against REF [--rounds 3] [--write [reports/benchmarks.md]]
"""

from __future__ import annotations

import argparse
import datetime
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

import xxhash

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.common import (REPORT, TITLE, check_cpu, commit, side_by_side,  # noqa: E402
                               update_section)
from models.db19 import MODEL  # noqa: E402
from models.db19.codec import encode_msg, encode_node  # noqa: E402
from zabmc.explore import Env, ExploreConfig, bfs  # noqa: E402
from zabmc.invariants import DEFAULT_PROPERTIES, Checker  # noqa: E402
from zabmc.spec import CheckSpec  # noqa: E402


class NaiveEnv(Env):
    """Baseline: field-by-field struct encoding, no memo of kernel calls."""

    def _deliver(self, node, src, msg):
        return self.model.deliver(node, src, msg, self.n)

    def encode(self, s):
        parts = [encode_node(x) for x in s.nodes]
        if self.fifo:
            for k, q in enumerate(s.net):
                parts.append(bytes((k, len(q))))
                parts.extend(encode_msg(m) for m in q)
        else:
            for (src, dst, msg), cnt in s.net:
                parts.append(bytes((src, dst, cnt)) + encode_msg(msg))
        parts.append(repr(s.budgets).encode())
        if self.checker.active:
            parts.append(self.checker.encode_ghost(s.ghost))
        return b"".join(parts)

    def fingerprint(self, s):
        return xxhash.xxh3_128_digest(self.encode(s))


def naive_bfs(env: Env):
    """Level-synchronous BFS with a Python set of int fingerprints (no parent pointers)."""
    init, _ = env.initial()
    seen = {xxhash.xxh3_128_intdigest(env.encode(init))}
    frontier, depth, generated = [init], 0, 1
    while frontier and depth < env.config.depth:
        nxt = []
        for s in frontier:
            for _, s2, _ in env.successors(s):
                generated += 1
                fp = xxhash.xxh3_128_intdigest(env.encode(s2))
                if fp not in seen:
                    seen.add(fp)
                    nxt.append(s2)
        frontier = nxt
        depth += 1
    return seen, generated


def set_bytes(fps: set) -> int:
    tracemalloc.start()
    copy = {int(x) + 0 for x in fps}  # fresh objects, so tracemalloc sees them all
    size = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del copy
    return size


def _cpu(fn):
    c0 = time.process_time()
    out = fn()
    return out, time.process_time() - c0


def collector_on(search):
    """`search` with the cyclic collector left running (the frame, zabmc.explore.search, pauses
    it while a search runs: the row measures what that gains)."""
    import contextlib

    import zabmc.explore.search as frame

    def run(env, **kw):
        paused = frame.collector_paused
        frame.collector_paused = lambda **_: contextlib.nullcontext()
        try:
            return search(env, **kw)
        finally:
            frame.collector_paused = paused
    return run


def measure(depth: int, rounds: int):
    """Per properties setting: the naive baseline once, then zabmc with the collector paused (as
    shipped) and left on, `rounds` times each in alternating order; zabmc's times are medians."""
    rows = []
    for label, inv in (("every default property", DEFAULT_PROPERTIES), ("no properties", ())):
        cfg = ExploreConfig(nodes=3, network="fifo", proposals=2, depth=depth)
        (seen, _generated), base = _cpu(lambda: naive_bfs(NaiveEnv(MODEL, cfg, Checker(inv))))
        paused, on = [], []
        for r in range(rounds):
            for search, times in ((bfs, paused), (collector_on(bfs), on))[::1 if r % 2 == 0 else -1]:
                # the check's own Env (its CheckSpec's); the search called directly, with and
                # without the collector paused, which is what this row measures
                o, t = _cpu(lambda: search(CheckSpec.from_config(MODEL, cfg, inv).env(),
                                           stop_at_first=False))
                assert o.distinct == len(seen), (o.distinct, len(seen))
                times.append(t)
        ours, ours_on = statistics.median(paused), statistics.median(on)
        rows.append(dict(
            label=label, distinct=o.distinct, generated=o.generated,
            ours_rate=o.distinct / ours, base_rate=len(seen) / base, speedup=base / ours,
            on_rate=o.distinct / ours_on, paused_gain=ours_on / ours,
            ours_bytes=o.seen_bytes / o.distinct, base_bytes=set_bytes(seen) / len(seen),
        ))
    return rows


def render(rows, depth: int, rounds: int) -> str:
    out = [
        "## Explorer",
        "",
        f"Produced by `python benchmarks/explore_bench.py --depth {depth} --rounds {rounds}` on "
        f"{datetime.date.today().isoformat()}, commit `{commit()}`. Workload: db-19, 3 nodes, "
        f"FIFO links, 2 proposals, every state to depth {depth}. One core, CPU seconds of the "
        "process. The baseline (per-field struct encoding, no kernel memo, Python set of "
        "fingerprints) runs once; zabmc as shipped and zabmc with Python's cyclic collector left on "
        f"run {rounds} times each, alternating, in the same process (medians): the ratios are what "
        "to read.",
        "",
        "| properties | distinct states | transitions | zabmc distinct/s | baseline distinct/s | "
        "speed-up | zabmc, collector on, distinct/s | collector paused / on | "
        "zabmc bytes/visited state | baseline bytes/visited state |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        out.append(f"| {r['label']} | {r['distinct']:,} | {r['generated']:,} | "
                   f"{r['ours_rate']:,.0f} | {r['base_rate']:,.0f} | {r['speedup']:.2f}x | "
                   f"{r['on_rate']:,.0f} | {r['paused_gain']:.2f}x | "
                   f"{r['ours_bytes']:.1f} | {r['base_bytes']:.1f} |")
    out += [
        "",
        "zabmc's bytes per visited state are the fingerprint set (16 B, sorted numpy runs) plus the "
        "parent pointer used to rebuild traces (6 B); the frontier's full states are transient and "
        "not counted, as TLC does not count its queue. The issue's targets on one core are at "
        "least 30,000 distinct states/s and at most 64 bytes per visited state.",
        "",
    ]
    return "\n".join(out)


TARGET = ("--nodes 2 --network fifo --proposals 3 --max-timeouts 2 --max-drops 2 "
          "--max-heartbeats 2 --no-invariants --depth 200")
LOOP_HEADING = "## Successor loop (issue #19)"


def against(ref: str, rounds: int, extra: str) -> dict:
    """This tree's and commit `ref`'s `zabmc check TARGET EXTRA`, `rounds` times each, alternating
    the order; the counts must agree."""
    args = TARGET.split() + extra.split()
    runs = side_by_side(ref, rounds, lambda tree: check_cpu(tree, args),
                        lambda name, d: print(f"{name}: {d['distinct_states']:,} distinct, "
                                              f"{d['states']:,} transitions, "
                                              f"CPU {d['cpu_seconds']:.1f} s", flush=True))
    first = runs[ref][0]
    for ds in runs.values():
        for d in ds:
            assert (d["distinct_states"], d["states"], d["per_depth"]) == (
                first["distinct_states"], first["states"], first["per_depth"]), "counts differ"
    return {"ref": ref, "extra": extra, "rounds": rounds, "distinct": first["distinct_states"],
            "transitions": first["states"],
            "cpu": {name: min(d["cpu_seconds"] for d in ds) for name, ds in runs.items()},
            "rss": {name: max(d["memory"]["peak_rss_bytes"] for d in ds)
                    for name, ds in runs.items()}}


def render_against(results: list) -> str:
    r0 = results[0]
    out = [
        LOOP_HEADING, "",
        f"Produced by `python benchmarks/explore_bench.py --against {r0['ref']} --rounds "
        f"{r0['rounds']}` on {datetime.date.today().isoformat()}, commit `{commit()}`. Workload: "
        f"`zabmc check {TARGET}` ({r0['distinct']:,} distinct states, {r0['transitions']:,} "
        f"transitions; both trees report the same distinct, transition and per-depth counts). "
        "Fresh processes, alternating which tree runs first; CPU seconds of the whole process "
        f"(start-up, search, report, exit), the minimum of {r0['rounds']} runs each.", "",
        "| variant | main's HEAD CPU s | this tree CPU s | main's HEAD distinct/CPU s | "
        "this tree distinct/CPU s | speed-up | peak RSS MiB (HEAD / this tree) |",
        "|---|---:|---:|---:|---:|---:|---|"]
    for r in results:
        base, ours = r["cpu"][r["ref"]], r["cpu"]["this tree"]
        out.append(f"| `{r['extra'] or 'default'}` | {base:.1f} | {ours:.1f} | "
                   f"{r['distinct'] / base:,.0f} | {r['distinct'] / ours:,.0f} | "
                   f"{base / ours:.2f}x | {r['rss'][r['ref']] / 2**20:,.0f} / "
                   f"{r['rss']['this tree'] / 2**20:,.0f} |")
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--depth", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--against", default=None, metavar="REF",
                    help="compare `zabmc check` on issue #19's space with commit REF instead")
    ap.add_argument("--extra", action="append", default=None,
                    help="with --against: extra `zabmc check` flags of one variant (repeatable; "
                         "default: none, and --memory-limit none)")
    ap.add_argument("--write", default=None, nargs="?", const=str(REPORT),
                    help="update this markdown file's section (default: %(const)s)")
    args = ap.parse_args()
    if args.depth < 1 or args.rounds < 1:
        ap.error("--depth and --rounds must be at least 1")
    if args.against:
        extras = args.extra if args.extra is not None else ["", "--memory-limit none"]
        section = render_against([against(args.against, args.rounds, e) for e in extras])
        heading = LOOP_HEADING
    else:
        section = render(measure(args.depth, args.rounds), args.depth, args.rounds)
        heading = "## Explorer"
    print(section)
    if args.write:
        path = Path(args.write)
        text = path.read_text() if path.exists() else ""
        path.write_text(update_section(text, heading, section, TITLE))


if __name__ == "__main__":
    main()
