"""Single-point mutations of a protocol model's guards and thresholds (`zabmc mutate`).

The generator walks the AST of a model's handler module (`models/<pkg>/handlers.py`) and yields
every mutation of these kinds, each named by file, line and change:

- `cmp`: a comparison's operator swapped (`<` to `<=` or `>`, `>` to `>=` or `<`, `==` to `!=`, ...);
- `swap`: a comparison's two operands swapped (for the operators where order matters);
- `quorum`: a quorum threshold `c.q` (or `quorum(...)`) moved by one, up and down;
- `bool`: one conjunct of an `and`, or one disjunct of an `or`, dropped;
- `minmax`: `max` and `min` swapped;
- `plus1`: a `+ 1` removed.

A mutant is applied in memory: the mutated module is compiled under a name of its own, and the
model's adapter module (`models/<pkg>/model.py`) is executed afresh against it, so that the
mutant is a new model instance; the source files are never written. Docstrings and the `Rules`
class's `durable` tuple are data, not guards, and are left alone.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
import types
from dataclasses import dataclass
from typing import NamedTuple

from zabmc import gate as _gate
from zabmc.core.errors import UsageError
from zabmc.explore.outcome import StopReason

_SWAPS = {
    ast.Lt: (ast.LtE, ast.Gt), ast.LtE: (ast.Lt, ast.GtE), ast.Gt: (ast.GtE, ast.Lt),
    ast.GtE: (ast.Gt, ast.LtE), ast.Eq: (ast.NotEq,), ast.NotEq: (ast.Eq,),
    ast.In: (ast.NotIn,), ast.NotIn: (ast.In,), ast.Is: (ast.IsNot,), ast.IsNot: (ast.Is,),
}
_SYMBOL = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=",
           ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}
_ORDERED = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


@dataclass(frozen=True)
class Mutant:
    """One mutation: `index` in the generator's order, where it is, and what it changes."""

    index: int
    kind: str
    file: str
    line: int
    col: int
    before: str
    after: str
    _path: tuple  # how to find the node again: (field, index) steps from the module

    @property
    def name(self) -> str:
        return f"{self.file}:{self.line}:{self.col} {self.kind}: {self.before} -> {self.after}"

    def to_json(self) -> dict:
        return {"index": self.index, "kind": self.kind, "file": self.file, "line": self.line,
                "col": self.col, "before": self.before, "after": self.after}


def _walk(node, path=()):
    """Every AST node below `node` with its path of (field, index) steps, in source order."""
    yield node, path
    for field, value in ast.iter_fields(node):
        if isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, ast.AST):
                    yield from _walk(item, path + ((field, i),))
        elif isinstance(value, ast.AST):
            yield from _walk(value, path + ((field, None),))


def _skipped(tree) -> set:
    """Nodes that are data rather than guards: docstrings and `durable = (...)` tuples."""
    out = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and \
                isinstance(getattr(body[0], "value", None), ast.Constant):
            out.add(id(body[0]))
        if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "durable" for t in node.targets):
            out.add(id(node))
    return out


def _is_quorum(node) -> bool:
    if isinstance(node, ast.Attribute) and node.attr == "q":
        return isinstance(node.ctx, ast.Load)  # `self.q = ...` is where it is set, not a guard
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "quorum")


def _changes(node):
    """(kind, replacement-builder) for every mutation of `node` itself."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        op = type(node.ops[0])
        for new in _SWAPS.get(op, ()):
            yield "cmp", (lambda n, new=new: ast.Compare(n.left, [new()], n.comparators))
        if op in _ORDERED:
            yield "swap", (lambda n: ast.Compare(n.comparators[0], n.ops, [n.left]))
    if _is_quorum(node):
        for op in (ast.Sub, ast.Add):
            yield "quorum", (lambda n, op=op: ast.BinOp(n, op(), ast.Constant(1)))
    if isinstance(node, ast.BoolOp) and len(node.values) >= 2:
        for k in range(len(node.values)):
            def drop(n, k=k):
                rest = n.values[:k] + n.values[k + 1:]
                return rest[0] if len(rest) == 1 else ast.BoolOp(n.op, rest)
            yield "bool", drop
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
            node.func.id in ("max", "min"):
        other = "min" if node.func.id == "max" else "max"
        yield "minmax", (lambda n, other=other: ast.Call(ast.Name(other, ast.Load()), n.args,
                                                         n.keywords))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and \
            isinstance(node.right, ast.Constant) and node.right.value == 1:
        yield "plus1", (lambda n: n.left)


def _source(pkg: str):
    spec = importlib.util.find_spec(f"{pkg}.handlers")
    if spec is None or spec.origin is None:
        raise LookupError(f"model package {pkg} has no handlers module")
    with open(spec.origin, encoding="utf-8") as f:
        return spec.origin, f.read()


def _package(model_name: str) -> str:
    """The package of the model's adapter (the module that binds it), whose `handlers` module
    is the kernel mutated."""
    from zabmc.core.model import MODELS, registered

    try:
        entry = registered(model_name)
    except UsageError:
        raise UsageError(f"unknown model {model_name!r} (zabmc models lists them)") from None
    if model_name not in MODELS:  # an alias: mutants are named after the model itself
        raise UsageError(f"unknown model {model_name!r} (zabmc models lists them)")
    return entry.module.rpartition(".")[0]


#: package -> (path, source, its mutants): `build` asks for them once per mutant, and
#: enumerating them parses and unparses the whole module (0.4 s for zk's); a source that
#: changed is enumerated again
_MUTANTS: dict = {}


def mutants(model_name: str) -> list:
    """Every single-point mutant of the model's handler module, in source order."""
    pkg = _package(model_name)
    path, src = _source(pkg)
    known = _MUTANTS.get(pkg)
    if known is None or known[:2] != (path, src):
        known = _MUTANTS[pkg] = (path, src, tuple(_enumerate(pkg, src)))
    return list(known[2])


