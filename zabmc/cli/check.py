"""`zabmc check`: enumerate every interleaving within the bounds and check the properties.

Also `zabmc replay` and `zabmc invariants`, which share its trace format and property registry.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from contextlib import contextmanager

import click

from zabmc.cli import EXIT_INCOMPLETE, EXIT_INTERNAL, EXIT_OK, EXIT_VIOLATION, cli
from zabmc.errors import UsageError
from zabmc.strategies import STRATEGIES, get_strategy

ENGINES = ("in-process", "spark")


def _trace_path(base: str | None, model: str, prop: str, many: bool, kind: str = "trace",
                default_ext: str = ".json") -> str:
    """Where the counterexample of `prop` goes: `zabmc-<model>-<prop>.<kind>.json` by default;
    `base` itself, or `base-<prop>.ext` when a run writes several."""
    if base is None:
        return f"zabmc-{model}-{prop}.{kind}.json"
    if not many:
        return base
    stem, ext = os.path.splitext(base)
    return f"{stem}-{prop}{ext or default_ext}"


def _require_network(model, network: str) -> None:
    """A one-line error when the model assumes FIFO links and the run does not give them."""
    if model.network_assumption == "fifo" and network != "fifo":
        raise UsageError(f"model {model.name} assumes FIFO links (the paper's TCP); under "
                         f"--network {network} its violations would not be bugs: use --network fifo")


@cli.command()
@click.option("--model", "model_name", default="db19", show_default=True, help="Protocol model.")
@click.option("--nodes", type=int, default=3, show_default=True, help="Cluster size.")
@click.option("--depth", type=int, default=40, show_default=True, help="Bound on events per path.")
@click.option("--network", type=click.Choice(["bag", "fifo"]), default="fifo", show_default=True,
              help="bag: any in-flight message may arrive next (the simulator's 1-3 tick delays); "
                   "fifo: per-link order (TCP).")
@click.option("--max-drops", type=int, default=0, show_default=True, help="Message drops budget.")
@click.option("--max-timeouts", type=int, default=0, show_default=True,
              help="Election timeouts budget (shared by all nodes).")
@click.option("--max-heartbeats", type=int, default=0, show_default=True, help="Heartbeats budget.")
@click.option("--proposals", type=int, default=2, show_default=True, help="Client proposals budget.")
@click.option("--max-crashes", type=int, default=0, show_default=True,
              help="Crashes budget (shared by all nodes): a crash keeps only the node's durable "
                   "fields; restarts are unbudgeted.")
@click.option("--strategy", type=click.Choice(list(STRATEGIES)), default="bfs", show_default=True,
              help="bfs: shortest counterexamples; dfs: memory = the path; random: seeded walks.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for --strategy random.")
@click.option("--walks", type=int, default=1000, show_default=True,
              help="Walks for --strategy random.")
@click.option("--no-shorten", is_flag=True,
              help="Keep dfs/random counterexamples as found (default: shorten them by replay).")
@click.option("--all", "find_all", is_flag=True,
              help="Do not stop at the first violation; report each violated property once.")
@click.option("--invariant", "invariants", multiple=True, metavar="NAME",
              help="Check only this property (repeatable); see `zabmc invariants`.")
@click.option("--no-invariants", is_flag=True, help="Check nothing and keep no ghost state: the distinct-state count is then the "
                   "protocol's own (docs/semantics.md, E6).")
@click.option("--trace-out", type=click.Path(dir_okay=False), default=None,
              help="Counterexample trace file [default: zabmc-<model>-<property>.trace.json]; "
                   "with --all, FILE-<property>.json per property.")
@click.option("--json", "as_json", is_flag=True, help="Print a machine-readable summary.")
@click.option("--html", "html_out", default=None, metavar="FILE",
              help="Draw the counterexample as a sequence chart in one self-contained HTML file "
                   "(with --all, FILE-<property>.html per run of events).")
@click.option("--quiet", "-q", is_flag=True, help="No progress display.")
@click.option("--time-limit", type=float, default=None, metavar="SECONDS",
              help="Stop after this long and report the partial result.")
@click.option("--engine", type=click.Choice(ENGINES), default="in-process", show_default=True)
@click.option("--master", default="local[*]", show_default=True, help="Spark master URL.")
@click.option("--partitions", type=int, default=None, help="Spark partitions [default: cores].")
@click.option("--verbose", is_flag=True, help="Show engine logs (Spark start-up output).")
@click.option("--checkpoint", "checkpoint_dir", type=click.Path(file_okay=False), default=None,
              metavar="DIR",
              help="bfs: write checkpoints into DIR (atomically; the last good one survives a kill "
                   "at any instant), at level boundaries only, at most every --checkpoint-every "
                   "seconds, and a last one when the search ends or is interrupted; --resume DIR "
                   "continues from there. With --engine spark, DIR serves both losses: Spark's "
                   "reliable checkpoints cut the lineage every 10 levels (a lost executor's work is "
                   "rebuilt from there), and every task writes its partition's part of a level "
                   "snapshot at most every --checkpoint-every seconds, sealed by a manifest once "
                   "the level is done (a lost driver loses only the levels since). DIR must be "
                   "storage the driver and every executor see at the same path (on a cluster, a "
                   "shared file system; a URL such as hdfs://... gets the lineage cuts only).")
@click.option("--checkpoint-every", type=float, default=300.0, show_default=True,
              metavar="SECONDS",
              help="Seconds between two checkpoints (taken at the first level boundary after; 0: "
                   "at every level boundary).")
@click.option("--resume", "resume_dir", type=click.Path(file_okay=False), default=None,
              metavar="DIR",
              help="bfs: continue the search checkpointed in DIR; the other flags must be the "
                   "ones it was started with (the engine and --partitions may differ). Keeps "
                   "checkpointing into DIR unless --checkpoint names another directory. "
                   "--engine spark resumes a checkpoint of either engine; the in-process engine "
                   "resumes only its own (a Spark snapshot has no parent table).")
@click.option("--spill-dir", default=None, metavar="DIR",
              help="bfs: where levels that do not fit go [default: $TMPDIR]; directories left "
                   "there by runs killed with SIGKILL are removed.")
@click.option("--memory-limit", default=None, metavar="SIZE",
              help="bfs: memory the search may count on (e.g. 800M, 2G; 'none': keep every level "
                   "in memory) [default: half of MemAvailable]. A level whose states would take "
                   "more than a quarter of it, and at most 256 MiB, goes to disk (compressed "
                   "segment files in $TMPDIR) and is read back when it is expanded; the visited "
                   "set stays in memory (22 bytes a state).")
@click.option("--liveness", is_flag=True,
              help="Check liveness instead of safety: once faults stop, a leader is elected "
                   "(eventually-leader) and its transactions are delivered (eventually-commit); "
                   "--invariant picks one. Counterexamples are lassos (docs/liveness.md).")
@click.option("--require-complete", is_flag=True,
              help="Exit 4 when the search ends without exhausting its state space (the depth "
                   "bound, --max-states or --time-limit stopped it) and found no violation: for "
                   "a CI gate whose runs are meant to exhaust, a change that makes the space "
                   "grow without end (a counter that never settles) fails instead of passing "
                   "partially.")
@click.option("--reduction", type=click.Choice(["none", "por"]), default="none", show_default=True,
              help="por: partial-order reduction. Expand at each state only the events of a set "
                   "of nodes that nothing outside it can interfere with (a stubborn set), on FIFO "
                   "links, breadth-first, in-process. Exhausting the reduced space gives the "
                   "verdict and violated properties of the full one with fewer states; "
                   "counterexamples may be longer, and a run stopped by --depth covers less than "
                   "every path of that length (docs/reduction.md).")
@click.option("--max-states", type=int, default=None, metavar="N",
              help="--liveness: stop exploring after N states (the graph is kept in memory) "
                   "[default: 1,000,000]; the verdict is then partial. --strategy dfs: stop at "
                   "the first distinct state beyond N [default: no cap]; the successors' order "
                   "is fixed, so a capped search covers the same N states on every run.")
def check(model_name, nodes, depth, network, max_drops, max_timeouts, max_heartbeats, proposals,
          max_crashes, strategy, seed, walks, no_shorten, find_all, invariants, no_invariants,
          trace_out, as_json, html_out, quiet,
          time_limit, engine, master, partitions, verbose, checkpoint_dir, checkpoint_every,
          resume_dir, spill_dir, memory_limit, liveness, require_complete, reduction, max_states):
    """Explore every interleaving, drop, timeout, heartbeat, proposal, crash and restart within
    the bounds.

    Exit codes: 0 no violation within the bounds, 10 a property violation, 2 bad usage,
    1 internal error or out of memory, 4 incomplete with --require-complete, 130 interrupted
    (SIGINT), 143 terminated (SIGTERM); an interrupted search prints and saves its partial result
    and never exits 0.
    """
    from zabmc.explore import Env, ExploreConfig
    from zabmc.invariants import Checker, resolve
    from zabmc.model import get_model
    from zabmc.report.console import ConsoleObserver, PipeConsole

    from zabmc.explore.por import refuse as refuse_reduction

    if require_complete and strategy == "random":
        raise UsageError("--require-complete needs an exhaustive strategy (bfs or dfs): random "
                         "walks never exhaust a space")
    if liveness:
        return _liveness(model_name, nodes, depth, network, max_drops, max_timeouts,
                         max_heartbeats, proposals, max_crashes, strategy, engine, invariants,
                         max_states, trace_out, as_json, html_out, quiet, time_limit,
                         dict(checkpoint=checkpoint_dir, resume=resume_dir, spill_dir=spill_dir,
                              memory_limit=memory_limit, all=find_all or None,
                              no_invariants=no_invariants or None,
                              reduction=(reduction != "none") or None), require_complete)
    if max_states is not None and strategy != "dfs":
        raise UsageError("--max-states works with --liveness or --strategy dfs (breadth-first "
                         "safety checks bound memory with --memory-limit)")
    if max_states is not None and max_states < 1:
        raise UsageError(f"--max-states must be at least 1, got {max_states}")
    if invariants and no_invariants:
        raise UsageError("--invariant and --no-invariants exclude each other")
    if walks < 1:
        raise UsageError(f"--walks must be at least 1, got {walks}")
    if time_limit is not None and time_limit <= 0:
        raise UsageError(f"--time-limit must be positive, got {time_limit}")
    if engine == "spark" and strategy != "bfs":
        raise UsageError("--engine spark runs breadth-first search only (--strategy bfs)")
    if resume_dir and strategy != "bfs":
        raise UsageError("--resume works with --strategy bfs")
    if checkpoint_dir and strategy != "bfs":
        raise UsageError("--checkpoint works with --strategy bfs")
    if checkpoint_every < 0:
        raise UsageError(f"--checkpoint-every must not be negative, got {checkpoint_every}")
    model = get_model(model_name)
    _require_network(model, network)
    refuse_reduction(reduction, network=network, model=model, strategy=strategy, engine=engine)
    cfg = ExploreConfig(nodes, network, max_drops, max_timeouts, max_heartbeats, proposals,
                        depth, max_crashes).validate()
    names = resolve(invariants, no_invariants)
    env = Env(model, cfg, Checker(names))

    out_console = PipeConsole(stderr=as_json, highlight=False, soft_wrap=True)
    stop_at_first = not find_all
    options = {}
    if engine == "spark":
        options = _spark_checkpoint_options(env, stop_at_first, checkpoint_dir, checkpoint_every,
                                            resume_dir, out_console, quiet=quiet or as_json)
    elif checkpoint_dir or resume_dir:  # before anything is printed: a bad checkpoint is one line
        options = _checkpoint_options(env, strategy, stop_at_first, checkpoint_dir or resume_dir,
                                      checkpoint_every, resume_dir, out_console,
                                      quiet=quiet or as_json, reduction=reduction)
    if strategy == "bfs" and engine == "in-process":
        options.update(_spill_options(env, memory_limit, options, spill_dir))
    elif memory_limit is not None or spill_dir is not None:
        raise UsageError("--memory-limit and --spill-dir work with --strategy bfs --engine "
                         "in-process")
    if reduction == "por":
        from zabmc.explore.por import Stubborn

        options["reduction"] = Stubborn(env)
    observer = ConsoleObserver(out_console, quiet=quiet or as_json)
    observer.on_start({"model": model.name, "strategy": strategy, "engine": engine,
                       "config": {k: v for k, v in cfg._asdict().items()},
                       "invariants": names, "walks": walks if strategy == "random" else None})
    if "resume" in options and not (quiet or as_json):
        snap = options["resume"]
        out_console.print(f"resuming from {resume_dir}: level {snap.depth}, "
                          f"{snap.meta['distinct']:,} distinct, "
                          f"{snap.meta['frontier_states']:,} frontier states", highlight=False)
    with _terminate_as_exception():
        outcome = _search(env, engine, strategy, stop_at_first, observer, time_limit, master,
                          partitions, verbose, seed, walks, options, max_states)
    code = _report(outcome, env, model, strategy, no_shorten, find_all, trace_out, as_json,
                   out_console, html_out)
    return _completeness(code, require_complete, outcome.complete, str(outcome.stop_reason))


def _completeness(code: int, required: bool, complete: bool, stop_reason: str) -> int:
    """--require-complete: a clean run that did not exhaust its space exits 4, saying why."""
    if code != EXIT_OK or not required or complete:
        return code
    click.echo(f"zabmc: incomplete: the search stopped at the {stop_reason.replace('-', ' ')} "
               "before exhausting the state space, and --require-complete was given", err=True)
    return EXIT_INCOMPLETE


def _liveness(model_name, nodes, depth, network, max_drops, max_timeouts, max_heartbeats,
              proposals, max_crashes, strategy, engine, invariants, max_states, trace_out, as_json,
              html_out, quiet, time_limit, unsupported, require_complete=False) -> int:
    from zabmc.cli import liveness as L
    from zabmc.explore import Env, ExploreConfig
    from zabmc.explore.liveness import DEFAULT_MAX_STATES, resolve, supports
    from zabmc.invariants import Checker
    from zabmc.model import get_model
    from zabmc.report.console import ConsoleObserver, PipeConsole

    for flag, value in unsupported.items():
        if value:
            raise UsageError(f"--{flag.replace('_', '-')} does not work with --liveness")
    if strategy != "bfs" or engine != "in-process":
        raise UsageError("--liveness runs breadth-first in-process (--strategy bfs --engine "
                         "in-process)")
    if max_states is None:
        max_states = DEFAULT_MAX_STATES
    if max_states < 1:
        raise UsageError(f"--max-states must be at least 1, got {max_states}")
    if time_limit is not None and time_limit <= 0:
        raise UsageError(f"--time-limit must be positive, got {time_limit}")
    names = resolve(invariants)
    model = get_model(model_name)
    if not supports(model):
        raise UsageError(f"model {model.name} does not say who leads whom (leader_of, "
                         "established), which --liveness needs")
    _require_network(model, network)
    cfg = ExploreConfig(nodes, network, max_drops, max_timeouts, max_heartbeats, proposals,
                        depth, max_crashes).validate()
    env = Env(model, cfg, Checker(()))
    console = PipeConsole(stderr=as_json, highlight=False, soft_wrap=True)
    observer = ConsoleObserver(console, quiet=quiet or as_json)
    observer.on_start({"model": model.name, "strategy": "bfs (liveness)", "engine": "in-process",
                       "config": cfg._asdict(), "invariants": names})
    with _terminate_as_exception():
        code, res = L.run(env, names, max_states, trace_out, as_json, html_out, quiet,
                          time_limit, console, observer)
    return _completeness(code, require_complete, res.complete, res.stop_reason)


@contextmanager
def _terminate_as_exception():
    """While a search runs, SIGTERM (what `timeout`, CI runners and Kubernetes send) stops it like
    Ctrl-C does: cleanly, keeping and reporting the partial result."""
    from zabmc.explore.search import Terminated

    def handler(signum, frame):
        raise Terminated(signum)

    try:
        old = signal.signal(signal.SIGTERM, handler)
    except ValueError:  # not the main thread (an embedding program): leave signals alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def _checkpoint_options(env, strategy, stop_at_first, directory, every, resume_dir, console,
                        quiet, reduction="none"):
    """The BFS options that write checkpoints into `directory` and resume from `resume_dir`."""
    from zabmc.explore import checkpoint as ck
    from zabmc.explore.codec import choose_codec, make_codec

    codec_name = choose_codec(env)
    ident = ck.identity(model=env.model.name, config=env.config, invariants=env.checker.names,
                        strategy=strategy, stop_at_first=stop_at_first, codec=codec_name,
                        reduction=reduction)
    options = {"codec": make_codec(codec_name, env)}
    if resume_dir:
        options["resume"] = ck.load(resume_dir, ident)

    def log(line: str) -> None:
        if not quiet:
            console.print(line, highlight=False)

    try:
        options["checkpoint"] = ck.Checkpointer(directory, ident, every=every, log=log)
    except OSError as e:
        raise UsageError(f"--checkpoint {directory}: {e.strerror or e}") from None
    return options


def _spark_checkpoint_options(env, stop_at_first, checkpoint_dir, every, resume_dir, console,
                              quiet) -> dict:
    """The Spark engine's options for --checkpoint and --resume: DIR (--checkpoint, or else the
    --resume directory) is Spark's reliable checkpoint directory for lineage cuts and, unless it is
    a URL, where level snapshots go; --resume reads either checkpoint format."""
    from zabmc.explore import checkpoint as ck
    from zabmc.explore.codec import choose_codec
    from zabmc.spark import checkpoint as sck

    directory = checkpoint_dir or resume_dir
    options: dict = {"checkpoint_dir": directory}
    if directory is None:
        return options
    ident = ck.identity(model=env.model.name, config=env.config, invariants=env.checker.names,
                        strategy="bfs", stop_at_first=stop_at_first, codec=choose_codec(env))
    if resume_dir:
        options["resume"] = sck.load(resume_dir, ident)
    if sck.is_url(directory):
        return options  # lineage cuts only: level snapshots are written with plain file I/O

    def log(line: str) -> None:
        if not quiet:
            console.print(line, highlight=False)

    try:
        options["snapshots"] = sck.LevelSnapshots(directory, ident, every=every, log=log)
    except OSError as e:
        raise UsageError(f"--checkpoint {directory}: {e.strerror or e}") from None
    return options


def _spill_options(env, memory_limit, options, spill_dir=None) -> dict:
    """The BFS options that let large levels go to disk (`zabmc.explore.spill`)."""
    from zabmc.explore.codec import choose_codec, make_codec
    from zabmc.explore.memory import mem_available, parse_size
    from zabmc.explore.spill import DEFAULT_LEVEL_BUDGET, Spill

    if memory_limit is not None and memory_limit.strip().lower() == "none":
        if spill_dir is not None:
            raise UsageError("--spill-dir needs levels that may spill: not with --memory-limit none")
        return {}
    if spill_dir is not None and not os.path.isdir(spill_dir):
        raise UsageError(f"--spill-dir {spill_dir}: not a directory")
    if spill_dir is not None and not os.access(spill_dir, os.W_OK | os.X_OK):
        raise UsageError(f"--spill-dir {spill_dir}: not writable")
    if memory_limit is None:
        limit = mem_available() // 2 or 4 << 30
    else:
        limit = parse_size(memory_limit)
    codec = options.get("codec") or make_codec(choose_codec(env), env)
    return {"codec": codec, "spill": Spill(codec, min(limit // 4, DEFAULT_LEVEL_BUDGET),
                                           parent=spill_dir),
            "memory_limit": limit}


def _search(env, engine, strategy, stop_at_first, observer, time_limit, master, partitions,
            verbose, seed, walks, bfs_options=None, max_states=None):
    if engine == "spark":
        from zabmc.spark.engine import spark_bfs

        outcome = spark_bfs(env, stop_at_first=stop_at_first, observer=observer, master=master,
                            partitions=partitions, verbose=verbose, time_limit=time_limit,
                            **(bfs_options or {}))
    else:
        options = {"seed": seed, "walks": walks} if strategy == "random" else {}
        options.update(bfs_options or {})
        if max_states is not None:
            options["max_states"] = max_states
        outcome = get_strategy(strategy)(env, stop_at_first=stop_at_first, observer=observer,
                                         time_limit=time_limit, **options).run()
    return outcome


def _report(outcome, env, model, strategy, no_shorten, find_all, trace_out, as_json, out_console,
            html_out=None):
    """Shorten, save and print the counterexamples, print the summary; the exit code."""
    from zabmc.explore.memory import peak_rss
    from zabmc.explore.trace import rebuild
    from zabmc.report.console import print_summary, print_trace

    outcome.extra.setdefault("peak_rss_bytes", peak_rss())

    if strategy != "bfs" and outcome.violations and not no_shorten:
        from zabmc.explore import Found
        from zabmc.explore.trace import shorten

        shortened = []
        for found in outcome.violations:
            path = shorten(env, found.path, found.violation.property)
            v = rebuild(env, path, found.violation.property).violation
            shortened.append(Found(v, len(path), path))
            outcome.extra.setdefault("shortened", {})[v.property] = [found.depth, len(path)]
        outcome.violations = shortened
    trace_paths = {}
    replaced: set = set()  # trace files that were there before this run
    pictures: list = []  # (property, HTML file) per printed counterexample
    traces = []
    for found in outcome.violations:
        trace = rebuild(env, found.path, found.violation.property)
        path = _trace_path(trace_out, model.name, found.violation.property,
                           find_all or len(outcome.violations) > 1)
        if os.path.exists(path):
            replaced.add(path)
        trace.save(path)
        trace_paths[found.violation.property] = path
        traces.append(trace)

    # Each counterexample is printed (to stderr with --json, so that a CI log shows it while
    # stdout stays one JSON document). A reader that goes away (`| head`) ends the printing
    # quietly; the exit code is still the verdict's.
    try:
        groups: dict = {}  # one printing per run of events, naming every property it breaks
        for found, trace in zip(outcome.violations, traces):
            groups.setdefault(tuple(found.path), []).append(trace)
        for first, *others in groups.values():
            print_trace(out_console, first, others)
        if html_out:
            for first, *others in groups.values():
                path = _trace_path(html_out, model.name, first.violation.property,
                                   len(groups) > 1)
                write_html(path, first, others)
                pictures.append((first.violation.property, path))
        if as_json:
            click.echo(json.dumps(outcome_json(outcome, trace_paths), indent=2))
        else:
            if traces:
                out_console.print()
            print_summary(out_console, outcome, trace_paths, replaced)
        for prop, path in pictures:
            out_console.print(f"picture of the {prop} counterexample written to {path}",
                              highlight=False)
        sys.stdout.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    if outcome.stop_reason == "interrupted":
        # never 0: an interrupted gate must not pass (128 + the signal's number, as a shell says)
        return 143 if outcome.extra.get("signal") == "SIGTERM" else 130
    if outcome.stop_reason == "out-of-memory":
        click.echo("zabmc: error: out of memory; the partial result above is kept. Give the search "
                   "less to hold: smaller bounds (--depth, budgets), --strategy dfs (memory is the "
                   "path), or a machine with more memory", err=True)
        return EXIT_INTERNAL
    return EXIT_VIOLATION if outcome.violations else EXIT_OK


def outcome_json(o, trace_paths: dict) -> dict:
    out = {
        "verdict": o.verdict,
        "stop_reason": o.stop_reason,
        "complete": o.complete,
        "model": o.model,
        "strategy": o.strategy,
        "engine": o.engine,
        "config": o.config.to_json(),
        "invariants": list(o.invariants),
        "states": o.generated,
        "distinct_states": o.distinct,
        "depth_reached": o.depth_reached,
        "per_depth": list(o.per_depth),
        "elapsed_seconds": round(o.elapsed, 3),
        "elapsed_seconds_before_resume": round(o.extra.get("elapsed_before_resume", 0.0), 3),
        "states_per_second": round(o.states_per_second, 1),
        "collision_probability": o.collision_probability,
        "violations": [
            dict(f.violation.to_json(), depth=f.depth,
                 trace=trace_paths.get(f.violation.property))
            for f in o.violations
        ],
    }
    out.update(memory_json(o))
    if "checkpoint" in o.extra:
        out["checkpoint"] = {"dir": o.extra["checkpoint"], "level": o.extra.get("checkpoint_level")}
    if "signal" in o.extra:  # the signal that interrupted the search
        out["signal"] = o.extra["signal"]
    out["reduction"] = o.extra.get("reduction", {"method": "none"})
    if "spark" in o.extra:  # the Spark engine's run statistics (zabmc.spark.engine)
        out["spark"] = o.extra["spark"]
    return out


def memory_json(o) -> dict:
    """The run's memory figures: `frontier_left` (states at the depth bound left unexpanded, TLC's
    "states left on queue") and `memory`: the process's peak RSS, and per distinct state that peak,
    the visited set's bytes (fingerprints and parent pointers), and for BFS the largest level held
    (`frontier_peak_states`) and its states' mean encoded size (sampled: the size on disk or in a
    checkpoint; in memory a state's objects take more, shared between states)."""
    n = max(o.distinct, 1)
    rss = o.extra.get("peak_rss_bytes", 0)
    mem = {"peak_rss_bytes": rss, "peak_rss_bytes_per_state": round(rss / n, 1),
           "visited_bytes": o.seen_bytes, "visited_bytes_per_state": round(o.seen_bytes / n, 1)}
    for k in ("frontier_peak_states", "frontier_encoded_bytes_per_state", "frontier_disk_bytes",
              "spilled_levels", "memory_limit", "stale_spill_dirs_removed"):
        if k in o.extra:
            mem[k] = o.extra[k]
    return {"frontier_left": o.extra.get("frontier_left", 0), "memory": mem}


