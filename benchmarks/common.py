"""What the benchmark scripts share: this machine's CPU and memory, the commit a report was made
at, and rewriting one `## ` section of a report while leaving the others byte-identical."""

from __future__ import annotations

import fcntl
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REPORT = ROOT / "reports" / "benchmarks.md"
TITLE = "# zabmc benchmarks"


def db19_env(depth: int, nodes: int = 3):
    """The Spark and ceiling benchmarks' workload: db-19, 3 nodes, FIFO links, 2 proposals, every
    default property, every state to `depth`."""
    from zabmc.spec import CheckSpec

    return CheckSpec(model="db19", nodes=nodes, network="fifo", proposals=2, depth=depth).env()


def cpu_model() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return cpu


def memory_gb() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                return int(line.split()[1]) // (1024 * 1024)
    except OSError:
        pass
    return None


def logical_cpus() -> int:
    return os.cpu_count() or 1


def commit() -> str:
    """The short commit, with `-dirty` when a tracked file outside reports/ has uncommitted
    changes. The reports are what the benchmarks write themselves: a report made of cells
    (`Cells`) rewrites its file after each one, which must not mark the cells after it."""
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
        changed = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain",
                                  "--untracked-files=no", "--", ".", ":(exclude)reports"],
                                 capture_output=True, text=True, timeout=10).stdout.strip()
        if not head:
            return "unknown"
        return head + ("-dirty" if changed else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


@contextmanager
def ref_tree(ref: str):
    """Commit `ref` of this repository, extracted (`git archive`) into a temporary directory for
    the length of the block: its path, for running a benchmark side by side with this tree."""
    with tempfile.TemporaryDirectory(prefix="zabmc-ref-") as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], capture_output=True,
                                 check=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        yield Path(tmp)


def alternating(names, rounds: int):
    """`names` once a round for `rounds` rounds, the order reversed in the even rounds (the
    first included), so that no tree always goes first."""
    names = list(names)
    for r in range(rounds):
        yield from (names if r % 2 else names[::-1])


def side_by_side(ref: str, rounds: int, run, show=None) -> dict:
    """`run(tree)` from this tree and from commit `ref` (`ref_tree`), `rounds` times each in
    `alternating` order: `{"this tree": [results], ref: [results]}`. `show(name, result)` is
    called after each run."""
    with ref_tree(ref) as tree:
        trees = {"this tree": ROOT, ref: tree}
        got: dict = {name: [] for name in trees}
        for name in alternating(trees, rounds):
            d = run(trees[name])
            got[name].append(d)
            if show is not None:
                show(name, d)
    return got


def update_section(text: str, heading: str, section: str, title: str) -> str:
    """Replace the `heading` section of `text` (up to the next `## ` heading) by `section`, or
    append it; start with `title` when the file is empty. Other sections stay byte-identical."""
    if not text.strip():
        return f"{title}\n\n{section}"
    pattern = re.compile(rf"^{re.escape(heading)}[ \t]*\n.*?(?=^## |\Z)", re.M | re.S)
    m = pattern.search(text)
    if m:
        tail = text[m.end():]
        return text[: m.start()] + section + ("\n" + tail if tail else "")
    if not text.endswith("\n"):
        text += "\n"
    return text + "\n" + section


def write_section(path, heading: str, section: str, title: str) -> None:
    """Print `section`, and write it into the report at `path` (`update_section`) unless `path`
    is None (a script's --no-write)."""
    from pathlib import Path

    print(section)
    if path is None:
        return
    path = Path(path)
    old = path.read_text() if path.exists() else ""
    path.write_text(update_section(old, heading, section, title))
    print(f"wrote the '{heading}' section of {path}")


def result_cell(d: dict, found: str, cpu_digits: int = 1) -> str:
    """One search's summary (`check_json`) as a report cell: `found` formatted with the first
    violation's `property` and `depth`, or "none" and how far the search went; then its distinct
    states and CPU seconds."""
    states = f"{d['distinct_states']:,} states, {d['cpu_seconds']:.{cpu_digits}f} CPU s"
    if d["violations"]:
        v = d["violations"][0]
        return f"{found.format(property=v['property'], depth=v['depth'])} ({states})"
    scope = ("exhausted" if d["stop_reason"] == "exhausted"
             else f"clean to depth {d['config']['depth']}")
    return f"none: {scope} ({states})"