def _enumerate(pkg: str, src: str) -> list:
    tree = ast.parse(src)
    skipped = _skipped(tree)
    rel = f"{pkg.replace('.', '/')}/handlers.py"
    out = []
    stack_skip: list = []
    for node, npath in _walk(tree):
        if id(node) in skipped:
            stack_skip.append(npath)
        if any(npath[:len(p)] == p for p in stack_skip):
            continue
        for kind, build in _changes(node):
            after = ast.unparse(ast.fix_missing_locations(build(_copy(node))))
            out.append(Mutant(len(out), kind, rel, node.lineno, node.col_offset,
                              ast.unparse(node), after, npath))
    return out


def _copy(node):
    return ast.parse(ast.unparse(node), mode="eval").body if isinstance(node, ast.expr) else node


def _replace(tree, path, new):
    parent = tree
    for field, index in path[:-1]:
        parent = getattr(parent, field) if index is None else getattr(parent, field)[index]
    field, index = path[-1]
    if index is None:
        setattr(parent, field, new)
    else:
        getattr(parent, field)[index] = new


_COUNTER = [0]


def build(model_name: str, mutant: Mutant | None, *, tree=None, extra=None):
    """A fresh model instance of `model_name` whose handler module carries `mutant` (None: the
    unmutated source, compiled the same way, as a control; `tree`: a prepared module, with `extra`
    globals, as `Probe` makes)."""
    pkg = _package(model_name)
    path, src = _source(pkg)
    tree = ast.parse(src) if tree is None else tree
    if mutant is not None:
        nodes = dict((p, n) for n, p in _walk(tree))
        node = nodes[mutant._path]
        kinds = [b for k, b in _changes(node) if k == mutant.kind]
        same = [m for m in mutants(model_name) if m._path == mutant._path and m.kind == mutant.kind]
        new = kinds[[m.index for m in same].index(mutant.index)](node)
        _replace(tree, mutant._path, new)
        ast.fix_missing_locations(tree)
    _COUNTER[0] += 1
    tag = f"mut{_COUNTER[0]}"
    base = pkg
    handlers = types.ModuleType(f"{base}._{tag}_handlers")
    handlers.__package__ = base
    handlers.__file__ = path
    handlers.__dict__.update(extra or {})
    exec(compile(tree, path, "exec"), handlers.__dict__)
    # the adapter, executed afresh with `handlers` resolving to the mutant
    package = importlib.import_module(base)
    real = sys.modules[f"{base}.handlers"]
    from zabmc.core.model import registered

    entry = registered(model_name)
    model_spec = importlib.util.find_spec(entry.module)
    adapter = types.ModuleType(f"{base}._{tag}_model")
    adapter.__package__ = base
    adapter.__file__ = model_spec.origin
    with open(model_spec.origin, encoding="utf-8") as f:
        adapter_src = f.read()
    try:
        sys.modules[f"{base}.handlers"] = handlers
        package.handlers = handlers
        exec(compile(adapter_src, model_spec.origin, "exec"), adapter.__dict__)
    finally:
        sys.modules[f"{base}.handlers"] = real
        package.handlers = real
    return getattr(adapter, entry.attribute)


_PROBE = "__zabmc_probe__"


