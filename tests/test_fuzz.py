"""Hostile input, generated (#37): hypothesis mutates real files of every format a user can edit
(counterexample traces, lassos, checkpoint manifests, partition scripts) and draws flag
combinations of check, simulate, replay, show and export. Each case runs the CLI in process, in
an empty temporary directory, and must keep the command line's contract (docs/gate.md, "exit code"):

- the exit code is one the command documents;
- exit 2 is exactly one line on stderr, `zabmc: error: ...`;
- never a traceback, never "internal error" (exit 1 is only `zabmc replay`'s "NOT confirmed");
- no file appears but the inputs and the outputs the command was told to write (or writes by
  default: a counterexample's trace file).

The normal run tries a few examples of each; the `slow` variants many more.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import pathlib
import re
import stat
import tempfile

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from zabmc.cli import main

ROOT = pathlib.Path(__file__).resolve().parent.parent
TRACES = sorted((ROOT / "tests" / "corpus").glob("*/*.trace.json"))
LASSOS = sorted((ROOT / "reports" / "data" / "liveness").glob("*.json"))
SCRIPT = """# a partition script with every directive
model db19
seed 42
nodes 3
rounds 400
proposals 3
at 0 isolate 2
at 0 cut 0 1
at 5 heal 0 1
at 9 crash 1
at 30 restart 1
at 100 rejoin 2
at 100 cut-all
at 150 heal-all
"""
SCRIPT_JSON = json.dumps({
    "format": "zabmc-partition-events", "version": 2,
    "simulator": {"seed": 7, "nodes": 3, "rounds": 300, "proposals": 2},
    "events": [{"tick": 3, "action": "cut", "src": 0, "dst": 1},
               {"tick": 9, "action": "heal", "src": 0, "dst": 1},
               {"tick": 12, "action": "crash", "node": 2},
               {"tick": 40, "action": "restart", "node": 2}]})

#: exit codes each command documents (docs/gate.md "exit code", each command's --help)
CODES = {
    "check": {0, 2, 4, 10, 130, 143},
    "simulate": {0, 2, 10},
    "replay": {0, 1, 2, 10},
    "show": {0, 2},
    "export": {0, 2, 3},
}

FAST = settings(max_examples=12, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))
# The slow variants are derandomized too, so that CI sees the same 300 examples every run (a fuzz
# test that fails one run in five is a flaky gate); ZABMC_FUZZ_RANDOM=1 draws new ones, to hunt.
LONG = settings(max_examples=300, deadline=None, database=None,
                derandomize=not os.environ.get("ZABMC_FUZZ_RANDOM"),
                suppress_health_check=list(HealthCheck))
# Flag combinations run whole searches and simulations (up to their one-second time limit each):
# 100 of them, where a mutated file takes milliseconds. ZABMC_FUZZ_EXAMPLES raises it, to hunt.
FLAGS_LONG = settings(LONG, max_examples=int(os.environ.get("ZABMC_FUZZ_EXAMPLES", 100)))


# --- running one case ------------------------------------------------------------------------------
def run(args: list, inputs: dict, outputs: set, after=None) -> None:
    """Write `inputs` (name -> bytes, or a function that makes the file at a path) into an empty
    directory, run `zabmc ARGS` there in process, and check the contract. `outputs`: names the
    command may create (glob patterns). `after(code, what)`, still in the directory, checks
    more."""
    with tempfile.TemporaryDirectory() as d, contextlib.chdir(d):
        for name, data in inputs.items():
            p = pathlib.Path(name)
            p.parent.mkdir(parents=True, exist_ok=True)
            if callable(data):  # a file of another kind: a FIFO, a device, a link (`KINDS`)
                data(p)
            else:
                p.write_bytes(data)
        before = _files(d)
        env = {"ZABMC_DEBUG": None, "COLUMNS": "100"}
        with CliRunner().isolation(env=env) as (out, err, _):
            try:
                main([str(a) for a in args])
                code = 0
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else 0
            stdout = out.getvalue().decode("utf-8", "replace")
            stderr = err.getvalue().decode("utf-8", "replace")
        new = _files(d) - before
        cmd = args[0]
        what = f"zabmc {' '.join(map(str, args))} -> {code}\nstdout: {stdout[-800:]}\n" \
               f"stderr: {stderr[-800:]}"
        assert "Traceback" not in stdout + stderr, what
        assert "internal error" not in stderr, what
        assert code in CODES[cmd], what
        if code == 1:  # replay only: the file and the kernel disagree
            assert "NOT confirmed" in stdout, what
        if code == 2:
            assert stderr.startswith("zabmc: error: ") and stderr.count("\n") == 1, what
            assert stderr.endswith("\n"), what
        stray = {f for f in new if not any(pathlib.PurePath(f).match(g) for g in outputs)}
        assert not stray, f"{what}\nfiles written outside the named outputs: {sorted(stray)}"
        if after is not None:
            after(code, what)


def _files(d: str) -> set:
    return {os.path.relpath(os.path.join(r, f), d) for r, _, fs in os.walk(d) for f in fs}


# --- mutations of a JSON document ------------------------------------------------------------------
HOSTILE = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 300), st.just(10 ** 400), st.just(-(2 ** 70)),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8),
    st.just("\u202e<script>"), st.just("\u0000huge"), st.lists(st.integers(-1, 3), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
    st.just([[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]),
)


def _paths(doc, prefix=()):
    """Every path to a value in `doc` (keys and indices), the root's children first."""
    out = []
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) \
        else ()
    for k, v in items:
        out.append(prefix + (k,))
        if isinstance(v, (dict, list)) and len(prefix) < 4:
            out.extend(_paths(v, prefix + (k,))[:40])
    return out


