"""`zabmc check --engine spark --resume DIR`, and the Spark engine's level snapshots
(`--checkpoint DIR`): a resumed Spark run reports exactly what an uninterrupted run of either
engine does (counts, per-depth counts, stop reason, every violation with its depth, message and
trace), from an in-process checkpoint or from a Spark snapshot, also after a SIGKILL of the
driver; a damaged or mismatched checkpoint is a one-line usage error (exit 2).

The workload: db-19, 2 nodes, bag network, one crash, depth 18, properties agreement and prefix.
With --all, agreement is first violated at depth 11 and prefix at depth 18 (9,771 states), so a
checkpoint of level 11 to 17 holds one violation and the resumed run must find the other; without
--all the search stops at depth 11, in the middle of the level.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time

import pytest

from zabmc.cli import EXIT_USAGE, main
from zabmc.explore import Env, ExploreConfig
from zabmc.explore import checkpoint as ck
from zabmc.explore.bfs import BFS
from zabmc.explore.codec import choose_codec, make_codec
from zabmc.invariants import Checker
from zabmc.core.model import get_model

ARGS = ["--nodes", "2", "--network", "bag", "--max-crashes", "1", "--depth", "18",
        "--invariant", "agreement", "--invariant", "prefix"]
CFG = ExploreConfig(nodes=2, network="bag", max_crashes=1, depth=18)
PROPS = ("agreement", "prefix")


def _env():
    return Env(get_model("db19"), CFG, Checker(PROPS))


def _ident(env, stop_at_first):
    return ck.identity(model=env.model.name, config=env.config, invariants=env.checker.names,
                       strategy="bfs", stop_at_first=stop_at_first, codec=choose_codec(env))


def _in_process_checkpoints(tmp_path, stop_at_first: bool, levels) -> dict:
    """Run the in-process BFS with a checkpoint at every level; {level: a copy of its checkpoint}
    for the `levels` asked."""
    env = _env()
    ident = _ident(env, stop_at_first)
    work = tmp_path / f"work-{stop_at_first}"
    copies: dict = {}

    def keep(line):
        level = int(line.split()[2].rstrip(","))
        if level in levels:
            dst = tmp_path / f"inproc-{stop_at_first}-{level}"
            shutil.copytree(work, dst)
            copies[level] = dst

    BFS(env, stop_at_first=stop_at_first, codec=make_codec(ident["codec"], env),
        checkpoint=ck.Checkpointer(str(work), ident, every=0, log=keep)).run()
    assert sorted(copies) == sorted(levels)
    return copies


def _cli(capsys, tmp_path, name, *args):
    """`zabmc check ARGS --json` in this process: (exit code, summary, {property: trace})."""
    trace = tmp_path / f"{name}.trace.json"
    with pytest.raises(SystemExit) as e:
        main(["check", *args, "--json", "--trace-out", str(trace)])
    out = json.loads(capsys.readouterr().out)
    traces = {}
    for v in out["violations"]:
        doc = json.loads(open(v["trace"]).read())
        # its origin is this run's own command (engine, trace path), which the runs compared differ in
        assert doc.pop("origin").startswith(shlex.join(["zabmc", "check", *args, "--json",
                                                         "--trace-out"]))
        traces[v["property"]] = doc
    return e.value.code, out, traces


def _comparable(d: dict) -> dict:
    """A summary without what differs between engines and runs (times, memory, Spark figures,
    where the checkpoints and traces went)."""
    d = dict(d)
    for k in ("engine", "elapsed_seconds", "elapsed_seconds_before_resume", "states_per_second",
              "memory", "spark", "checkpoint"):
        d.pop(k, None)
    d["violations"] = [{k: v for k, v in x.items() if k != "trace"} for x in d["violations"]]
    return d


@pytest.mark.spark
@pytest.mark.parametrize("find_all,levels", [(True, (8, 11, 14, 17)), (False, (6, 10))],
                         ids=["all", "stop-at-first"])
def test_spark_resumes_an_in_process_checkpoint_to_the_uninterrupted_result(
        spark, tmp_path, capsys, find_all, levels):
    """Levels 11-17 hold the agreement violation and not the prefix one (--all); level 10 is the
    one whose expansion violates agreement, so the resumed run stops in its first stage."""
    flags = [*ARGS, *(["--all"] if find_all else [])]
    rc, plain, plain_traces = _cli(capsys, tmp_path, "plain", *flags)
    assert rc == 10
    got_props = [(v["property"], v["depth"]) for v in plain["violations"]]
    assert got_props == ([("agreement", 11), ("prefix", 18)] if find_all else [("agreement", 11)])
    rc_s, spark_plain, _ = _cli(capsys, tmp_path, "spark", *flags, "--engine", "spark",
                                "--master", "local[2]")
    assert rc_s == 10 and _comparable(spark_plain) == _comparable(plain)
    for level, d in _in_process_checkpoints(tmp_path, not find_all, levels).items():
        before = json.loads((d / "manifest.json").read_text())["body"]["violations"]
        assert len(before) == (1 if find_all and level >= 11 else 0)
        rc2, resumed, traces = _cli(capsys, tmp_path, f"resumed-{level}", *flags, "--engine",
                                    "spark", "--master", "local[2]", "--resume", str(d))
        assert rc2 == 10, level
        assert _comparable(resumed) == _comparable(plain), level
        assert traces == plain_traces, level
        assert resumed["elapsed_seconds_before_resume"] > 0
        assert resumed["spark"]["levels_count"] == 18 - level - (0 if find_all else 7)


@pytest.mark.spark
def test_spark_snapshots_resume_with_any_partition_count(spark, tmp_path):
    """A Spark run writing a snapshot at every level reports what a run without does; resuming
    its last snapshot (level 17) and an earlier one (level 12) with 1, 2 or 3 partitions gives
    the same result again."""
    from zabmc.explore import bfs
    from zabmc.spark import checkpoint as sck
    from zabmc.spark.engine import spark_bfs

    env = _env()
    ident = _ident(env, False)
    want = bfs(env, stop_at_first=False)

    def summary(o):
        return (o.distinct, o.generated, list(o.per_depth), o.depth_reached, o.stop_reason,
                o.extra.get("frontier_left"),
                [(f.violation, f.depth, f.path) for f in o.violations])

    d = tmp_path / "snap"
    copies = {}

    def keep(line):
        level = int(line.split()[2].rstrip(","))
        if level == 12:
            copies[level] = tmp_path / "snap-12"
            shutil.copytree(d, copies[level])

    snaps = sck.LevelSnapshots(str(d), ident, every=0, log=keep)
    got = spark_bfs(env, stop_at_first=False, master="local[2]", snapshots=snaps)
    assert summary(got) == summary(want)
    assert snaps.written == 17 and got.extra["checkpoint_level"] == 17
    assert sorted(os.listdir(d)) == ["manifest.json", "part.17.0.bin", "part.17.1.bin"]
    for path in (d, copies[12]):
        snap = sck.load(str(path), ident)
        assert isinstance(snap, sck.SparkSnapshot)
        for parts in (1, 2, 3):
            o = spark_bfs(env, stop_at_first=False, master="local[2]", partitions=parts,
                          resume=snap)
            assert summary(o) == summary(want), (path, parts)


def _children(pid: int) -> list:
    out = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open(f"/proc/{p}/stat") as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                        out.append(int(p))
            except (OSError, IndexError, ValueError):
                pass
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.spark
@pytest.mark.slow
def test_kill_9_of_the_spark_driver_then_resume_gives_the_uninterrupted_result(tmp_path):
    """`zabmc check --engine spark --checkpoint DIR --checkpoint-every 0`, killed with SIGKILL
    (the driver process; its JVM follows it) after its 8th snapshot, resumed with `--engine spark
    --resume DIR`: the result of an uninterrupted in-process run. (One moment: each costs two
    Spark start-ups; tests/test_checkpoint.py kills the in-process engine at several.)"""
    cmd = [sys.executable, "-m", "zabmc", "check", *ARGS, "--all"]
    plain = subprocess.run([*cmd, "--json"], capture_output=True, text=True, cwd=tmp_path,
                           timeout=300)
    assert plain.returncode == 10
    want = _comparable(json.loads(plain.stdout))
    spark = ["--engine", "spark", "--master", "local[2]"]
    for after in (8,):
        d = tmp_path / f"ck-{after}"
        p = subprocess.Popen([*cmd, *spark, "--checkpoint", str(d), "--checkpoint-every", "0"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                             cwd=tmp_path)
        seen = 0
        for line in p.stdout:
            if line.startswith("checkpoint:"):
                seen += 1
                if seen == after:
                    break
        jvms = [c for c in _children(p.pid) if "java" in open(f"/proc/{c}/cmdline").read()]
        assert jvms, "the driver's JVM was not found"
        p.send_signal(signal.SIGKILL)
        p.communicate(timeout=60)
        assert seen == after and p.returncode == -signal.SIGKILL
        deadline = time.monotonic() + 60  # the JVM exits when its driver's pipe closes
        while any(_alive(j) for j in jvms) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(_alive(j) for j in jvms), "the killed driver's JVM is still running"
        level = json.loads((d / "manifest.json").read_text())["body"]["depth"]
        assert level >= after
        r = subprocess.run([*cmd, *spark, "--resume", str(d), "--json"], capture_output=True,
                           text=True, cwd=tmp_path, timeout=300)
        assert r.returncode == 10, r.stderr
        got = json.loads(r.stdout)
        assert _comparable(got) == want
        assert got["spark"]["levels_count"] == 18 - level


# --- a bad checkpoint: one line, exit 2 --------------------------------------------------------


@pytest.fixture(scope="module")
def snapshot_dir(spark, tmp_path_factory):
    """A Spark snapshot of level 9 (its own session: module-scoped)."""
    from zabmc.spark import checkpoint as sck
    from zabmc.spark.engine import spark_bfs

    base = tmp_path_factory.mktemp("snapshot")
    env = Env(get_model("db19"), ExploreConfig(nodes=2, network="bag", depth=9),
              Checker(PROPS))
    snaps = sck.LevelSnapshots(str(base / "ck"), _ident(env, True), every=0)
    spark_bfs(env, master="local[2]", snapshots=snaps)
    assert snaps.level == 8
    return base / "ck"


BAD_ARGS = ["--nodes", "2", "--network", "bag", "--depth", "9", "--invariant", "agreement",
            "--invariant", "prefix", "--engine", "spark", "--master", "local[2]", "-q"]


def _resume_error(capsys, d, args=BAD_ARGS):
    with pytest.raises(SystemExit) as e:
        main(["check", *args, "--resume", str(d)])
    err = capsys.readouterr().err
    return e.value.code, err


@pytest.mark.spark
@pytest.mark.parametrize("damage", ["truncate", "flip", "remove"])
@pytest.mark.parametrize("which", ["manifest", "part"])
def test_a_damaged_spark_snapshot_is_a_one_line_error(snapshot_dir, tmp_path, capsys, damage,
                                                      which):
    d = tmp_path / "ck"
    shutil.copytree(snapshot_dir, d)
    path = d / ("manifest.json" if which == "manifest" else "part.8.1.bin")
    if damage == "remove":
        path.unlink()
    else:
        data = bytearray(path.read_bytes())
        if damage == "truncate":
            data = data[: len(data) // 2]
        else:
            data[len(data) // 3] ^= 0x01
        path.write_bytes(bytes(data))
    rc, err = _resume_error(capsys, d)
    assert rc == EXIT_USAGE
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("zabmc: error:"), err
    assert ("no checkpoint in" if (damage, which) == ("remove", "manifest")
            else "checkpoint") in lines[0]


@pytest.mark.spark
def test_a_mismatched_spark_snapshot_is_a_one_line_error(snapshot_dir, capsys):
    args = [a if a != "9" else "10" for a in BAD_ARGS]
    rc, err = _resume_error(capsys, snapshot_dir, args)
    assert rc == EXIT_USAGE and err.strip() == (
        f"zabmc: error: checkpoint {snapshot_dir} was written with a different configuration: "
        "--depth 9 there, 10 here")
    rc, err = _resume_error(capsys, snapshot_dir, [*BAD_ARGS, "--all"])
    assert rc == EXIT_USAGE and "different --all" in err and err.count("\n") == 1
    # the in-process engine cannot resume a Spark snapshot (it has no parent table)
    in_process = [a for a in BAD_ARGS if a not in ("--engine", "spark", "--master", "local[2]")]
    rc, err = _resume_error(capsys, snapshot_dir, in_process)
    assert rc == EXIT_USAGE and err.count("\n") == 1 and "--engine spark" in err
