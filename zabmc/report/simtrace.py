"""A readable event log of a seeded simulation (`zabmc simulate --trace`)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from zabmc.core.events import DELIVERED
from zabmc.core.model import ROLE_NAMES
from zabmc.sim.simulator import SimObserver

ROLE = dict(enumerate(ROLE_NAMES))  # `Node.role`, as the contract (zabmc/core/model.py) names it
ROLE_STYLE = {0: "yellow", 1: "cyan", 2: "bold green"}


class TraceObserver(SimObserver):
    """Prints one line per step: tick, event, node, then what changed (role, epochs, commits).

    A crash prints its line, what the node lost, and one `lost` line per message in flight to or
    from it; a send to a down node is a `drop` marked `(node <i> down)`."""

    def __init__(self, model, console: Console, quiet_votes: bool = False):
        self.model = model
        self.console = console
        self.quiet_votes = quiet_votes
        self.down: set = set()

    def on_event(self, t, ev, before, step, lost=()):
        if step is None:  # a send dropped at send time
            why = f"node {ev.dst} down" if ev.dst in self.down else "partition"
            self.console.print(f"[dim]{t:>6}[/] [red]drop[/]      {ev.src}->{ev.dst} "
                               f"{escape(self.model.describe_msg(ev.msg))} [dim]({why})[/]")
            return
        node = ev.node if ev.lifecycle else None
        if ev.lifecycle == "down":
            self.down.add(node)
            changes = _changes(before, step.node) if before is not None else _initial(step.node)
            changes.append(f"{len(lost)} in-flight message{'s' if len(lost) != 1 else ''} lost")
            self.console.print(f"[dim]{t:>6}[/] [bold red]crash[/]     node {node}  [magenta]"
                               + "; ".join(changes) + "[/]")
            for src, dst, msg in lost:
                self.console.print(f"[dim]{t:>6}[/] [red]lost[/]      {src}->{dst} "
                                   f"{escape(self.model.describe_msg(msg))} "
                                   f"[dim](node {node} crashed)[/]")
            return
        if ev.lifecycle == "up":
            self.down.discard(node)
        changes = _changes(before, step.node) if before is not None else _initial(step.node)
        if ev.lifecycle == "up" and not changes:
            changes = _initial(step.node)
        for eff in step.effects:
            if eff[0] == "leading":
                changes.append(f"[green]prospective leader of epoch {eff[1]}[/]")
            elif eff[0] == "synced":
                changes.append(f"[bold green]established leader of epoch {eff[1]}[/]")
        if self.quiet_votes and not changes and ev.fate == DELIVERED:
            return
        tail = ("  [magenta]" + "; ".join(changes) + "[/]") if changes else ""
        self.console.print(f"[dim]{t:>6}[/] {ev.kind:<9} {escape(ev.subject(self.model))}{tail}")

    def on_violation(self, t, v):
        self.console.print(f"[dim]{t:>6}[/] [bold red]VIOLATION {v.property}[/]: {escape(v.message)}")


def _zx(z) -> str:
    return f"{z[0]}.{z[1]}"


def _initial(node) -> list[str]:
    return [f"role {ROLE[node.role]}"]


def _changes(a, b) -> list[str]:
    out = []
    if a.role != b.role:
        out.append(f"role {ROLE[a.role]} -> [{ROLE_STYLE[b.role]}]{ROLE[b.role]}[/]")
    if a.current_epoch != b.current_epoch:
        out.append(f"current_epoch {a.current_epoch} -> {b.current_epoch}")
    if a.accepted_epoch != b.accepted_epoch:
        out.append(f"accepted_epoch {a.accepted_epoch} -> {b.accepted_epoch}")
    if a.history != b.history:
        ha = a.history[-1][0] if a.history else (0, 0)
        hb = b.history[-1][0] if b.history else (0, 0)
        out.append(f"history len {len(a.history)} -> {len(b.history)} (last {_zx(ha)} -> {_zx(hb)})")
    da, db = getattr(a, "disk", None), getattr(b, "disk", None)
    if da != db:  # a model whose history is memory and whose disk is apart (zk's shutdown grain)
        za = da[-1][0] if da else (0, 0)
        zb = db[-1][0] if db else (0, 0)
        out.append(f"disk len {len(da or ())} -> {len(db or ())} (last {_zx(za)} -> {_zx(zb)})")
    if getattr(a, "synced", None) != getattr(b, "synced", None):
        out.append(f"synced {a.synced} -> {b.synced}")
    if getattr(a, "next_counter", None) != getattr(b, "next_counter", None):
        out.append(f"next_counter {a.next_counter} -> {b.next_counter}")
    if a.last_committed != b.last_committed:
        out.append(f"commit {_zx(a.last_committed)} -> {_zx(b.last_committed)}")
    return out