@st.composite
def mutated_json(draw, doc):
    """`doc` with a few values replaced, keys deleted or a deep nesting put in."""
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(doc)
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = doc
        for k in path[:-1]:
            parent = parent[k]
        how = draw(st.sampled_from(["replace", "delete", "nest"]))
        if how == "delete":
            del parent[path[-1]]
        elif how == "nest":  # a placeholder, made brackets in the text (`_dumps`)
            parent[path[-1]] = f"{DEEP}{draw(st.sampled_from([50, 5000, 100_000]))}"
        else:  # a copy: a later step may write into it, and `st.just` values are shared
            parent[path[-1]] = copy.deepcopy(draw(HOSTILE))
    return doc


DEEP = "\u0000deep:"


class Blob(bytes):
    """A file's bytes that hypothesis reports by their start, not whole."""

    def __repr__(self) -> str:
        return f"<{len(self)} bytes: {bytes(self[:160])!r}...>"


def _dumps(doc) -> bytes:
    """The JSON text of `doc`, each deep-nesting placeholder written as that many brackets, each
    huge-integer one as a 5,000-digit integer (more than Python's int() takes from a string)."""
    text = json.dumps(doc, allow_nan=True).replace('"\\u0000huge"', "9" * 5000)
    return Blob(re.sub(r'"\\u0000deep:(\d+)"', lambda m: "[" * int(m[1]) + "]" * int(m[1]),
                       text).encode())


@st.composite
def mutated_bytes(draw, data: bytes):
    """`data` truncated, with a byte order mark, a byte that is not UTF-8, or a flipped byte."""
    how = draw(st.sampled_from(["truncate", "bom", "bad-utf8", "flip", "empty"]))
    at = draw(st.integers(0, max(len(data) - 1, 0)))
    if how == "truncate":
        return Blob(data[:at])
    if how == "bom":
        return Blob(b"\xef\xbb\xbf" + data)
    if how == "bad-utf8":
        return Blob(data[:at] + b"\xff\xfe" + data[at:])
    if how == "flip":
        return Blob(data[:at] + bytes([data[at] ^ draw(st.integers(1, 255))]) + data[at + 1:])
    return Blob(b"")


def mutated_file(doc):
    return st.one_of(mutated_json(doc).map(_dumps), mutated_bytes(_dumps(doc)))


def _doc(path: pathlib.Path):
    return json.loads(path.read_text())