class Probe:
    """Weak and firm mutation for every mutant at once.

    Weak (Howden, 1982): each mutated expression of the handler module is replaced by a call that
    evaluates the original (and returns it, so the model behaves exactly as the unmutated one) and
    every mutant's version of it, noting the mutants whose version was *reached* and those whose
    value ever differed (*infected*; a mutant version that raises counts as different). A mutant
    never infected in a search is the original model within that search: every state it explores
    evaluates the same, so its state graph, and the verdict, are the original's. Evaluating a
    mutant version of an outer expression may evaluate inner probes where the original would not;
    that can only add infections, never hide one, so the conclusion stays sound.

    Firm (Woodward and Halewood, 1988): `model` is a proxy through which the search reaches the
    model. Each call it makes (a delivery, a timeout, an action, ...) is one unit: when a mutant is
    infected during the call, the mutant's own model (`build`) is called with the same arguments
    and the two results compared. A mutant whose results equal the original's on every call of a
    search is *not propagated* there: the search is a deterministic function of what the model
    returns, so the mutant's run makes the same calls, gets the same results and explores the same
    graph with the same verdict. Results are compared by value and by `repr`, so `True` and `1` or
    two objects without a value equality count as different (never the unsound way). An
    infection outside any call through the proxy counts as propagated."""

    def __init__(self, model_name: str):
        pkg = _package(model_name)
        path, src = _source(pkg)
        tree = ast.parse(src)
        ms = mutants(model_name)
        self._model_name = model_name
        self._mutants = ms
        by_path: dict = {}
        for m in ms:
            by_path.setdefault(m._path, []).append(m)
        self.reached: set = set()
        self.infected: set = set()
        self.propagated: set = set()
        self._depth = 0
        self._call: set = set()  # mutants infected during the current call
        self._built: dict = {}   # mutant index -> its model, while it is not propagated
        nodes = dict((p, n) for n, p in _walk(tree))
        # deepest first, so that an outer expression's mutants are built over probed children
        for npath in sorted(by_path, key=len, reverse=True):
            node = nodes[npath]
            group = by_path[npath]
            builders = {}
            for kind in {m.kind for m in group}:
                same = [m for m in group if m.kind == kind]
                for m, b in zip(same, [b for k, b in _changes(node) if k == kind]):
                    builders[m.index] = b
            ids = tuple(m.index for m in group)
            alts = [ast.Lambda(ast.arguments([], [], None, [], [], None, []),
                               builders[k](_clone(node))) for k in ids]
            call = ast.Call(ast.Name(_PROBE, ast.Load()), [ast.Constant(ids), node] + alts, [])
            _replace(tree, npath, ast.copy_location(call, node))
        ast.fix_missing_locations(tree)
        self.real = build(model_name, None, tree=tree, extra={_PROBE: self._probe})
        self.model = _Proxy(self)

    def _probe(self, ids, value, *alts):
        self.reached.update(ids)
        for k, alt in zip(ids, alts):
            if k in self.propagated:
                continue
            try:
                other = alt()
            except Exception:  # noqa: BLE001
                other = _RAISED
            if other is _RAISED or (other is not value and other != value):
                self.infected.add(k)
                if self._depth:
                    self._call.add(k)
                else:
                    self._propagate(k)
        return value

    def _propagate(self, k) -> None:
        self.propagated.add(k)
        self._built.pop(k, None)

    def _mutant(self, k):
        model = self._built.get(k)
        if model is None:
            model = self._built[k] = build(self._model_name, self._mutants[k])
        return model

    def unit(self, what, *args, **kw):
        """`what(model, *args, **kw)` on the original, then on each mutant infected meanwhile;
        the original's result."""
        if self._depth:
            return what(self.real, *args, **kw)
        self._depth, self._call = 1, set()
        try:
            value = what(self.real, *args, **kw)
        except BaseException:
            for k in self._call:
                self._propagate(k)
            raise
        finally:
            self._depth = 0
        for k in sorted(self._call - self.propagated):
            try:
                other = what(self._mutant(k), *args, **kw)
            except Exception:  # noqa: BLE001
                self._propagate(k)
                continue
            if not (other is value or (other == value and repr(other) == repr(value))):
                self._propagate(k)
        self._call = set()
        return value


_RAISED = object()


class _Proxy:
    """The probed model as a search sees it: every attribute read, and every call of a method,
    goes through `Probe.unit`."""

    def __init__(self, probe: Probe):
        object.__setattr__(self, "_probe", probe)

    def __getattr__(self, name):
        probe = self._probe
        value = probe.unit(getattr, name)
        if not callable(value):
            return value

        def method(*args, **kw):
            return probe.unit(lambda model, *a, **k: getattr(model, name)(*a, **k), *args, **kw)

        method.__name__ = name
        return method

    def __repr__(self) -> str:
        return repr(self._probe.real)


