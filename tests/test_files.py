"""The one writer and the one reader (`zabmc.core.files`), and the commands that write and read
through them: device nodes and FIFOs written in place, symbolic links through to their targets,
a failed write one line, a file of another kind never replaced without --force, inputs that are
not regular files or are too large refused in one line (issue #65, items 1, 2 and 4)."""

from __future__ import annotations

import json
import os
import pathlib
import stat
import subprocess
import sys
import threading

import pytest

from zabmc.cli import main
from zabmc.core import files
from zabmc.core.errors import UsageError

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "corpus"
BAG_BUG = ["--nodes", "2", "--network", "bag", "--max-timeouts", "1", "--proposals", "2",
           "--invariant", "local-primary-order", "-q"]
ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="mknod needs root")


def run(args, capsys):
    with pytest.raises(SystemExit) as e:
        main(list(args))
    out, err = capsys.readouterr()
    return e.value.code, out, err


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    """A counterexample trace of db19 (local-primary-order at step 11)."""
    path = tmp_path_factory.mktemp("trace") / "t.json"
    with pytest.raises(SystemExit) as e:
        main(["check", *BAG_BUG, "--trace-out", str(path)])
    assert e.value.code == 10
    return path


def _null_node(tmp_path) -> pathlib.Path:
    """A character device like /dev/null (1, 3), made in the test's own directory."""
    node = tmp_path / "null"
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    return node


def _full_node(tmp_path) -> pathlib.Path:
    """A character device like /dev/full (1, 7): every write fails with ENOSPC."""
    node = tmp_path / "full"
    os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 7))
    return node


# --- the writer ------------------------------------------------------------------------------
def test_a_regular_file_is_replaced_whole_and_keeps_its_mode(tmp_path):
    p = tmp_path / "out.txt"
    p.write_text("old")
    p.chmod(0o640)
    files.write(str(p), "new", "output")
    assert p.read_text() == "new" and stat.S_IMODE(p.stat().st_mode) == 0o640
    assert os.listdir(tmp_path) == ["out.txt"]  # no temporary file left beside it


@ROOT_ONLY
def test_a_device_is_written_in_place_and_stays_a_device(tmp_path):
    node = _null_node(tmp_path)
    files.write(str(node), "text", "output")
    assert stat.S_ISCHR(node.stat().st_mode) and os.listdir(tmp_path) == ["null"]


