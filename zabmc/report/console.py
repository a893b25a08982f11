"""Console output of `zabmc check`: live progress, the verdict, and counterexample traces."""

from __future__ import annotations

import os
import time

from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.table import Table

from zabmc.core.events import DOWN
from zabmc.explore.outcome import Found, Observer, Outcome, Progress, StopReason

from .simtrace import ROLE, _changes, _zx
from .words import headline_words, issue_lines, issue_names


def _rate(x: float) -> str:
    return f"{x:,.0f}"


class ConsoleObserver(Observer):
    """A live rich table on a terminal; on a pipe, a plain line every few seconds (stderr)."""

    def __init__(self, console: Console, quiet: bool = False, line_every: float = 5.0):
        self.console = console
        self.quiet = quiet
        self.tty = console.is_terminal and not quiet
        self.line_every = line_every
        self._last_line = 0.0
        self._live: Live | None = None
        self._p: Progress | None = None
        self._per_level = False
        self._walks = None  # random walks: how many there are to do (Progress.frontier: done)

    def _walks_done(self, p: Progress) -> str:
        """`done/total (pct), ETA` for random walks."""
        total, done = self._walks, p.frontier
        eta = (p.elapsed / done * (total - done)) if done else None
        return (f"{done:,}/{total:,} ({100 * done / max(total, 1):.0f}%), ETA "
                + (f"{eta:.0f}s" if eta is not None else "?"))

    def _table(self, p: Progress) -> Table:
        t = Table(box=None, show_header=True, header_style="bold")
        third = "walks done" if self._walks else "frontier"
        for col in ("depth", "states", "distinct", third, "distinct/s", "elapsed"):
            t.add_column(col, justify="right")
        rate = p.rate
        t.add_row(str(p.depth), _rate(p.generated), _rate(p.distinct),
                  self._walks_done(p) if self._walks else _rate(p.frontier),
                  _rate(rate), f"{p.elapsed:.1f}s")
        return t

    def on_start(self, info: dict) -> None:
        self._per_level = info.get("engine") == "spark"
        self._walks = info.get("walks")
        if self.quiet:
            return
        self.console.print(
            f"[bold]zabmc check[/] model={info['model']} strategy={info['strategy']} "
            f"engine={info['engine']} " + " ".join(f"{k}={v}" for k, v in info["config"].items())
        )
        start = info.get("start")
        if start is not None:
            self.console.print(f"from: {start['from']}: the state after {start['events']} events "
                               f"of {start['trace']}; depth and budgets counted from there",
                               highlight=False, markup=False)
        self.console.print(f"properties: {', '.join(info['invariants']) or '(none)'}")
        if self.tty:
            self._live = Live(self._table(Progress(0, 0, 0, 0, 0.0)), console=self.console,
                              refresh_per_second=4, transient=True)
            self._live.start()

    def on_progress(self, p: Progress) -> None:
        self._p = p
        if self._live is not None:
            self._live.update(self._table(p))
        elif not self.quiet:
            now = time.monotonic()
            if now - self._last_line >= self.line_every:
                self._last_line = now
                rate = p.rate
                third = (f"walks {self._walks_done(p)}" if self._walks
                         else f"frontier {p.frontier:,}")
                self.console.print(f"progress: depth {p.depth}, {p.generated:,} states, "
                                   f"{p.distinct:,} distinct, {third}, "
                                   f"{rate:,.0f} distinct/s, {p.elapsed:.0f}s", highlight=False)

    def on_level(self, depth: int, frontier: int, new: int, seconds: float) -> None:
        # One line per level for the Spark engine, whose levels are its unit of work (issue 6).
        if self.quiet or not self._per_level:
            return
        line = (f"[dim]level {depth}: frontier {frontier:,}, new {new:,}, "
                f"{seconds:.2f}s[/]")
        (self._live.console if self._live is not None else self.console).print(line)

    def on_violation(self, found: Found) -> None:
        if self.quiet:
            return
        msg = (f"[bold red]violation[/] {found.violation.property} at depth {found.depth}: "
               f"{escape(found.violation.message)}")
        if self._live is not None:
            self._live.console.print(msg)
        else:
            self.console.print(msg)

    def on_finish(self, outcome: Outcome) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None


#: the summary divides the peak RSS by the distinct states only from this many states on: below it
#: the figure is the interpreter and its libraries (about 100 MiB) spread over few states
#: ("2,194,809 bytes per distinct state" for 73 states)
RSS_PER_STATE_FROM = 100_000


def _symmetry_row(t, o) -> None:
    """`--symmetry`: what the distinct states count."""
    if o.extra.get("symmetry"):
        t.add_row("symmetry", "payloads (distinct states are orbits)")