# --- traces and lassos: replay, show, export ---------------------------------------------------------
READERS = [
    (["replay", "-q", "in.json"], set()),
    (["replay", "-q", "in.json", "--html", "r.html"], {"r.html"}),
    (["show", "in.json", "-o", "p.html"], {"p.html"}),
    (["export", "in.json", "-o", "s.zps", "-q", "--max-runs", "3", "--seeds", "2",
      "--max-rounds", "100"], {"s.zps"}),
    (["export", "in.json", "--format", "json", "-q", "--max-runs", "3", "--seeds", "2",
      "--max-rounds", "100"], set()),
    (["export", "in.json", "--format", "zookeeper", "-o", "z.json"], {"z.json"}),
]


def _trace_case(files, settings_):
    @settings_
    @given(data=st.data())
    def case(data):
        src = data.draw(st.sampled_from(files))
        body = data.draw(mutated_file(_doc(src)))
        args, outs = data.draw(st.sampled_from(READERS))
        run(args, {"in.json": body}, outs)

    return case


def test_mutated_traces():
    _trace_case(TRACES, FAST)()


def test_mutated_lassos():
    _trace_case(LASSOS, FAST)()


@pytest.mark.slow
def test_mutated_traces_and_lassos_long():
    _trace_case(TRACES + LASSOS, LONG)()


# --- checkpoint manifests: check --resume ------------------------------------------------------------
CK_ARGS = ["--nodes", "2", "--depth", "5", "-q"]


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory):
    """A real checkpoint: its files (name -> bytes)."""
    d = tmp_path_factory.mktemp("ck")
    with contextlib.chdir(d), pytest.raises(SystemExit):
        main(["check", *CK_ARGS, "--checkpoint", "ck"])
    return {f"ck/{p.name}": p.read_bytes() for p in (d / "ck").iterdir()}


def _checkpoint_case(files, settings_):
    from zabmc.explore.checkpoint import _digest

    manifest = json.loads(files["ck/manifest.json"])

    @settings_
    @given(data=st.data())
    def case(data):
        how = data.draw(st.sampled_from(["forged", "unsigned", "bytes"]))
        if how == "bytes":
            body = data.draw(mutated_bytes(files["ck/manifest.json"]))
        else:
            doc = data.draw(mutated_json(manifest))
            if how == "forged" and isinstance(doc.get("body"), dict):
                with contextlib.suppress(ValueError, TypeError, RecursionError):
                    # checksums recomputed: only the reader's checks stand in the way (a body
                    # that cannot be hashed cannot be written by zabmc either)
                    doc["xxh3"] = _digest(doc["body"])
            body = _dumps(doc)
        run(["check", *CK_ARGS, "--resume", "ck"], dict(files, **{"ck/manifest.json": body}),
            {"ck/*", "zabmc-db19-*.trace.json"})

    return case


def test_mutated_checkpoint_manifests(checkpoint):
    _checkpoint_case(checkpoint, FAST)()


@pytest.mark.slow
def test_mutated_checkpoint_manifests_long(checkpoint):
    _checkpoint_case(checkpoint, LONG)()


# --- partition scripts: simulate --partition-script ---------------------------------------------------
TOKENS = st.one_of(st.sampled_from(["at", "cut", "heal", "isolate", "rejoin", "crash", "restart",
                                    "cut-all", "heal-all", "seed", "nodes", "rounds", "model",
                                    "proposals", "#", "zk", "zab", "db19", "-1", "0", "1", "2",
                                    "9", "10", str(2 ** 64), "9" * 400, "1e3", "\ufeff", "\t"]),
                   st.text(max_size=4))


@st.composite
def mutated_script(draw):
    lines = SCRIPT.splitlines()
    for _ in range(draw(st.integers(1, 3))):
        k = draw(st.integers(0, len(lines) - 1))
        how = draw(st.sampled_from(["tokens", "delete", "swap", "duplicate"]))
        if how == "tokens":
            lines[k] = " ".join(draw(st.lists(TOKENS, min_size=1, max_size=5)))
        elif how == "delete":
            del lines[k]
        elif how == "swap" and k + 1 < len(lines):
            lines[k], lines[k + 1] = lines[k + 1], lines[k]
        else:
            lines.insert(k, lines[k])
        if not lines:
            break
    return Blob(("\n".join(lines) + "\n").encode())


