"""What `zabmc check` does with a finished search: counterexamples shortened, saved, printed and
drawn, the summary or the JSON document, and the exit code. Shared by the safety and the
liveness runs (`zabmc.cli.liveness`)."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
from contextlib import contextmanager

import click

from zabmc.cli import (EXIT_INCOMPLETE, EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, EXIT_VIOLATION,
                       invoked_words)
from zabmc.core import files
from zabmc.core.errors import UsageError
from zabmc.explore.outcome import StopReason


def trace_path(base: str | None, model: str, prop: str, many: bool, kind: str = "trace",
               default_ext: str = ".json") -> str:
    """Where the counterexample of `prop` goes: `zabmc-<model>-<prop>.<kind>.json` by default;
    `base` itself, or `base-<prop>.ext` when a run writes several; always `base` when it is no
    regular file that could have siblings (/dev/null, a pipe)."""
    if base is None:
        return f"zabmc-{model}-{prop}.{kind}.json"
    if not many or (os.path.exists(base) and not os.path.isfile(base)):
        return base
    stem, ext = os.path.splitext(base)
    if not _EXTENSION.fullmatch(ext):  # "zk-3.7.0-bfs": ".0-bfs" is no file extension
        stem, ext = base, ""
    return f"{stem}-{prop}{ext or default_ext}"


_EXTENSION = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,9}")


def write_html(path: str, trace, others=(), flag: str = "--html", force: bool = False) -> None:
    """Draw `trace` into `path` (one self-contained HTML file; `-`: standard output); a one-line
    error if it cannot, or if `path` is a file of another kind than a picture (`flag` names the
    option) and not `force`."""
    from zabmc.report.html import render

    files.write(path, render(trace, others), "picture", kind="picture", flag=flag, force=force)


def save_trace(trace, path: str, force: bool = False) -> None:
    """A counterexample as a trace file (`Trace.text`), through the one writer: an existing file
    that is not a trace is refused unless `force`. The known issues its run passes through are
    looked for first (`name_issues`), so that the file, the console and the picture name them;
    the file's `origin` is the command that found it, with zabmc's version."""
    from zabmc.explore.trace import name_issues

    if trace.known_issues is None:
        name_issues(trace)
    words = invoked_words()
    if trace.origin is None and words:  # where it came from: a reader can rerun it
        from zabmc.explore.checkpoint import zabmc_version

        trace.origin = f"{shlex.join(['zabmc', *words])} (zabmc {zabmc_version()})"
    files.write(path, trace.text(), "trace file", kind="trace", flag="--trace-out", force=force)


@contextmanager
def terminate_as_exception():
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


def interrupted_code(stop_reason, signal_name) -> int | None:
    """An interrupted search never exits 0: 128 + the signal's number, as a shell says."""
    if stop_reason == StopReason.INTERRUPTED:
        return 143 if signal_name == "SIGTERM" else 130
    return None


def completeness(code: int, required: bool, complete: bool, stop_reason: StopReason) -> int:
    """--require-complete: a clean run that did not exhaust its space exits 4, saying why."""
    if code != EXIT_OK or not required or complete:
        return code
    click.echo(f"zabmc: incomplete: the search stopped at the {stop_reason.replace('-', ' ')} "
               "before exhausting the state space, and --require-complete was given", err=True)
    return EXIT_INCOMPLETE


# --- the one flow of a finished search ---------------------------------------------------------------
def report(spec, outcome, env, console, kind=None) -> int:
    """Save and print what the search found, then the summary or the JSON document; the exit
    code. `kind` saves and shows the findings: this module's safety counterexamples by default,
    `zabmc.cli.liveness`'s lassos for a liveness run."""
    from zabmc.explore.memory import peak_rss

    kind = kind or _SAFETY
    outcome.extra.setdefault("peak_rss_bytes", peak_rss())
    failed = Failed()
    saved = kind.save(spec, outcome, env, failed)
    kind.show(spec, outcome, saved, console, failed)
    resume_hint(outcome, console)
    if outcome.extra.get("checkpoint_error"):  # a full disk: the search went on without them
        failed.append(outcome.extra["checkpoint_error"])
    for message in failed:
        click.echo(f"zabmc: error: {message}", err=True)
    code = exit_code(outcome)
    if failed and code == EXIT_OK:  # a file asked for is not there: never exit 0
        code = EXIT_USAGE
    return code


class Failed(list):
    """The files of a finished search that could not be written, one message each: the rest is
    still written and printed, each failure is one line on stderr after the summary, and the
    verdict's exit code stands."""

    def attempt(self, write, *args) -> bool:
        try:
            write(*args)
        except UsageError as e:
            self.append(str(e))
            return False
        return True


#: stop reasons after which the search can go on from its checkpoint
_RESUMABLE = (StopReason.INTERRUPTED, StopReason.TIME_LIMIT, StopReason.OUT_OF_MEMORY)


def resume_hint(outcome, console) -> None:
    """A search stopped before its end with a checkpoint: where the checkpoint is, and the
    command that goes on from it (this command's words, --checkpoint and --resume naming it)."""
    d = outcome.extra.get("checkpoint")
    if d is None or outcome.stop_reason not in _RESUMABLE:
        return
    level = outcome.extra.get("checkpoint_level")
    if level is None:
        console.print(f"checkpoint: none written to {d} (the search stopped before its first "
                      "level boundary)", highlight=False, markup=False)
        return
    console.print(f"checkpoint: level {level} in {d}", highlight=False, markup=False)
    words = invoked_words()
    if words:
        console.print(f"resume: {resume_command(words, d)}", highlight=False, markup=False,
                      soft_wrap=True)


