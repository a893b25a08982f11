"""Partition scripts: timed link cuts, crashes and restarts for the seeded simulator
(`zabmc simulate --partition-script`).

A partition script is a text file, one directive per line (docs/partition-scripts.md)::

    # made by zabmc export from sane.json: sane-history
    seed 80
    nodes 3
    rounds 20
    proposals 2
    at 0 isolate 2          # cut every link to and from node 2
    at 9 heal 1 2           # heal the directed link 1->2
    at 12 heal-all
    at 15 crash 0           # node 0 goes down (E7): it keeps its durable fields only
    at 40 restart 0         # and comes back, Looking (E9)

Header lines (`seed`, `nodes`, `rounds`, `proposals`, `model`; each at most once, all before the first
directive) record the simulator parameters the script was made for. Directives are
`at <tick> <action>` with the action one of `cut <src> <dst>`, `heal <src> <dst>`, `isolate <node>`,
`rejoin <node>`, `cut-all`, `heal-all`, `crash <node>`, `restart <node>`; ticks never decrease down
the file. `#` starts a comment.

Semantics: the script keeps a set of cut directed links, empty before tick 0. All directives of tick
`t` apply, in file order, before anything of tick `t` happens (the start-up of C6 runs at tick 0). A
message sent at tick `t` over a link that is cut at `t` (or named by `--partition`) is dropped at
send time, exactly like C8: it consumes no sequence number. Messages already in flight are not
affected by a later cut. `heal`, `rejoin` and `heal-all` never heal a `--partition` link.

`crash i` and `restart i` (E11) take node `i` down and bring it back; the `Timeline` gives the
simulator, per tick, the crash and restart actions of that tick in file order (`node_events`). A
script that crashes a node that is down or restarts one that is up is rejected.

A JSON form of the same events (`zabmc export --format json`, schema `zabmc-partition-events`) is
accepted wherever a script is: see `from_json` / `to_json`. Version 1 holds link events only; a
script with crash or restart events is written as version 2, and both versions are read.
"""

from __future__ import annotations

import bisect
import json
import re
from typing import NamedTuple

from zabmc.core.errors import UsageError
from zabmc.core.files import parse_json, read_text

HEADER_KEYS = ("model", "seed", "nodes", "rounds", "proposals")
ACTIONS = ("cut", "heal", "isolate", "rejoin", "cut-all", "heal-all", "crash", "restart")
# action -> number of node ids it takes
ARITY = {"cut": 2, "heal": 2, "isolate": 1, "rejoin": 1, "cut-all": 0, "heal-all": 0,
         "crash": 1, "restart": 1}
# actions on a node's life rather than on links (E11)
NODE_ACTIONS = ("crash", "restart")
MAX_NODES = 9
#: the longest run a script may ask for (as `zabmc simulate --rounds`: zabmc.sim.simulator)
MAX_ROUNDS = 1_000_000_000
U64 = 1 << 64
JSON_FORMAT = "zabmc-partition-events"
JSON_VERSION = 1  # the version written for scripts without crash/restart events
JSON_VERSION_NODES = 2  # the version written when there are some (version 1 cannot hold them)
JSON_VERSIONS = (1, 2)

_INT = re.compile(r"^[0-9]+$")
_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


class Directive(NamedTuple):
    tick: int
    action: str  # one of ACTIONS
    args: tuple  # node ids: (src, dst), (node,) or ()
    line: int  # 1-based line in the source, 0 when built in memory

    def text(self) -> str:
        return " ".join(["at", str(self.tick), self.action, *map(str, self.args)])