SCRIPTS = st.one_of(mutated_script(), mutated_bytes(SCRIPT.encode()),
                    mutated_file(json.loads(SCRIPT_JSON)))


def _script_case(settings_):
    @settings_
    @given(body=SCRIPTS, check=st.booleans())
    def case(body, check):
        run(["simulate", "--partition-script", "s.zps", *(["--check"] if check else [])],
            {"s.zps": body}, set())

    return case


def test_mutated_partition_scripts():
    _script_case(FAST)()


@pytest.mark.slow
def test_mutated_partition_scripts_long():
    _script_case(LONG)()


# --- flag combinations ---------------------------------------------------------------------------------
INT = st.one_of(st.integers(-2, 4), st.sampled_from(["x", "", "1.5", "nan", str(2 ** 64),
                                                    "9" * 30, "-0"]))
NUM = st.one_of(st.integers(-1, 3).map(str), st.sampled_from(["nan", "inf", "-inf", "0.01", "x",
                                                              "1e400", ""]))
MODEL = st.sampled_from(["db19", "zab", "zab-omega", "zab-1419", "zk", "zk-fixed", "zk-fle",
                         "nope", ""])


def _flags(table: dict):
    """A few of `table`'s flags (flag -> strategy of its value, None for a switch), each drawn
    at most once, in a drawn order."""
    return st.lists(st.sampled_from(sorted(table)), max_size=5, unique=True).flatmap(
        lambda names: st.tuples(*[st.just([n]) if table[n] is None else
                                  table[n].map(lambda v, n=n: [n, str(v)]) for n in names])
    ).map(lambda groups: [x for g in groups for x in g])


CHECK_FLAGS = {
    "--model": MODEL, "--nodes": INT, "--depth": st.integers(-1, 6), "--proposals": INT,
    "--network": st.sampled_from(["bag", "fifo", "tcp"]), "--max-drops": INT,
    "--max-timeouts": INT, "--max-crashes": INT, "--max-heartbeats": INT,
    "--strategy": st.sampled_from(["bfs", "dfs", "random", "x"]), "--seed": INT,
    "--walks": st.integers(-1, 30), "--all": None, "--no-shorten": None,
    "--invariant": st.sampled_from(["agreement", "prefix", "nope", "eventually-leader"]),
    "--no-invariants": None, "--json": None, "--liveness": None, "--require-complete": None,
    "--reduction": st.sampled_from(["none", "por", "x"]), "--max-states": INT,
    "--time-limit": NUM, "--checkpoint-every": NUM, "--memory-limit":
        st.sampled_from(["none", "1M", "0", "-1G", "x", "1e9G"]),
    "--trace-out": st.sampled_from(["t.json", "no/such/dir/t.json", "."]),
    "--html": st.sampled_from(["c.html", "no/such/dir/c.html"]),
    "--checkpoint": st.sampled_from(["ck", "ck2"]), "--resume": st.sampled_from(["ck", "none"]),
    "--spill-dir": st.sampled_from([".", "none"]),
}
SIM_FLAGS = {
    "--model": MODEL, "--seed": INT, "--nodes": INT, "--rounds": st.integers(-1, 400),
    "--proposals": st.one_of(INT, st.just(10_001)),
    "--partition": st.sampled_from(["0,1", "0,0", "1,0,2", "", "a,b", "0,9", "-1,0"]),
    "--json": None, "--trace": None, "--check": None,
    "--invariant": st.sampled_from(["agreement", "nope"]),
    "--dump": st.sampled_from(["d.bin", "no/such/dir/d.bin"]),
}
OUTPUTS = {"t.json", "t-*.json", "c.html", "c-*.html", "ck/*", "ck2/*", "d.bin", "p.html",
           "s.zps", "r.html", "zabmc-*.trace.json", "zabmc-*.lasso.json"}


