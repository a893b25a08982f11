"""`zabmc real`: run a counterexample's faults, or random ones, on a real ZooKeeper ensemble."""

from __future__ import annotations

import json
import os

import click

from zabmc.cli import EXIT_OK, EXIT_VIOLATION, cli
from zabmc.cli.options import FiniteFloat
from zabmc.core.errors import UsageError
from zabmc.core.files import check_outputs

#: the servers did not show the model's state at some step (a finding about the model or the
#: translation, never smoothed over)
EXIT_NOT_REALISED = 3


def save_schedule_file(schedule: dict, path: str, flag: str, force: bool = False) -> None:
    """A schedule's file, through the one writer (`zabmc.core.files.write`): an existing file
    that is not a schedule is refused unless `force`."""
    from zabmc.core import files
    from zabmc.real.schedule import text

    files.write(path, text(schedule), "schedule", kind="schedule", flag=flag, force=force)


def _load_source(path: str) -> tuple[dict, str]:
    """A schedule, or a trace translated to one; and what it was (the file read once)."""
    from zabmc.core.files import read_bytes
    from zabmc.core.trace import is_trace
    from zabmc.real.schedule import FORMAT, validate

    # the one reader: a regular file of at most 256 MiB (a FIFO or a device is one line)
    raw = read_bytes(path, "schedule or trace file")
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as e:
        raise UsageError(f"{path} is not JSON: {str(e).splitlines()[0][:120]}") from None
    if isinstance(data, dict) and data.get("format") == FORMAT:
        return validate(data), "schedule"
    if not is_trace(data):
        raise UsageError(f"{path} is neither a zabmc trace nor a zabmc schedule")
    return validate(trace_schedule(data, path)), "trace"


def trace_schedule(data, path: str) -> dict:
    """The schedule of the trace whose JSON document `data` was read from `path`: checked,
    replayed once through the explorer, and translated by zabmc.real from the replayed run."""
    from zabmc.core.trace import check_header, parse
    from zabmc.explore.trace import replay
    from zabmc.real.schedule import from_trace, translation

    check_header(data, path)
    # which traces have a real schedule at all, before the rest of the file is read
    translation(data.get("model"), data.get("liveness") is not None)
    trace = parse(data, path)
    return from_trace(trace, replay(trace).replayed(), os.path.basename(path))


class _Printer:
    def __init__(self, console, quiet: bool):
        self.c, self.quiet = console, quiet

    def entry(self, index, entry):
        if self.quiet:
            return
        span = entry.get("step")
        if entry.get("upto", span) != span:
            span = f"{span}-{entry['upto']}"
        ops = "; ".join(_op_text(o) for o in entry.get("ops", ())) or "(the servers alone)"
        self.c.print(f"[bold]step {span}[/] {entry['events'][0]}", highlight=False)
        self.c.print(f"    {ops}", markup=False, highlight=False)

    def op(self, op):
        pass

    def conformed(self, index, entry, seconds):
        if not self.quiet and entry.get("expect"):
            self.c.print(f"    [green]servers show the model's state[/] ({seconds:.1f} s)")

    def note(self, text):
        self.c.print(text, markup=False)


def _op_text(op: dict) -> str:
    k, s = op["op"], op.get("server")
    if k == "links":
        return "links: " + (", ".join(f"{a}-{b} cut" for a, b in op["cut"]) or "all open")
    if k == "write":
        return f"write {op['path']} to server {s}"
    if k in ("hold", "release"):
        return f"{k} {op['point']} on server {s}"
    return f"{k} server {s}"


