"""Hostile input to every `zabmc` command, as an adversary would try it (issue #65), and what
must hold for each: no Python traceback, no "internal error", no special file replaced, one line
on stderr for bad input, and no exit 0 for a property the model cannot break.

    python tests/support/adversary.py [--jobs 2] [--only SUBSTRING] [--list]

Each case runs `python -m zabmc ARGV` (in a process forked from a server that has already imported
zabmc: tests/support/zabmc_server.py) in a fresh directory holding its inputs: the corpus traces,
files of every kind made here (empty, binary, not UTF-8, truncated, deeply nested, a directory, a
FIFO, a device node made with mknod, a symbolic link, a dangling one, a loop of links, a sparse
file past the readers' bound), traces and schedules with one field forged, and outputs of every
kind (an existing trace, an existing text file, a device, a full device, a link, a directory, a
path under a missing directory, `-`). Devices are made with `mknod` in the case's own directory
(this needs root, as the project's machines are); the machine's own /dev is never a target.

A case passes when:
- stderr holds no `Traceback` and no `internal error`, and the exit code is not 1 unless the case
  says a disagreement is expected (`zabmc replay` of a forged digest);
- its exit code is one of the case's expected ones (2 for bad input, with exactly one line on
  stderr);
- every device, FIFO and symbolic link of its directory is still what it was.

`tests/test_adversary.py` runs every case (marked slow). The cases are built by this module, not
recorded: a reader reruns the same ones with the command above.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
from multiprocessing import forkserver
import os
import shutil
import stat
import sys
import tempfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "corpus"
DB19 = "tests/corpus/db19/bag-reordered-propose.trace.json"
ZK = "tests/corpus/zk/zookeeper-4646-acked.trace.json"
LASSO = "reports/data/liveness/zab-1419-nodes-3-proposals-0-depth-80.json"
SCHEDULE = "tests/corpus/zk/truncate-keeps-uncommitted.schedule.json"
TIMEOUT = 60


@dataclass
class Case:
    name: str
    argv: list
    codes: tuple = (2,)  # the exit codes allowed
    one_line: bool = True  # with exit 2: exactly one line on stderr
    setup: list = field(default_factory=list)  # (kind, path[, arg]) made in the case's directory


# --- inputs of every kind ---------------------------------------------------------------------------
def _input_kinds() -> list:
    """(label, setup) pairs that make the file `in` in a case's directory."""
    return [
        ("missing", []),
        ("empty", [("text", "in", "")]),
        ("directory", [("dir", "in")]),
        ("binary", [("bytes", "in", bytes(range(256)) * 8)]),
        ("not-utf8", [("bytes", "in", b'{"format": "zabmc-trace", "x": "\xff\xfe"}')]),
        ("truncated", [("text", "in", '{"format": "zabmc-trace", "version": 2, "model"')]),
        ("deep", [("text", "in", "[" * 100000 + "]" * 100000)]),
        ("list", [("text", "in", "[1, 2, 3]")]),
        ("number", [("text", "in", "1e999999")]),
        ("null", [("text", "in", "null")]),
        ("fifo", [("fifo", "in")]),
        ("zero-device", [("device", "in", (1, 5))]),  # /dev/zero's numbers: endless zeros
        ("null-device", [("device", "in", (1, 3))]),
        ("dangling-link", [("link", "in", "nowhere")]),
        ("link-loop", [("link", "in", "in2"), ("link", "in2", "in")]),
        ("huge-sparse", [("sparse", "in", 300 << 20)]),
    ]