def resume_command(words: list, directory: str) -> str:
    """`zabmc WORDS` with --resume DIR in place of --checkpoint, --resume and --force."""
    out, skip = [], False
    for w in words:
        if skip:
            skip = False
        elif w in ("--checkpoint", "--resume"):
            skip = True
        elif w == "--force" or w.startswith(("--checkpoint=", "--resume=")):
            pass
        else:
            out.append(w)
    return shlex.join(["zabmc", *out, "--resume", directory])


def exit_code(outcome) -> int:
    """10 a violation, 0 none; 130 or 143 interrupted, whatever was found; 1 out of memory."""
    code = interrupted_code(outcome.stop_reason, outcome.extra.get("signal"))
    if code is not None:
        return code
    if outcome.stop_reason == StopReason.OUT_OF_MEMORY:
        click.echo("zabmc: error: out of memory; the partial result above is kept. Give the search "
                   "less to hold: smaller bounds (--depth, budgets), --strategy dfs (memory is the "
                   "path), or a machine with more memory", err=True)
        return EXIT_INTERNAL
    return EXIT_VIOLATION if outcome.violations else EXIT_OK


# --- safety counterexamples ----------------------------------------------------------------------------
class _Safety:
    """Safety counterexamples: shortened (dfs, random), saved as trace files, printed, drawn."""

    @staticmethod
    def save(spec, outcome, env, failed):
        if spec.strategy != "bfs" and outcome.violations and not spec.no_shorten:
            _shorten(outcome, env)
        return _save(spec, outcome, env, failed)

    @staticmethod
    def show(spec, outcome, saved, console, failed):
        _print(spec, outcome, *saved, console, failed)


_SAFETY = _Safety()


def _shorten(outcome, env) -> None:
    """dfs and random counterexamples, shortened by replay."""
    from zabmc.explore import Found
    from zabmc.explore.trace import rebuild, shorten

    shortened = []
    for found in outcome.violations:
        path = shorten(env, found.path, found.violation.property)
        v = rebuild(env, path, found.violation.property).violation
        shortened.append(Found(v, len(path), path))
        outcome.extra.setdefault("shortened", {})[v.property] = [found.depth, len(path)]
    outcome.violations = shortened


def _save(spec, outcome, env, failed):
    """Each counterexample's trace file: (traces, property -> path written, the files
    replaced)."""
    from zabmc.explore.trace import rebuild

    trace_paths = {}
    replaced: set = set()  # trace files that were there before this run
    traces = []
    many = spec.find_all or len(outcome.violations) > 1
    for found in outcome.violations:
        trace = rebuild(env, found.path, found.violation.property)
        path = trace_path(spec.trace_out, env.model.name, found.violation.property, many)
        if os.path.isfile(path):  # not /dev/null, a pipe or a terminal
            replaced.add(path)
        if failed.attempt(save_trace, trace, path, spec.force):
            trace_paths[found.violation.property] = path
        traces.append(trace)
    return traces, trace_paths, replaced


def _print(spec, outcome, traces, trace_paths, replaced, console, failed) -> None:
    """Each counterexample (to stderr with --json, so that a CI log shows it while stdout stays
    one JSON document), its pictures, and the summary or the JSON document."""
    from zabmc.report.console import print_summary, print_trace

    pictures: list = []  # (property, HTML file) per printed counterexample
    groups: dict = {}  # one printing per run of events, naming every property it breaks
    for found, trace in zip(outcome.violations, traces):
        groups.setdefault(tuple(found.path), []).append(trace)
    for first, *others in groups.values():
        print_trace(console, first, others)
    if spec.html_out:
        for first, *others in groups.values():
            path = trace_path(spec.html_out, spec.model_obj.name, first.violation.property,
                              len(groups) > 1)
            if failed.attempt(write_html, path, first, others, "--html", spec.force):
                pictures.append((first.violation.property, path))
    print_end(spec, console, bool(traces), lambda: outcome_json(outcome, trace_paths, traces),
              lambda: print_summary(console, outcome, trace_paths, replaced, traces))
    for prop, path in pictures:
        console.print(f"picture of the {prop} counterexample written to {path}", highlight=False)
def print_end(spec, console, printed: bool, document, summary) -> None:
    """The end of a run's output, safety or liveness: with --json the JSON document
    (`document()`) alone on stdout, else a blank line after any counterexample printed, then
    the summary (`summary()`)."""
    if spec.as_json:
        click.echo(json.dumps(document(), indent=2))
        return
    if printed:
        console.print()
    summary()


def outcome_json(o, trace_paths: dict, traces=()) -> dict:
    named = {t.violation.property: t.known_issues for t in traces if t.violation is not None}
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
                 trace=trace_paths.get(f.violation.property),
                 **_known_json(named.get(f.violation.property)))
            for f in o.violations
        ],
    }
    if "start" in o.extra:  # --from, --scenario: where the search started
        out["start"] = o.extra["start"]
    out.update(memory_json(o))
    if "checkpoint" in o.extra:
        out["checkpoint"] = {"dir": o.extra["checkpoint"], "level": o.extra.get("checkpoint_level")}
    if "signal" in o.extra:  # the signal that interrupted the search
        out["signal"] = o.extra["signal"]
    out["reduction"] = o.extra.get("reduction", {"method": "none"})
    out["symmetry"] = o.extra.get("symmetry", "none")  # what a distinct state stands for
    if "spark" in o.extra:  # the Spark engine's run statistics (zabmc.spark.engine)
        out["spark"] = o.extra["spark"]
    return out


def _known_json(known) -> dict:
    """A violation's `known_issues` in the JSON document: only for a model that names them."""
    return {} if known is None else {"known_issues": [x.to_json() for x in known]}


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


