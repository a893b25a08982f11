"""The visited set's batch lookups, this tree against a reference commit's, in one run (#38).

The in-process BFS asks the visited set (`zabmc.explore.seen.SortedRunSet`) about a chunk of
20,000 candidates at a time; `--workers N` asks about 1,000 at a time, many times a level. Both
the reference commit's `seen.py` (read with `git show`, loaded as a module of its own) and this
tree's are filled with the same random 16-byte fingerprints, in batches of 20,000 as a level would
add them; then each answers the same lookups: batches of each size, half of them present and half
absent. The answers must be equal (the script fails otherwise). The two are timed alternately, the
median of `--repeat` rounds of `--lookups` calls each, in one process, so the ratio is what to read.
Filling is timed too (every `add_batch` of the whole fill).

    python benchmarks/seen_bench.py                        # 7,000,000 fingerprints, written
    python benchmarks/seen_bench.py --size 1000000 --no-write
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.common import REPORT, TITLE, commit, cpu_model, write_section  # noqa: E402

HEADING = "## The visited set"
FILL_BATCH = 20_000  # the in-process BFS's chunk
SIZES = (1_000, 20_000)  # a worker's batch, the one-process chunk


def load_seen(ref: str | None):
    """This tree's `seen` module (`ref` None), or `ref`'s, loaded from `git show` under a name
    of its own."""
    if ref is None:
        from zabmc.explore import seen

        return seen
    src = subprocess.run(["git", "-C", str(ROOT), "show", f"{ref}:zabmc/explore/seen.py"],
                         capture_output=True, text=True, check=True).stdout
    d = Path(tempfile.mkdtemp(prefix="zabmc-seen-"))
    path = d / "seen_ref.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location("seen_ref", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def fill(mod, fps: np.ndarray) -> tuple:
    """A `SortedRunSet` of `mod` holding `fps`, added a level's chunk at a time; its fill time."""
    s = mod.SortedRunSet()
    t = time.perf_counter()
    for i in range(0, len(fps), FILL_BATCH):
        s.add_batch(fps[i:i + FILL_BATCH])
    return s, time.perf_counter() - t


def lookups(size: int, present: np.ndarray, rng, count: int) -> list:
    """`count` batches of `size`: half fingerprints in the set, half new ones."""
    out = []
    for _ in range(count):
        half = size // 2
        a = present[rng.integers(0, len(present), half)]
        b = np.frombuffer(rng.bytes(16 * (size - half)), dtype="S16")
        out.append(np.concatenate((a, b)))
    return out


def timed(s, batches) -> float:
    t = time.perf_counter()
    for c in batches:
        s.contains_batch(c)
    return (time.perf_counter() - t) / len(batches)


def measure(ref: str, size: int, repeat: int, count: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    fps = np.frombuffer(rng.bytes(16 * size), dtype="S16")
    mods = {"ref": load_seen(ref), "tree": load_seen(None)}
    sets, fills = {}, {}
    for k, mod in mods.items():
        sets[k], fills[k] = fill(mod, fps)
    out = {"fill": fills, "runs": {k: len(s.runs) for k, s in sets.items()}, "lookup": {}}
    for n in SIZES:
        batches = lookups(n, fps, rng, count)
        for c in batches[:3]:  # the same answers
            a, b = (sets[k].contains_batch(c) for k in ("ref", "tree"))
            if a.tolist() != b.tolist():
                raise SystemExit(f"the two sets disagree on a batch of {n}")
        times: dict = {"ref": [], "tree": []}
        for r in range(repeat):
            order = ("ref", "tree") if r % 2 == 0 else ("tree", "ref")
            for k in order:
                times[k].append(timed(sets[k], batches))
        out["lookup"][n] = {k: statistics.median(v) for k, v in times.items()}
    return out


def render(ref: str, size: int, repeat: int, count: int, res: dict) -> str:
    today = datetime.date.today().isoformat()
    lines = [
        HEADING, "",
        f"Produced by `python benchmarks/seen_bench.py --size {size} --against {ref}` on {today}, "
        f"commit `{commit()}`, {cpu_model()}; do not edit by hand. The visited set of the "
        f"in-process searches (`SortedRunSet`) of commit `{ref}` and of this tree, side by side "
        f"in one process: each filled with the same {size:,} random fingerprints, "
        f"{FILL_BATCH:,} at a time, then asked about batches of candidates, half in the set and "
        f"half not, the same batches for both, which both answer alike (checked). A lookup's "
        f"time is the median of {repeat} rounds of {count} batches, the two sets alternating "
        f"which goes first. The one-process search asks about {SIZES[1]:,} candidates at a time, "
        f"each worker of `--workers N` about {SIZES[0]:,}.",
        "",
        f"| operation | `{ref}` | this tree | speed-up |",
        "|---|---:|---:|---:|",
    ]
    for n, v in res["lookup"].items():
        a, b = v["ref"] * 1e3, v["tree"] * 1e3
        lines.append(f"| look up {n:,} candidates | {a:.2f} ms | {b:.2f} ms | {a / b:.2f}x |")
    a, b = res["fill"]["ref"], res["fill"]["tree"]
    lines.append(f"| fill with {size:,}, {FILL_BATCH:,} at a time | {a:.2f} s | {b:.2f} s | "
                 f"{a / b:.2f}x |")
    lines.append("")
    lines.append(f"Runs held at the end: {res['runs']['ref']} (`{ref}`), {res['runs']['tree']} "
                 "(this tree).")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=7_000_000, help="fingerprints in the set")
    ap.add_argument("--against", default="59e7c8d", metavar="REF",
                    help="the commit whose seen.py is the baseline [default: 59e7c8d, before "
                         "81edd9c stopped converting every run on each lookup]")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--lookups", type=int, default=20, help="batches a round")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args(argv)
    if args.size < 2 or args.repeat < 1 or args.lookups < 1:
        ap.error("--size must be at least 2, --repeat and --lookups at least 1")
    res = measure(args.against, args.size, args.repeat, args.lookups, args.seed)
    text = render(args.against, args.size, args.repeat, args.lookups, res)
    write_section(None if args.no_write else REPORT, HEADING, text, TITLE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