def _forged_traces() -> list:
    """(label, path in the corpus, change) of traces with one field forged."""
    def setv(key, value):
        return lambda d: d.__setitem__(key, value)

    def viol(key, value):
        return lambda d: d["violation"].__setitem__(key, value)

    out = [
        ("version-true", DB19, setv("version", True)),
        ("version-float", DB19, setv("version", 2.0)),
        ("version-99", DB19, setv("version", 99)),
        ("model-unknown", DB19, setv("model", "paxos")),
        ("model-number", DB19, setv("model", 7)),
        ("config-list", DB19, setv("config", [])),
        ("config-unknown-key", DB19, lambda d: d["config"].__setitem__("warp", 9)),
        ("config-nodes-huge", DB19, lambda d: d["config"].__setitem__("nodes", 10 ** 30)),
        ("config-nodes-bool", DB19, lambda d: d["config"].__setitem__("nodes", True)),
        ("invariants-string", DB19, setv("invariants", "agreement")),
        ("invariants-unknown", DB19, setv("invariants", ["nope"])),
        ("events-dict", DB19, setv("events", {})),
        ("events-missing", DB19, lambda d: d.pop("events")),
        ("event-not-object", DB19, lambda d: d["events"].__setitem__(0, 5)),
        ("event-unknown-kind", DB19, lambda d: d["events"][0].__setitem__("kind", "warp")),
        ("event-dropped", DB19, lambda d: d["events"].pop(3)),
        ("states-short", DB19, lambda d: d["states"].pop()),
        ("state-edited", DB19, lambda d: d["states"][2].__setitem__("nodes", [])),
        ("step-negative", DB19, viol("step", -1)),
        ("step-huge", DB19, viol("step", 10 ** 30)),
        ("step-bool", DB19, viol("step", True)),
        ("property-unknown", DB19, viol("property", "nope")),
        ("violation-list", DB19, setv("violation", [])),
        ("sha-not-hex", DB19, setv("final_sha256", "zz")),
        ("zk-model-db19-events", ZK, setv("model", "db19")),
        ("lasso-loop-negative", LASSO, lambda d: d["liveness"].__setitem__("loop_start", -1)),
        ("lasso-loop-huge", LASSO, lambda d: d["liveness"].__setitem__("loop_start", 10 ** 9)),
        ("lasso-kind", LASSO, lambda d: d["liveness"].__setitem__("kind", "spiral")),
        ("lasso-property", LASSO, lambda d: d["liveness"].__setitem__("property", "agreement")),
        ("lasso-faults-stop", LASSO, lambda d: d["liveness"].__setitem__("faults_stop", -3)),
    ]
    return out


def _forged_schedules() -> list:
    def entry(value):
        return lambda d: d["entries"].__setitem__(1, value)

    return [
        ("entry-empty", entry({})),
        ("entry-list", entry([])),
        ("servers-zero", lambda d: d.__setitem__("servers", 0)),
        ("servers-huge", lambda d: d.__setitem__("servers", 10 ** 6)),
        ("entries-string", lambda d: d.__setitem__("entries", "x")),
        ("op-unknown", lambda d: d["entries"][0]["ops"].append({"op": "warp"})),
        ("op-server-out-of-range", lambda d: d["entries"][0]["ops"].append(
            {"op": "kill", "server": 9})),
        ("version-true", lambda d: d.__setitem__("version", True)),
    ]


def _forge(src: str, change) -> str:
    data = json.loads((ROOT / src).read_text())
    change(data)
    return json.dumps(data)


# --- the cases -------------------------------------------------------------------------------------
def _file_commands() -> list:
    """Commands that read one file, `in`, as a trace, script, schedule or checkpoint."""
    return [
        ("replay", ["replay", "in"]),
        ("replay-html", ["replay", "in", "--html", "o.html"]),
        ("show", ["show", "in", "-o", "o.html"]),
        ("export", ["export", "in", "-o", "o.zps"]),
        ("export-json", ["export", "in", "--format", "json"]),
        ("export-zookeeper", ["export", "in", "--format", "zookeeper"]),
        ("real", ["real", "in"]),
        ("simulate-script", ["simulate", "--nodes", "2", "--rounds", "30", "--partition-script",
                             "in"]),
        ("resume", ["check", "--nodes", "2", "--depth", "6", "--resume", "in"]),
        ("check-from", ["check", "--nodes", "2", "--network", "bag", "--depth", "3", "--from",
                        "in"]),
    ]


def cases() -> list:
    out = []
    for label, setup in _input_kinds():
        for cmd, argv in _file_commands():
            # an empty partition script is a valid one: no directive, the simulator's defaults
            codes = (0,) if (cmd, label) == ("simulate-script", "empty") else (2,)
            out.append(Case(f"{cmd}/{label}", argv, codes, setup=list(setup)))
    for label, src, change in _forged_traces():
        setup = [("text", "in", _forge(src, change))]
        for cmd in ("replay", "show", "export", "export-zookeeper", "check-from"):
            argv = dict(_file_commands())[cmd]
            codes = (2, 3) if cmd == "export-zookeeper" else (2,)
            out.append(Case(f"{cmd}/forged-{label}", argv, codes, setup=list(setup)))
    # a forged digest is a disagreement: replay says so (exit 1, one line), show refuses it
    for src in (DB19, ZK, LASSO):
        setup = [("text", "in", _forge(src, lambda d: d.__setitem__("final_sha256", "0" * 64)))]
        out.append(Case(f"replay/forged-digest/{Path(src).stem}", ["replay", "-q", "in"], (1,),
                        one_line=False, setup=list(setup)))
        out.append(Case(f"show/forged-digest/{Path(src).stem}", ["show", "in", "-o", "o.html"],
                        setup=list(setup)))
    for label, change in _forged_schedules():
        out.append(Case(f"real/schedule-{label}", ["real", "in"],
                        setup=[("text", "in", _forge(SCHEDULE, change))]))
    out += _output_cases() + _flag_cases() + _property_cases() + _from_cases()
    return out


