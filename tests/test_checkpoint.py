"""Checkpoint and resume of the in-process BFS (`zabmc check --checkpoint DIR`, `--resume DIR`):
a resumed search reports exactly what an uninterrupted one does, a kill at any instant leaves a
usable checkpoint, and a damaged or mismatched checkpoint is a one-line usage error."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys

import pytest

from zabmc.cli import main
from zabmc.explore import Env, ExploreConfig
from zabmc.explore import checkpoint as ck
from zabmc.explore.bfs import BFS
from zabmc.explore.codec import choose_codec, make_codec
from zabmc.invariants import DEFAULT_PROPERTIES, Checker
from zabmc.core.model import get_model

VIOLATING = ExploreConfig(nodes=2, network="bag", max_timeouts=1, proposals=2)
CLEAN = ExploreConfig(nodes=3, depth=12)


def _env(cfg):
    return Env(get_model("db19"), cfg, Checker(DEFAULT_PROPERTIES))


def _ident(env, stop_at_first=True):
    return ck.identity(model=env.model.name, config=env.config, invariants=env.checker.names,
                       strategy="bfs", stop_at_first=stop_at_first, codec=choose_codec(env))


def _summary(o):
    return (o.distinct, o.generated, list(o.per_depth), o.depth_reached, o.stop_reason,
            o.extra.get("frontier_left"),
            [(f.violation.property, f.depth, f.path, f.violation.message) for f in o.violations])


def test_the_codec_round_trips_states_with_their_fingerprints_and_successors():
    env = _env(ExploreConfig(nodes=3, network="bag", max_timeouts=1, max_crashes=1, depth=5))
    codec = make_codec(choose_codec(env), env)
    init, _ = env.initial()
    todo, n = [init], 0
    while todo and n < 400:
        s = todo.pop(0)
        n += 1
        s2 = codec.decode(codec.encode(s))
        assert s2 == s and env.fingerprint(s2) == env.fingerprint(s)
        assert env.encode(s2) == env.encode(s)
        a = [(ev, env.fingerprint(x)) for ev, x, _ in env.successors(s)]
        b = [(ev, env.fingerprint(x)) for ev, x, _ in env.successors(s2)]
        assert a == b
        todo.extend(x for _, x, _ in env.successors(s))


@pytest.mark.parametrize("cfg", [VIOLATING, pytest.param(CLEAN, marks=pytest.mark.slow)],
                         ids=["violation", "clean"])
def test_resuming_from_every_level_gives_the_uninterrupted_result(cfg, tmp_path):
    env = _env(cfg)
    plain = BFS(env).run()
    ident = _ident(env)
    codec = make_codec(ident["codec"], env)
    work = tmp_path / "ck"
    copies = []

    def keep(line):  # called after each checkpoint is written: keep a copy of each level's
        dst = tmp_path / f"level-{len(copies)}"
        shutil.copytree(work, dst)
        copies.append(dst)

    with_ck = BFS(env, checkpoint=ck.Checkpointer(str(work), ident, every=0, log=keep),
                  codec=codec).run()
    assert _summary(with_ck) == _summary(plain)
    assert len(copies) >= 5
    levels = set()
    for d in copies:
        snap = ck.load(str(d), ident)
        levels.add(snap.depth)
        resumed = BFS(env, resume=snap, codec=codec).run()
        assert _summary(resumed) == _summary(plain), snap.depth
    assert len(levels) == len(copies)  # one checkpoint per level


def test_a_completed_checkpoint_resumes_to_the_same_result(tmp_path):
    env = _env(CLEAN)
    ident = _ident(env)
    codec = make_codec(ident["codec"], env)
    first = BFS(env, checkpoint=ck.Checkpointer(str(tmp_path), ident), codec=codec).run()
    again = BFS(env, resume=ck.load(str(tmp_path), ident), codec=codec).run()
    assert _summary(again) == _summary(first)


def test_an_interrupted_level_is_checkpointed_at_its_start(tmp_path, monkeypatch):
    """SIGTERM in the middle of a level: the last checkpoint is the level boundary before it."""
    from zabmc.explore.search import Terminated

    env = _env(CLEAN)
    ident = _ident(env)
    codec = make_codec(ident["codec"], env)
    plain = BFS(env).run()
    monkeypatch.setattr(sys.modules["zabmc.explore.bfs"], "CHUNK", 50)  # merge often: the level has new states

    class Interrupted(BFS):
        """SIGTERM at the 100th parent of level 9 (progress is due after every parent)."""

        calls = 0

        def search(self):
            self.next_progress = 0.0
            return super().search()

        def progress(self, *a, **k):
            if self.depth == 8:
                Interrupted.calls += 1
                if Interrupted.calls == 100:
                    raise Terminated(signal.SIGTERM)

    out = Interrupted(env, checkpoint=ck.Checkpointer(str(tmp_path), ident, every=1e9),
                      codec=codec).run()
    assert out.stop_reason == "interrupted" and out.distinct > sum(plain.per_depth[:9])
    snap = ck.load(str(tmp_path), ident)
    assert snap.depth == 8 and len(snap.seen) == sum(plain.per_depth[:9])
    resumed = BFS(env, resume=snap, codec=codec).run()
    assert _summary(resumed) == _summary(plain)


def _cli_json(args, capsys):
    with pytest.raises(SystemExit) as e:
        main(["check", *args, "--json"])
    out = capsys.readouterr().out
    return e.value.code, json.loads(out)


def _essentials(d):
    return (d["distinct_states"], d["states"], d["per_depth"], d["stop_reason"],
            [(v["property"], v["depth"], v["message"]) for v in d["violations"]])


def test_a_run_with_checkpoints_reports_as_one_without(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["--nodes", "2", "--network", "bag", "--max-timeouts", "1", "--proposals", "2"]
    rc, plain = _cli_json(args, capsys)
    rc2, with_ck = _cli_json([*args, "--checkpoint", "ck", "--checkpoint-every", "0"], capsys)
    assert rc == rc2 == 10
    assert _essentials(with_ck) == _essentials(plain)
    assert with_ck["checkpoint"] == {"dir": "ck", "level": 10}
    rc3, resumed = _cli_json([*args, "--resume", "ck"], capsys)
    assert rc3 == 10 and _essentials(resumed) == _essentials(plain)


def _kill_and_resume(tmp_path, args, after: int):
    """Start `zabmc check ARGS --checkpoint DIR`, SIGKILL it after its `after`-th checkpoint line,
    resume; the resumed run's --json."""
    d = tmp_path / f"ck-{after}"
    cmd = [sys.executable, "-c", "from zabmc.cli import main; main()", "check", *args]
    p = subprocess.Popen([*cmd, "--checkpoint", str(d), "--checkpoint-every", "0"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                         cwd=tmp_path)
    seen = 0
    for line in p.stdout:
        if line.startswith("checkpoint:"):
            seen += 1
            if seen == after:
                break
    p.send_signal(signal.SIGKILL)
    p.communicate(timeout=120)
    assert seen == after
    r = subprocess.run([*cmd, "--resume", str(d), "--json"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=300)
    assert r.returncode in (0, 10), r.stderr
    return r.returncode, json.loads(r.stdout)


def _plain(tmp_path, args):
    r = subprocess.run([sys.executable, "-c", "from zabmc.cli import main; main()", "check", *args,
                        "--json"], capture_output=True, text=True, cwd=tmp_path, timeout=300)
    return r.returncode, json.loads(r.stdout)


def test_kill_9_then_resume_gives_the_uninterrupted_result(tmp_path):
    args = ["--nodes", "2", "--network", "bag", "--max-timeouts", "1", "--proposals", "2"]
    rc, plain = _plain(tmp_path, args)
    for after in (1, 4, 8):
        rc2, resumed = _kill_and_resume(tmp_path, args, after)
        assert rc2 == rc == 10
        assert _essentials(resumed) == _essentials(plain)


@pytest.mark.slow
def test_kill_9_at_several_moments_of_a_longer_run(tmp_path):
    args = ["--nodes", "3", "--depth", "16"]
    rc, plain = _plain(tmp_path, args)
    for after in (2, 9, 14):
        rc2, resumed = _kill_and_resume(tmp_path, args, after)
        assert rc2 == rc == 0
        assert _essentials(resumed) == _essentials(plain)
        assert resumed["frontier_left"] == plain["frontier_left"] > 0


@pytest.fixture
def written(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["--nodes", "3", "--depth", "8"]
    with pytest.raises(SystemExit):
        main(["check", *args, "--checkpoint", "ck", "-q"])
    capsys.readouterr()
    return args, tmp_path / "ck"


def _resume_error(args, d, capsys):
    with pytest.raises(SystemExit) as e:
        main(["check", *args, "--resume", str(d), "-q"])
    err = capsys.readouterr().err
    return e.value.code, err


@pytest.mark.parametrize("damage", ["truncate", "flip"])
@pytest.mark.parametrize("which", ["manifest", "seen", "parents", "frontier"])
def test_a_damaged_checkpoint_is_a_one_line_error(written, capsys, damage, which):
    args, d = written
    name = "manifest.json" if which == "manifest" else next(
        n for n in os.listdir(d) if n.startswith(which + "."))
    path = d / name
    data = bytearray(path.read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    else:
        data[len(data) // 3] ^= 0x01
    path.write_bytes(bytes(data))
    rc, err = _resume_error(args, d, capsys)
    assert rc == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("zabmc: error: checkpoint"), err


def test_resuming_with_another_configuration_is_a_usage_error(written, capsys):
    args, d = written
    rc, err = _resume_error(["--nodes", "2", "--depth", "8"], d, capsys)
    assert rc == 2 and err.strip() == ("zabmc: error: checkpoint " + str(d) + " was written with "
                                       "a different configuration: --nodes 3 there, 2 here")
    # the checkpoint stops at the first violation, this run has --all (named the wrong way round
    # before #37: "--all: True, this run has False")
    rc, err = _resume_error([*args, "--all"], d, capsys)
    assert rc == 2 and err == (f"zabmc: error: checkpoint {d} was written with a different "
                               "--all: without --all there, with --all here\n")


def test_resuming_with_another_zabmc_version_is_a_usage_error(written, capsys, monkeypatch):
    args, d = written
    monkeypatch.setattr(ck, "zabmc_version", lambda: "0.0.0-other")
    rc, err = _resume_error(args, d, capsys)
    assert rc == 2 and "different zabmc version" in err
    assert err.rstrip().endswith(", this run has '0.0.0-other'")


def test_the_rate_of_a_resumed_run_counts_only_its_own_states(written, capsys):
    """The checkpoint of `written` is the finished search: resuming it finds no new state, so its
    rate is 0 (it counted the restored states as found in the resumed run's fraction of a
    second before #37)."""
    import json

    from zabmc.explore.outcome import Progress

    args, d = written
    distinct = json.loads((d / "manifest.json").read_text())["body"]["distinct"]
    with pytest.raises(SystemExit):
        main(["check", *args, "--resume", str(d), "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert summary["distinct_states"] == distinct and summary["states_per_second"] == 0.0
    assert Progress(8, 0, distinct + 50, 0, 2.0, restored=distinct).rate == 25.0


def test_no_checkpoint_and_other_strategies_are_usage_errors(tmp_path, capsys):
    rc, err = _resume_error(["--nodes", "2"], tmp_path / "none", capsys)
    assert rc == 2 and "no checkpoint in" in err
    with pytest.raises(SystemExit) as e:
        main(["check", "--strategy", "dfs", "--checkpoint", str(tmp_path / "x")])
    assert e.value.code == 2


@pytest.mark.slow
def test_sigterm_writes_a_last_checkpoint_that_resumes_to_the_uninterrupted_result(tmp_path):
    args = ["--nodes", "3", "--depth", "16"]
    rc, plain = _plain(tmp_path, args)
    d = tmp_path / "ck"
    cmd = [sys.executable, "-c", "from zabmc.cli import main; main()", "check", *args]
    p = subprocess.Popen([*cmd, "--checkpoint", str(d), "--checkpoint-every", "1e9"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                         cwd=tmp_path)
    for line in p.stdout:
        if line.startswith("progress:"):
            break
    p.send_signal(signal.SIGTERM)
    out, _ = p.communicate(timeout=120)
    assert p.returncode == 143 and "checkpoint: level" in out
    r = subprocess.run([*cmd, "--resume", str(d), "--json"], capture_output=True, text=True,
                       cwd=tmp_path, timeout=300)
    assert r.returncode == rc
    assert _essentials(json.loads(r.stdout)) == _essentials(plain)


def test_a_resumed_run_counts_the_time_before_the_resume(written, capsys):
    import json

    args, d = written
    body = json.loads((d / "manifest.json").read_text())["body"]
    before = body["extra"]["elapsed"]
    assert before > 0
    with pytest.raises(SystemExit):
        main(["check", *args, "--resume", str(d), "--json"])
    summary = json.loads(capsys.readouterr().out)
    assert summary["elapsed_seconds_before_resume"] == round(before, 3)
    with pytest.raises(SystemExit):
        main(["check", *args, "--resume", str(d), "-q"])
    assert f"(+ {before:.2f}s before the resume)" in capsys.readouterr().out


def _check(args, capsys):
    with pytest.raises(SystemExit) as e:
        main(["check", *args, "-q"])
    return e.value.code, capsys.readouterr().err


@pytest.mark.parametrize("other", [[], ["--depth", "9"], ["--nodes", "2", "--depth", "8"],
                                   ["--engine", "spark"]],
                         ids=["same", "deeper", "another-configuration", "spark"])
def test_a_run_that_does_not_resume_a_checkpoint_never_replaces_it(written, capsys, other):
    args, d = written
    before = {p.name: p.read_bytes() for p in d.iterdir()}
    rc, err = _check([*args, *other, "--checkpoint", str(d)], capsys)
    assert rc == 2
    assert err == (f"zabmc: error: --checkpoint {d} already holds a checkpoint (model db19, level "
                   f"8): continue it with --resume {d}, or replace it with --force\n")
    assert {p.name: p.read_bytes() for p in d.iterdir()} == before


def test_a_checkpoint_is_replaced_with_force_and_continued_with_resume(written, capsys, tmp_path):
    args, d = written
    rc, err = _check(["--nodes", "2", "--depth", "5", "--checkpoint", str(d), "--force"], capsys)
    assert rc == 0 and err == ""
    body = json.loads((d / "manifest.json").read_text())["body"]
    assert (body["config"]["nodes"], body["depth"]) == (2, 5)
    rc, err = _check(["--nodes", "2", "--depth", "5", "--resume", str(d), "--checkpoint", str(d)],
                     capsys)
    assert rc == 0 and err == ""
    # resuming one checkpoint into a directory that holds another is refused as well
    other = tmp_path / "other"
    shutil.copytree(d, other)
    rc, err = _check(["--nodes", "2", "--depth", "5", "--resume", str(d), "--checkpoint",
                      str(other)], capsys)
    assert rc == 2 and "already holds a checkpoint" in err


def test_an_unreadable_checkpoint_is_not_replaced_either(tmp_path, capsys):
    d = tmp_path / "ck"
    d.mkdir()
    (d / "manifest.json").write_text("{not json")
    rc, err = _check(["--nodes", "2", "--depth", "4", "--checkpoint", str(d)], capsys)
    assert rc == 2 and "holds a checkpoint (unreadable)" in err
    assert (d / "manifest.json").read_text() == "{not json"


def test_force_without_a_checkpoint_lets_trace_out_replace_another_file(tmp_path, capsys):
    # --force is no longer the checkpoint's alone: it lets --trace-out and --html replace a file
    # of another kind (issue #65), so it is accepted without --checkpoint
    notes = tmp_path / "notes.txt"
    notes.write_text("mine\n")
    rc, err = _check(["--nodes", "2", "--network", "bag", "--max-timeouts", "1", "--proposals",
                      "2", "--invariant", "local-primary-order", "--trace-out", str(notes)],
                     capsys)
    assert rc == 2 and err == (f"zabmc: error: --trace-out {notes}: it exists and is no trace "
                               "zabmc wrote; give --force to replace it\n")
    assert notes.read_text() == "mine\n"
    rc, err = _check(["--nodes", "2", "--network", "bag", "--max-timeouts", "1", "--proposals",
                      "2", "--invariant", "local-primary-order", "--trace-out", str(notes),
                      "--force"], capsys)
    assert rc == 10 and '"format": "zabmc-trace"' in notes.read_text()


# --- the frontier on disk: zstd, and the uncompressed format version 1 still read ---------------
def test_the_frontier_is_one_zstd_stream_and_a_version_1_checkpoint_still_resumes(tmp_path):
    env = _env(CLEAN._replace(depth=8))
    plain = BFS(env).run()
    ident = _ident(env)
    codec = make_codec(ident["codec"], env)
    for compress, version in ((True, 2), (False, 1)):
        d = tmp_path / f"v{version}"
        BFS(env, checkpoint=ck.Checkpointer(str(d), ident, every=1e9, compress=compress),
            codec=codec, time_limit=None).run()
        body = json.loads((d / "manifest.json").read_text())["body"]
        entry = body["files"]["frontier"]
        assert body["format_version"] == version
        assert entry.get("compression") == ("zstd" if compress else None)
        head = (d / entry["name"]).read_bytes()[:4]
        # a zstd frame's magic number (RFC 8878), or the first record's length prefix
        assert (head == b"\x28\xb5\x2f\xfd") == compress
        resumed = BFS(env, resume=ck.load(str(d), ident), codec=codec).run()
        assert _summary(resumed) == _summary(plain)


# --- forged checkpoints: checksums recomputed, contents wrong ------------------------------------
def _forge(d, body_change=None, records_change=None):
    """Rewrite the checkpoint in `d` as a forger would: change the manifest body or the frontier's
    records, then recompute every size and checksum."""
    import struct

    import zstandard
    from xxhash import xxh3_128

    doc = json.loads((d / "manifest.json").read_text())
    body = doc["body"]
    if records_change is not None:
        e = body["files"]["frontier"]
        p = d / e["name"]
        raw = zstandard.ZstdDecompressor().decompressobj().decompress(p.read_bytes())
        recs, pos = [], 0
        while pos < len(raw):
            (n,) = struct.unpack_from("<I", raw, pos)
            recs.append(raw[pos + 4:pos + 4 + n])
            pos += 4 + n
        recs = records_change(recs)
        data = zstandard.ZstdCompressor(level=1).compress(
            b"".join(struct.pack("<I", len(r)) + r for r in recs))
        p.write_bytes(data)
        e["size"], e["xxh3"] = len(data), xxh3_128(data).hexdigest()
    if body_change is not None:
        body_change(body)
    (d / "manifest.json").write_text(json.dumps({"body": body, "xxh3": ck._digest(body)}))


@pytest.mark.parametrize("change", [
    lambda r: [r[0][: len(r[0]) // 2], *r[1:]],  # a cut record: the decoder fails (EOFError)
    lambda r: [r[1], r[1], *r[2:]],  # a record repeated: decodes, the frontier is wrong
    lambda r: [r[0] + b"\x00", *r[1:]],  # trailing garbage in a record
], ids=["cut", "repeated", "trailing"])
@pytest.mark.parametrize("spill", [[], ["--memory-limit", "1k"]], ids=["memory", "spilled"])
def test_a_forged_frontier_record_is_a_one_line_error(written, capsys, change, spill):
    args, d = written
    _forge(d, records_change=change)
    rc, err = _resume_error([*args, *spill], d, capsys)
    assert rc == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"zabmc: error: checkpoint {d} is unusable"), err


@pytest.mark.parametrize("field,value,says", [
    ("levels", [-1] * 9, "levels"),
    ("violations", ["x"], "violations"),
    ("violations", [{"property": "agreement", "depth": 3, "path": [1, 2]}], "violations"),
    ("depth", 10 ** 9, "depth 1000000000 (the bound is 8)"),
    ("depth", "8", "depth '8' (the bound is 8)"),
    ("distinct", -5, "distinct"),
    ("generated", 1.5, "generated"),
    ("per_depth", [1, 2], "per_depth"),
    ("per_depth", [1] * 9, "per_depth (not the levels' sizes)"),
    ("frontier_states", 10 ** 30, "frontier_states"),
    ("extra", {"elapsed": float("nan")}, "extra.elapsed"),
    ("files", {"seen": {"name": "../../etc/passwd", "size": 1, "xxh3": "0"}},
     "seen names no file of the directory"),
    ("generation", -1, "generation"),
])
def test_a_forged_manifest_field_is_refused_before_it_is_believed(written, capsys, field, value,
                                                                   says):
    args, d = written
    _forge(d, body_change=lambda b: b.__setitem__(field, value))
    rc, err = _resume_error(args, d, capsys)
    assert rc == 2
    assert err == (f"zabmc: error: checkpoint {d} is unusable: manifest.json is not what zabmc "
                   f"writes: {says}\n")


def test_an_eoferror_is_an_internal_error_not_an_interruption(monkeypatch, capsys):
    import zabmc.cli.check as check_cli

    def eof(spec):
        raise EOFError("Ran out of input")

    monkeypatch.setattr(check_cli, "run_check", eof)
    with pytest.raises(SystemExit) as e:
        main(["check", "--nodes", "2"])
    assert e.value.code == 1
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        "zabmc: error: internal error: EOFError: Ran out of input (set ZABMC_DEBUG=1 for the "
        "traceback)")


def test_the_checkpoint_of_an_exhausted_search_resumes(tmp_path, capsys):
    """Its frontier is empty while its last level is not (a case the manifest checks allow)."""
    args = ["--nodes", "2", "--depth", "1000000000000"]
    rc, err = _check([*args, "--checkpoint", str(tmp_path / "ck")], capsys)
    assert rc == 0 and err == ""
    rc, err = _check([*args, "--resume", str(tmp_path / "ck")], capsys)
    assert rc == 0 and err == ""


# --- forged parent tables and level files (issue #65, item 3) -----------------------------------
def _forge_parents(d, fill: int):
    """Every parent index of the checkpoint in `d` set to `fill` (event indices kept), with the
    file's size and checksum recomputed as a forger would."""
    from array import array

    from xxhash import xxh3_128

    doc = json.loads((d / "manifest.json").read_text())
    body = doc["body"]
    e = body["files"]["parents"]
    raw = (d / e["name"]).read_bytes()
    out, pos = bytearray(), 0
    for n in body["levels"]:
        out += array("I", [fill] * n).tobytes()
        out += raw[pos + 4 * n:pos + 6 * n]
        pos += 6 * n
    (d / e["name"]).write_bytes(bytes(out))
    e["size"], e["xxh3"] = len(out), xxh3_128(bytes(out)).hexdigest()
    (d / "manifest.json").write_text(json.dumps({"body": body, "xxh3": ck._digest(body)}))


def _violating_checkpoint_at_level(tmp_path, level: int):
    """A checkpoint of the VIOLATING search at `level` (its violation is at depth 11); the env,
    identity and codec."""
    env = _env(VIOLATING)
    ident = _ident(env)
    codec = make_codec(ident["codec"], env)
    work, copy = tmp_path / "ck", tmp_path / f"level-{level}"

    def keep(line):
        if f"checkpoint: level {level}," in line:
            shutil.copytree(work, copy)

    BFS(env, checkpoint=ck.Checkpointer(str(work), ident, every=0, log=keep), codec=codec).run()
    return env, ident, codec, copy


def test_a_forged_parent_table_of_zeros_is_refused_not_reported_as_a_violation(tmp_path):
    """Indices all 0 are in range; the path they make to the depth-11 violation replays to no
    violation: the resumed search is refused in one line instead of exiting 10 with a trace that
    breaks nothing."""
    from zabmc.core.errors import UsageError

    env, ident, codec, d = _violating_checkpoint_at_level(tmp_path, 6)
    _forge_parents(d, 0)
    snap = ck.load(str(d), ident)
    with pytest.raises(UsageError) as e:
        BFS(env, resume=snap, codec=codec).run()
    assert str(e.value) == (f"checkpoint {d} is unusable: the path to the local-primary-order "
                            "violation found after resuming does not replay to it: its parent "
                            "table is corrupt or forged")


def test_parent_indices_out_of_range_are_refused_before_any_search(tmp_path):
    from zabmc.core.errors import UsageError

    _, ident, _, d = _violating_checkpoint_at_level(tmp_path, 6)
    _forge_parents(d, 0xFFFFFFF0)
    with pytest.raises(UsageError) as e:
        ck.load(str(d), ident)
    assert str(e.value) == (f"checkpoint {d} is unusable: level 0 of the parent table is not the "
                            "initial state's")


def test_a_parent_index_past_the_previous_level_is_refused(written, capsys):
    from array import array

    from xxhash import xxh3_128

    args, d = written
    _forge_parents(d, 0)
    body = json.loads((d / "manifest.json").read_text())["body"]
    levels, e = body["levels"], body["files"]["parents"]
    raw = bytearray((d / e["name"]).read_bytes())
    # level 0 (one parent, one event) is the initial state's; level 1's parents: past level 0
    raw[6:6 + 4 * levels[1]] = array("I", [levels[0]] * levels[1]).tobytes()
    (d / e["name"]).write_bytes(bytes(raw))
    e["xxh3"] = xxh3_128(bytes(raw)).hexdigest()
    (d / "manifest.json").write_text(json.dumps({"body": body, "xxh3": ck._digest(body)}))
    rc, err = _resume_error(args, d, capsys)
    assert rc == 2 and err == (f"zabmc: error: checkpoint {d} is unusable: level 1 of the parent "
                               "table names parent 1, but level 0 has 1 states (corrupt or "
                               "forged)\n")


@pytest.mark.parametrize("which", ["seen", "parents", "frontier", "manifest"])
@pytest.mark.parametrize("kind", ["dev-zero", "fifo"])
def test_a_level_file_that_is_a_device_or_a_fifo_is_refused_unread(written, capsys, which, kind):
    """A seen.N.bin linked to /dev/zero (only ever read) would exhaust memory; a FIFO would hang
    the reader: each is refused in one line before a byte is read."""
    args, d = written
    name = "manifest.json" if which == "manifest" else next(
        n for n in os.listdir(d) if n.startswith(which + "."))
    (d / name).unlink()
    if kind == "fifo":
        os.mkfifo(d / name)
        what = "a FIFO"
    else:
        (d / name).symlink_to("/dev/zero")
        what = "a device"
    rc, err = _resume_error(args, d, capsys)
    assert rc == 2 and err == (f"zabmc: error: checkpoint {d} is unusable: {name} is {what}: zabmc "
                               "reads only regular files\n")


# --- a full disk while a checkpoint is written (issue #65, item 8) ---------------------------------
@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a small tmpfs needs root")
def test_a_full_disk_during_a_checkpoint_keeps_the_previous_one_whole(tmp_path, capsys):
    """On a 200 KiB tmpfs the test mounts itself (and unmounts, whatever happens), the level-9
    checkpoint of this search does not fit: one line says so, the search finishes with exit 2
    (a checkpoint asked for is missing), the previous generation stays whole with none of the
    failed one's files beside it, and resuming it counts exactly what an uninterrupted run
    counts."""
    import re

    args = ["--nodes", "3", "--depth", "12", "-q"]
    small = tmp_path / "small"
    small.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=200k", "tmpfs", str(small)], check=True)
    try:
        d = small / "ck"
        with pytest.raises(SystemExit) as e:
            main(["check", *args, "--checkpoint", str(d), "--checkpoint-every", "0", "--json"])
        captured = capsys.readouterr()
        assert e.value.code == 2
        m = re.fullmatch(rf"zabmc: error: cannot write the checkpoint of level (\d+) to {d}: No "
                         r"space left on device; the checkpoint already there stays\n",
                         captured.err)
        assert m, captured.err
        failed = int(m[1])
        body = json.loads((d / "manifest.json").read_text())["body"]
        assert body["depth"] == failed - 1 >= 1
        gen = body["generation"]
        assert sorted(os.listdir(d)) == sorted(["manifest.json", f"frontier.{gen}.bin",
                                                f"parents.{gen}.bin", f"seen.{gen}.bin"])
        copy = tmp_path / "copy"
        shutil.copytree(d, copy)
    finally:
        subprocess.run(["umount", str(small)], check=True)
    rc, resumed = _cli_json([*args, "--resume", str(copy)], capsys)
    rc_plain, plain = _cli_json(args + ["--trace-out", str(tmp_path / "t.json")], capsys)
    assert rc == rc_plain == 0
    assert _essentials(resumed) == _essentials(plain)