def _clone(node):
    import copy

    return copy.deepcopy(node)


#: the CI invariant gate's runs (`zabmc.gate`, which `zabmc gate` and `make gate` run), by model:
#: zab's, zab-omega's and zk-fixed's; each model's mutants are scored against `GATES`
GATE = _gate.ZAB
OMEGA_GATE = _gate.ZAB_OMEGA
ZK_FIXED_GATE = _gate.ZK_FIXED

#: the models that have a gate, and its searches; a mutant of another model can be listed, but
#: there is no gate to run it against. zab's includes the zab-omega run: the two models share the
#: handler module, so `make gate` judges a mutant of it by both
GATES = _gate.MUTATION_GATES


def gate_for(model_name: str) -> tuple:
    """The gate's searches for `model_name`, or a one-line `UsageError` naming those that have one:
    running one model's gate on another would say nothing about either."""
    runs = GATES.get(model_name)
    if runs is None:
        raise UsageError(f"model {model_name} has no gate to run its mutants against (--run "
                         f"knows {', '.join(sorted(GATES))}); without --run its mutants are listed")
    return runs


#: wider searches for the mutants the gate misses (benchmarks/mutation_report.py): more random
#: walks, with other seeds and budgets, than the gate affords; seeded, so a catch is reproducible
WIDE = (
    "--model zab --network fifo --nodes 3 --proposals 1 --max-timeouts 1 --max-crashes 1 "
    "--depth 60 --strategy random --seed 2 --walks 20000",
)


def _spec(run: str, model_name: str | None = None, **fields):
    """The `CheckSpec` of one search's `zabmc check` flags (`model_name` when they name none),
    with levels kept in memory, as the campaign has always run them."""
    from zabmc.spec import CheckSpec

    spec = CheckSpec.from_args(run, **fields)
    if model_name is not None and "--model" not in run.split():
        spec = spec.replace(model=model_name)
    if spec.strategy == "bfs" and spec.engine == "in-process" and not spec.liveness:
        spec = spec.replace(memory_limit="none")
    return spec


def run_model(run: str, default: str) -> str:
    """The model a search's flags name (`default` when they name none): zab's gate has a run on
    zab-omega, which shares its handler module."""
    return _spec(run, default).model


def gate_config(run: str):
    """The `ExploreConfig` of one search's flags."""
    return _spec(run).config()


def run_search(model_name: str, mutant: Mutant | None, run: str, model=None,
               time_limit: float | None = None) -> dict:
    """One search (`zabmc check` flags: bounds, and `--strategy bfs|dfs|random` with `--seed` and
    `--walks`) on the mutant: caught (the property and depth of the shortest violation found; a
    kernel that raises counts as caught, with the error) or not, with the distinct states seen and
    whether the search completed its bounds."""
    spec = _spec(run, model_name, time_limit=time_limit)
    model = model if model is not None else build(spec.model, mutant)
    # the search's flags must fit the model (a UsageError is not the mutant's doing)
    prepared = spec.replace(model_override=model).validate().prepare()
    try:
        out = prepared.run()
    except UsageError:
        raise
    except Exception as e:  # noqa: BLE001  (a mutant may break the kernel's own assumptions)
        return {"caught": True, "property": None, "error": f"{type(e).__name__}: {e}"}
    if spec.liveness:  # the state cap `zabmc check --liveness` has: reaching it is incomplete too
        r = {"distinct": out.distinct, "stop": str(out.stop_reason),
             "complete": out.stop_reason in (StopReason.EXHAUSTED, StopReason.DEPTH_BOUND)}
        if out.lassos:
            lasso = out.lassos[0]
            return {"caught": True, "property": lasso.property, "depth": len(lasso.events),
                    "kind": lasso.kind} | r
        return _incomplete(spec, out.stop_reason, out.depth_reached) | r
    # complete: the search covered its bounds (every state, every state to the depth bound, every
    # walk, or a depth-first search's first --max-states states), rather than stopping at the time
    # limit or a signal
    r = {"distinct": out.distinct, "stop": str(out.stop_reason),
         "complete": out.stop_reason in COVERED}
    if out.violations:
        f = out.violations[0]
        return {"caught": True, "property": f.violation.property, "depth": f.depth} | r
    return _incomplete(spec, str(out.stop_reason), out.depth_reached) | r


#: the stop reasons of a search that covered its bounds
COVERED = (StopReason.EXHAUSTED, StopReason.DEPTH_BOUND, StopReason.WALKS_DONE,
           StopReason.STATE_CAP)