def _flag_case(settings_):
    trace = TRACES[0].read_bytes()
    readers = st.sampled_from([
        ["replay", "in.json"], ["replay", "in.json", "-q"], ["replay", "in.json", "--html"],
        ["replay"], ["show", "in.json"], ["show", "in.json", "-o"], ["show", "in.json", "-o",
                                                                    "in.json"],
        ["show", "missing.json", "-o", "p.html"], ["show", "in.json", "-o", "p.html"],
        ["export", "in.json", "--max-runs", "0"], ["export", "in.json", "--seeds", "-1"],
        ["export", "in.json", "--max-rounds", "3"], ["export", "in.json", "--format", "x"],
        ["export", "in.json", "-o", "in.json", "--max-runs", "2", "--seeds", "1"],
        ["export", "in.json", "-o", "s.zps", "--max-runs", "2", "--seeds", "1", "-q"],
    ])

    @settings_
    @given(cmd=st.one_of(
        _flags(CHECK_FLAGS).map(lambda f: ["check", *f, "--time-limit", "1", "-q"]),
        _flags(SIM_FLAGS).map(lambda f: ["simulate", *f]),
        readers))
    def case(cmd):
        run(cmd, {"in.json": trace}, OUTPUTS)

    return case


def test_flag_combinations():
    _flag_case(FAST)()


@pytest.mark.slow
def test_flag_combinations_long():
    _flag_case(FLAGS_LONG)()


# --- files of every kind: FIFOs, devices, links, huge and endless files (issue #65, item 8) --------
def _mknod(p: pathlib.Path, minor: int) -> None:
    """A character device of the memory driver made here (1, 3: like /dev/null; 5: /dev/zero;
    7: /dev/full): never the system's own nodes."""
    os.mknod(p, 0o666 | stat.S_IFCHR, os.makedev(1, minor))


def _huge(p: pathlib.Path) -> None:
    with open(p, "wb") as f:  # sparse: one byte over the bound, no disk used
        f.truncate((256 << 20) + 1)


def _linked(good: bytes):
    def make(p: pathlib.Path) -> None:
        (p.parent / f".{p.name}.target").write_bytes(good)
        p.symlink_to(f".{p.name}.target")

    return make


#: kind -> (maker of a file of that kind at a path, or None where it needs root)
KINDS = {
    "fifo": os.mkfifo,
    "link-to-dev-zero": lambda p: p.symlink_to("/dev/zero"),  # only ever read
    "zero-node": (lambda p: _mknod(p, 5)) if os.geteuid() == 0 else None,
    "null-node": (lambda p: _mknod(p, 3)) if os.geteuid() == 0 else None,
    "dangling-link": lambda p: p.symlink_to("nowhere"),
    "link-loop": lambda p: p.symlink_to(p.name),
    "directory": lambda p: p.mkdir(),
    "huge": _huge,
    "empty": lambda p: p.write_bytes(b""),
}
INPUT_KINDS = st.sampled_from(sorted(k for k, make in KINDS.items() if make is not None))


def _input_kind_case(settings_):
    trace = TRACES[0].read_bytes()

    @settings_
    @given(kind=st.one_of(INPUT_KINDS, st.just("link-to-good")),
           cmd=st.sampled_from(READERS + [(["simulate", "--partition-script", "in.json"],
                                           set())]))
    def case(kind, cmd):
        args, outs = cmd
        make = _linked(trace) if kind == "link-to-good" else KINDS[kind]
        if kind == "link-to-good" and args[0] == "simulate":
            return  # a trace is no partition script: covered by the mutations above
        run(args, {"in.json": make}, outs)

    return case


def test_inputs_of_every_kind():
    """A FIFO (which would hang a reader), a device or a link to /dev/zero (endless), a file over
    the bound, a link loop, a directory: one line and exit 2 each, never a hang or memory spent;
    a link to a good trace reads the trace."""
    _input_kind_case(FAST)()


@pytest.mark.slow
def test_inputs_of_every_kind_long():
    _input_kind_case(LONG)()


OUTPUT_KINDS = ["null-node", "dangling-link", "directory", "other-kind", "a-trace",
                "link-to-a-trace"]