def _report(console, out) -> None:
    if out.mismatch:
        m = out.mismatch
        console.print(f"[bold yellow]not realised[/] {m['text']}", highlight=False)
        for line in m["all"][1:]:
            console.print(f"    also {line}", markup=False, highlight=False)
    elif out.realised:
        steps = out.steps_total
        console.print(f"[bold]realised[/]: the servers showed the model's state after every "
                      f"entry ({out.entries_done} entries" + (f", model steps 0..{steps}" if steps
                                                             else "") + ")", highlight=False)
    for note in out.notes:
        console.print(f"note: {note}", markup=False, highlight=False)
    acked = [w for w in out.writes if w.outcome == "acknowledged"]
    console.print(f"writes: {len(out.writes)} ({len(acked)} acknowledged, "
                  f"{sum(w.outcome == 'unknown' for w in out.writes)} unknown, "
                  f"{sum(w.outcome == 'failed' for w in out.writes)} failed)", highlight=False)
    for s, info in sorted(out.servers.items(), key=lambda kv: int(kv[0])):
        hist = ", ".join(info["effective_history"]) or "-"
        console.print(f"  server {s}: {info['role']}, acceptedEpoch {info['accepted_epoch']}, "
                      f"currentEpoch {info['current_epoch']}, on disk: {hist}", markup=False,
                      highlight=False)
    if out.violations:
        console.print(f"[bold red]violation on ZooKeeper {out.zookeeper}[/] "
                      f"({len(out.violations)} propert"
                      f"{'y' if len(out.violations) == 1 else 'ies'}):", highlight=False)
        for v in out.violations:
            console.print(f"  [bold]{v.property}[/]: {v.message}", highlight=False)
            for line in v.evidence:
                console.print(f"      {line}", markup=False, highlight=False)
        if out.log_evidence:
            console.print("  what the servers logged about synchronisation and commits:")
            for line in out.log_evidence:
                console.print(f"      {line}", markup=False, highlight=False)
    else:
        console.print(f"[bold green]no violation[/] on ZooKeeper {out.zookeeper}",
                      highlight=False)
    console.print(f"wall time {out.seconds:.1f} s" + (f"; work directory kept: {out.workdir}"
                                                      if out.workdir else ""), highlight=False)


def _guard(fn):
    """Run an ensemble; a server that does not start is reported with the end of its log
    (exit 2: the build or the machine, not zabmc, is at fault)."""
    from zabmc.real.errors import ServerFailed
    try:
        return fn()
    except ServerFailed as e:
        click.echo("\n".join(["zabmc: error: " + str(e).splitlines()[0]]
                             + str(e).splitlines()[1:]), err=True)
        raise click.exceptions.Exit(2) from None


def _exit(out) -> int:
    if out.violations:
        return EXIT_VIOLATION
    if out.mismatch:
        return EXIT_NOT_REALISED
    return EXIT_OK


@cli.command("real")
@click.argument("source", required=False, type=click.Path(dir_okay=False))
@click.option("--random", "random_n", type=click.IntRange(1, 100000), default=None,
              help="Run N seeded random fault schedules instead of SOURCE.")
@click.option("--seed", type=click.IntRange(0, (1 << 62)), default=0, show_default=True,
              help="The campaign's seed (with --random).")
@click.option("--servers", type=click.IntRange(3, 7), default=3, show_default=True,
              help="Ensemble size (with --random; a trace or schedule says its own).")
@click.option("--steps", type=click.IntRange(1, 200), default=None,
              help="Random faults and writes per schedule (with --random; default 12; not with "
                   "--nemesis, whose schedules have their own shape).")
@click.option("--nemesis", "nemesis", metavar="NAME[,NAME...]", default=None,
              help="With --random: schedules aimed at roles instead of random steps, taking the "
                   "named nemeses in turn: isolate-leader, split (a majority and a minority), "
                   "kill-leader-sync (SIGKILL a leader while a follower synchronises), hold-sync "
                   "(hold a follower's SyncThread across a role change), restart-election; or "
                   "all. Who leads is read from the running servers; a failing schedule is saved "
                   "with the servers it ran on and the command that made it.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), default=".",
              show_default=True, help="Where --random saves the schedules that fail.")
@click.option("--zookeeper", "zk_dir", type=click.Path(file_okay=False), default=None,
              help="A directory of ZooKeeper jars to run instead of Debian's package "
                   "(a release, or a build with a patch under review).")
@click.option("--release", "release", metavar="X.Y.Z", default=None,
              help="Run ZooKeeper X.Y.Z from Maven Central (3.8.0 and newer), fetched once with "
                   "mvn into zabmc's cache (docs/real-zookeeper.md, \"Releases from Maven "
                   "Central\").")
@click.option("--releases", "list_releases", is_flag=True,
              help="List the releases cached and those Maven Central serves, and exit.")
@click.option("--global-sessions", is_flag=True,
              help="Run with localSessionsEnabled=false: every client session is a global one, "
                   "a transaction of its own (createSession), so the servers' zxids are no longer "
                   "the model's and a trace stops as not realised; for schedules without "
                   "expectations and for measurements.")
@click.option("--save-schedule", type=click.Path(dir_okay=False), default=None,
              help="Also write the schedule a trace was translated to (an existing file only "
                   "if it is a schedule, unless --force).")
@click.option("--force", is_flag=True,
              help="Let --save-schedule replace an existing file that is not a schedule.")