def check_cell(model: str, flags: str, trace: str = os.devnull) -> dict:
    """One report cell's search: `zabmc check --model MODEL FLAGS --json -q --trace-out TRACE`
    in a child process, from the repository's root (`check_json`)."""
    args = [sys.executable, "-m", "zabmc", "check", "--model", model, *flags.split(), "--json",
            "-q", "--trace-out", trace]
    return check_json(args, cwd=ROOT)


def search_table(models, searches, run, found: str) -> list[str]:
    """A report table of `searches` ((what, flags), ...) by `models`: one row per search, one
    cell per model, each `run(model, flags, k)` (the k-th search's `check_json` summary) shown as
    `result_cell` with `found`."""
    lines = ["| search | flags | " + " | ".join(f"`{m}`" for m in models) + " |",
             "|---|---|" + "---|" * len(models)]
    for k, (what, flags) in enumerate(searches):
        row = [result_cell(run(m, flags, k), found, 1) for m in models]
        lines.append(f"| {what} | `{flags}` | " + " | ".join(row) + " |")
    return lines


#: one ensemble of real servers at a time on this machine: every run of `zabmc real` a benchmark
#: starts waits for this lock (what `flock /tmp/zabmc-real.lock COMMAND` takes)
REAL_LOCK = "/tmp/zabmc-real.lock"