def _output_kind_case(settings_):
    trace = TRACES[0].read_bytes()
    writers = [
        (["show", "in.json", "-o", "out"], "picture"),
        (["replay", "-q", "in.json", "--html", "out"], "picture"),
        (["export", "in.json", "-q", "--max-runs", "3", "--seeds", "2", "--max-rounds", "100",
          "-o", "out"], "partition script"),
        (["export", "in.json", "--format", "zookeeper", "-o", "out"], "schedule"),
        (["simulate", "--rounds", "50", "--dump", "out"], "dump"),
    ]

    @settings_
    @given(kind=st.sampled_from([k for k in OUTPUT_KINDS
                                 if k != "null-node" or os.geteuid() == 0]),
           writer=st.sampled_from(writers), force=st.booleans())
    def case(kind, writer, force):
        args, _ = writer
        makers = {"null-node": KINDS["null-node"], "dangling-link": KINDS["dangling-link"],
                  "directory": KINDS["directory"],
                  "other-kind": lambda p: p.write_bytes(b"my own notes\n"),
                  "a-trace": lambda p: p.write_bytes(trace), "link-to-a-trace": _linked(trace)}
        original = {}

        def after(code, what):
            out = pathlib.Path("out")
            if kind == "null-node":  # written in place: still the device
                assert stat.S_ISCHR(out.stat().st_mode), what
            if kind in ("dangling-link", "link-to-a-trace"):  # the link stays a link
                assert out.is_symlink(), what
            if kind in ("other-kind", "a-trace", "link-to-a-trace") and not force:
                # another kind of file is never replaced without --force
                assert code == 2 and "give --force to replace it" in what, what
                assert out.read_bytes() == original["bytes"], what
            if kind == "directory":
                assert code == 2 and out.is_dir(), what

        def make(p):
            makers[kind](p)
            if kind in ("other-kind", "a-trace", "link-to-a-trace"):
                original["bytes"] = p.read_bytes()

        run(args + (["--force"] if force else []), {"in.json": trace, "out": make},
            {"out", "nowhere", ".out.target"}, after)

    return case


def test_outputs_of_every_kind():
    """A device node is written in place, a link's target is written and the link stays, a
    directory or a file of another kind is refused in one line (unless --force)."""
    _output_kind_case(FAST)()


@pytest.mark.slow
def test_outputs_of_every_kind_long():
    _output_kind_case(LONG)()


# --- forged checkpoint internals: parent tables, counts, level files ------------------------------
MID_ARGS = ["--nodes", "2", "--network", "bag", "--max-timeouts", "1", "--proposals", "2", "-q"]


@pytest.fixture(scope="module")
def mid_checkpoint(tmp_path_factory):
    """A checkpoint at level 6 of a search whose violations come at depth 11 (as `check MID_ARGS`
    resumes it): its files (name -> bytes)."""
    import shutil

    from zabmc.explore import Env, ExploreConfig
    from zabmc.explore import checkpoint as ck
    from zabmc.explore.bfs import BFS
    from zabmc.explore.codec import choose_codec, make_codec
    from zabmc.invariants import DEFAULT_PROPERTIES, Checker
    from zabmc.core.model import get_model

    env = Env(get_model("db19"), ExploreConfig(nodes=2, network="bag", max_timeouts=1,
                                               proposals=2), Checker(DEFAULT_PROPERTIES))
    ident = ck.identity(model=env.model.name, config=env.config, invariants=env.checker.names,
                        strategy="bfs", stop_at_first=True, codec=choose_codec(env))
    d = tmp_path_factory.mktemp("mid")
    work, copy = d / "work", d / "level-6"

    def keep(line):
        if "checkpoint: level 6," in line:
            shutil.copytree(work, copy)

    BFS(env, checkpoint=ck.Checkpointer(str(work), ident, every=0, log=keep),
        codec=make_codec(ident["codec"], env)).run()
    return {f"ck/{p.name}": p.read_bytes() for p in copy.iterdir()}


