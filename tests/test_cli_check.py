"""`zabmc check`, `zabmc replay` and `zabmc invariants` as a user and a CI pipeline see them."""

from __future__ import annotations

import json

import pytest

from zabmc.cli import main

BAG_BUG = ["--nodes", "2", "--network", "bag", "--max-timeouts", "1", "--proposals", "2"]
LPO = ["--invariant", "local-primary-order"]


def run(args, capsys):
    with pytest.raises(SystemExit) as e:
        main(list(args))
    out, err = capsys.readouterr()
    return e.value.code, out, err


def test_violation_exit_code_json_and_trace_file(tmp_path, capsys):
    trace = tmp_path / "t.json"
    code, out, err = run(["check", *BAG_BUG, "--json", "--trace-out", str(trace)], capsys)
    assert str(trace.with_name("t-agreement.json")) in out
    assert code == 10
    summary = json.loads(out)
    assert summary["verdict"] == "violation" and summary["stop_reason"] == "violation"
    assert summary["config"] == {"nodes": 2, "network": "bag", "max_drops": 0, "max_timeouts": 1,
                                 "max_heartbeats": 0, "proposals": 2, "depth": 40, "max_crashes": 0}
    assert [(v["property"], v["depth"]) for v in summary["violations"]] == [
        ("local-primary-order", 11), ("agreement", 11), ("total-order", 11)]
    v = summary["violations"][0]
    assert (v["trace"], v["nodes"]) == (str(trace.with_name("t-local-primary-order.json")), [0])
    trace = trace.with_name("t-local-primary-order.json")
    assert summary["depth_reached"] == 11 and summary["distinct_states"] > 0
    data = json.loads(trace.read_text())
    assert data["format"] == "zabmc-trace" and data["version"] == 2
    from zabmc.explore.checkpoint import zabmc_version
    # where it came from: the command that found it, word for word, and zabmc's version
    assert data["origin"] == ("zabmc check --nodes 2 --network bag --max-timeouts 1 --proposals 2 "
                              f"--json --trace-out {trace.with_name('t.json')} "
                              f"(zabmc {zabmc_version()})")
    assert len(data["events"]) == 11 and len(data["states"]) == 12
    assert data["violation"]["step"] == 11
    # the counterexamples go to stderr, so a CI log shows them; stdout is the JSON alone
    # one step breaks three properties: the trace is printed once, naming all three, and the
    # step is marked with each property and its witnesses
    assert err.count("counterexample:") == 1
    assert "counterexample: local-primary-order, agreement, total-order (11 steps" in err
    assert ">> 11 deliver 1->0 Commit(zxid=1.2)" in err
    assert "=> agreement violated: nodes 0 and 1 delivered different transactions" in err
    assert "witnesses: node(s) 0, 1; transaction(s) 1.2:zab-1, 1.1:zab-0" in err
    assert "witnesses: node(s) 0; transaction(s) 1.2:zab-1" in err