def test_a_fifo_is_written_in_place(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    files.write(str(fifo), "through the pipe", "output")
    reader.join()
    assert got == [b"through the pipe"] and stat.S_ISFIFO(fifo.stat().st_mode)


def test_a_symbolic_link_s_target_is_written_and_the_link_stays(tmp_path):
    target = tmp_path / "target.txt"
    target.write_text("old")
    link = tmp_path / "link.txt"
    link.symlink_to(target.name)
    files.write(str(link), "new", "output")
    assert link.is_symlink() and os.readlink(link) == "target.txt"
    assert target.read_text() == "new"


@ROOT_ONLY
def test_a_write_that_fails_is_one_write_error(tmp_path):
    full = _full_node(tmp_path)
    with pytest.raises(files.WriteError) as e:
        files.write(str(full), "text", "output")
    assert str(e.value) == f"cannot write output {full}: No space left on device"


def test_a_file_of_another_kind_is_refused_unless_forced(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    with pytest.raises(UsageError) as e:
        files.write(str(notes), "{}", "trace file", kind="trace", flag="--trace-out")
    assert str(e.value) == (f"--trace-out {notes}: it exists and is no trace zabmc wrote; give "
                            "--force to replace it")
    files.write(str(notes), "x", "trace file", kind="trace", force=True)
    assert notes.read_text() == "x"


# --- the commands that write -----------------------------------------------------------------
@ROOT_ONLY
def test_export_to_a_device_node_leaves_it_a_device(tmp_path, trace, capsys):
    node = _null_node(tmp_path)
    code, _, err = run(["export", str(trace), "-q", "--max-runs", "200", "-o", str(node)],
                       capsys)
    assert code == 0, err
    assert stat.S_ISCHR(node.stat().st_mode) and sorted(os.listdir(tmp_path)) == ["null"]


@ROOT_ONLY
def test_export_to_a_full_device_says_so_and_does_not_say_wrote(tmp_path, trace, capsys):
    full = _full_node(tmp_path)
    code, out, err = run(["export", str(trace), "-q", "--max-runs", "200", "-o", str(full)],
                         capsys)
    assert code == 2 and "wrote" not in out
    assert err == f"zabmc: error: cannot write partition script {full}: No space left on device\n"
    assert stat.S_ISCHR(full.stat().st_mode)


def test_export_through_a_symbolic_link_writes_its_target(tmp_path, trace, capsys):
    target = tmp_path / "script.zps"
    link = tmp_path / "link.zps"
    link.symlink_to(target.name)
    code, _, err = run(["export", str(trace), "-q", "--max-runs", "200", "-o", str(link)],
                       capsys)
    assert code == 0, err
    assert link.is_symlink() and target.read_text().startswith("# zabmc partition script")


@pytest.mark.parametrize("words,flag,kind", [
    (["show", "{trace}", "-o", "{out}"], "-o", "picture"),
    (["replay", "-q", "--html", "{out}", "{trace}"], "--html", "picture"),
    (["check", *BAG_BUG, "--trace-out", "{other}", "--html", "{out}"], "--html", "picture"),
    (["export", "{trace}", "-q", "--max-runs", "200", "-o", "{out}"], "-o", "partition script"),
    (["graph", "--nodes", "2", "--depth", "2", "-o", "{out}"], "-o", "graph"),
    (["simulate", "--rounds", "20", "--dump", "{out}"], "--dump", "dump"),
], ids=["show", "replay", "check", "export", "graph", "simulate"])
def test_no_command_replaces_a_trace_with_another_kind_of_file(tmp_path, trace, capsys, words,
                                                               flag, kind):
    out = tmp_path / "X.json"
    out.write_bytes(trace.read_bytes())
    argv = [w.format(trace=trace, out=out, other=tmp_path / "t.json") for w in words]
    code, _, err = run(argv, capsys)
    assert code == 2 and err == (f"zabmc: error: {flag} {out}: it exists and is no {kind} zabmc "
                                 "wrote; give --force to replace it\n")
    assert out.read_bytes() == trace.read_bytes()
    code, _, err = run(argv + ["--force"], capsys)
    assert code in (0, 10) and out.read_bytes() != trace.read_bytes()


def test_trace_out_still_replaces_an_earlier_trace(tmp_path, trace, capsys):
    out = tmp_path / "t.json"
    out.write_bytes(trace.read_bytes())
    code, _, _ = run(["check", *BAG_BUG, "--trace-out", str(out)], capsys)
    assert code == 10 and json.loads(out.read_text())["format"] == "zabmc-trace"


def test_show_to_dash_writes_standard_output(tmp_path, trace, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run(["show", str(trace), "-o", "-"], capsys)
    assert code == 0 and out.startswith("<!DOCTYPE html>")
    assert err == "wrote standard output: 11 steps, local-primary-order at step 11\n"
    assert os.listdir(tmp_path) == []


# --- the reader ------------------------------------------------------------------------------
@pytest.mark.parametrize("command", [["replay"], ["show", "-o", "{tmp}/x.html"],
                                     ["export"]])
def test_a_fifo_as_trace_is_refused_not_waited_on(tmp_path, capsys, command):
    fifo = tmp_path / "trace.json"
    os.mkfifo(fifo)
    argv = [w.format(tmp=tmp_path) for w in command] + [str(fifo)]
    code, _, err = run(argv, capsys)
    assert code == 2 and err == (f"zabmc: error: trace file {fifo} is a FIFO: zabmc reads only "
                                 "regular files\n")


@ROOT_ONLY
@pytest.mark.parametrize("command", [["replay"], ["show", "-o", "{tmp}/x.html"]])
def test_an_endless_device_as_trace_is_refused(tmp_path, capsys, command):
    zero = tmp_path / "zero"
    os.mknod(zero, 0o666 | stat.S_IFCHR, os.makedev(1, 5))  # as /dev/zero
    argv = [w.format(tmp=tmp_path) for w in command] + [str(zero)]
    code, _, err = run(argv, capsys)
    assert code == 2 and err == (f"zabmc: error: trace file {zero} is a device: zabmc reads "
                                 "only regular files\n")


def test_a_trace_over_the_bound_is_refused_unread(tmp_path, capsys):
    big = tmp_path / "big.json"
    with open(big, "wb") as f:
        f.truncate(files.MAX_INPUT_BYTES + 1)  # sparse: no disk is used
    code, _, err = run(["replay", str(big)], capsys)
    assert code == 2 and err == (f"zabmc: error: trace file {big} has 268,435,457 bytes, more "
                                 "than the 268,435,456 zabmc reads\n")


def test_dev_zero_as_trace_is_one_line_in_a_subprocess():
    """The real /dev/zero is only read here, never written."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-m", "zabmc", "replay", "/dev/zero"], env=env,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and p.stderr == ("zabmc: error: trace file /dev/zero is a device: "
                                              "zabmc reads only regular files\n")


# --- standard output that cannot be written (issue #65, item 6) --------------------------------
def _zabmc(args, stdout, preexec=None):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "zabmc", *args], env=env, stdout=stdout,
                          stderr=subprocess.PIPE, text=True, timeout=300, preexec_fn=preexec)


@ROOT_ONLY
def test_a_full_standard_output_is_one_line_and_exit_2(tmp_path):
    with open(_full_node(tmp_path), "w") as full:
        p = _zabmc(["invariants"], full)
    assert p.returncode == 2
    assert p.stderr == "zabmc: error: cannot write standard output: No space left on device\n"


@ROOT_ONLY
def test_a_full_standard_output_keeps_the_verdict_s_code(tmp_path):
    with open(_full_node(tmp_path), "w") as full:
        p = _zabmc(["check", *BAG_BUG, "--json", "--trace-out", str(tmp_path / "t.json")], full)
    assert p.returncode == 10
    assert p.stderr.splitlines()[-1] == ("zabmc: error: cannot write standard output: No space "
                                         "left on device")


@ROOT_ONLY
def test_show_to_a_full_standard_output_does_not_say_wrote(tmp_path, trace):
    with open(_full_node(tmp_path), "w") as full:
        p = _zabmc(["show", str(trace), "-o", "-"], full)
    assert p.returncode == 2 and p.stderr == ("zabmc: error: cannot write the picture to standard "
                                              "output: No space left on device\n")


def test_a_closed_standard_output_is_one_line_and_exit_2(tmp_path):
    p = _zabmc(["invariants"], None, preexec=lambda: os.close(1))
    assert p.returncode == 2
    assert p.stderr == "zabmc: error: cannot write standard output: it is closed\n"


def test_a_closed_standard_output_does_not_lend_fd_1_to_a_file(tmp_path, trace):
    """With fd 1 closed, the first file zabmc opens would be fd 1, and `print` would write into
    it: the trace read by replay stays as it was."""
    copy = tmp_path / "t.json"
    copy.write_bytes(trace.read_bytes())
    p = _zabmc(["replay", str(copy)], None, preexec=lambda: os.close(1))
    assert p.returncode == 10 and copy.read_bytes() == trace.read_bytes()
    assert p.stderr == "zabmc: error: cannot write standard output: it is closed\n"


def test_a_file_written_by_an_earlier_command_in_the_same_process_is_not_this_run_s(tmp_path,
                                                                                     trace,
                                                                                     capsys):
    """`zabmc graph -o X` then, in the same process, `zabmc show T -o X`: the second command did
    not write X, and a graph is no picture."""
    out = tmp_path / "X.out"
    code, _, _ = run(["graph", "--nodes", "2", "--depth", "2", "--format", "json", "-o",
                      str(out)], capsys)
    assert code == 0
    code, _, err = run(["show", str(trace), "-o", str(out)], capsys)
    assert code == 2 and err == (f"zabmc: error: -o {out}: it exists and is no picture zabmc "
                                 "wrote; give --force to replace it\n")