class Script:
    """A parsed partition script: header values and directives, with the source for messages."""

    def __init__(self, header: dict | None = None, directives=(), source: str = "<script>"):
        self.header = dict(header or {})
        self.directives = list(directives)
        self.source = source

    def __eq__(self, other) -> bool:
        return (isinstance(other, Script) and self.header == other.header
                and [d[:3] for d in self.directives] == [d[:3] for d in other.directives])

    def __repr__(self) -> str:
        return f"Script({self.header!r}, {len(self.directives)} directives, {self.source!r})"

    # --- meaning -----------------------------------------------------------------------------------
    def _err(self, d: Directive, msg: str) -> UsageError:
        return UsageError(f"{self.source}:{d.line}: {msg}" if d.line else f"{self.source}: {msg}")

    def timeline(self, nodes: int) -> "Timeline":
        """The cut set over time, and the crash/restart actions per tick, for a cluster of `nodes`;
        node ids are checked against it here (the header's `nodes` may be overridden on the command
        line), and so is every crash and restart (E11: no crash of a down node, no restart of an up
        one)."""
        cut: set = set()
        ticks: list[int] = []
        sets: list[frozenset] = []
        node_events: dict = {}
        down: dict = {}
        all_links = {(s, d) for s in range(nodes) for d in range(nodes) if s != d}
        for d in self.directives:
            for x in d.args:
                if x >= nodes:
                    raise self._err(d, f"node {x} does not exist in a cluster of {nodes} nodes "
                                       f"(ids 0..{nodes - 1})")
            a = d.action
            if a in NODE_ACTIONS:
                problem = _life(down, d.tick, a, d.args[0])
                if problem:
                    raise self._err(d, problem)
                node_events.setdefault(d.tick, []).append((a, d.args[0]))
                continue
            if a == "cut":
                cut.add(d.args)
            elif a == "heal":
                cut.discard(d.args)
            elif a in ("isolate", "rejoin"):
                (x,) = d.args
                touching = {(x, y) for y in range(nodes) if y != x} | {
                    (y, x) for y in range(nodes) if y != x}
                if a == "isolate":
                    cut |= touching
                else:
                    cut -= touching
            elif a == "cut-all":
                cut = set(all_links)
            else:  # heal-all
                cut = set()
            if ticks and ticks[-1] == d.tick:
                sets[-1] = frozenset(cut)
            else:
                ticks.append(d.tick)
                sets.append(frozenset(cut))
        return Timeline(ticks, sets, {t: tuple(ev) for t, ev in node_events.items()})

    def config(self, seed=None, nodes=None, rounds=None, proposals=None, partition=frozenset()):
        """A SimConfig from the header, each argument that is not None taking precedence."""
        from zabmc.sim.simulator import SimConfig

        h = self.header

        def pick(name, given, default):
            return given if given is not None else h.get(name, default)

        return SimConfig(pick("seed", seed, 0), pick("nodes", nodes, 3),
                         pick("rounds", rounds, 1000), pick("proposals", proposals, 0),
                         partition).validate()

    # --- writers -----------------------------------------------------------------------------------
    def to_text(self, comments: list[str] | None = None) -> str:
        """The script as text: comment lines, the header in a fixed key order, the directives."""
        lines = [f"# {c}" if c else "#" for c in (comments or [])]
        for key in HEADER_KEYS:
            if key in self.header:
                lines.append(f"{key} {self.header[key]}")
        lines.extend(d.text() for d in self.directives)
        return "\n".join(lines) + "\n"

    def link_events(self, nodes: int | None = None) -> list[dict]:
        """The directives as changes of single directed links, in time order (within a tick:
        heals before cuts, then by link): `{"tick", "action": "cut"|"heal", "src", "dst"}`.
        Only real changes are listed; conveniences are expanded."""
        n = nodes if nodes is not None else self.header.get("nodes", 3)
        tl = self.timeline(n)
        out = []
        prev: frozenset = frozenset()
        for t, s in zip(tl.ticks, tl.sets):
            for link in sorted(prev - s):
                out.append({"tick": t, "action": "heal", "src": link[0], "dst": link[1]})
            for link in sorted(s - prev):
                out.append({"tick": t, "action": "cut", "src": link[0], "dst": link[1]})
            prev = s
        return out

    def node_events(self) -> list[dict]:
        """The crash and restart directives in file order: `{"tick", "action", "node"}`."""
        return [{"tick": d.tick, "action": d.action, "node": d.args[0]}
                for d in self.directives if d.action in NODE_ACTIONS]

    def to_json(self, extra: dict | None = None) -> dict:
        """Schema `zabmc-partition-events` (docs/partition-scripts.md): version 1 when the script
        only cuts and heals links (exactly as before crashes existed), version 2 when it also
        crashes or restarts nodes. Within a tick, link events come before node events; both apply
        before anything of the tick happens, and a message sent at the tick sees the tick's final
        cut set, so that order carries no meaning between the two kinds."""
        h = self.header
        events = self.link_events()
        nodes = self.node_events()
        if nodes:
            events = sorted(events + nodes, key=lambda e: (e["tick"], "node" in e))
        out = {
            "format": JSON_FORMAT,
            "version": JSON_VERSION_NODES if nodes else JSON_VERSION,
            "model": h.get("model", "db19"),
            "simulator": {k: h[k] for k in ("seed", "nodes", "rounds", "proposals") if k in h},
            "events": events,
        }
        if extra:
            out.update(extra)
        return out