def test_a_replaced_trace_file_is_named(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(["check", *BAG_BUG, "--invariant", "agreement"], capsys)
    assert code == 10 and "replaced" not in out
    assert "trace for agreement written to zabmc-db19-agreement.trace.json (replay:" in out
    code, out, _ = run(["check", *BAG_BUG, "--invariant", "agreement"], capsys)
    assert code == 10
    assert ("trace for agreement written to zabmc-db19-agreement.trace.json (it replaced the "
            "file of an earlier run)") in out


def test_no_violation_exit_zero(capsys):
    code, out, _ = run(["check", "--nodes", "2", "--proposals", "2", "--json"], capsys)
    assert code == 0
    s = json.loads(out)
    assert (s["verdict"], s["stop_reason"], s["distinct_states"]) == ("ok", "exhausted", 73)


@pytest.mark.parametrize("extra", [[], ["--liveness", "--model", "zab", "--proposals", "1"]])
def test_require_complete_fails_a_clean_run_that_stopped_at_its_depth_bound(capsys, extra):
    """A CI gate whose runs should exhaust: the depth bound cutting one short exits 4 with one
    line saying so; the same run exhausted, or without the flag, exits 0."""
    base = ["check", "--nodes", "2", "-q", *extra]
    assert run([*base, "--depth", "5"], capsys)[0] == 0
    code, _, err = run([*base, "--depth", "5", "--require-complete"], capsys)
    assert code == 4 and err.splitlines() == [
        "zabmc: incomplete: the search stopped at the depth bound before exhausting the state "
        "space, and --require-complete was given"]
    code, _, err = run([*base, "--depth", "100", "--require-complete"], capsys)
    assert (code, err) == (0, "")


def test_require_complete_leaves_a_violation_exit_10(tmp_path, capsys):
    code, _, err = run(["check", *BAG_BUG, "--depth", "30", "--require-complete", "-q",
                        "--trace-out", str(tmp_path / "t.json")], capsys)
    assert code == 10 and "incomplete" not in err


def test_human_output_shows_trace_and_verdict(tmp_path, capsys):
    code, out, _ = run(["check", *BAG_BUG, *LPO, "--quiet", "--trace-out",
                        str(tmp_path / "x.json")], capsys)
    assert code == 10
    assert "counterexample: local-primary-order (11 steps" in out
    assert " 11 deliver 1->0 Commit(zxid=1.2)" in out
    assert "VIOLATION: local-primary-order" in out
    assert "collision probability" in out


def test_all_reports_each_property_once(tmp_path, capsys):
    code, out, _ = run(["check", *BAG_BUG, "--depth", "12", "--all", "--json",
                        "--trace-out", str(tmp_path / "t.json")], capsys)
    s = json.loads(out)
    props = [v["property"] for v in s["violations"]]
    assert code == 10 and len(props) == len(set(props)) and "local-primary-order" in props
    for v in s["violations"]:
        assert v["trace"] == str(tmp_path / f"t-{v['property']}.json")


def test_no_invariants_checks_nothing(capsys):
    code, out, _ = run(["check", *BAG_BUG, "--depth", "12", "--no-invariants", "--json"], capsys)
    s = json.loads(out)
    assert code == 0 and s["invariants"] == [] and s["violations"] == []


def test_dfs_and_random_strategies(tmp_path, capsys):
    code, out, _ = run(["check", *BAG_BUG, "--strategy", "dfs", "--depth", "14", "--json",
                        "--trace-out", str(tmp_path / "d.json")], capsys)
    assert code == 10 and json.loads(out)["strategy"] == "dfs"
    code, out, _ = run(["check", *BAG_BUG, "--strategy", "random", "--seed", "3", "--walks", "3000",
                        "--depth", "30", "--json", "--trace-out", str(tmp_path / "r.json")], capsys)
    found = {v["property"]: v["depth"] for v in json.loads(out)["violations"]}
    # random walks are shortened by replay down to the BFS-shortest depth here
    assert code == 10 and found["local-primary-order"] == 11


def test_dfs_max_states_is_a_partial_search_that_says_so(capsys):
    base = ["check", "--nodes", "2", "--network", "bag", "--proposals", "1", "--strategy", "dfs",
            "--depth", "200", "--max-states", "50"]
    code, out, _ = run([*base, "--json"], capsys)
    s = json.loads(out)
    assert (code, s["stop_reason"], s["distinct_states"]) == (0, "state-cap", 50)
    code, out, _ = run([*base, "-q"], capsys)
    assert code == 0 and out.splitlines()[0] == (
        "OK: no property violated (stopped at --max-states 50: the first distinct states in "
        "depth-first order, partial result)")
    code, _, err = run([*base, "-q", "--require-complete"], capsys)
    assert code == 4 and "stopped at the state cap" in err


def test_replay_round_trip(tmp_path, capsys):
    trace = tmp_path / "t.json"
    run(["check", *BAG_BUG, *LPO, "--quiet", "--trace-out", str(trace)], capsys)
    code, out, _ = run(["replay", str(trace)], capsys)
    assert code == 10
    assert "confirmed: local-primary-order violated at step 11" in out
    assert "final sha256 " in out
    digest = out.split("final sha256 ")[1].split()[0]
    assert digest == json.loads(trace.read_text())["final_sha256"]


def test_replay_detects_a_changed_verdict(tmp_path, capsys):
    trace = tmp_path / "t.json"
    run(["check", *BAG_BUG, *LPO, "--quiet", "--trace-out", str(trace)], capsys)
    data = json.loads(trace.read_text())
    data["violation"]["step"] = 5
    trace.write_text(json.dumps(data))
    code, out, _ = run(["replay", "--quiet", str(trace)], capsys)
    assert code == 1 and "NOT confirmed" in out


@pytest.mark.parametrize("content,needle", [
    ("{not json", "is not valid JSON"),
    ("[]", "is not a zabmc trace"),
    ('{"format": "zabmc-trace", "version": 99}', "unsupported trace version 99"),
    ('{"format": "zabmc-trace", "version": 1}', "missing 'model'"),
    ('{"format": "zabmc-trace", "version": 1, "model": "nope", "config": {}, "invariants": [],'
     ' "events": []}', "unknown model 'nope'"),
    ('{"format": "zabmc-trace", "version": 1, "model": "db19", "config": {"nodes": "x"},'
     ' "invariants": [], "events": []}', "'nodes' must be int"),
    ('{"format": "zabmc-trace", "version": 1, "model": "db19", "config": {"nodes": 2},'
     ' "invariants": [], "events": [{"kind": "timeout", "node": 0}]}', "step 1 (timeout node 0)"),
    ('{"format": "zabmc-trace", "version": 1, "model": "db19", "config": {"nodes": 2},'
     ' "invariants": [], "events": [7]}', "event 1 is not an event object"),
])
def test_replay_rejects_bad_files(tmp_path, capsys, content, needle):
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    code, out, err = run(["replay", str(bad)], capsys)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("zabmc: error: ") and needle in err


def test_replay_missing_file(tmp_path, capsys):
    code, _, err = run(["replay", str(tmp_path / "none.json")], capsys)
    assert code == 2 and "does not exist" in err


@pytest.mark.parametrize("args,needle", [
    (["--nodes", "0"], "--nodes must be between 1 and 9"),
    (["--depth", "-1"], "--depth must not be negative"),
    (["--network", "tcp"], "Invalid value for '--network'"),
    (["--invariant", "nope"], "unknown property 'nope'"),
    (["--invariant", "agreement", "--no-invariants"], "exclude each other"),
    (["--walks", "0"], "--walks must be at least 1"),
    (["--model", "paxos"], "unknown model 'paxos'"),
    (["--engine", "spark", "--strategy", "dfs"], "breadth-first search only"),
    (["--proposals", "1000"], "limited to 255 proposals"),
    (["--strategy", "random", "--require-complete"], "--require-complete needs an exhaustive"),
    (["--strategy", "random", "--max-states", "5"], "works with --liveness or --strategy dfs"),
    (["--strategy", "dfs", "--max-states", "0"], "--max-states must be at least 1"),
    # issue #65: a property no run of the model can break makes a check that cannot fail
    (["--nodes", "2", "--proposals", "1", "--depth", "12", "--invariant", "sync-exception"],
     "property 'sync-exception' cannot break on model db19"),
    (["--model", "zk", "--proposals", "1", "--max-timeouts", "1", "--depth", "30",
      "--invariant", "leader-unexpected-ack"],
     "cannot break on model zk: no run of it reports that failure or reaches that state; it can "
     "on zk-3.7.0-threads, zk-3.9.2-threads, zk-3.7.0-fwd, zk-3.7.0-shutdown, zk-3.9.2-shutdown, "
     "zk-3.7.0-epoch, zk-3.9.2-epoch, zk-3.6.2, zk-3.7.0, zk-3.8.0, zk-3.8.5, zk-3.9.2, "
     "zk-3.9.3, zk-3.9.4"),
    (["--model", "zab", "--network", "fifo", "--invariant", "agreement", "--invariant",
      "committed-log-hole"], "'committed-log-hole' cannot break on model zab"),
])
def test_check_bad_usage(capsys, args, needle):
    code, out, err = run(["check", *args], capsys)
    assert code == 2
    assert err.count("\n") == 1 and needle in err


def test_invariants_lists_every_property(capsys):
    code, out, _ = run(["invariants"], capsys)
    assert code == 0
    for name in ("integrity", "total-order", "agreement", "prefix", "local-primary-order",
                 "global-primary-order", "primary-integrity", "leadership",
                 "single-prospective-leader", "sane-history"):
        assert name in out
    assert "DSN 2011" in out and "LADIS 2008" in out


def test_a_version_1_trace_still_replays(tmp_path, capsys):
    """Traces written before crashes existed (format version 1: no max_crashes, no crash events)
    load and replay to the same violation and digest."""
    trace = tmp_path / "t.json"
    run(["check", *BAG_BUG, *LPO, "--quiet", "--trace-out", str(trace)], capsys)
    data = json.loads(trace.read_text())
    assert data["version"] == 2 and data["config"]["max_crashes"] == 0
    data["version"] = 1
    del data["config"]["max_crashes"]
    old = tmp_path / "v1.json"
    old.write_text(json.dumps(data))
    code, out, _ = run(["replay", "-q", str(old)], capsys)
    assert code == 10
    assert "confirmed: local-primary-order violated at step 11" in out
    assert data["final_sha256"] in out


def test_a_crash_trace_replays_and_names_its_crash(tmp_path, capsys):
    trace = tmp_path / "c.json"
    code, _, _ = run(["check", "--nodes", "2", "--max-crashes", "1", "--invariant", "agreement",
                      "--quiet", "--trace-out", str(trace)], capsys)
    assert code == 10
    data = json.loads(trace.read_text())
    kinds = [e["kind"] for e in data["events"]]
    assert kinds.count("crash") == 1 and kinds.count("restart") == 1
    crash = kinds.index("crash")
    assert data["events"][crash] == {"kind": "crash", "node": 0}
    assert data["states"][crash + 1]["down"] == [0]
    assert data["states"][crash + 1]["budgets"]["crashes_left"] == 0
    assert data["states"][crash + 2]["down"] == []
    code, out, _ = run(["replay", str(trace)], capsys)
    assert code == 10 and "crash node 0" in out and "node 0 is down" in out
    assert "confirmed: agreement violated at step 25" in out


def test_a_hand_edited_trace_is_bad_input_naming_the_step(tmp_path, capsys):
    trace = tmp_path / "t.json"
    run(["check", *BAG_BUG, "--invariant", "agreement", "--trace-out", str(trace)], capsys)
    data = json.loads(trace.read_text())
    data["states"][4]["nodes"][1]["current_epoch"] = 9  # the state after step 4, edited
    trace.write_text(json.dumps(data))
    code, out, err = run(["replay", str(trace)], capsys)
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert err.strip() == (
        "zabmc: error: trace does not match the model: the state after step 4 (deliver 0->1 "
        "AckEpoch(current_epoch=0, last_zxid=0.0)) differs from the one recorded in the file "
        "(edited by hand, or written by another version of the model)")


def test_invariants_json(capsys):
    from zabmc.invariants import DEFAULT_PROPERTIES, PROPERTIES

    code, out, _ = run(["invariants", "--json"], capsys)
    rows = json.loads(out)
    assert code == 0 and [r["name"] for r in rows] == list(PROPERTIES)
    assert [r["name"] for r in rows if r["default"]] == list(DEFAULT_PROPERTIES)
    assert all(r["statement"] and r["source"] for r in rows)


def test_random_walk_progress_shows_walks_done_and_eta():
    import io

    from rich.console import Console

    from zabmc.explore.outcome import Progress
    from zabmc.report.console import ConsoleObserver

    buf = io.StringIO()
    obs = ConsoleObserver(Console(file=buf, width=200), line_every=0.0)
    obs.on_start({"model": "db19", "strategy": "random", "engine": "in-process",
                  "config": {"nodes": 3}, "invariants": [], "walks": 100})
    obs.on_progress(Progress(5, 10, 10, 25, 2.0))
    assert "walks 25/100 (25%), ETA 6s" in buf.getvalue()
    obs.on_start({"model": "db19", "strategy": "bfs", "engine": "in-process",
                  "config": {"nodes": 3}, "invariants": [], "walks": None})
    obs.on_progress(Progress(5, 10, 10, 25, 2.0))
    assert "frontier 25," in buf.getvalue().splitlines()[-1]


# --- what a newcomer meets first (#37) ---------------------------------------------------------------
def test_bare_zabmc_prints_the_command_list_and_exits_0(capsys):
    """It was "error: Usage: ..." and exit 2."""
    code, out, err = run([], capsys)
    assert (code, err) == (0, "")
    code, help_out, _ = run(["--help"], capsys)
    assert out.rstrip("\n") == help_out.rstrip("\n")
    commands = out[out.index("Commands:"):].splitlines()[1:]
    assert [line.split()[0] for line in commands] == [
        "check", "export", "gate", "graph", "invariants", "models", "mutate", "real", "replay",
        "show", "simulate", "sweep"]


def test_check_help_groups_its_options_into_sections(capsys):
    code, out, _ = run(["check", "--help"], capsys)
    assert code == 0
    titles = [line[:-1] for line in out.splitlines() if line and not line.startswith(" ")
              and line.endswith(":")]
    assert titles == ["Model and bounds", "Properties", "Search", "Output",
                      "Engine and time limit", "Long runs: checkpoints and memory (bfs)",
                      "Other options"]
    # each flag in its section: the text between a title and the next
    body = {t: out.split(t + ":\n", 1)[1].split("\n\n", 1)[0] for t in titles}
    assert "--max-crashes" in body["Model and bounds"] and "--liveness" in body["Properties"]
    assert "--reduction" in body["Search"] and "--resume DIR" in body["Long runs: checkpoints "
                                                                      "and memory (bfs)"]
    assert body["Other options"].split() == ["-h,", "--help", "Show", "this", "message", "and",
                                             "exit."]


def test_no_help_shows_a_range_of_none(capsys):
    """`--time-limit` showed `[x<=None]`: click describes a FloatRange without bounds that way."""
    code, out, _ = run(["--help"], capsys)
    commands = [line.split()[0] for line in out[out.index("Commands:"):].splitlines()[1:]]
    for cmd in commands:
        code, text, _ = run([cmd, "--help"], capsys)
        assert code == 0 and "None]" not in text, cmd
    code, text, _ = run(["check", "--help"], capsys)
    flat = " ".join(text.split())
    assert "--time-limit SECONDS Stop after this long and report the partial result. --engine" in flat


def test_model_help_lists_every_registered_model(capsys):
    from zabmc.core.model import ALIASES, MODELS

    for cmd in ("check", "graph"):
        code, out, _ = run([cmd, "--help"], capsys)
        flat = " ".join(out.split())
        assert code == 0 and f"Protocol model: {', '.join(MODELS)}; also named: " \
            f"{', '.join(ALIASES)} (`zabmc models`" in flat


def test_all_names_each_propertys_trace_after_the_files_own_extension_only():
    """`--all --trace-out FILE` writes FILE-<property>.ext; a dot inside a name (a version) is no
    extension: zk-3.7.0-bfs gives zk-3.7.0-bfs-<property>.json, not zk-3.7-<property>.0-bfs."""
    from zabmc.cli.results import trace_path

    assert trace_path("out/zk-3.7.0-bfs", "zk", "agreement", True) == "out/zk-3.7.0-bfs-agreement.json"
    assert trace_path("t.json", "zk", "agreement", True) == "t-agreement.json"
    assert trace_path("run.trace.json", "zk", "prefix", True) == "run.trace-prefix.json"
    assert trace_path("c.html", "zk", "prefix", True, default_ext=".html") == "c-prefix.html"
    assert trace_path("v1.2", "zk", "prefix", True) == "v1.2-prefix.json"
    assert trace_path("t.json", "zk", "prefix", False) == "t.json"
    assert trace_path(None, "zk", "prefix", True) == "zabmc-zk-prefix.trace.json"