@cli.command()
@click.argument("trace_file", type=click.Path(dir_okay=False))
@click.option("--quiet", "-q", is_flag=True, help="Print only the confirmation and digest.")
@click.option("--html", "html_out", default=None, metavar="FILE",
              help="Also draw the trace as a sequence chart in one self-contained HTML file.")
def replay(trace_file, quiet, html_out):
    """Re-execute a counterexample trace through the kernel and confirm its violation.

    Prints the final state's canonical-dump SHA-256. Exit 10 when the recorded violation is
    confirmed, 0 when the trace records none and none occurs, 1 when the replay disagrees.
    """
    from rich.console import Console

    from zabmc.explore.trace import load, replay as do_replay
    from zabmc.report.console import print_trace

    result = do_replay(load(trace_file))
    console = Console(highlight=False, soft_wrap=True)
    t = result.trace
    if html_out:
        write_html(html_out, t)
    if not quiet:
        print_trace(console, t)
    exp = result.expected
    if t.lasso is not None:
        lasso = t.lasso
        if result.confirmed:
            how = (f"the loop from the state after step {lasso['loop_start']} returns to it "
                   f"(fingerprint {t.env.fingerprint(t.states[-1]).hex()}), fair, never reaching "
                   "the goal" if lasso["kind"] == "cycle" else
                   "nothing can happen in the last state, and the goal is not reached")
            console.print(f"confirmed: {lasso['property']} fails: {how}")
        else:
            console.print(f"[bold red]NOT confirmed[/]: the {lasso['property']} lasso: "
                          f"{result.reason}")
        console.print(f"final sha256 {t.final_sha256}")
        return EXIT_VIOLATION if result.confirmed else 1
    if result.confirmed:
        if exp is not None:
            console.print(f"confirmed: {exp['property']} violated at step {t.violation_step}")
        else:
            console.print("confirmed: no property violated along the trace")
    else:
        got = (f"{t.violation.property} at step {t.violation_step}" if t.violation else "none")
        want = f"{exp.get('property')} at step {exp.get('step')}" if exp else "none"
        console.print(f"[bold red]NOT confirmed[/]: recorded violation {want}, replay found {got}")
    console.print(f"final sha256 {t.final_sha256}")
    if not result.confirmed:
        return 1
    return EXIT_VIOLATION if exp is not None else EXIT_OK


