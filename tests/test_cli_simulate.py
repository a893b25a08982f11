"""`zabmc simulate` as a user sees it: stdout, stderr and exit codes, in-process through
`zabmc.cli.main` (which always ends in `sys.exit`) and, for the byte-exact cases, in a real
process through the `zabmc` console script and `python -c`.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest

from conftest import need_console_script

from models.db19 import MODEL
from models.db19.codec import parse_dump
from zabmc.cli import EXIT_USAGE, EXIT_VIOLATION, main
from zabmc.sim import SimConfig, simulate

# golden digests shared with tests/test_sim.py
D_0_3_1000 = "8aef7604639fe0f2b349b38d74e10b6da8ac252b626976563bba69c722426296"
D_42_3_2000_10 = "6cdadc421ec2a014c0f978d14602facbb3e8eef43444b6f6fce77421e1c31f01"
D_5_3_3000_20_P = "a923f93197ff60bcd27cf8f09ac95d06b7342f61b94f89060ff3f4a5889fd8dd"
D_1_5_1000_3 = "a4bbd82bd1031918345150f907c2f3f8db0e4f734d982e2a8105c90149568566"

SEED42 = ["--seed", "42", "--nodes", "3", "--rounds", "2000", "--proposals", "10"]
LPO_LINE = ("violation: local-primary-order at tick 369: node 0 delivered 1.2:zab-1 as epoch 1's "
            "transaction number 1")


def run(capsys, *args):
    """Run `zabmc <args>` in-process; returns (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as exc:
        main(list(args))
    out, err = capsys.readouterr()
    code = exc.value.code
    return (0 if code is None else code), out, err


def proc(*args, python_c=False):
    cmd = ([sys.executable, "-c", "from zabmc.cli import main; main()"] if python_c
           else [need_console_script()])
    return subprocess.run(cmd + list(args), capture_output=True, timeout=120)


# --- the digest -----------------------------------------------------------------------------------


def test_prints_the_digest_without_trailing_newline(capsys):
    code, out, err = run(capsys, "simulate", "--seed", "0", "--nodes", "3", "--rounds", "1000")
    assert (code, out, err) == (0, D_0_3_1000, "")


def test_defaults_are_seed_0_three_nodes_1000_rounds_no_proposals(capsys):
    assert run(capsys, "simulate") == (0, D_0_3_1000, "")


def test_partition_flag(capsys):
    code, out, err = run(capsys, "simulate", "--seed", "5", "--nodes", "3", "--rounds", "3000",
                         "--proposals", "20", "--partition", "0,2,2,0")
    assert (code, out, err) == (0, D_5_3_3000_20_P, "")
    # spaces and order of pairs do not matter; the set is the same
    code, out, _ = run(capsys, "simulate", "--seed", "5", "--nodes", "3", "--rounds", "3000",
                       "--proposals", "20", "--partition", "2, 0, 0, 2")
    assert (code, out) == (0, D_5_3_3000_20_P)


@pytest.mark.parametrize("python_c", [False, True])
def test_digest_bytes_in_a_real_process(python_c):
    r = proc("simulate", "--seed", "1", "--nodes", "5", "--rounds", "1000", "--proposals", "3",
             python_c=python_c)
    assert (r.returncode, r.stdout, r.stderr) == (0, D_1_5_1000_3.encode(), b"")


# --- --dump ---------------------------------------------------------------------------------------


def test_dump_writes_the_raw_dump_whose_sha256_is_printed(capsys, tmp_path):
    path = tmp_path / "run.dump"
    code, out, err = run(capsys, "simulate", *SEED42[:6], "--dump", str(path))
    data = path.read_bytes()
    assert code == 0 and err == ""
    assert out == hashlib.sha256(data).hexdigest()
    assert data[:8] == b"DSEZAB01" and int.from_bytes(data[8:12], "little") == 3
    want = simulate(MODEL, SimConfig(42, 3, 2000, 0))
    assert data == want.dump
    assert [p["role"] for p in parse_dump(data)] == [x.role for x in want.nodes]


def test_dump_to_an_unwritable_path_is_a_usage_error(capsys, tmp_path):
    code, out, err = run(capsys, "simulate", "--dump", str(tmp_path / "no" / "such" / "file"))
    assert code == EXIT_USAGE and out == ""
    # refused before the run (errors.check_outputs)
    assert err.startswith("zabmc: error: --dump ") and err.count("\n") == 1
    assert err.endswith(f"the directory {tmp_path / 'no' / 'such'} does not exist\n")


# --- --json ---------------------------------------------------------------------------------------


def test_json_has_final_node_states_and_stats(capsys):
    code, out, err = run(capsys, "simulate", "--seed", "5", "--nodes", "3", "--rounds", "3000",
                         "--proposals", "20", "--partition", "2,0,0,2", "--json")
    assert code == 0 and err == ""
    doc = json.loads(out)
    assert doc["model"] == "db19"
    assert doc["config"] == {"seed": 5, "nodes": 3, "rounds": 3000, "proposals": 20,
                             "partition": [[0, 2], [2, 0]]}
    assert doc["sha256"] == D_5_3_3000_20_P
    assert doc["stats"] == {"sent": 2156, "dropped": 145, "delivered": 2010, "in_flight": 1,
                            "pending_proposals": 0, "proposed": 20, "ticks": 3000,
                            "events": 2105}
    s = doc["stats"]
    assert s["sent"] == s["delivered"] + s["dropped"] + s["in_flight"]
    assert "violation" not in doc  # only with --check
    r = simulate(MODEL, SimConfig(5, 3, 3000, 20, frozenset({(0, 2), (2, 0)})))
    assert doc["nodes"] == [MODEL.node_json(x) for x in r.nodes]
    n2 = doc["nodes"][2]
    assert n2["id"] == 2 and n2["role"] == "Leading" and n2["synced"] is True
    assert n2["last_committed"] == [1, 20] and n2["last_zxid"] == [1, 20]
    assert n2["history"][0] == {"zxid": [1, 1], "payload": "zab-0"}
    assert doc["nodes"][0]["role"] == "Looking" and doc["nodes"][0]["history"] == []


def test_json_pending_proposals_when_no_leader_is_ever_synced(capsys):
    code, out, _ = run(capsys, "simulate", "--seed", "8", "--nodes", "2", "--rounds", "1500",
                       "--proposals", "4", "--partition", "1,0", "--json")
    stats = json.loads(out)["stats"]
    assert code == 0 and stats["pending_proposals"] == 4 and stats["proposed"] == 0
    assert stats["dropped"] > 0


def test_json_with_check_reports_the_violation(capsys):
    code, out, err = run(capsys, "simulate", *SEED42, "--json", "--check")
    assert code == EXIT_VIOLATION and err == ""
    doc = json.loads(out)
    assert doc["violation"] == {
        "property": "local-primary-order", "tick": 369, "nodes": [0],
        "message": "node 0 delivered 1.2:zab-1 as epoch 1's transaction number 1",
        "txns": [{"zxid": [1, 2], "payload": "zab-1"}],
    }
    code, out, _ = run(capsys, "simulate", "--seed", "1", "--nodes", "5", "--proposals", "3",
                       "--json", "--check")
    assert code == 0 and json.loads(out)["violation"] is None


# --- --trace --------------------------------------------------------------------------------------


def _line(lines, prefix):
    """The first trace line starting with `prefix` (tick column, event, subject)."""
    hits = [x for x in lines if x.startswith(prefix)]
    assert hits, f"no trace line starts with {prefix!r}"
    return hits[0]


def test_trace_shows_ticks_events_and_role_changes(capsys):
    code, out, err = run(capsys, "simulate", "--seed", "42", "--nodes", "3", "--rounds", "14",
                         "--trace")
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[:3] == [f"     0 start     node {i}  role Looking" for i in range(3)]
    x = _line(lines, "     2 deliver   1->0 LookForLeader(src_id=1, last_zxid=0.0, peer_epoch=0)")
    assert "role Looking -> Following" in x
    x = _line(lines, "     6 deliver   1->2 Vote(voter_id=1, last_zxid=0.0, peer_epoch=0, "
                     "leader_id=2)")
    for part in ("role Looking -> Leading", "accepted_epoch 0 -> 1",
                 "prospective leader of epoch 1"):
        assert part in x
    assert "accepted_epoch 0 -> 1" in _line(lines, "     7 deliver   2->0 NewEpoch(new_epoch=1)")
    assert "current_epoch 0 -> 1" in _line(lines, "     8 deliver   0->2 AckEpoch(current_epoch=0, "
                                                  "last_zxid=0.0)")
    assert "established leader of epoch 1" in _line(lines, "    12 deliver   0->2 AckLeader(")
    # every step is one line, then the digest on a line of its own
    r = simulate(MODEL, SimConfig(42, 3, 14, 0))
    assert len(lines) == r.stats.events + 1
    assert lines[-1] == r.digest and out.endswith(r.digest + "\n")


def test_trace_shows_proposals_commits_heartbeats_and_drops(capsys):
    code, out, _ = run(capsys, "simulate", "--seed", "7", "--nodes", "1", "--rounds", "120",
                       "--proposals", "1", "--trace")
    assert code == 0
    lines = out.splitlines()
    assert len(lines) == 5 and lines[-1] == simulate(MODEL, SimConfig(7, 1, 120, 1)).digest
    x = lines[0]
    assert x.startswith("     0 start     node 0  role Leading")
    assert "prospective leader of epoch 1" in x and "established leader of epoch 1" in x
    assert lines[1] == "    50 heartbeat node 0"
    x = lines[2]
    assert x.startswith("    60 propose   node 0 proposes zab-0  ")
    assert "history len 0 -> 1 (last 0.0 -> 1.1)" in x and "commit 0.0 -> 1.1" in x
    assert lines[3] == "   100 heartbeat node 0"
    code, out, _ = run(capsys, "simulate", "--rounds", "3", "--partition", "0,1", "--trace")
    assert ("     0 drop      0->1 LookForLeader(src_id=0, last_zxid=0.0, peer_epoch=0) "
            "(partition)") in out.splitlines()


def test_trace_with_check_prints_the_violation_in_the_log(capsys):
    code, out, err = run(capsys, "simulate", *SEED42, "--trace", "--check")
    assert code == EXIT_VIOLATION
    assert ("   369 VIOLATION local-primary-order: node 0 delivered 1.2:zab-1 as epoch 1's "
            "transaction number 1") in out.splitlines()
    assert err.strip() == LPO_LINE


# --- --check --------------------------------------------------------------------------------------


def test_check_violation_exit_10_with_one_line_on_stderr(capsys):
    code, out, err = run(capsys, "simulate", *SEED42, "--check")
    assert code == EXIT_VIOLATION == 10
    assert out == D_42_3_2000_10  # the digest is still printed, and the run is unchanged
    assert [line for line in err.splitlines() if line] == [LPO_LINE]


def test_check_violation_in_a_real_process():
    r = proc("simulate", *SEED42, "--check")
    assert r.returncode == 10 and r.stdout == D_42_3_2000_10.encode()
    assert [x for x in r.stderr.decode().splitlines() if x] == [LPO_LINE]


def test_check_leadership_violation(capsys):
    code, _, err = run(capsys, "simulate", "--seed", "62", "--nodes", "5", "--rounds", "2000",
                       "--proposals", "20", "--partition", "3,4,4,3", "--check")
    assert code == 10
    assert err.strip() == ("violation: leadership at tick 14: epoch 1 has 2 established "
                           "leaders: nodes 3, 4")


@pytest.mark.parametrize("args", [
    ["--seed", "1", "--nodes", "5", "--proposals", "3"],
    ["--seed", "7", "--nodes", "1", "--proposals", "25"],
    ["--seed", "5", "--nodes", "3", "--rounds", "3000", "--proposals", "20", "--partition",
     "0,2,2,0"],
])
def test_check_clean_run_exits_0(capsys, args):
    code, out, err = run(capsys, "simulate", *args, "--check")
    assert code == 0 and err == "" and len(out) == 64


def test_check_only_the_named_invariants(capsys):
    code, out, err = run(capsys, "simulate", *SEED42, "--check", "--invariant", "leadership",
                         "--invariant", "sane-history")
    assert (code, out, err) == (0, D_42_3_2000_10, "")
    code, _, err = run(capsys, "simulate", *SEED42, "--check", "--invariant",
                       "local-primary-order")
    assert code == 10 and err.strip() == LPO_LINE


# --- bad input: one line on stderr, exit 2, nothing on stdout -------------------------------------


BAD = [
    (["--nodes", "0"], "--nodes must be between 1 and 9, got 0"),
    (["--nodes", "10"], "--nodes must be between 1 and 9, got 10"),
    (["--nodes", "-3"], "--nodes must be between 1 and 9"),
    (["--nodes", "abc"], "'abc' is not a valid integer"),
    (["--partition", "0,1,2"], "odd number of ids (3)"),
    (["--partition", "0"], "odd number of ids (1)"),
    (["--partition", "0,3"], "--partition names node 3, but node ids are 0..2"),
    (["--nodes", "5", "--partition", "4,5"], "--partition names node 5, but node ids are 0..4"),
    (["--partition", "0,x"], "--partition takes comma-separated node ids"),
    (["--partition", "0,1.5"], "--partition takes comma-separated node ids"),
    (["--partition", "0,,1"], "--partition takes comma-separated node ids"),
    (["--partition", "0,-1"], "--partition ids must not be negative"),
    # as a partition script's `cut 0 0` (#37)
    (["--partition", "0,0"], "--partition: a node has no link to itself: 0,0"),
    (["--partition", "0,1,2,2"], "--partition: a node has no link to itself: 2,2"),
    # superlinear in the proposals: capped, as `check` caps them (#37)
    (["--proposals", "100000", "--rounds", "100"],
     "--proposals is limited to 10,000 in the simulator, got 100,000"),
    (["--rounds", "-1"], "--rounds must not be negative, got -1"),
    (["--proposals", "-5"], "--proposals must not be negative, got -5"),
    (["--seed", "-1"], "--seed must be an unsigned 64-bit integer, got -1"),
    (["--seed", str(2**64)], f"--seed must be an unsigned 64-bit integer, got {2**64}"),
    (["--bogus"], "No such option '--bogus'"),
    (["--model", "nope"], "unknown model 'nope'; choose one of: db19"),
    (["--invariant", "prefix"], "--invariant needs --check"),
    (["--check", "--invariant", "nope"], "unknown property 'nope'"),
    (["extra-argument"], "unexpected extra argument"),
]


@pytest.mark.parametrize("args, fragment", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_is_one_error_line_and_exit_2(capsys, args, fragment):
    code, out, err = run(capsys, "simulate", *args)
    assert code == EXIT_USAGE == 2
    assert out == ""
    assert err.count("\n") == 1 and err.endswith("\n")
    assert err.startswith("zabmc: error: ")
    assert fragment.lower() in err.lower()
    assert "Traceback" not in err


def test_unknown_command_is_a_usage_error(capsys):
    code, out, err = run(capsys, "simulte")
    assert code == 2 and out == "" and err.startswith("zabmc: error: ") and err.count("\n") == 1


def test_bad_input_in_a_real_process_has_no_traceback():
    r = proc("simulate", "--nodes", "10", python_c=True)
    assert r.returncode == 2 and r.stdout == b""
    assert r.stderr == b"zabmc: error: --nodes must be between 1 and 9, got 10\n"


def test_max_seed_and_nine_nodes_are_accepted(capsys):
    code, out, err = run(capsys, "simulate", "--seed", str(2**64 - 1), "--nodes", "9",
                         "--rounds", "50")
    assert code == 0 and err == ""
    assert out == simulate(MODEL, SimConfig(2**64 - 1, 9, 50, 0)).digest


def test_help_lists_the_options(capsys):
    code, out, err = run(capsys, "simulate", "--help")
    assert code == 0 and err == ""
    for opt in ("--seed", "--nodes", "--rounds", "--proposals", "--partition", "--dump",
                "--json", "--trace", "--check", "--invariant", "--model"):
        assert opt in out
