"""The contract between a protocol model and the engines that drive it.

A model is a transition kernel: pure functions from (node state, input) to a `Step`. The seeded
simulator, the explorer's strategies, replay, export and the Spark engine step a protocol only
through these functions, so there is exactly one implementation of every handler (in
`models/<name>/`). Engines know a model only through this module; `zabmc.explore` never imports
`models`.

What a model must provide (`tests/test_model_contract.py` checks every registered model):

- **Nodes** are immutable named tuples (`_replace`, `_fields`) with the fields of `NODE_FIELDS`:
  an `id`, a `role` (an int, index into `ROLE_NAMES`: 0 Looking, 1 Following, 2 Leading), a
  `current_epoch` and an `accepted_epoch` (ints), a `history` (a tuple of `(zxid, payload)`
  transactions, zxid an `(epoch, counter)` tuple, payload bytes) and a `last_committed` zxid.
  The invariant checker and liveness read `id`, `history` and `last_committed`; the reports (the
  console trace, the simulator's trace, the HTML chart, the state graph's views) read `role`,
  `current_epoch` and `accepted_epoch` too, and print `synced` and `next_counter` where a model's
  nodes have them (`OPTIONAL_NODE_FIELDS`). Every field holds only values
  `marshal` writes canonically: ints, bools, None, bytes, str and tuples of them. The explorer's
  fingerprint is the marshal encoding of the whole state, so this is what makes it canonical.
- **Messages** are plain tuples of the same kinds of values, the first element naming the kind.
- **`durable`**: the names of the node fields that survive a crash (what the node keeps on disk).
  A crashed node holds these fields and a fresh node's value in every other one (`crashed`).
- **`fresh(i, n)`** is node `i` before start-up; **`start(node, n)`** is what a node does when it
  starts (at start-up, and again after every restart): it enters its election.
- **`deliver`, `timeout`, `heartbeat`, `propose`** handle one input each; `timeout` and
  `heartbeat` return None when the node may not take that step. `can_propose` says whether a node
  may take a client proposal, `is_leading` whether it runs no election timer (the simulator's C10).
- **Effects** a step reports besides its state and messages are tuples whose first element is one
  of the `EFFECT_TAGS` below. A `FAILED` effect marks a step where the implementation a model
  follows fails (a ZooKeeper server that throws in its synchronisation, say): it breaks the
  failure property it names, and the model's next state says what the model does after it.
- **Actions** (optional): steps of the model's own that the explorer's kinds do not cover (an
  election outcome, a write to disk, a lost connection). `actions(nodes, down, n)` lists the
  enabled ones as plain tuples (`down` is the bit set of down nodes, which take no part);
  `act(nodes, label, n)` returns the `(i, Step)` pairs it makes, applied in order;
  `describe_action(label)` names it for people. A model without `actions` has none. Like the
  handlers, both are pure: the explorer memoises them by the identities of the nodes and the set
  of down nodes, as it memoises the handlers by their inputs', and hands out one object for each
  node and message value (`Env._canon`).
- **What actions touch** (optional; `check --reduction por` reduces a model with actions only when
  it has `footprint` and `couplings`, docs/reduction.md): `footprint(nodes, down, label, n)` gives
  an enabled action's `(reads, writes)`, bit sets of the nodes whose states decide whether it is
  enabled and what it does, and of the nodes it changes (it sends only from those);
  `couplings(nodes, down, n, left)` gives, per node x, the nodes y such that an action reading or
  writing both x and y is enabled or may become enabled before any event changes x (`left`: the
  budgeted kinds, "timeout", "drop", "heartbeat", with budget left); `may_send(nodes, down, n)`,
  the links q->x (bit q*n + x) on which q may send before any event changes x (without it: every
  link). A model that does not say reads and writes every node, and couples every node with all.
  `undone(nodes, down, n, ev, after)` (optional too): whether the enabled delivery `ev`, which
  leaves the nodes `after`, is one that its node's leaving undoes, so that the delivery alone is
  a stubborn set where no set of nodes is (docs/reduction.md, "A delivery that leaving undoes").
- **Lost messages** (optional): `on_drop(nodes, src, dst, msg, n)` returns the `(i, Step)` pairs a
  drop of `msg` makes (a model whose messages travel on connections, as over TCP, where a loss
  breaks the connection rather than leaving a gap). Without it a drop only removes the message.
- **Progress** (optional; `check --reduction por` uses it, docs/reduction.md, "The proviso and a
  progress measure"): `progress(nodes, net)`, an int that grows as the protocol gets on, so that
  the reduced search's proviso need not look at an event that raises it; any function is sound,
  since each event's direction is computed, not assumed. `progress_delivered(nodes, net, src, dst,
  msg, nodes2, net2)`, optional beside it, gives `progress(nodes2, net2) - progress(nodes, net)`
  for a delivery of `msg` on link src->dst with no node down, faster than the two sums
  (tests/test_reduction.py checks that it does).
- **Liveness** (optional; `check --liveness` needs them): `leader_of(node)`, the node it follows
  (itself when leading, None while electing), and `established(node)`, whether it is a leader that
  has finished synchronizing a quorum (docs/liveness.md); and, optionally, `busy(node)`, whether
  the node has a step of its own that a real thread takes at once, so that no timer fires before
  it (the liveness check's quiescence).
- **Properties** (optional): `properties`, the names of the properties its package registers
  (`zabmc.core.properties.register`, from the package's `register()`) that the model's runs can
  break: a FAILED effect it may report, a node check its nodes may fail. The papers' properties
  (the core's) apply to every model (`zabmc.core.properties.can_break`).
- **Known issues** (optional): `known_issues(states, broken)`, the known bugs of the
  implementation a model follows whose windows a run passes through: `states` holds the
  cluster's nodes before the first event and after each (one tuple of nodes per state), `broken`
  the violations of the model's own `properties` along the run (its failures and its windows'
  node checks, each `(step, property, nodes, message)`, in step order; step 0 is the start-up).
  It returns `KnownIssue`s, one per issue, at the step where its window first opens, in that
  order, or `()` when none matches (a possibly new bug). A model that follows no implementation
  has no such member: its runs name nothing (`known_issues` below returns None).
- **Scenarios** (optional; `zabmc check --scenario NAME`, `zabmc models --scenarios`):
  `scenarios`, a tuple of `Scenario`s: named states to search from, each with a one-line
  description and either a trace file the model's package ships (a run of this model, which
  replay confirms; its header's `origin` says how it was made; a search starts from the state
  after its last event) or a goal, a predicate on states that the check's own breadth-first
  search reaches from the initial state within the scenario's bounds (its shortest run to the
  goal is then the start).
- **Symmetry** (optional; `zabmc check --symmetry`, docs/check.md "Symmetry"): `symmetry`, a
  `Symmetry`: whether permuting the client payloads proposed so far (`zab-0` .. `zab-<m-1>`, m the
  proposals made) maps every run to a run and keeps every property's verdict (`payloads`: the
  model only copies a payload and compares transactions by zxid and by equality), and `why`, one
  line saying what is symmetric and what is not, with the code that decides it. Node ids are not a
  permutation a model can declare: the explorer hands each proposal to the lowest-id node that
  may take it (`events.Propose`), and every election here breaks ties by node id. A model
  without it, or whose `payloads` is False, has `--symmetry` refused with its `why`.
- **Release** (optional): `release`, the version of the implementation this model is, one model
  per release (`zabmc models` lists them apart), or None for an abstraction.
- **Patched** (optional): `patched`, `(version, patch)` for a model of a release with a patch
  applied that the release does not ship (a file of the repository): not a release, so its
  `release` is None; `zabmc models` lists these apart.
- **Views**: `dump(nodes)` (the canonical `DSEZAB01` dump), `msg_json`, `node_json` (with a
  `role` and a `current_epoch` entry: the state graph reads them), `describe_msg`.
- **Mutation** (`zabmc mutate`): a model registered as `models.<pkg>:<attr>` has its kernel in
  `models/<pkg>/handlers.py` and its adapter in `models/<pkg>/model.py`, which reaches the kernel
  through `from . import handlers` (so that a mutant kernel can be swapped in) and binds it when
  the module runs; `durable` tuples there are data, not guards, and a quorum threshold is found
  where it is read as an attribute `q` (a handler context's `c.q`) or called as `quorum(...)`.

`MEMBERS`, `OPTIONAL_MEMBERS`, `NODE_FIELDS` and `OPTIONAL_NODE_FIELDS` list these names.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol, Sequence

from .errors import UsageError

# Effect tags: the first element of every effect tuple a step reports.
TIMER = "timer"  # ("timer",): reset_election_deadline(); only the seeded simulator gives it meaning
LEADING = "leading"  # ("leading", e): the node became a prospective leader of epoch e
SYNCED = "synced"  # ("synced", e): the node became the established leader of epoch e
PROPOSED = "proposed"  # ("proposed", txn): the node broadcast a new transaction
#: ("failed", property, what): the step is one where the implementation the model follows fails
#: (throws, exits, gives up); `property` names the `always` property it breaks (zabmc.core.properties)
FAILED = "failed"
EFFECT_TAGS = (TIMER, LEADING, SYNCED, PROPOSED, FAILED)
EFF_TIMER = (TIMER,)

#: `Node.role` as every report prints it: ROLE_NAMES[role]
ROLE_NAMES = ("Looking", "Following", "Leading")

#: what every model provides
MEMBERS = ("name", "description", "network_assumption", "durable", "fresh", "start", "deliver",
           "timeout", "heartbeat", "can_propose", "is_leading", "propose", "dump", "msg_json",
           "node_json", "describe_msg")
#: what a model may provide: its own actions, what a drop does, the liveness hooks, what the
#: reduced search reads
OPTIONAL_MEMBERS = ("actions", "act", "describe_action", "on_drop", "leader_of", "established",
                    "busy", "footprint", "couplings", "may_send", "undone", "progress",
                    "progress_delivered", "properties", "known_issues", "scenarios",
                    "release", "patched", "symmetry")
#: the node fields the engines, invariants and reports read
NODE_FIELDS = ("id", "role", "current_epoch", "accepted_epoch", "history", "last_committed")
#: node fields the reports print when a model's nodes have them
OPTIONAL_NODE_FIELDS = ("synced", "next_counter")


def payload(k: int) -> bytes:
    """The payload of client proposal number `k` (from 0): the bytes `zab-<k>` (C20)."""
    return b"zab-%d" % k


def txn_json(txn: tuple) -> dict:
    """A transaction `(zxid, payload)` in files and `--json`: its zxid as a list, its payload as
    ASCII text (other bytes escaped)."""
    return {"zxid": list(txn[0]), "payload": txn[1].decode("ascii", "backslashreplace")}


def zxid_str(z: tuple) -> str:
    """A zxid for people: `epoch.counter`."""
    return f"{z[0]}.{z[1]}"


def txn_str(t: tuple) -> str:
    """A transaction for people: `epoch.counter:payload`."""
    return f"{t[0][0]}.{t[0][1]}:{t[1].decode('ascii', 'backslashreplace')}"


class Step(NamedTuple):
    """What one handler call produced: the node's new state, messages out, observable effects.

    `outs` is a tuple of `(dst, msg)` in send order; `effects` a tuple of effect tuples."""

    node: Any
    outs: tuple
    effects: tuple


class Symmetry(NamedTuple):
    """What a model's runs are invariant under (the contract's "Symmetry")."""

    #: a permutation of the payloads proposed so far (`zab-<k>`, k below the proposals made) maps
    #: every run to a run, and every property's verdict to the same verdict
    payloads: bool
    why: str  # one line: what is symmetric and what is not, with the code that decides it


class KnownIssue(NamedTuple):
    """A known bug of the implementation a model follows whose window a run passes through."""

    issue: str  # its name in the implementation's issue tracker
    step: int  # where the run enters its window: 0 the start-up, k the state after event k
    why: str  # one line: what in that state opens the window

    def to_json(self) -> dict:
        return {"issue": self.issue, "step": self.step, "why": self.why}


def known_issues(model, states: Sequence, broken: Sequence) -> tuple | None:
    """The known issues whose windows a run of `model` passes through (`KnownIssue`s, in the
    order their windows open; `()`: none does), or None when the model follows no implementation
    whose issues it knows (it has no `known_issues` member). `states` and `broken` as the model
    contract's "Known issues" says."""
    hook = getattr(model, "known_issues", None)
    if hook is None:
        return None
    found = tuple(hook(tuple(states), tuple(broken)))
    if not all(isinstance(x, KnownIssue) for x in found):
        raise TypeError(f"{model.name}.known_issues must return KnownIssue values")
    return tuple(sorted(found, key=lambda x: x.step))