def _from_cases() -> list:
    """`check --from TRACE[:K]` and `--scenario NAME` given what cannot be a start (one line,
    exit 2 each)."""
    db19 = ["check", "--nodes", "2", "--network", "bag", "--depth", "3"]
    zk = ["check", "--model", "zk", "--depth", "2"]
    digest = [("text", "in", _forge(DB19, lambda d: d.__setitem__("final_sha256", "0" * 64)))]
    step = [("text", "in", _forge(DB19, lambda d: d["violation"].__setitem__("step", 10)))]
    cases = [
        ("k-beyond", [*db19, "--from", f"{DB19}:12"], []),
        ("k-huge", [*db19, "--from", f"{DB19}:{10 ** 30}"], []),
        ("k-negative", [*db19, "--from", f"{DB19}:-1"], []),
        ("k-not-integer", [*db19, "--from", f"{DB19}:five"], []),
        ("k-empty", [*db19, "--from", f"{DB19}:"], []),
        ("missing-with-k", [*db19, "--from", "gone.json:3"], []),
        ("other-model", ["check", "--model", "zab", "--nodes", "2", "--from", DB19], []),
        ("other-nodes", ["check", "--nodes", "3", "--network", "bag", "--from", DB19], []),
        ("other-network", ["check", "--nodes", "2", "--network", "fifo", "--from", DB19], []),
        ("zk-trace-on-zk-fixed", ["check", "--model", "zk-fixed", "--from", ZK], []),
        ("forged-digest", [*db19, "--from", "in"], digest),
        ("forged-step", [*db19, "--from", "in"], step),
        ("lasso", ["check", "--model", "zab-1419", "--proposals", "0", "--from", LASSO], []),
        ("breaks-before-k", [*zk, "--from", ZK], []),
        ("schedule", [*zk, "--from", SCHEDULE], []),
        ("unknown-scenario", [*zk, "--scenario", "nope"], []),
        ("scenario-of-no-model", ["check", "--scenario", "remix-epoch1"], []),
        ("scenario-and-from", [*zk, "--scenario", "remix-epoch1", "--from", ZK], []),
        ("scenario-other-nodes", [*zk, "--nodes", "2", "--scenario", "remix-epoch1"], []),
        ("from-liveness", ["check", "--model", "zab", "--liveness", "--from", DB19], []),
        ("from-directory", [*db19, "--from", "tests"], []),
    ]
    return [Case(f"from/{label}", argv, setup=setup) for label, argv, setup in cases]


def _output_kinds() -> list:
    """(label, setup, allowed codes) for an output file `out`."""
    return [
        ("existing-text", [("text", "out", "notes\n")], (2,)),
        ("directory", [("dir", "out")], (2,)),
        ("missing-dir", [], (2,)),  # the path is d/out, under a directory that does not exist
        ("full-device", [("device", "out", (1, 7))], (2, 10)),  # /dev/full's numbers
        ("null-device", [("device", "out", (1, 3))], (0, 10)),
        ("link-to-text", [("text", "t.txt", "notes\n"), ("link", "out", "t.txt")], (2,)),
        ("dangling-link", [("link", "out", "gone/x")], (2,)),
    ]


def _output_cases() -> list:
    commands = [
        ("export", ["export", DB19, "-o", "OUT"], 0),
        ("show", ["show", DB19, "-o", "OUT"], 0),
        ("replay-html", ["replay", "-q", DB19, "--html", "OUT"], 10),
        ("graph", ["graph", "--nodes", "2", "--depth", "4", "-o", "OUT"], 0),
        ("simulate-dump", ["simulate", "--nodes", "2", "--rounds", "20", "--dump", "OUT"], 0),
        ("check-trace-out", ["check", "--nodes", "2", "--network", "bag", "--depth", "12",
                             "-q", "--trace-out", "OUT"], 10),
        ("check-html", ["check", "--nodes", "2", "--network", "bag", "--depth", "12", "-q",
                        "--html", "OUT"], 10),
    ]
    out = []
    for label, setup, codes in _output_kinds():
        for cmd, argv, verdict in commands:
            target = "d/out" if label == "missing-dir" else "out"
            argv = [target if a == "OUT" else a for a in argv]
            allowed = tuple(sorted({c if c != 10 else verdict for c in codes} | (
                {verdict} if label == "null-device" else set())))
            if cmd == "graph" and label == "null-device":
                allowed = (0, 2)  # a graph's format is its file's extension: none here
            out.append(Case(f"{cmd}/out-{label}", argv, allowed, one_line=verdict == 0,
                            setup=list(setup)))
    return out