class Timeline:
    """The cut set as a step function of the tick: `sets[k]` holds from `ticks[k]` on; and
    `node_events`, tick -> the `(action, node)` crashes and restarts of that tick in file order
    (empty when the script has none)."""

    def __init__(self, ticks: list[int], sets: list[frozenset], node_events: dict | None = None):
        self.ticks = ticks
        self.sets = sets
        self.node_events = dict(node_events or {})

    @property
    def has_cuts(self) -> bool:
        """False when no link is ever cut: `link_cut` always answers False."""
        return any(self.sets)

    def down_at(self, t: int) -> frozenset:
        """The nodes that are down once the directives of tick `t` have applied."""
        down: set = set()
        for tick in sorted(self.node_events):
            if tick > t:
                break
            for action, x in self.node_events[tick]:
                if action == "crash":
                    down.add(x)
                else:
                    down.discard(x)
        return frozenset(down)

    def cut_at(self, t: int) -> frozenset:
        k = bisect.bisect_right(self.ticks, t) - 1
        return self.sets[k] if k >= 0 else frozenset()

    def link_cut(self, t: int, src: int, dst: int) -> bool:
        """The simulator's `link_cut` hook."""
        k = bisect.bisect_right(self.ticks, t) - 1
        return k >= 0 and (src, dst) in self.sets[k]


def _life(down: dict, tick: int, action: str, x: int) -> str | None:
    """Apply `crash x` or `restart x` at `tick` to `down` (node -> tick it went down); the problem
    when the action is impossible (E11: a down node cannot crash, an up node cannot restart)."""
    if action == "crash":
        if x in down:
            return (f"crash {x}: node {x} is already down (crashed at tick {down[x]}); "
                    f"a down node cannot crash again")
        down[x] = tick
    else:
        if x not in down:
            return f"restart {x}: node {x} is up; only a crashed node can restart"
        del down[x]
    return None


def _int(tok: str, what: str, err) -> int:
    if not _INT.match(tok):
        raise err(f"{what} must be a non-negative integer, got {tok!r}")
    return int(tok)


def parse(text: str, source: str = "<script>") -> Script:
    """Parse a partition script strictly; errors are `UsageError("<source>:<line>: ...")`."""
    header: dict = {}
    directives: list[Directive] = []
    last_tick = 0
    down: dict = {}
    for lineno, raw in enumerate(text.splitlines(), start=1):

        def err(msg, lineno=lineno):
            return UsageError(f"{source}:{lineno}: {msg}")

        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        toks = line.split()
        word = toks[0]
        if word in HEADER_KEYS:
            if directives:
                raise err(f"header line {word!r} after the first directive; the header "
                          "(model, seed, nodes, rounds, proposals) comes first")
            if word in header:
                raise err(f"duplicate header key {word!r}")
            if len(toks) != 2:
                raise err(f"{word!r} takes exactly one value: {word} <value>")
            val = toks[1]
            if word == "model":
                if not _NAME.match(val):
                    raise err(f"model must be a name, got {val!r}")
                header[word] = val
                continue
            v = _int(val, word, err)
            if word == "seed" and v >= U64:
                raise err(f"seed must be an unsigned 64-bit integer, got {v}")
            if word == "nodes" and not 1 <= v <= MAX_NODES:
                raise err(f"nodes must be between 1 and {MAX_NODES}, got {v}")
            if word == "rounds" and v > MAX_ROUNDS:
                raise err(f"rounds is limited to {MAX_ROUNDS:,}, got {v}")
            header[word] = v
            continue
        if word != "at":
            if word in ACTIONS:
                raise err(f"{word!r} needs a tick: at <tick> {word} ...")
            raise err(f"unknown directive {word!r}; expected a header key ({', '.join(HEADER_KEYS)}) "
                      f"or at <tick> <{'|'.join(ACTIONS)}>")
        if len(toks) < 3:
            raise err("incomplete directive; expected at <tick> <action> [nodes]")
        tick = _int(toks[1], "tick", err)
        action = toks[2]
        if action not in ARITY:
            raise err(f"unknown action {action!r}; expected one of {', '.join(ACTIONS)}")
        args = toks[3:]
        want = ARITY[action]
        if len(args) != want:
            usage = {2: f"at <tick> {action} <src> <dst>", 1: f"at <tick> {action} <node>",
                     0: f"at <tick> {action}"}[want]
            raise err(f"{action!r} takes {want} node id{'s' if want != 1 else ''}, got "
                      f"{len(args)}: {usage}")
        ids = tuple(_int(a, "node id", err) for a in args)
        if action in ("cut", "heal") and ids[0] == ids[1]:
            raise err(f"a node has no link to itself: {action} {ids[0]} {ids[1]}")
        n = header.get("nodes")
        for x in ids:
            if n is not None and x >= n:
                raise err(f"node {x} does not exist: the header says nodes {n} "
                          f"(ids 0..{n - 1})")
        if tick < last_tick:
            raise err(f"tick {tick} is earlier than the previous directive's tick {last_tick}; "
                      "directives must be in time order")
        r = header.get("rounds")
        if r is not None and tick >= max(r, 1):  # tick 0 (the start-up) happens even for rounds 0
            raise err(f"tick {tick} is never reached: the header says rounds {r} "
                      f"(ticks 0..{max(r - 1, 0)})")
        if action in NODE_ACTIONS:
            problem = _life(down, tick, action, ids[0])
            if problem:
                raise err(problem)
        last_tick = tick
        directives.append(Directive(tick, action, ids, lineno))
    return Script(header, directives, source)