class Model(Protocol):
    """A protocol model (see the module docstring for what each member must do)."""

    name: str
    description: str
    #: "fifo" when the model is only correct on FIFO links (the paper's TCP), "any" otherwise.
    network_assumption: str
    #: the node fields a crash keeps
    durable: tuple

    def fresh(self, node_id: int, n: int) -> Any: ...

    def start(self, node: Any, n: int) -> Step: ...

    def deliver(self, node: Any, src: int, msg: Any, n: int) -> Step: ...

    def timeout(self, node: Any, n: int) -> Step | None: ...

    def heartbeat(self, node: Any, n: int) -> Step | None: ...

    def can_propose(self, node: Any) -> bool: ...

    def is_leading(self, node: Any) -> bool: ...

    def propose(self, node: Any, payload: bytes, n: int) -> Step: ...

    def dump(self, nodes: Sequence[Any]) -> bytes: ...

    def msg_json(self, msg: Any) -> dict: ...

    def node_json(self, node: Any) -> dict: ...

    def describe_msg(self, msg: Any) -> str: ...


# --- `zabmc real`: what the translation of a model's traces follows (optional) -------------------
# A model whose traces have a counterpart on real ZooKeeper servers (`zabmc real`, `export
# --format zookeeper`) says so with `real_translation`: the frozenset of the features of its grain
# that the translation to a schedule follows (zabmc/real/schedule.py); a model without the
# attribute, or with None, has no real counterpart.
#: NEWLEADER's ACK is a step of its own (`ack-newleader i`): the threads' grain (models/zk/fine.py)
NEWLEADER_ACK_STEP = "newleader-ack-step"
#: currentEpoch is written a step after NEWLEADER's writes (`epoch i`; models/zk/epoch.py)
EPOCH_STEP = "epoch-step"
#: a follower's shutdown leaves its SyncThread's queue to be written late (`flush i`;
#: models/zk/shutdown.py)
LEAKED_SYNC_THREAD = "leaked-sync-thread"
REAL_FEATURES = (NEWLEADER_ACK_STEP, EPOCH_STEP, LEAKED_SYNC_THREAD)