def _flag_cases() -> list:
    bad = [
        ["check", "--nodes", "-1"], ["check", "--nodes", "10**30"], ["check", "--depth", "nan"],
        ["check", "--depth", "-5"], ["check", "--max-crashes", "-1"],
        ["check", "--proposals", "1000"], ["check", "--seed", "-1", "--strategy", "random"],
        ["check", "--walks", "0", "--strategy", "random"], ["check", "--time-limit", "inf"],
        ["check", "--time-limit", "nan"], ["check", "--memory-limit", "lots"],
        ["check", "--workers", "0"], ["check", "--workers", "1000"],
        ["check", "--network", "carrier-pigeon"], ["check", "--model", "paxos"],
        ["check", "--strategy", "astar"], ["check", "--engine", "quantum"],
        ["check", "--checkpoint-every", "-1", "--checkpoint", "ck"],
        ["simulate", "--rounds", str(10 ** 30)], ["simulate", "--seed", "-1"],
        ["simulate", "--nodes", "0"], ["simulate", "--proposals", "-2"],
        ["simulate", "--partition", "0,0"], ["simulate", "--partition", "1"],
        ["simulate", "--partition", "a,b"], ["graph", "-o", "g.xyz"],
        ["graph", "--max-states", "0", "-o", "g.json"], ["mutate", "--model", "paxos"],
        ["mutate", "--model", "zab", "--index", "-1"], ["gate", "--model", "paxos"],
        ["real", "--random", "-1"], ["real", "--release", "banana", DB19],
        ["real", "--release", "3.9.99", "--zookeeper", "/nowhere", DB19],
        ["check", "--liveness", "--model", "zab", "--invariant", "agreement"],
        ["check", "--symmetry"], ["check", "--symmetry", "--liveness", "--model", "zab"],
        ["check", "--symmetry", "--no-invariants", "--strategy", "random"],
        ["check", "--symmetry", "--no-invariants", "--engine", "spark"],
        ["check", "--symmetry", "--no-invariants", "--reduction", "por"],
        ["check", "--symmetry", "--no-invariants", "--checkpoint", "ck"],
        ["export", DB19, "--format", "yaml"], ["invariants", "--bogus"], ["nonsense"],
    ]
    return [Case("flags/" + "_".join(a)[:80], a) for a in bad]


def _property_cases() -> list:
    """Every property named on every model that cannot break it: refused, never 'OK'."""
    sys.path.insert(0, str(ROOT))
    from zabmc.core.model import get_model, model_names
    from zabmc.core.properties import ALWAYS, can_break, load_all, of_kind

    load_all()
    out = []
    for m in model_names():
        model = get_model(m)
        network = ["--network", "fifo"] if model.network_assumption == "fifo" else []
        for p in of_kind(ALWAYS):
            if p not in can_break(model):
                out.append(Case(f"property/{m}/{p}", ["check", "--model", m, *network,
                                                       "--nodes", "2", "--depth", "3",
                                                       "--invariant", p]))
    return out


# --- running ---------------------------------------------------------------------------------------
def _make(d: Path, setup: list) -> None:
    for item in setup:
        kind, path = item[0], d / item[1]
        path.parent.mkdir(parents=True, exist_ok=True)
        if kind == "text":
            path.write_text(item[2])
        elif kind == "bytes":
            path.write_bytes(item[2])
        elif kind == "dir":
            path.mkdir()
        elif kind == "fifo":
            os.mkfifo(path)
        elif kind == "device":
            os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(*item[2]))
        elif kind == "link":
            os.symlink(item[2], path)
        elif kind == "sparse":
            with open(path, "wb") as f:
                f.truncate(item[2])