def from_json(data, source: str = "<json>") -> Script:
    """A script from a `zabmc-partition-events` JSON object: version 1 (link events, which become
    cut/heal) or version 2 (link events plus crash/restart events)."""

    def err(msg):
        return UsageError(f"{source}: {msg}")

    if not isinstance(data, dict) or data.get("format") != JSON_FORMAT:
        raise err(f"not a partition-events file (no \"format\": \"{JSON_FORMAT}\")")
    version = data.get("version")
    if isinstance(version, bool) or version not in JSON_VERSIONS:
        raise err(f"unsupported partition-events version {version!r} "
                  f"(this zabmc reads versions {', '.join(map(str, JSON_VERSIONS))})")
    header: dict = {}
    model = data.get("model", "db19")
    if not isinstance(model, str) or not _NAME.match(model):
        raise err("'model' must be a name")
    header["model"] = model
    sim = data.get("simulator", {})
    if not isinstance(sim, dict):
        raise err("'simulator' must be an object")
    for k, v in sim.items():
        if k not in ("seed", "nodes", "rounds", "proposals"):
            raise err(f"unknown simulator key {k!r}")
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise err(f"simulator.{k} must be a non-negative integer")
        header[k] = v
    if "seed" in header and header["seed"] >= U64:
        raise err("simulator.seed must be an unsigned 64-bit integer")
    if "nodes" in header and not 1 <= header["nodes"] <= MAX_NODES:
        raise err(f"simulator.nodes must be between 1 and {MAX_NODES}")
    if "rounds" in header and header["rounds"] > MAX_ROUNDS:
        raise err(f"simulator.rounds is limited to {MAX_ROUNDS:,}")
    events = data.get("events")
    if not isinstance(events, list):
        raise err("'events' must be a list")
    directives = []
    last = 0
    down: dict = {}
    for k, ev in enumerate(events):
        where = f"events[{k}]"
        if not isinstance(ev, dict):
            raise err(f"{where} must be an object")
        action = ev.get("action")
        node_event = action in NODE_ACTIONS
        if node_event and version < JSON_VERSION_NODES:
            raise err(f"{where}.action {action!r} needs version {JSON_VERSION_NODES} "
                      f"(version {version} holds link events only)")
        vals = {}
        for key in ("tick", "node") if node_event else ("tick", "src", "dst"):
            v = ev.get(key)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise err(f"{where}.{key} must be a non-negative integer")
            vals[key] = v
        if not node_event and action not in ("cut", "heal"):
            choices = ('"cut" or "heal"' if version < JSON_VERSION_NODES
                       else 'one of "cut", "heal", "crash", "restart"')
            raise err(f"{where}.action must be {choices}")
        ids = (vals["node"],) if "node" in vals else (vals["src"], vals["dst"])
        if len(ids) == 2 and ids[0] == ids[1]:
            raise err(f"{where}: a node has no link to itself")
        n = header.get("nodes")
        if n is not None and max(ids) >= n:
            raise err(f"{where} names a node that does not exist with {n} nodes")
        if vals["tick"] < last:
            raise err(f"{where}: ticks must not decrease")
        r = header.get("rounds")
        if r is not None and vals["tick"] >= max(r, 1):
            raise err(f"{where}: tick {vals['tick']} is never reached with rounds {r}")
        if action in NODE_ACTIONS:
            problem = _life(down, vals["tick"], action, ids[0])
            if problem:
                raise err(f"{where}: {problem}")
        last = vals["tick"]
        directives.append(Directive(vals["tick"], action, ids, 0))
    return Script(header, directives, source)


