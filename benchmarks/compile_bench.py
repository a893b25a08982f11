"""Does a compiled hot path pay? (issue #38 point 4) Cython and mypyc against the pure-Python tree.

Each variant is a copy of this tree's `zabmc/` and `models/` in a temporary directory, with the hot
path compiled in place (the extension modules sit beside the `.py` files, and Python imports them
first):

- cython: `cythonize -i -3 -X annotation_typing=False` on the hot modules (`HOT`) exactly as they
  are: Cython's pure-Python mode, no `.pyx`, no edits. Annotation typing is off because with it
  Cython enforces the code's annotations, which are documentation here (`_add`'s `net: tuple`
  becomes a list, `_Chunk.flush() -> list` returns `()`, `_measure_frontier(frontier: list)` gets a
  `Level`), and typing the three that were mended bought nothing measurable.
- mypyc: mypyc refuses the hot modules as they are (it compiles only code that type-checks, and
  enforces the annotations at run time). This variant compiles those it can take after the small
  typing edits in `MYPYC_EDITS` (annotations of empty lists and a renamed variable, no change of
  behaviour), with a mypy configuration that keeps the other modules' type errors out of it.
  `events.py` cannot be compiled at all (its event classes derive from `namedtuple()` results,
  "Unsupported dynamic base class"), nor `bfs.py` and `search.py` without typing their loosely
  typed frontier (a list or an on-disk `Level`) and reduction options; zab's handlers crash mypyc
  itself, and `models/common/ctx.py` compiled would make `Ctx` a native class that zab's
  interpreted handlers may not subclass. Those stay interpreted (`MYPYC` lists what is compiled).

Every workload runs in fresh processes from each tree in turn, `--rounds` times, the order rotated
each round so that a drift of the shared machine favours no tree; a figure is the child process's
CPU seconds (user + system, `resource.RUSAGE_CHILDREN`: start-up and imports included, compile
time not), and a ratio is pure / compiled within one round. Every run must report the same
states, distinct states, per-depth counts, verdict and violated properties as the pure tree.

    python benchmarks/compile_bench.py [--rounds 3] [--variants cython,mypyc] [--write [FILE]]

Needs a C compiler, Python's headers, Cython and mypy (`pip install cython mypy`); neither is a
dependency of zabmc.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.common import REPORT, TITLE, commit, cpu_model, update_section  # noqa: E402

HEADING = "## Compiled hot path (issue #38)"

#: the hot path: the in-process BFS, successor generation, the invariant checker, the kernels
HOT = (
    "zabmc/explore/seen.py", "zabmc/explore/env.py", "zabmc/core/events.py",
    "zabmc/explore/bfs.py", "zabmc/explore/search.py", "zabmc/invariants/__init__.py",
    "models/common/ctx.py", "models/common/state.py", "models/db19/state.py",
    "models/db19/handlers.py", "models/zab/handlers.py", "models/zk/handlers.py",
)
#: what mypyc compiles (after `MYPYC_EDITS`): the hot modules but events.py, bfs.py, search.py,
#: zab's handlers (mypy 2.4.1's mypyc fails with an internal error, an AssertionError, on their
#: `for t in reversed(node.history)`) and models/common/ctx.py (compiled, its `Ctx` is a native
#: class, and zab's interpreted handlers subclass it: "interpreted classes cannot inherit from
#: compiled")
MYPYC = tuple(m for m in HOT if m not in ("zabmc/core/events.py", "zabmc/explore/bfs.py",
                                          "zabmc/explore/search.py", "models/zab/handlers.py",
                                          "models/common/ctx.py"))
#: (file, old, new): the typing edits mypyc needs before it takes `MYPYC`; each `old` occurs once
MYPYC_EDITS = (
    ("zabmc/explore/env.py",
     "        net = list(net)\n        for dst, msg in outs:\n            key = (src, dst, msg)\n"
     "            k = bisect_left(net, (key,))\n            if k < len(net) and net[k][0] == key:\n"
     "                net[k] = (key, net[k][1] + 1)\n            else:\n"
     "                net.insert(k, (key, 1))\n        return tuple(net)\n",
     "        bag: list = list(net)\n        for dst, msg in outs:\n            key = (src, dst, msg)\n"
     "            k = bisect_left(bag, (key,))\n            if k < len(bag) and bag[k][0] == key:\n"
     "                bag[k] = (key, bag[k][1] + 1)\n            else:\n"
     "                bag.insert(k, (key, 1))\n        return tuple(bag)\n"),
    ("zabmc/explore/env.py", "    def step(self, s: State, event: tuple)",
     "    def step(self, s: State, event: Any)"),
    ("zabmc/invariants/__init__.py", "        need = set()\n", "        need: set = set()\n"),
    ("zabmc/invariants/__init__.py", "        parts = []\n        if logs",
     "        parts: list = []\n        if logs"),
    ("zabmc/invariants/__init__.py", "        logs, bc, est, pro = ghost\n        out = {}\n",
     "        logs, bc, est, pro = ghost\n        out: dict = {}\n"),
    ("models/db19/handlers.py", "        view = [None] * c.n\n", "        view: list = [None] * c.n\n"),
    ("models/db19/handlers.py",
     "    view = list(node.vote_view)\n    view[voter] = leader_chosen\n"
     "    c.node = node._replace(vote_view=tuple(view))\n",
     "    view2: list = list(node.vote_view)\n    view2[voter] = leader_chosen\n"
     "    c.node = node._replace(vote_view=tuple(view2))\n"),
    ("models/zk/handlers.py",
     "    looking = [i for i in range(n) if up[i] and nodes[i].role == LOOKING]\n    out = []\n",
     "    looking: list | tuple = [i for i in range(n) if up[i] and nodes[i].role == LOOKING]\n"
     "    out: list = []\n"),
    ("models/zk/handlers.py", "    outs = _NO\n    if node.role == FOLLOWING",
     "    outs: tuple = _NO\n    if node.role == FOLLOWING"),
    ("models/zk/handlers.py", "    acks = node.acks\n    outs = []\n",
     "    acks = node.acks\n    outs: list = []\n"),
)
#: the modules whose type errors mypy must not count against the compiled ones (they are only
#: imported), and the notes it must not turn into a failed build
MYPY_INI = """[mypy]
disable_error_code = annotation-unchecked
[mypy-zabmc.explore.*,zabmc.spark.*,models.*.codec,models.*.model,models.zk.refine]
ignore_errors = True
[mypy-zabmc.explore.env,zabmc.explore.seen,models.*.handlers]
ignore_errors = False
"""

#: (name, `zabmc check` arguments)
WORKLOADS = (
    ("db19 main job (`make check`)", "--nodes 3 --depth 40"),
    ("db19, every state to depth 22", "--nodes 3 --depth 22 --all"),
    ("zab, a gate run to depth 21", "--model zab --network fifo --nodes 3 --proposals 2 "
     "--max-timeouts 1 --depth 21"),
    ("zk-fixed, a gate run (depth 24)", "--model zk-fixed --network fifo --nodes 3 --proposals 2 "
     "--max-timeouts 1 --depth 24"),
)


def copy_tree(dest: Path) -> Path:
    """This tree's packages (no caches, no extension modules) in `dest`."""
    ignore = shutil.ignore_patterns("__pycache__", "*.so", "*.c", "build")
    for pkg in ("zabmc", "models"):
        shutil.copytree(ROOT / pkg, dest / pkg, ignore=ignore)
    return dest