def real_translation(model: Model) -> frozenset | None:
    """The features of `model`'s grain its real schedule follows, or None: no real counterpart."""
    return getattr(model, "real_translation", None)


class Scenario(NamedTuple):
    """A named state a model ships to search from (`zabmc check --scenario NAME`): either the
    state after the last event of the trace file `path`, or, with a `goal`, the first state a
    breadth-first search of the check's own model reaches from the initial state where
    `goal(env, state)` holds (`zabmc.explore.start.reach`), within `bounds`: the budgets and
    depth of that search (`ExploreConfig` fields), the check's node count and network. A goal
    scenario is reached by every model that ships it by that model's own runs, so a search
    from it is a search from the initial state in two stages."""

    name: str
    description: str  # one line
    path: str | None  # the trace file, in the model's package (None for a goal)
    goal: Any = None  # goal(env, state) -> bool, as a liveness goal (zabmc.core.goals)
    bounds: Any = None  # {field: value} of the reaching search (a goal's)
    nodes: int | None = None  # the node count a goal is stated for (None: any)


def scenarios(model: Model) -> tuple:
    """The model's `Scenario`s (none when it declares none)."""
    return tuple(getattr(model, "scenarios", None) or ())


def scenario(model: Model, name: str) -> Scenario:
    """The model's scenario called `name`; a one-line `UsageError` naming its scenarios
    otherwise."""
    found = {s.name: s for s in scenarios(model)}
    if name not in found:
        has = (f"its scenarios: {', '.join(found)}" if found else "it ships none")
        raise UsageError(f"--scenario {name}: model {model.name} has no such scenario ({has}; "
                         "`zabmc models --scenarios` lists every model's)")
    return found[name]