def print_summary(console: Console, o: Outcome, trace_paths: dict, replaced=(),
                  traces=()) -> None:
    """The verdict, the run's figures, and each counterexample's file with what it is: the known
    issues whose windows its run passes through (`traces`, the counterexamples saved), or that
    none matches, for a model that follows an implementation."""
    ok = not o.violations
    verdict = ("[bold green]OK[/]: no property violated" if ok else
               f"[bold red]VIOLATION[/]: {', '.join(f.violation.property for f in o.violations)}")
    scope = {
        StopReason.EXHAUSTED: "the whole bounded state space was explored",
        StopReason.DEPTH_BOUND: f"explored to the depth bound {o.config.depth} (states there not "
                                "expanded)",
        StopReason.VIOLATION: "stopped at the first violation",
        StopReason.INTERRUPTED: f"interrupted by {o.extra.get('signal', 'a signal')}: partial "
                                "result",
        StopReason.OUT_OF_MEMORY: "out of memory: partial result",
        StopReason.TIME_LIMIT: "time limit reached: partial result",
        StopReason.WALKS_DONE: f"random walks: {o.extra.get('walks', 0)} walks of up to "
                               f"{o.config.depth} steps",
        StopReason.STATE_CAP: f"stopped at --max-states {o.distinct:,}: the first distinct states "
                              "in depth-first order, partial result",
    }[o.stop_reason]
    red = o.extra.get("reduction")
    if red and o.stop_reason == StopReason.DEPTH_BOUND:
        scope += ("; partial-order reduction: the reduced space to that depth, not every path of "
                  "that length (exhaust it for the full verdict)")
    console.print(f"{verdict} ({scope})")
    t = Table(box=None, show_header=False)
    t.add_column(justify="left", style="dim")
    t.add_column(justify="right")
    if red:
        total = red["states_reduced"] + red["states_expanded_fully"]
        t.add_row("reduction", f"partial-order (stubborn sets): {red['states_reduced']:,} of "
                  f"{total:,} states expanded in part")
        if "transitions_asleep" in red:
            t.add_row("sleep sets", f"{red['transitions_asleep']:,} transitions not built")
    _symmetry_row(t, o)
    t.add_row("states generated", f"{o.generated:,}")
    t.add_row("distinct states", f"{o.distinct:,}")
    t.add_row("depth reached", str(o.depth_reached))
    before = o.extra.get("elapsed_before_resume")
    t.add_row("time", f"{o.elapsed:.2f}s" + (f" (+ {before:.2f}s before the resume)"
                                              if before else ""))
    t.add_row("distinct states/s", f"{o.states_per_second:,.0f}")
    if o.extra.get("frontier_left"):
        t.add_row("states left unexpanded (at the bound)", f"{o.extra['frontier_left']:,}")
    if o.seen_bytes:
        t.add_row("visited-set memory", f"{o.seen_bytes / max(o.distinct, 1):.1f} bytes/state")
    if o.extra.get("frontier_peak_states"):
        t.add_row("largest frontier", f"{o.extra['frontier_peak_states']:,} states, "
                  f"{o.extra.get('frontier_encoded_bytes_per_state', 0):,.0f} bytes/state encoded")
    if o.extra.get("frontier_disk_bytes"):
        t.add_row("frontier on disk (peak)", f"{o.extra['frontier_disk_bytes'] / 2**20:,.1f} MiB")
    if o.extra.get("stale_spill_dirs_removed"):
        t.add_row("spill directories of killed runs removed",
                  f"{o.extra['stale_spill_dirs_removed']:,}")
    rss = o.extra.get("peak_rss_bytes")
    if rss:
        # below RSS_PER_STATE_FROM states the interpreter's own memory is most of the peak
        per = (f", {rss / o.distinct:,.0f} bytes per distinct state"
               if o.distinct >= RSS_PER_STATE_FROM else "")
        t.add_row("peak RSS", f"{rss / 2**20:,.1f} MiB{per}")
    t.add_row("fingerprint collision probability", f"{o.collision_probability:.1e} (optimistic, TLC)")
    console.print(t)
    written = []
    named = {t.violation.property: t for t in traces if t.violation is not None}
    for f in o.violations:
        t = named.get(f.violation.property)
        what = issue_names(t) if t is not None else None
        if what is not None:
            words = headline_words(t)
            console.print(f"{f.violation.property}: " + (f"{words[0]}; " if words else "") + what,
                          highlight=False, markup=False)
        path = trace_paths.get(f.violation.property)
        if path:
            again = " (it replaced the file of an earlier run)" if path in replaced else ""
            console.print(f"trace for {f.violation.property} written to {path}{again}"
                          f"{replay_hint(path)}", highlight=False)
            written.append(path)
    print_show_hint(console, written)


def replay_hint(path: str) -> str:
    """How to replay a trace file; nothing for what is not a file that stays (/dev/null, a
    pipe), which `zabmc replay` could not read back."""
    return f" (replay: zabmc replay {path})" if os.path.isfile(path) else ""