@contextmanager
def real_lock(path: str | None = REAL_LOCK):
    """flock(2) on `path`, held by this process for a batch of real-server runs (none: no lock)."""
    if not path:
        yield
        return
    with open(path, "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def write_zk_section(heading: str, section: str, write: bool) -> None:
    """Print a section of reports/zookeeper.md; with `write`, put it in the report in place of its
    old text (the other sections stay as they are: zk_report.py keeps this one)."""
    print(section)
    if not write:
        return
    path = ROOT / "reports" / "zookeeper.md"
    path.write_text(update_section(path.read_text(), heading, section, "# ZooKeeper"))
    print(f"wrote {path.relative_to(ROOT)}", file=sys.stderr)


def check_json(args: list[str], cwd=None, env=None, what: str = "zabmc check",
               usage: bool = False) -> dict:
    """Run one child process (`args`, the command line of a `zabmc check ... --json`), and return
    its JSON summary with `cpu_seconds`: the child's user+system CPU time (with every process it
    forked and reaped), `wall_seconds` from start to exit and `max_rss_mib`, the peak resident
    memory of its largest process. A run that neither
    passed (0) nor found a violation (10) stops the benchmark, with the child's error; but with
    `usage`, a refusal (2) is `{"exit": 2, "error": its one line}`.

    The CPU time is this child's alone (`os.wait4` on its pid), so children run at once from
    several threads (`--jobs`) are not counted in each other's figures, as a difference of
    RUSAGE_CHILDREN would count them."""
    import json
    import tempfile
    import time

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        p = subprocess.Popen(args, cwd=cwd, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(), err.read().decode()
    if usage and p.returncode == 2:
        return {"exit": 2, "error": stderr.strip().splitlines()[-1]}
    if p.returncode not in (0, 10):
        raise SystemExit(f"{what} failed ({p.returncode}): {stderr.strip()[-500:]}")
    d = json.loads(stdout)
    d["cpu_seconds"] = usage.ru_utime + usage.ru_stime
    d["wall_seconds"] = wall
    d["max_rss_mib"] = usage.ru_maxrss / 1024  # KiB: its largest process, workers included
    d["exit"] = p.returncode
    return d


def check_cpu(tree: Path, args: list[str]) -> dict:
    """`zabmc check ARGS --json -q` run from `tree` (this one, or a commit's `ref_tree`) in a
    fresh process; its summary with `check_json`'s figures."""
    return check_json([sys.executable, "-c", "from zabmc.cli import main; main()", "check",
                       *args, "--json", "-q", "--trace-out", os.devnull], cwd=tree,
                      env=dict(os.environ, PYTHONPATH=str(tree)),
                      what=f"zabmc check in {tree}")


def counts(d: dict) -> tuple:
    """What two runs of one search must agree on (`check_json`'s summary): distinct states,
    transitions, per-depth counts, stop reason and violations (property, depth)."""
    return (d["distinct_states"], d["states"], tuple(d["per_depth"]), d["stop_reason"],
            tuple((v["property"], v["depth"]) for v in d["violations"]))


def slim(d: dict, flags: str) -> dict:
    """What a report keeps of one search's summary (`check_json`): its verdict, counts, CPU time
    and violations (property, depth, message, trace file), with its flags and the commit it ran
    at."""
    keep = ("stop_reason", "distinct_states", "states", "depth_reached", "config", "cpu_seconds")
    out = {k: d[k] for k in keep}
    out["violations"] = [{k: v[k] for k in ("property", "depth", "message", "trace") if k in v}
                         for v in d["violations"]]
    return {**out, "flags": flags, "commit": commit()}


class Cells:
    """Searches' results kept in a JSON file by key, so that a report can run some of its cells
    again (a new variant, one row) and keep the others, each with the commit it ran at; `put`
    writes the file at once, so a run that fails later loses no finished cell."""

    def __init__(self, path: Path, write: bool):
        self.path, self.write = Path(path), write
        try:
            self.results = json.loads(self.path.read_text())
        except FileNotFoundError:
            self.results = {}

    def get(self, key: str) -> dict | None:
        return self.results.get(key)

    def put(self, key: str, d: dict) -> None:
        self.results[key] = d
        if self.write:
            self.path.write_text(json.dumps(self.results, indent=1, sort_keys=True) + "\n")

    def commits(self) -> str:
        """The commits the cells ran at, for a report's heading."""
        cs = sorted({d["commit"] for d in self.results.values()})
        if not cs:
            return "no commit (no cell run yet)"
        return f"commit{'s' if len(cs) > 1 else ''} " + ", ".join(f"`{c}`" for c in cs)


def cell_options(ap, models: list[str]):
    """The options of a report made of `Cells` (release_matrix.py, abstraction_matrix.py,
    zk_wide.py): --jobs, --only (one of `models`, repeatable), --write and --table."""
    ap.add_argument("--jobs", type=int, default=2, help="Searches run at once.")
    ap.add_argument("--only", action="append", default=[], metavar="MODEL", choices=models,
                    help="Run only this model's cells (again); repeatable. The others are kept.")
    ap.add_argument("--write", action="store_true", help="Rewrite the section of the report.")
    ap.add_argument("--table", action="store_true",
                    help="Build the section from the data file and run nothing.")


def run_cells(cells: Cells, todo: list[tuple], run, jobs: int, show) -> None:
    """Run `run(*key)` for each key of `todo`, `jobs` at once, keeping each result in `cells` under
    the key's parts joined by "|" as it ends, and telling stderr `show(result)`."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(jobs) as pool:
        for key, d in zip(todo, pool.map(lambda k: run(*k), todo)):
            cells.put("|".join(key), d)
            print(f"{' '.join(key)}: {show(d)}", file=sys.stderr, flush=True)


def tree_cpu(root: int) -> float:
    """User+system CPU seconds of `root` and every live descendant (the JVM, Python workers)."""
    children: dict = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/stat") as f:
                st = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(st[1]), []).append((int(p), int(st[11]) + int(st[12])))
    with open(f"/proc/{root}/stat") as f:
        st = f.read().rsplit(")", 1)[1].split()
    total, todo = int(st[11]) + int(st[12]), [root]
    while todo:
        for pid, ticks in children.get(todo.pop(), []):
            total += ticks
            todo.append(pid)
    return total / os.sysconf("SC_CLK_TCK")


def level_split(levels_total: float, task_seconds: dict) -> tuple[float, float, float]:
    """Shares of a Spark run's summed level time: its slowest expansions, its slowest merges, and
    the rest (stage launches, shuffle hand-over, the driver between levels). A level's expansions
    are those of its parents, which ran in the previous stage."""
    e = task_seconds["expand_slowest"] / levels_total
    m = task_seconds["merge_slowest"] / levels_total
    return e, m, 1 - e - m


def exit_on_sigterm() -> None:
    """SIGTERM ends the benchmark as Ctrl-C does, through its `with` blocks, so that a cluster or
    session it started is stopped rather than left running."""
    import signal
    import sys

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
