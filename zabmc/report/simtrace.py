"""A readable event log of a seeded simulation (`zabmc simulate --trace`)."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape

from zabmc.model import ROLE_NAMES
from zabmc.sim.simulator import SimObserver

ROLE = dict(enumerate(ROLE_NAMES))  # `Node.role`, as the contract (zabmc/model.py) names it
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

    def on_step(self, t, kind, node, detail, before, step):
        if kind == "drop":
            src, dst, msg = detail
            why = f"node {dst} down" if dst in self.down else "partition"
            self.console.print(f"[dim]{t:>6}[/] [red]drop[/]      {src}->{dst} "
                               f"{escape(self.model.describe_msg(msg))} [dim]({why})[/]")
            return
        if kind == "crash":
            self.down.add(node)
            changes = _changes(before, step.node) if before is not None else _initial(step.node)
            changes.append(f"{len(detail)} in-flight message{'s' if len(detail) != 1 else ''} lost")
            self.console.print(f"[dim]{t:>6}[/] [bold red]crash[/]     node {node}  [magenta]"
                               + "; ".join(changes) + "[/]")
            for src, dst, msg in detail:
                self.console.print(f"[dim]{t:>6}[/] [red]lost[/]      {src}->{dst} "
                                   f"{escape(self.model.describe_msg(msg))} "
                                   f"[dim](node {node} crashed)[/]")
            return
        if kind == "restart":
            self.down.discard(node)
        if kind == "deliver":
            src, dst, msg = detail
            what = f"{src}->{dst} {self.model.describe_msg(msg)}"
        elif kind == "propose":
            what = f"node {node} proposes {detail.decode()}"
        else:
            what = f"node {node}"
        changes = _changes(before, step.node) if before is not None else _initial(step.node)
        if kind == "restart" and not changes:
            changes = _initial(step.node)
        for eff in step.effects:
            if eff[0] == "leading":
                changes.append(f"[green]prospective leader of epoch {eff[1]}[/]")
            elif eff[0] == "synced":
                changes.append(f"[bold green]established leader of epoch {eff[1]}[/]")
        if self.quiet_votes and not changes and kind == "deliver":
            return
        tail = ("  [magenta]" + "; ".join(changes) + "[/]") if changes else ""
        self.console.print(f"[dim]{t:>6}[/] {kind:<9} {escape(what)}{tail}")

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
    if getattr(a, "synced", None) != getattr(b, "synced", None):
        out.append(f"synced {a.synced} -> {b.synced}")
    if getattr(a, "next_counter", None) != getattr(b, "next_counter", None):
        out.append(f"next_counter {a.next_counter} -> {b.next_counter}")
    if a.last_committed != b.last_committed:
        out.append(f"commit {_zx(a.last_committed)} -> {_zx(b.last_committed)}")
    return out