@click.option("--no-conformance", is_flag=True,
              help="Do not compare the servers with the model's states after each entry.")
@click.option("--conform-timeout", type=FiniteFloat(0.5, 3600), default=30.0,
              show_default=True, help="Seconds the servers may take to show an entry's state.")
@click.option("--keep", is_flag=True, help="Keep the work directory (data, logs, configs).")
@click.option("--json", "as_json", is_flag=True, help="The result as JSON on standard output.")
@click.option("--quiet", "-q", is_flag=True, help="Only the result.")
def real_cmd(source, random_n, seed, servers, steps, nemesis, out_dir, zk_dir, release,
             list_releases, global_sessions, save_schedule, force, no_conformance, conform_timeout,
             keep, as_json, quiet):
    """Run a `zk` counterexample's faults (or random ones) on real ZooKeeper servers.

    SOURCE is a trace of a model with a real counterpart (the zk family: the release models
    from 3.8.0 on and the abstractions of 3.7.0's rules; any other is refused with their list) or
    a schedule written by `zabmc export --format zookeeper`.
    zabmc starts one server per model node on 127.0.0.1 (Debian's zookeeper package, a release
    from Maven Central with --release, or --zookeeper DIR), drives them through the schedule
    (SIGKILL, restarts, links cut and healed through a proxy, client writes, threads held with
    Byteman; the build's classes are checked for the hooks' methods and the log lines read
    first), checks after each entry that the
    servers show the model's state, and judges what they wrote and logged: agreement, prefix,
    acknowledged-durable, epoch-monotonic, epoch-order, leader-unexpected-ack,
    sync-exception and load-exception (docs/real-zookeeper.md). Every server it starts is stopped by its pid,
    whatever ends the run.

    --random N runs N seeded random schedules instead; with --nemesis, schedules aimed at roles
    (docs/real-zookeeper.md, "Nemeses"): isolate-leader, split, kill-leader-sync, hold-sync,
    restart-election. Their letters (L the leader, F1, F2 the others, M a later leader) are
    bound to the servers whose logs say they lead when the schedule gets there; a failing one is
    saved under --out as it ran, with those servers and the command that made it, and `zabmc
    real FILE` runs it again.

    Exit codes: 0 realised and no violation, 10 a property violated on the real servers' data,
    3 not realised (the servers did not show the model's state at some step; nothing violated),
    2 bad usage or input (also: Java or ZooKeeper missing), 1 internal error, 130 interrupted
    (SIGINT), 143 terminated (SIGTERM).
    """
    from rich.console import Console

    if list_releases:
        if source is not None or random_n is not None or release or zk_dir:
            raise UsageError("--releases lists the releases; it takes no trace, --random, "
                             "--release or --zookeeper")
        return _list_releases(as_json)
    names = _combinations(source, random_n, release, zk_dir, save_schedule, nemesis, steps)
    campaign = {"seed": seed, "servers": servers, "steps": 12 if steps is None else steps,
                "nemesis": names, "release": release, "zookeeper": zk_dir,
                "global_sessions": global_sessions, "out": out_dir}
    check_outputs({"--save-schedule": save_schedule}, {"trace": source},
                  kinds={"--save-schedule": "schedule"}, force=force)
    dist, byteman = _build(release, zk_dir)
    extra_cfg = ({"localSessionsEnabled": "false", "localSessionsUpgradingEnabled": "false"}
                 if global_sessions else None)
    console = Console(stderr=as_json, highlight=False, soft_wrap=True)
    broken = _check_hooks(console, dist, byteman)
    if random_n is not None:
        if names:
            _nemesis_hooks(names, broken, byteman, dist)
        elif broken and byteman is not None:
            console.print("note: the random schedules hold no thread on this build",
                          highlight=False)
            byteman = None
        return _campaign(console, dist, byteman, random_n, campaign, keep, as_json, quiet,
                         conform_timeout, extra_cfg)
    schedule, what = _load_source(source)
    used = sorted({op["point"] for e in schedule["entries"] for op in e.get("ops", ())
                   if op["op"] in ("hold", "release")} & set(broken))
    if used:
        raise UsageError(f"{source} holds threads at {', '.join(used)}, which Byteman's rules "
                         f"cannot reach on ZooKeeper {dist.version} (said above)")
    if save_schedule:
        save_schedule_file(schedule, save_schedule, "--save-schedule", force)
    from zabmc.real.runner import run
    if not quiet:
        src = schedule.get("source") or {}
        console.print(f"[bold]zabmc real[/] {source}: {what} of model {src.get('model', '-')}, "
                      f"{len(schedule['entries'])} entries, {schedule['servers']} servers, "
                      f"ZooKeeper {dist.version}", highlight=False)
    out = _guard(lambda: run(schedule, zookeeper=dist, byteman=byteman,
                             observer=_Printer(console, quiet), keep=keep,
                             conform=not no_conformance, conform_timeout=conform_timeout,
                             extra_cfg=extra_cfg))
    if as_json:
        click.echo(json.dumps(dict(out.to_json(), source=source), indent=1))
    _report(console, out)
    return _exit(out)