def _incomplete(spec, stop: str, depth: int) -> dict:
    """A clean search: caught all the same under `--require-complete` (exit 4) when it stopped
    short of exhausting its space."""
    if spec.require_complete and stop in (StopReason.DEPTH_BOUND, StopReason.STATE_CAP):
        return {"caught": True, "property": f"incomplete ({stop})", "depth": depth}
    return {"caught": False}


def run_gate(model_name: str, mutant: Mutant | None, runs=None) -> dict:
    """Run the gate's searches on the mutant, in order, until one fails: what caught it (the run,
    the property, the depth), or that none did; a kernel that raises counts as caught."""
    runs = gate_for(model_name) if runs is None else runs
    models: dict = {}
    for k, run in enumerate(runs, 1):
        name = run_model(run, model_name)
        model = models.get(name) or models.setdefault(name, build(name, mutant))
        r = run_search(name, mutant, run, model=model)
        if r["caught"]:
            return _gate_row(k, r)
    return {"caught": False}


def _gate_row(k: int, r: dict) -> dict:
    return {"run": k} | {key: r[key] for key in ("caught", "property", "depth", "error") if key in r}


def gate_verdicts(model_name: str, chosen: list, runs=None):
    """(mutant, verdict) for each chosen mutant, as `run_gate` gives it; for more than one mutant,
    each gate run is first probed once (`Probe`) and a mutant runs only the searches where its
    handlers ever return something other than the original's (elsewhere its state graph is the
    original's)."""
    runs = gate_for(model_name) if runs is None else runs
    propagated: dict[str, set] = {}
    for m in chosen:
        models: dict = {}
        for k, run in enumerate(runs, 1):
            name = run_model(run, model_name)
            if len(chosen) > 1:
                if run not in propagated:
                    probe = Probe(name)
                    run_search(name, None, run, model=probe.model)
                    propagated[run] = probe.propagated
                if m.index not in propagated[run]:
                    continue
            model = models.get(name) or models.setdefault(name, build(name, m))
            r = run_search(name, m, run, model=model)
            if r["caught"]:
                yield m, _gate_row(k, r)
                break
        else:
            yield m, {"caught": False}


def _exhaustive(run: str) -> bool:
    """A breadth-first search of every state within its bounds (no reduction, no cap): one whose
    reachable set two models can be compared on."""
    spec = _spec(run)
    return (spec.strategy == "bfs" and spec.reduction == "none" and not spec.liveness
            and spec.max_states is None)


#: why `reachable(..., within=...)` found a mutant outside the original's reachable set
NEW_STATE, KERNEL_RAISED = "reaches a new state", "the kernel raised"


class Escape(NamedTuple):
    """A mutant leaving the original's reachable set: `reason` is NEW_STATE (`depth` is the
    first such state's, `detail` the event that reached it, or "the initial state") or
    KERNEL_RAISED (`depth` the last state met before, `detail` the exception, "Type: message")."""

    reason: str
    depth: int
    detail: str


def reachable(model_name: str, mutant: Mutant | None, run: str, within=None):
    """The fingerprints of every state `run` (an exhaustive search: `_exhaustive`) reaches on the
    mutant, breadth-first to its depth bound, over the same kernel as the search itself.

    With `within` (a set of fingerprints): the same set when every state is in `within` (the
    mutant only restricts), else an `Escape` saying why not: the first state outside it
    (NEW_STATE), or a kernel that raises (KERNEL_RAISED; the search counts that as caught). Every
    state counts, whatever the properties say of it: the comparison is of graphs, not of
    verdicts."""
    if not _exhaustive(run):
        raise UsageError(f"not an exhaustive breadth-first search: {run}")
    spec = _spec(run, model_name)
    # the properties' ghost is part of the state: compare with the same checker as the search
    env = spec.replace(model_override=build(spec.model, mutant)).env()
    return _reach(env, within)


def _reach(env, within):
    from zabmc.explore.graph import breadth_first

    seen, depth, edges = set(), 0, breadth_first(env)
    while True:
        try:  # only the kernel's own steps: an error here is the mutant's
            depth, _src, ev, _s, f, _v, new = next(edges)
        except StopIteration:
            return seen
        except Exception as e:  # noqa: BLE001  (the mutant breaks the kernel: it adds a failure)
            if within is None:
                raise
            return Escape(KERNEL_RAISED, depth, f"{type(e).__name__}: {e}")
        if new:
            if within is not None and f not in within:
                how = "the initial state" if ev is None else ev.describe(env.model)
                return Escape(NEW_STATE, depth, how)
            seen.add(f)