def _recompute(files: dict, key: str, data: bytes, body_change=None) -> dict:
    """`files` with checkpoint part `key` (seen, parents, frontier) replaced by `data`, and the
    manifest's size and checksum for it recomputed, as a forger would."""
    from xxhash import xxh3_128

    from zabmc.explore.checkpoint import _digest

    doc = json.loads(files["ck/manifest.json"])
    body = doc["body"]
    e = body["files"][key]
    out = dict(files)
    out[f"ck/{e['name']}"] = data
    e["size"], e["xxh3"] = len(data), xxh3_128(data).hexdigest()
    if body_change is not None:
        body_change(body)
    out["ck/manifest.json"] = json.dumps({"body": body, "xxh3": _digest(body)}).encode()
    return out


@st.composite
def forged_checkpoint(draw, files):
    from array import array

    body = json.loads(files["ck/manifest.json"])["body"]
    levels, names = body["levels"], {k: f"ck/{e['name']}" for k, e in body["files"].items()}
    how = draw(st.sampled_from(["parents", "parents-all", "levels", "seen-count", "kind"]))
    if how in ("parents", "parents-all"):
        raw = bytearray(files[names["parents"]])
        pos, spans = 0, []
        for n in levels:
            spans.append((pos, n))
            pos += 6 * n
        value = st.one_of(st.integers(0, 3), st.sampled_from([0xFFFFFFF0, 0xFFFFFFFF]),
                          st.integers(0, max(levels)))
        if how == "parents-all":  # every index of every level the same value
            v = draw(value)
            for start, n in spans:
                raw[start:start + 4 * n] = array("I", [v] * n).tobytes()
        else:
            for _ in range(draw(st.integers(1, 4))):
                level = draw(st.integers(0, len(levels) - 1))
                start, n = spans[level]
                k = draw(st.integers(0, n - 1))
                raw[start + 4 * k:start + 4 * k + 4] = array("I", [draw(value)]).tobytes()
        return _recompute(files, "parents", bytes(raw))
    if how == "levels":  # counts moved between levels, their sum kept
        a, b = draw(st.integers(0, len(levels) - 2)), draw(st.integers(1, len(levels) - 1))
        moved = list(levels)
        k = draw(st.integers(1, 3))
        moved[a] += k
        moved[b] -= k
        return _recompute(files, "parents", files[names["parents"]],
                          lambda body: body.__setitem__("levels", moved))
    if how == "seen-count":  # fingerprints added or dropped, the count in the manifest kept
        seen = files[names["seen"]]
        k = draw(st.integers(1, 3))
        data = seen[:-16 * k] if draw(st.booleans()) else seen + seen[:16 * k]
        return _recompute(files, "seen", data)
    part = draw(st.sampled_from(sorted(names)))
    kind = draw(INPUT_KINDS)
    return dict(files, **{names[part]: KINDS[kind]})


def _resume_confirms(code, what):
    """A resumed run that reports a violation wrote traces that replay to it."""
    if code != 10:
        return
    traces = sorted(pathlib.Path(".").glob("zabmc-db19-*.trace.json"))
    assert traces, what
    for t in traces:
        try:
            main(["replay", "-q", str(t)])
        except SystemExit as e:
            assert e.code == 10, f"{what}\n{t} does not replay to its violation"


def _forged_checkpoint_case(files, settings_):
    @settings_
    @given(forged=forged_checkpoint(files))
    def case(forged):
        run(["check", *MID_ARGS, "--resume", "ck"], forged, {"ck/*", "zabmc-db19-*.trace.json"},
            _resume_confirms)

    return case


def test_forged_checkpoint_internals(mid_checkpoint):
    """Parent tables of wrong or out-of-range indices, level counts moved, visited sets of the
    wrong size, level files that are FIFOs, devices or links: exit 2 in one line, or a result
    whose counterexamples replay, never an internal error or a violation that is not there."""
    _forged_checkpoint_case(mid_checkpoint, FAST)()


@pytest.mark.slow
def test_forged_checkpoint_internals_long(mid_checkpoint):
    _forged_checkpoint_case(mid_checkpoint, LONG)()