def _build(release, zk_dir) -> tuple:
    """The ZooKeeper build to run and Byteman's jar (None: not found)."""
    from zabmc.real.install import find_byteman, find_zookeeper
    if release:
        from zabmc.real import releases
        zk_dir = releases.lib_dir(release)
    dist = find_zookeeper(zk_dir)
    byteman = find_byteman()
    if byteman is None and release:
        byteman = releases.byteman_jar(release)
    return dist, byteman


def _combinations(source, random_n, release, zk_dir, save_schedule, nemesis, steps) -> list:
    """The options' combinations checked; --nemesis as a list of names."""
    if release and zk_dir:
        raise UsageError("--release and --zookeeper both name the build to run: give one")
    names = _nemesis_options(nemesis, random_n, steps)
    if (source is None) == (random_n is None):
        raise UsageError("give a trace or schedule file, or --random N (not both)")
    if save_schedule and source is None:
        raise UsageError("--save-schedule goes with a trace")
    return names


def _nemesis_options(nemesis, random_n, steps) -> list:
    """--nemesis as a list of names, after its combinations with the other options."""
    if nemesis is None:
        return []
    if random_n is None:
        raise UsageError("--nemesis goes with --random N (the number of schedules)")
    if steps is not None:
        raise UsageError("--steps is for random schedules; a nemesis's schedules have their "
                         "own shape")
    from zabmc.real.nemesis import parse
    return parse(nemesis)


def _nemesis_hooks(names: list, broken: dict, byteman, dist) -> None:
    """The nemeses that hold threads need Byteman's hooks on this build."""
    from zabmc.real.nemesis import needs_hooks
    holding = needs_hooks(names)
    if holding and byteman is None:
        raise UsageError(f"--nemesis {','.join(holding)} holds threads with Byteman, whose jar "
                         "was not found: apt-get install libbyteman-java, or set "
                         "ZABMC_BYTEMAN_JAR")
    if holding and broken:
        raise UsageError(f"--nemesis {','.join(holding)} holds threads at hook points that do "
                         f"not apply to ZooKeeper {dist.version} (said above)")


def command_line(count: int, c: dict) -> str:
    """The command that runs a campaign again (recorded in every schedule it saves)."""
    words = ["zabmc", "real"]
    if c["nemesis"]:
        from zabmc.real.nemesis import NEMESES
        words += ["--nemesis", "all" if c["nemesis"] == list(NEMESES) else ",".join(c["nemesis"])]
    words += ["--random", str(count), "--seed", str(c["seed"])]
    if c["servers"] != 3:
        words += ["--servers", str(c["servers"])]
    if not c["nemesis"] and c["steps"] != 12:
        words += ["--steps", str(c["steps"])]
    if c["release"]:
        words += ["--release", c["release"]]
    if c["zookeeper"]:
        words += ["--zookeeper", c["zookeeper"]]
    if c["global_sessions"]:
        words.append("--global-sessions")
    import shlex
    return " ".join(shlex.quote(w) for w in words + ["--out", c["out"]])


def campaign_schedule(k: int, count: int, c: dict, hooks: bool) -> dict:
    """The k-th schedule of a campaign (random or nemesis), saying the command that made it."""
    cmd = command_line(count, c)
    if c["nemesis"]:
        from zabmc.real.nemesis import generate as nemesis_schedule
        return nemesis_schedule(c["nemesis"], c["seed"], k, servers=c["servers"], command=cmd)
    from zabmc.real.campaign import generate
    out = generate(c["seed"], k, servers=c["servers"], steps=c["steps"], hooks=hooks)
    out["source"]["command"] = cmd
    return out