def loads(text: str, source: str = "<script>") -> Script:
    """Either form: JSON when the first non-blank character is `{`, the text format otherwise.
    A UTF-8 byte order mark at the start (some Windows editors write one) is not part of it."""
    text = text.removeprefix("\ufeff")
    if text.lstrip().startswith("{"):
        try:
            data = parse_json(text, source)
        except json.JSONDecodeError as e:
            raise UsageError(f"{source}:{e.lineno}: not valid JSON: {e.msg}") from None
        return from_json(data, source)
    return parse(text, source)


def load(path: str) -> Script:
    try:
        text = read_text(path, "partition script")
    except UnicodeDecodeError:
        raise UsageError(f"partition script {path} is not UTF-8 text") from None
    return loads(text, path)


def from_link_decisions(decisions: dict, header: dict, node_events=()) -> Script:
    """The smallest cut/heal script that answers every recorded `link_cut` query the same way,
    plus the crashes and restarts `node_events` (`(tick, "crash"|"restart", node)`, in the order
    they apply).

    `decisions` maps `(tick, src, dst)` to the bool answered at that tick; between two queried ticks
    a link's state does not matter (nothing was sent over it), so a link is cut at the first tick of
    each run of True answers and healed at the first False after it. Within a tick, the link
    directives come first and the crashes and restarts follow in their order (all of a tick's
    directives apply before anything of the tick happens, E11, so only the order among the node
    events matters). Without node events the script is exactly what it was before they existed.
    """
    per_link: dict = {}
    for (t, s, d), cut in decisions.items():
        per_link.setdefault((s, d), []).append((t, cut))
    changes = []
    for link, answers in per_link.items():
        state = False
        for t, cut in sorted(answers):
            if cut != state:
                changes.append((t, 0 if not cut else 1, link, "cut" if cut else "heal"))
                state = cut
    changes.sort()
    directives = [Directive(t, action, link, 0) for t, _, link, action in changes]
    if node_events:
        ordered = sorted(enumerate(node_events), key=lambda e: (e[1][0], e[0]))
        nodes = [Directive(t, action, (x,), 0) for _, (t, action, x) in ordered]
        merged = sorted(enumerate(directives + nodes),
                        key=lambda e: (e[1].tick, e[1].action in NODE_ACTIONS, e[0]))
        directives = [d for _, d in merged]
    return Script(header, directives, "<export>")


def parse_partition(text: str | None) -> frozenset:
    """`s,d[,s,d...]` -> a set of directed links (C11). Ids are range-checked by the config."""
    if not text:
        return frozenset()
    parts = [p.strip() for p in text.split(",")]
    try:
        ids = [int(p) for p in parts]
    except ValueError:
        raise UsageError(f"--partition takes comma-separated node ids, got {text!r}") from None
    if len(ids) % 2:
        raise UsageError(f"--partition needs pairs src,dst; got an odd number of ids ({len(ids)})")
    if any(i < 0 for i in ids):
        raise UsageError(f"--partition ids must not be negative, got {text!r}")
    links = list(zip(ids[0::2], ids[1::2]))
    for s, d in links:
        if s == d:  # as a partition script's `cut S S` is refused
            raise UsageError(f"--partition: a node has no link to itself: {s},{d}")
    return frozenset(links)