def _child(args: list, cwd: Path) -> tuple:
    """Run `args`; (completed process, CPU seconds of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(args, cwd=cwd, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return p, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def build_cython(dest: Path) -> dict:
    t0 = time.perf_counter()
    p, cpu = _child([sys.executable, "-m", "Cython.Build.Cythonize", "-i", "-3", "-j", "2",
                     "-X", "annotation_typing=False", *HOT], dest)
    if p.returncode:
        raise SystemExit(f"cythonize failed: {p.stderr.strip()[-800:]}")
    return {"modules": len(HOT), "build_cpu": cpu, "build_wall": time.perf_counter() - t0}


def mypyc_refusal(dest: Path) -> str:
    """What mypyc says about the hot modules as they are (its error count, and the kinds)."""
    p, _ = _child([sys.executable, "-m", "mypyc", "--follow-imports=silent", *HOT], dest)
    errors = [line for line in p.stdout.splitlines() + p.stderr.splitlines() if ": error:" in line]
    files = sorted({line.split(":", 1)[0] for line in errors})
    return f"{len(errors)} errors in {len(files)} of the {len(HOT)} modules" if errors else ""


def build_mypyc(dest: Path) -> dict:
    refusal = mypyc_refusal(dest)
    for path, old, new in MYPYC_EDITS:
        f = dest / path
        text = f.read_text()
        if text.count(old) != 1:
            raise SystemExit(f"{path}: a MYPYC_EDITS entry no longer matches the source")
        f.write_text(text.replace(old, new))
    (dest / "mypy.ini").write_text(MYPY_INI)
    t0 = time.perf_counter()
    p, cpu = _child([sys.executable, "-m", "mypyc", *MYPYC], dest)
    if p.returncode:
        raise SystemExit(f"mypyc failed: {(p.stdout + p.stderr).strip()[-800:]}")
    return {"modules": len(MYPYC), "build_cpu": cpu, "build_wall": time.perf_counter() - t0,
            "refusal": refusal}


BUILDERS = {"cython": build_cython, "mypyc": build_mypyc}


def compiled_modules(tree: Path) -> int:
    """How many hot modules `tree` imports from an extension module (0 for the pure tree)."""
    code = ("import importlib, sys\nn = 0\nfor m in sys.argv[1:]:\n"
            "    n += importlib.import_module(m).__file__.endswith('.so')\nprint(n)")
    mods = [m[:-3].replace("/", ".").removesuffix(".__init__") for m in HOT]
    p = subprocess.run([sys.executable, "-c", code, *mods], cwd=tree, capture_output=True,
                       text=True, env=dict(os.environ, PYTHONPATH=str(tree)), check=True)
    return int(p.stdout)


def check(tree: Path, args: str) -> dict:
    """`zabmc check ARGS --json -q` in a fresh process from `tree`: what it found, CPU seconds."""
    cmd = [sys.executable, "-c", "from zabmc.cli import main; main()", "check", *args.split(),
           "--json", "-q", "--trace-out", os.devnull]
    p, cpu = _child(cmd, tree)
    if p.returncode not in (0, 10):  # kept, and shown in the table: the other runs go on
        print(f"zabmc check {args} in {tree} failed ({p.returncode}): {p.stderr.strip()[-300:]}",
              file=sys.stderr, flush=True)
        return {"found": None, "cpu": None, "exit": p.returncode,
                "error": p.stderr.strip().splitlines()[-1][:200] if p.stderr.strip() else ""}
    d = json.loads(p.stdout)
    found = (d["states"], d["distinct_states"], tuple(d["per_depth"]), d["verdict"],
             tuple(sorted(v["property"] for v in d["violations"])))
    return {"found": found, "cpu": cpu, "exit": p.returncode}


def measure(trees: dict, rounds: int) -> list:
    """Every workload from every tree, `rounds` times, the order rotated each round."""
    names = list(trees)
    rows = []
    for label, args in WORKLOADS:
        runs: dict = {name: [] for name in names}
        for r in range(rounds):
            order = names[r % len(names):] + names[:r % len(names)]
            for name in order:
                res = check(trees[name], args)
                runs[name].append(res)
                if res["cpu"] is not None:
                    print(f"{label} | {name}: CPU {res['cpu']:.2f} s, "
                          f"{res['found'][1]:,} distinct", flush=True)
        rows.append({"label": label, "args": args, "runs": runs})
    return rows


def render(rows: list, builds: dict, rounds: int, argv: str) -> str:
    variants = [v for v in builds]
    out = [
        HEADING, "",
        f"Produced by `python benchmarks/compile_bench.py{' ' + argv if argv else ''}` on "
        f"{datetime.date.today().isoformat()}, commit `{commit()}`, {cpu_model()}, {os.cpu_count()} logical CPUs, shared with other jobs; Python "
        f"{sys.version.split()[0]}.",
        "",
        "Each workload ran in fresh processes from the pure-Python tree and from each compiled "
        f"copy, {rounds} rounds, the order rotated every round. CPU s: the median of the child "
        "process's user + system seconds (start-up and imports included, compile time not). "
        "Ratio: the median of the per-round ratios pure / compiled (each round's runs were side "
        "by side in time); spread: the smallest and largest per-round ratio. Counts equal: every "
        "compiled run reported the pure tree's states, distinct states, per-depth counts, "
        "verdict and violated properties.",
        "",
        "| workload | variant | pure CPU s | compiled CPU s | ratio | spread | counts equal |",
        "|---|---|---:|---:|---:|---|---|",
    ]
    for row in rows:
        runs = row["runs"]
        ref = runs["pure"][0]["found"]
        pure = [x["cpu"] for x in runs["pure"]]
        for v in variants:
            failed = [x for x in runs[v] if x["cpu"] is None]
            if failed:
                out.append(f"| {row['label']}: `{row['args']}`, {ref[1]:,} distinct | {v} | "
                           f"{statistics.median(pure):.2f} | failed | | | exit {failed[0]['exit']}: "
                           f"{failed[0]['error']} |")
                continue
            comp = [x["cpu"] for x in runs[v]]
            ratios = [p / c for p, c in zip(pure, comp)]
            equal = all(x["found"] == ref for name in ("pure", v) for x in runs[name])
            out.append(f"| {row['label']}: `{row['args']}`, {ref[1]:,} distinct | {v} | "
                       f"{statistics.median(pure):.2f} | {statistics.median(comp):.2f} | "
                       f"{statistics.median(ratios):.2f}x | {min(ratios):.2f}-{max(ratios):.2f}x | "
                       f"{'yes' if equal else 'NO'} |")
    out.append("")
    for v, b in builds.items():
        line = (f"{v}: {b['modules']} modules compiled in {b['build_wall']:.0f} s "
                f"({b['build_cpu']:.0f} CPU s, not in the figures above)")
        if b.get("refusal"):
            line += f"; as they are, mypyc refused the hot modules ({b['refusal']})"
        out.append(f"- {line}.")
    out += ["", *_verdict(rows, variants), "", WHAT_EACH_GAVE]
    return "\n".join(out) + "\n"


#: what the tools gave apart from the figures (see the module's docstring for the details)
WHAT_EACH_GAVE = (
    "What each tool gave. Cython compiled all twelve hot modules as they are, in its pure-Python "
    "mode with annotation typing off; with it on, Cython enforces the annotations, which here are "
    "documentation (`Env._add`'s `net: tuple` is rebound to a list, `_Chunk.flush() -> list` "
    "returns `()`, `_measure_frontier(frontier: list)` is handed an on-disk `Level`), and once "
    "those three were mended, a one-off scratch build (not made by this script) ran the main job "
    "in 4.40 CPU s against 4.46 s untyped, one run each: no gain. "
    "mypyc refused the hot modules as they are: it compiles only code that type-checks and checks "
    "the annotations at run time; `events.py` cannot be compiled at all (its event classes derive "
    "from `namedtuple()` results: \"Unsupported dynamic base class\"), `bfs.py` and `search.py` "
    "not without typing their frontier (a list or a `Level`) and options, zab's handlers crash "
    "mypyc itself (an internal AssertionError on `for t in reversed(node.history)`), and a "
    "compiled `models/common/ctx.py` makes `Ctx` a native class that zab's interpreted handlers "
    "may not subclass. On the seven modules it took after `MYPYC_EDITS` (annotations of empty "
    "lists, one renamed variable) it gives the mypyc rows above. Both stop at the same "
    "place: the hot path's own time already goes mostly to C (marshal-v2 encoding of every "
    "successor, xxh3, the numpy fingerprint runs, building tuples and dicts), which compiled code "
    "calls just the same, and the node states' `_replace` is `collections.namedtuple`'s "
    "interpreted method whoever calls it; compiling removes only the interpreter's dispatch of "
    "the glue between those calls. A compiled build would also need `zabmc mutate` to read the "
    "handlers' source beside the extension module (it opens the module's origin, which would "
    "then be the `.so`).")


def _verdict(rows: list, variants: list) -> list:
    """The decision the figures make: a compiled build only if the main job gains 1.3x."""
    main = rows[0]["runs"]
    pure = [x["cpu"] for x in main["pure"]]
    best = None
    for v in variants:
        if all(x["cpu"] is not None for x in main[v]):
            r = statistics.median(p / x["cpu"] for p, x in zip(pure, main[v]))
            if best is None or r > best[1]:
                best = (v, r)
    if best is None:
        return ["No compiled variant ran the main job: zabmc ships no compiled build."]
    v, r = best
    if r < 1.3:
        return [f"Decision: on the main job the better variant ({v}) gives {r:.2f}x, under the "
                "1.3x that would pay for a second way to build and run zabmc (a C compiler and "
                "Cython or mypy on every machine that wants it, extension modules that shadow "
                "the sources, a test of both builds): zabmc ships no compiled build, and the "
                "pure-Python code is the only one."]
    return [f"Decision: on the main job {v} gives {r:.2f}x, at least the 1.3x that pays for an "
            "optional compiled build."]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--variants", default="cython,mypyc",
                    help="comma-separated, of: " + ", ".join(BUILDERS))
    ap.add_argument("--write", nargs="?", const=str(REPORT), default=None, metavar="FILE",
                    help="replace the section in FILE (default reports/benchmarks.md)")
    args = ap.parse_args()
    variants = [v for v in args.variants.split(",") if v]
    for v in variants:
        if v not in BUILDERS:
            raise SystemExit(f"unknown variant {v!r} (known: {', '.join(BUILDERS)})")
    with tempfile.TemporaryDirectory(prefix="zabmc-compile-") as tmp:
        trees = {"pure": ROOT}
        builds = {}
        for v in variants:
            tree = copy_tree(Path(tmp) / v)
            builds[v] = BUILDERS[v](tree)
            got = compiled_modules(tree)
            if got != builds[v]["modules"]:
                raise SystemExit(f"{v}: {got} hot modules import compiled, "
                                 f"{builds[v]['modules']} were built")
            print(f"{v}: built {got} modules in {builds[v]['build_wall']:.0f} s", flush=True)
            trees[v] = tree
        rows = measure(trees, args.rounds)
    argv = " ".join(sys.argv[1:])
    section = render(rows, builds, args.rounds, argv)
    print(section)
    if args.write:
        path = Path(args.write)
        text = path.read_text() if path.exists() else ""
        path.write_text(update_section(text, HEADING, section, TITLE))


if __name__ == "__main__":
    main()