def _check_hooks(console, dist, byteman) -> dict:
    """Byteman's TestScript on the build's jars (zabmc/real/hookcheck.py): every hook point
    that does not apply is said here, before the run; {point: why} of those. So is every log
    text zabmc reads that the build does not write (zabmc/real/logtexts.py)."""
    from zabmc.real import logtexts
    for text, who, src in logtexts.missing(dist.classpath):
        console.print(f"note: ZooKeeper {dist.version} never logs \"{text}\", which zabmc reads "
                      f"({who}; written by 3.8.0's {src}): the parser expects the log lines of "
                      f"3.8.0-3.9.5", markup=False, highlight=False)
    if byteman is None:
        return {}
    from zabmc.real import hookcheck
    from zabmc.real.install import find_java
    broken = hookcheck.not_applying(hookcheck.check(dist.classpath, byteman, find_java()))
    for point, why in sorted(broken.items()):
        console.print(f"note: hook point {point} does not apply to ZooKeeper {dist.version}: "
                      f"{why}", markup=False, highlight=False)
    return broken


def _bound_text(bound: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in bound.items())


def ran_schedule(schedule: dict, out) -> dict:
    """The schedule as it ran: a nemesis's names replaced by the servers they were bound to
    (an ordinary schedule, which `zabmc real FILE` runs again), the binding in its source."""
    from zabmc.real.schedule import validate
    if len(out.ran) < len(schedule["entries"]):
        return schedule  # the run stopped early: the schedule as generated
    done = dict(schedule, entries=out.ran, source=dict(schedule["source"]))
    if out.bound:
        done["source"]["bound"] = dict(out.bound)
    return validate(done)


def _list_releases(as_json: bool) -> int:
    from zabmc.real import releases
    rows, notes = releases.listing()
    if as_json:
        click.echo(json.dumps({"releases": [{"version": v, "status": st} for v, st in rows],
                               "notes": notes}, indent=1))
        return EXIT_OK
    for v, st in rows:
        click.echo(f"{v:<8} {st}")
    for n in notes:
        click.echo(f"note: {n}")
    return EXIT_OK


def _campaign(console, dist, byteman, count, c, keep, as_json, quiet, conform_timeout,
              extra_cfg=None) -> int:
    from zabmc.real.runner import run

    rows, failed = [], 0
    seed, out_dir = c["seed"], c["out"]
    kind = "nemesis" if c["nemesis"] else "random"
    for k in range(count):
        schedule = campaign_schedule(k, count, c, byteman is not None)
        out = _guard(lambda: run(schedule, zookeeper=dist, byteman=byteman, keep=keep,
                                 conform=False, conform_timeout=conform_timeout,
                                 extra_cfg=extra_cfg))
        row = {"index": k, "verdict": "violation" if out.violations else "ok",
               "nemesis": schedule["source"].get("nemesis"), "servers_bound": out.bound,
               "properties": sorted({v.property for v in out.violations}),
               "writes": len(out.writes),
               "acknowledged": sum(w.outcome == "acknowledged" for w in out.writes),
               "wall_seconds": round(out.seconds, 1), "notes": out.notes}
        if out.workdir:
            row["workdir"] = out.workdir
        if out.violations:
            failed += 1
            path = os.path.join(out_dir, f"zabmc-real-{seed}-{k}.schedule.json")
            try:
                os.makedirs(out_dir, exist_ok=True)
            except OSError as e:
                raise UsageError(f"cannot create {out_dir}: {e.strerror}") from None
            save_schedule_file(ran_schedule(schedule, out), path, "--out")
            row["schedule"] = path
            row["violations"] = [v.to_json() for v in out.violations]
        rows.append(row)
        if not quiet:
            console.print(f"schedule {k} (seed {seed}"
                          + (f", {row['nemesis']} {_bound_text(out.bound)}" if c["nemesis"]
                             else "") + f"): {row['verdict']}"
                          + (f" {', '.join(row['properties'])}, saved to {row['schedule']}"
                             if out.violations else "")
                          + f"; {row['acknowledged']}/{row['writes']} writes acknowledged, "
                          f"{row['wall_seconds']} s" + ("; " + "; ".join(out.notes)
                                                        if out.notes else ""), highlight=False)
    if as_json:
        click.echo(json.dumps({"seed": seed, "schedules": count, "failed": failed,
                               "nemesis": c["nemesis"] or None,
                               "command": command_line(count, c),
                               "zookeeper": dist.version, "runs": rows}, indent=1))
    console.print(f"{count} {kind} schedules on ZooKeeper {dist.version}: {failed} with a "
                  "violation", highlight=False)
    return EXIT_VIOLATION if failed else EXIT_OK
