"""Symmetry reduction (`zabmc check --symmetry`, docs/check.md "Symmetry"): one state per orbit.

What may be permuted is what the model declares (`zabmc.core.model.Symmetry`); the only
permutation a model can declare is of the client payloads proposed so far. A state that has made
m proposals holds payloads among `zab-0` .. `zab-<m-1>`, and the next proposal is `zab-<m>`
(`events.Propose`). A permutation of those m payloads (each bytes value equal to one of them,
wherever it sits: the nodes, the messages in flight, the ghost) maps a state to one with the same
budgets whose successors are the images of the first one's, event for event (a proposal is
`zab-<m>` in both, which the permutation leaves alone), and whose properties' verdicts are the
same, when the model's handlers and the properties only copy payloads and compare transactions by
zxid and by equality: what a model's `symmetry.payloads` vouches for, and what
tests/test_symmetry.py checks against a search of the whole space.

The fingerprint of a state is then that of its canonical form: the least canonical encoding
(`Env.encode`) of its images under the m! permutations (a bag network sorted again after the
permutation, as `Env._add` keeps it). Two states share it exactly when one is an image of the
other. The search still holds and expands the state it met first in each orbit, which a real run
reaches: paths, counterexamples and their traces are events of that run, with nothing to map
back, and `zabmc replay` confirms them as any other.

Node ids are not permuted: the explorer hands a proposal to the lowest-id node that may take it,
and every model's election breaks ties by node id.
"""

from __future__ import annotations

from itertools import permutations
from marshal import dumps as _dumps

from xxhash import xxh3_128_digest

from zabmc.core.errors import UsageError
from zabmc.core.events import MADE
from zabmc.core.model import payload

_CACHE_LIMIT = 200_000


def declared(model):
    """The model's `Symmetry`, or None when it declares none."""
    return getattr(model, "symmetry", None)


def refuse(symmetry: bool, *, model, strategy: str = "bfs", engine: str = "in-process",
           reduction: str = "none", liveness: bool = False, checkpoint: bool = False,
           properties=()) -> None:
    """A one-line `UsageError` when `--symmetry` cannot be used with the rest of the run: the
    model admits no permutation, the run would reduce nothing (`ordered`), or another option
    does not work with it."""
    if not symmetry:
        return
    if liveness:
        raise UsageError("--symmetry checks safety only: not with --liveness")
    sym = declared(model)
    if sym is None:
        raise UsageError(f"--symmetry: model {model.name} declares no symmetry (Model.symmetry), "
                         "so no permutation is known to map its runs to runs")
    if not sym.payloads:
        raise UsageError(f"--symmetry: model {model.name} admits no permutation: {sym.why}")
    keep = ordered(properties)
    if keep:
        raise UsageError(f"--symmetry would reduce nothing with {', '.join(keep)} checked: "
                         "their ghost keeps every proposal in order, where proposal k is always "
                         "zab-k, so no two reachable states differ by a payload permutation "
                         "(check other properties, or --no-invariants)")
    if engine != "in-process" or strategy not in ("bfs", "dfs"):
        raise UsageError("--symmetry works with the in-process --strategy bfs or dfs (and "
                         "--workers), not with random walks or the Spark engine")
    if reduction != "none":
        raise UsageError(f"--symmetry does not work with --reduction {reduction}: the two "
                         "reductions are not shown sound together (the proviso reads "
                         "fingerprints)")
    if checkpoint:
        raise UsageError("--symmetry does not work with --checkpoint or --resume: a checkpoint "
                         "does not record it")


def ordered(properties) -> tuple:
    """The properties among `properties` whose ghost keeps the broadcast order (`broadcast`,
    zabmc.invariants): the k-th proposal there is the one every model gives payload `zab-<k>`
    (`events.Propose`; a model reports `proposed` only when it takes a client proposal), so every
    non-identity permutation of a reachable state's payloads moves one of them and makes a state
    no run reaches: each reachable state is alone in its orbit."""
    from zabmc.invariants import PROPERTIES

    return tuple(p for p in properties if "broadcast" in PROPERTIES[p].needs)


def _sub(x, table: dict):
    """`x` (plain values and tuples of them; a named tuple becomes a plain one) with every bytes
    value that `table` names replaced by its image."""
    t = type(x)
    if t is bytes:
        return table.get(x, x)
    if isinstance(x, tuple):
        return tuple([_sub(y, table) for y in x])
    return x


class PayloadSymmetry:
    """`fingerprint(state)`: xxh3-128 of the least canonical encoding of the state's images under
    the permutations of the payloads it may hold. Permuted nodes, messages and ghosts are memoised
    by identity and permutation, as the environment memoises the kernel."""

    def __init__(self, env):
        self.env = env
        self._perms: dict = {}  # m -> ((permutation id, table), ...), the identity left out
        self._cache: dict = {}  # (id(x), permutation id) -> (x, its image or its bytes)

    def perms(self, m: int) -> tuple:
        """The non-identity permutations of the first m payloads, as (id, bytes -> bytes)."""
        got = self._perms.get(m)
        if got is None:
            ids = list(range(m))
            got = self._perms[m] = tuple(
                (m * 1_000_003 + k, {payload(i): payload(p[i]) for i in ids if p[i] != i})
                for k, p in enumerate(permutations(ids)) if list(p) != ids)
        return got

    def fingerprint(self, s) -> bytes:
        env = self.env
        best = env.encode(s)
        m = s.budgets[MADE]
        if m > 1:
            for pid, table in self.perms(m):
                b = self.encode(s, pid, table)
                if b < best:
                    best = b
        return xxh3_128_digest(best)

    def _memo(self, x, pid: int, table: dict, make):
        cache = self._cache
        key = (id(x), pid)
        e = cache.get(key)
        if e is None:
            if len(cache) >= _CACHE_LIMIT:
                cache.clear()
            e = cache[key] = (x, make(x, table))
        return e[1]

    def encode(self, s, pid: int, table: dict) -> bytes:
        """`Env.encode` of the state's image under the permutation `table` (id `pid`)."""
        env, memo = self.env, self._memo
        parts = [env._head]
        for x in s.nodes:
            parts.append(memo(x, pid, table, _node_bytes))
        if env.fifo:
            net = tuple([tuple([memo(m, pid, table, _sub) for m in q]) if q else q
                         for q in s.net])
        else:
            net = tuple(sorted([((a, b, memo(m, pid, table, _sub)), c)
                                for (a, b, m), c in s.net]))
        ghost = memo(s.ghost, pid, table, _sub)
        parts.append(_dumps((net, s.budgets, ghost), 2)[5:])
        return b"".join(parts)


def _node_bytes(x, table: dict) -> bytes:
    """A node's canonical bytes (`Env._encode_node`) under a permutation."""
    return _dumps(_sub(tuple(x), table), 2)