def write_html(path: str, trace, others=()) -> None:
    """Draw `trace` into `path` (one self-contained HTML file); a one-line error if it cannot."""
    from zabmc.report.html import render

    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(render(trace, others))
    except OSError as e:
        raise UsageError(f"cannot write {path}: {e.strerror}") from None


@cli.command()
@click.argument("trace_file", metavar="TRACE")
@click.option("-o", "--output", "output", required=True, metavar="FILE",
              help="The HTML file to write.")
def show(trace_file, output):
    """Draw a counterexample trace as a message sequence chart: one self-contained HTML file
    (inline SVG; nothing is fetched), a lane per node, an arrow per message, the violating step
    marked. The trace is replayed first, so the picture is the kernel's."""
    from zabmc.explore.trace import load, replay as do_replay

    result = do_replay(load(trace_file))
    write_html(output, result.trace)
    t = result.trace
    what = f"{t.violation.property} at step {t.violation_step}" if t.violation else "no violation"
    if t.lasso is not None:
        what = f"a {t.lasso['property']} lasso ({t.lasso['kind']})"
    click.echo(f"wrote {output}: {len(t.events)} steps, {what}")
    return EXIT_OK


@cli.command("invariants")
@click.option("--json", "as_json", is_flag=True, help="Print the list as JSON.")
def invariants_cmd(as_json):
    """List the safety properties, their statements and sources."""
    from rich.console import Console
    from rich.table import Table

    from zabmc.invariants import PROPERTIES

    if as_json:
        click.echo(json.dumps([{"name": p.name, "default": p.default, "statement": p.statement,
                                "source": p.source} for p in PROPERTIES.values()], indent=2))
        return EXIT_OK

    t = Table(show_lines=False)
    t.add_column("property", no_wrap=True)
    t.add_column("default", no_wrap=True)
    t.add_column("statement")
    t.add_column("source")
    for p in PROPERTIES.values():
        t.add_row(p.name, "on" if p.default else "off", p.statement, p.source)
    console = Console(soft_wrap=False)
    if not console.is_terminal:
        console = Console(soft_wrap=False, width=130)
    console.print(t)
    return EXIT_OK