def initial_steps(model: Model, n: int) -> list[Step]:
    """The cluster's start-up (C6): every node fresh, then started, in ascending id."""
    return [model.start(model.fresh(i, n), n) for i in range(n)]


def crashed(model: Model, node: Any, n: int) -> Any:
    """`node` after a crash (E7): its durable fields, and a fresh node's value in every other one.

    Two nodes that differ only in what a crash loses crash to the same value."""
    return model.fresh(node.id, n)._replace(**{f: getattr(node, f) for f in model.durable})


class Registered(NamedTuple):
    """A registered model: the object, and where its adapter binds it (`zabmc mutate` executes
    that module afresh against a mutant kernel, docs/mutation.md)."""

    model: Any
    module: str  # the adapter module's name
    attribute: str  # the name the adapter binds the model to


#: the registered models by name, in registration order (the default model first); models add
#: themselves (`register_model`) when `zabmc.core.registry` loads them
MODELS: dict[str, Registered] = {}
#: other names of registered models (a ZooKeeper release by version, say): alias -> model name
ALIASES: dict[str, str] = {}


def register_model(module, attribute: str) -> Any:
    """Register the model bound to `attribute` of the adapter module `module` (a module object)
    under its own `name`; a model package's `register()` calls it for each of its models."""
    model = getattr(module, attribute)
    if model.name in MODELS and MODELS[model.name].model is not model:
        raise ValueError(f"a model named {model.name!r} is registered already")
    MODELS[model.name] = Registered(model, module.__name__, attribute)
    return model