def print_show_hint(console: Console, paths: list) -> None:
    """After the trace files are written: how to draw one (`zabmc show`), if one is a file."""
    paths = [p for p in paths if os.path.isfile(p)]
    if paths:
        stem = paths[0][:-len(".json")] if paths[0].endswith(".json") else paths[0]
        console.print(f"draw it as a sequence chart: zabmc show {paths[0]} -o {stem}.html",
                      highlight=False)


def print_trace(console: Console, trace, others=()) -> None:
    """A numbered counterexample: each event, then what it changed; the violating step is marked
    with each property it breaks and their witnesses. `others` are traces of other properties
    along the same events, printed here once rather than again."""
    env = trace.env
    v = trace.violation
    marks = {}
    for t in (trace,) + tuple(others):
        if t.violation is not None:
            marks.setdefault(t.violation_step, []).append(t.violation)
    names = [x.property for t in (trace,) + tuple(others) if (x := t.violation) is not None]
    title = f"counterexample: {', '.join(names)}" if v else "trace"
    lasso = getattr(trace, "lasso", None)
    if lasso is not None:
        title = f"lasso: {lasso['property']} ({lasso['kind']})"
    console.print(f"\n[bold]{title}[/] ({len(trace.events)} steps, model {env.model.name}, "
                  f"network {env.config.network})")
    s0 = trace.states[0]
    console.print("    [dim]0[/] initial: " + ", ".join(
        f"node {x.id} {ROLE[x.role]}" for x in s0.nodes) + f"; {sum(_count(s0.net, env))} in flight")
    for k, (ev, prev, cur) in enumerate(zip(trace.events, trace.states, trace.states[1:]), 1):
        changes = []
        for a, b in zip(prev.nodes, cur.nodes):
            c = _changes(a, b)
            if c:
                changes.append(f"node {b.id}: " + "; ".join(c))
        went, came = _down(prev) & ~_down(cur), _down(cur) & ~_down(prev)
        for x in _ids(came):
            lost = sum(_count(prev.net, env)) - sum(_count(cur.net, env))
            changes.append(f"node {x} is down: it keeps only its durable fields; "
                           f"{lost} message(s) in flight to or from it lost")
        for x in _ids(went):
            changes.append(f"node {x} is up again")
        if lasso is not None and k - 1 == lasso["faults_stop"]:
            console.print("    [bold cyan]-- faults stop here: from now on no drop, crash or "
                          "budgeted timer; every message is delivered, timers fire when all is "
                          "quiet --[/]")
        if lasso is not None and k - 1 == lasso["loop_start"]:
            console.print(f"    [bold red]-- the loop starts here (the state after step {k - 1}) "
                          "--[/]")
        mark = "[bold red]>>[/]" if k in marks else "  "
        if lasso is not None and lasso["loop_start"] is not None and k > lasso["loop_start"]:
            mark = "[red]@ [/]"
        console.print(f"{mark}{k:>3} {escape(ev.describe(env.model))}")
        for c in changes:
            console.print(f"        [magenta]{c}[/]")
        for x in marks.get(k, ()):
            console.print(f"        [bold red]=> {x.property} violated:[/] {escape(x.message)}")
            console.print(f"           witnesses: {_witnesses(x)}", highlight=False)
    if lasso is not None:
        if lasso["kind"] == "cycle":
            console.print(f"    [bold red]-- back to the state after step {lasso['loop_start']}: "
                          "the loop (@) repeats forever without reaching the goal --[/]")
        else:
            console.print("    [bold red]-- dead end: no event can happen, and the goal is not "
                          "reached --[/]")
        console.print(f"    [bold red]=> {escape(lasso['message'])}[/]")
    last = trace.states[-1]
    words = headline_words(trace)
    if words is not None:
        console.print(f"    [bold red]=> {escape(words[0])}:[/] {escape(words[1])}",
                      highlight=False)
    for line in issue_lines(trace):
        console.print(f"    [bold]{escape(line)}[/]", highlight=False)
    console.print("    final: " + "; ".join(
        f"node {x.id} {'down' if _down(last) >> x.id & 1 else ROLE[x.role]} e{x.current_epoch} "
        f"hist [{' '.join(_zx(t[0]) for t in x.history)}] commit {_zx(x.last_committed)}"
        for x in last.nodes), highlight=False)


def _witnesses(v) -> str:
    nodes = ", ".join(str(i) for i in v.nodes) or "none"
    txns = ", ".join(f"{_zx(t[0])}:{t[1].decode('ascii', 'backslashreplace')}" for t in v.txns)
    return f"node(s) {nodes}" + (f"; transaction(s) {txns}" if txns else "")


def _down(s) -> int:
    """The bit set of the nodes down in state `s`."""
    return s.budgets[DOWN]


def _ids(mask: int) -> list[int]:
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


def _count(net, env):
    if env.fifo:
        return [len(msgs) for msgs in net]
    return [c for _, c in net]