def _kinds(d: Path) -> dict:
    """Every special file of the case's directory: path -> what it is."""
    out = {}
    for p in d.rglob("*"):
        st = os.lstat(p)
        if stat.S_ISLNK(st.st_mode):
            out[str(p)] = ("link", os.readlink(p))
        elif stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            out[str(p)] = (stat.S_IFMT(st.st_mode), st.st_rdev)
    return out


def run_case(case: Case) -> str | None:
    """None when the case holds, else what went wrong."""
    d = Path(tempfile.mkdtemp(prefix="zabmc-adversary-"))
    out = Path(tempfile.mkdtemp(prefix="zabmc-adversary-out-"))
    try:
        for rel in (DB19, ZK, LASSO, SCHEDULE):
            (d / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / rel, d / rel)
        _make(d, case.setup)
        before = _kinds(d)
        env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="100")
        rc, err = _zabmc(case.argv, d, env, out)
        if rc is None:
            return f"no answer in {TIMEOUT} s"
        if "Traceback" in err or "internal error" in err:
            return f"rc {rc}: {err.strip().splitlines()[-1][:200]}"
        if rc not in case.codes:
            return f"rc {rc}, expected {case.codes}: {err.strip()[:200]}"
        if rc == 2 and case.one_line and err.count("\n") != 1:
            return f"rc 2 with {err.count(chr(10))} lines on stderr: {err.strip()[:200]}"
        after = _kinds(d)
        changed = [p for p, k in before.items() if after.get(p) != k]
        if changed:
            return f"replaced: {', '.join(os.path.relpath(p, d) for p in changed)}"
        return None
    finally:
        shutil.rmtree(d, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)


_STARTING = threading.Lock()


def _server():
    """multiprocessing's fork server, started once per process with tests/support/zabmc_server.py
    imported. Python 3.11's fork server does not take the caller's sys.path (its `sys_path` is
    passed but never set), so it starts with `tests` on PYTHONPATH, for that moment only."""
    ctx = multiprocessing.get_context("forkserver")
    with _STARTING:
        if forkserver._forkserver._forkserver_pid is None:
            ctx.set_forkserver_preload(["support.zabmc_server"])
            old = os.environ.get("PYTHONPATH")
            os.environ["PYTHONPATH"] = os.pathsep.join(
                [str(ROOT / "tests"), str(ROOT)] + ([old] if old else []))
            try:
                forkserver.ensure_running()
            finally:
                if old is None:
                    del os.environ["PYTHONPATH"]
                else:
                    os.environ["PYTHONPATH"] = old
    return ctx


def stop_server() -> None:
    """Stop the fork server, if this process started one, and wait for its pid to end (its
    children, the cases' processes, have all been joined)."""
    if forkserver._forkserver._forkserver_pid is not None:
        forkserver._forkserver._stop()  # closes its "alive" pipe, then waits for the pid


def _zabmc(argv: list, cwd: Path, env: dict, out: Path) -> tuple:
    """`python -m zabmc ARGV` in `cwd` with `env`: (exit code, stderr), or (None, "") when it
    does not answer within TIMEOUT (its process is killed). The process is forked from a server
    that has imported what zabmc imports at its start (tests/support/zabmc_server.py), which
    spares each case the interpreter's start-up; it is a process of its own all the same, with
    its own directory, environment, standard files and exit code."""
    ctx = _server()
    from support import zabmc_server

    p = ctx.Process(target=zabmc_server.run,
                    args=(list(argv), str(cwd), env, str(out / "stdout"), str(out / "stderr")))
    p.start()
    p.join(TIMEOUT)
    if p.exitcode is None:
        p.kill()
        p.join()
        return None, ""
    err = out / "stderr"
    if not err.exists():  # the process ended before zabmc ran
        return p.exitcode, f"Traceback: the forked process exited {p.exitcode} before zabmc ran"
    return p.exitcode, err.read_text(errors="replace")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--only", default=None, help="run the cases whose name contains this")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args(argv)
    todo = [c for c in cases() if a.only is None or a.only in c.name]
    if a.list:
        for c in todo:
            print(c.name, " ".join(c.argv))
        return 0
    try:
        with ThreadPoolExecutor(a.jobs) as pool:
            results = list(pool.map(run_case, todo))
    finally:
        stop_server()
    bad = [(c, why) for c, why in zip(todo, results) if why is not None]
    for c, why in bad:
        print(f"FAIL {c.name}: zabmc {' '.join(c.argv)}: {why}")
    print(f"{len(todo) - len(bad)} passed, {len(bad)} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "tests"))  # `support`, which the fork server imports
    sys.exit(main())