def register_alias(alias: str, name: str) -> None:
    """Let `alias` name the registered model `name` (`zabmc models` lists it beside it)."""
    if alias in MODELS or ALIASES.get(alias, name) != name:
        raise ValueError(f"the name {alias!r} is taken")
    ALIASES[alias] = name


def registered(name: str) -> Registered:
    """The registration of the model named `name` (or an alias of it); a `UsageError` naming the
    choices otherwise."""
    from .registry import load

    load()
    entry = MODELS.get(ALIASES.get(name, name))
    if entry is None:
        if not MODELS:
            raise UsageError(f"unknown model {name!r}: no model is registered (zabmc finds its "
                             "models through its installed entry points: pip install -e .)")
        raise UsageError(f"unknown model {name!r}; choose one of: {', '.join(sorted(MODELS))} "
                         "(`zabmc models` lists them with their other names)")
    return entry


def get_model(name: str) -> Model:
    """The model registered under `name`; a `UsageError` naming the choices otherwise."""
    return registered(name).model


def where(name: str) -> tuple:
    """How another process finds the model `name` even where zabmc is not installed (a Spark
    executor given the package as --py-files has no entry points): its adapter module, the
    attribute that binds it, and the package whose `register()` adds its properties."""
    entry = registered(name)
    return entry.module, entry.attribute, entry.module.rpartition(".")[0]


def ensure(name: str, found: tuple) -> None:
    """Make the model `name` known in this process, from `where(name)` of another one when the
    entry points do not register it."""
    import importlib

    from .registry import load

    load()
    if name in MODELS:
        return
    module, attribute, package = found
    register = getattr(importlib.import_module(package), "register", None)
    if register is not None:
        register()
    if name not in MODELS:
        register_model(importlib.import_module(module), attribute)


def model_names() -> tuple:
    """The registered models' names, in registration order."""
    from .registry import load

    load()
    return tuple(MODELS)


def aliases() -> dict:
    """alias -> model name, for every registered alias."""
    from .registry import load

    load()
    return dict(ALIASES)
