"""What Spark executors run: the explorer's own functions, and the two per-partition steps of a level.

Executors never receive an `Env`: they receive an `EnvSpec` (model name, `ExploreConfig`, property
names, state codec) and rebuild the very same `Env` with `zabmc.model.get_model`, `Env` and
`zabmc.invariants.Checker`, once per Python worker process (`context`). So every successor,
fingerprint and property verdict comes from the code the in-process engine runs.

Nothing here imports pyspark.

Records of the level RDD `J` (one partition per fingerprint range, see `fp_partition`):
- `("S", fps)`: a sorted numpy `S16` chunk of this partition's visited set;
- `(fp, key, blob)`: a frontier state: its fingerprint, its order key and its encoded state.

A state's order key is its event-index path from the initial state, two big-endian bytes per event.
All keys of one level have the same length, so comparing the bytes compares the paths
lexicographically, and that is exactly the in-process BFS's level order: BFS appends a new state
when it first meets it while scanning (parent index, event index), and by induction a state's
position in its level is the rank of its lexicographically smallest shortest path. Keeping, for
every fingerprint, the candidate with the smallest key therefore picks the same parent, the same
path and the same first violation as `zabmc.explore.bfs`, whatever the partitioning. The key doubles
as the parent pointer: a counterexample's path travels with it.
"""

from __future__ import annotations

import gc
import marshal
import pickle
from contextlib import contextmanager
from typing import NamedTuple

import numpy as np

FP_DTYPE = np.dtype("S16")
EMPTY = np.empty(0, FP_DTYPE)
CHUNK_MAP = 20_000  # distinct candidates a map task keeps before it emits them
CHUNK_MERGE = 8_192  # candidates a merge task checks against the visited set at once
SEEN_CHUNK = 1 << 20  # fingerprints per visited-set record (16 MiB)
EI = tuple(i.to_bytes(2, "big") for i in range(1 << 16))  # event index -> key bytes


class EnvSpec(NamedTuple):
    """A picklable description from which an executor rebuilds the driver's `Env`."""

    model: str
    config: tuple  # ExploreConfig fields
    invariants: tuple
    codec: str  # "marshal" or "pickle"


def fp_partition(key) -> int:
    """The partition function of every level: a fingerprint's first 8 bytes; ints route themselves.

    One module-level function, so every `partitionBy` carries an equal partitioner and the union of
    the visited set with the candidates needs no shuffle."""
    if key.__class__ is int:
        return key
    return int.from_bytes(key[:8], "little")


@contextmanager
def gc_off():
    """States are acyclic tuples; the cyclic collector only burns time on the millions of tuples a
    task decodes (measured: it doubles the cost of decoding a state)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


# --- the state codec --------------------------------------------------------------------------------


def _marshal_codec(node_make, state_cls):
    dumps, loads = marshal.dumps, marshal.loads

    def enc(s) -> bytes:
        return dumps((tuple(map(tuple, s.nodes)), s.net, s.budgets, s.ghost), 4)

    def dec(b: bytes):
        nodes, net, budgets, ghost = loads(b)
        return state_cls(tuple(map(node_make, nodes)), net, budgets, ghost)

    return enc, dec


def _pickle_codec():
    dumps, loads, proto = pickle.dumps, pickle.loads, pickle.HIGHEST_PROTOCOL

    def enc(s) -> bytes:
        return dumps(s, proto)

    return enc, loads


def make_codec(name: str, env):
    """(encode, decode) of whole states. "marshal": the state as plain tuples in C, the nodes
    rebuilt with their named-tuple class; "pickle": the general fallback."""
    if name == "marshal":
        from zabmc.explore.env import State

        init, _ = env.initial()
        return _marshal_codec(type(init.nodes[0])._make, State)
    return _pickle_codec()


def choose_codec(env, sample: int = 300) -> str:
    """"marshal" when it round-trips the first states of the space exactly, else "pickle".

    marshal handles only built-in types, so it applies when the nodes are one named-tuple class and
    everything else is plain data (as in db19); anything else raises or fails the check."""
    try:
        init, _ = env.initial()
        cls = type(init.nodes[0])
        if not (issubclass(cls, tuple) and hasattr(cls, "_make")):
            return "pickle"
        enc, dec = make_codec("marshal", env)
        todo, seen = [init], 0
        while todo and seen < sample:
            s = todo.pop(0)
            seen += 1
            s2 = dec(enc(s))
            if s2 != s or type(s2) is not type(s) or any(
                    type(a) is not type(b) for a, b in zip(s2.nodes, s.nodes)):
                return "pickle"
            if env.fingerprint(s2) != env.fingerprint(s):
                return "pickle"
            todo.extend(x for _, x, _ in env.successors(s))
        return "marshal"
    except (ValueError, TypeError, AttributeError, IndexError):
        return "pickle"


# --- the executor-side environment -------------------------------------------------------------------


class Context(NamedTuple):
    env: object
    encode: object
    decode: object


_CONTEXTS: dict = {}


def context(spec: EnvSpec) -> Context:
    """The Env of `spec`, built once per worker process (Spark reuses Python workers)."""
    ctx = _CONTEXTS.get(spec)
    if ctx is None:
        from zabmc.explore.env import Env, ExploreConfig
        from zabmc.invariants import Checker
        from zabmc.model import get_model

        env = Env(get_model(spec.model), ExploreConfig(*spec.config), Checker(spec.invariants))
        enc, dec = make_codec(spec.codec, env)
        ctx = _CONTEXTS[spec] = Context(env, enc, dec)
    return ctx


# --- one level: expand (map side) and merge (reduce side) -------------------------------------------


def expand(spec: EnvSpec, stop_first: bool, records):
    """Map side: every frontier state's successors, deduplicated per chunk keeping the smallest key.

    Yields `(fp, (key, blob))` candidates, then `(0, ("G", generated))` and, per property, the
    violation with the smallest key, `(0, ("V", property, key, violation))`. With `stop_first` a
    violating successor is not a candidate (BFS stops before inserting it)."""
    ctx = context(spec)
    successors, fingerprint, encode, decode = (ctx.env.successors, ctx.env.fingerprint,
                                               ctx.encode, ctx.decode)
    ei_key = EI
    local: dict = {}
    viol: dict = {}
    gen = 0
    with gc_off():
        for rec in records:
            if len(rec) != 3:
                continue
            path = rec[1]
            for ei, (_ev, s2, v) in enumerate(successors(decode(rec[2]))):
                gen += 1
                key = path + ei_key[ei]
                if v is not None:
                    old = viol.get(v.property)
                    if old is None or key < old[0]:
                        viol[v.property] = (key, v)
                    if stop_first:
                        continue
                fp = fingerprint(s2)
                old = local.get(fp)
                if old is None or key < old[0]:
                    local[fp] = (key, s2)
            if len(local) >= CHUNK_MAP:
                for fp, (key, s2) in local.items():
                    yield fp, (key, encode(s2))
                local.clear()
        for fp, (key, s2) in local.items():
            yield fp, (key, encode(s2))
        local.clear()
    yield 0, ("G", gen)
    for prop, (key, v) in viol.items():
        yield 0, ("V", prop, key, v)


def member(run: np.ndarray, cand: np.ndarray) -> np.ndarray:
    """Which of `cand` are in the sorted array `run`."""
    if len(run) == 0 or len(cand) == 0:
        return np.zeros(len(cand), dtype=bool)
    idx = np.searchsorted(run, cand)
    idx[idx == len(run)] = len(run) - 1
    return run[idx] == cand


def merge(acc, pid: int, records):
    """Reduce side, one partition: this partition's visited set (first, from `J`) and the
    candidates routed here. Keeps the candidates not visited before, the smallest key per
    fingerprint; yields the new visited set and the new frontier, and reports the partition's
    counts and violations through the accumulator `acc` (keyed by partition, so a re-run task
    cannot count twice)."""
    chunks: list = []
    seen = None
    cand: dict = {}
    buf_fp: list = []
    buf_val: list = []
    gen = 0
    viol: dict = {}

    def drain():
        fps = np.frombuffer(b"".join(buf_fp), dtype=FP_DTYPE)
        known = member(seen, fps).tolist()
        get = cand.get
        for fp, val, k in zip(buf_fp, buf_val, known):
            if not k:
                old = get(fp)
                if old is None or val[0] < old[0]:
                    cand[fp] = val
        buf_fp.clear()
        buf_val.clear()

    with gc_off():
        for rec in records:
            if len(rec) == 3:  # the previous frontier: expanded already
                continue
            a, b = rec
            if a.__class__ is bytes:
                buf_fp.append(a)
                buf_val.append(b)
                if len(buf_fp) >= CHUNK_MERGE:
                    if seen is None:
                        seen = np.concatenate(chunks) if chunks else EMPTY
                    drain()
            elif a == "S":
                chunks.append(b)
                seen = None
            elif b[0] == "G":
                gen += b[1]
            elif b[0] == "V":
                _, prop, key, v = b
                old = viol.get(prop)
                if old is None or key < old[0]:
                    viol[prop] = (key, v)
        seen = np.concatenate(chunks) if chunks else EMPTY
        if buf_fp:
            drain()
        chunks.clear()
        fps = list(cand)
        arr = np.frombuffer(b"".join(fps), dtype=FP_DTYPE) if fps else EMPTY
        new = ~member(seen, arr)  # a no-op unless the visited set arrived after candidates
        if not new.all():
            for fp, k in zip(fps, new.tolist()):
                if not k:
                    del cand[fp]
            arr = arr[new]
        arr = np.sort(arr)
        seen = np.insert(seen, np.searchsorted(seen, arr), arr) if len(seen) else arr
        nbytes = sum(len(blob) for _, blob in cand.values())
        acc.add({pid: (len(arr), gen, len(seen), viol, nbytes)})
        for lo in range(0, len(seen), SEEN_CHUNK):
            yield "S", seen[lo:lo + SEEN_CHUNK]
        for fp, (key, blob) in cand.items():
            yield fp, key, blob


def count_before(vkey: bytes, records):
    """Frontier states whose key is smaller than `vkey` (what BFS had inserted when it stopped)."""
    n = 0
    for rec in records:
        if len(rec) == 3 and rec[1] < vkey:
            n += 1
    yield n


def successors_before(spec: EnvSpec, vparent: bytes, records):
    """Successors of the frontier states ordered before `vparent` (BFS's count when it stopped)."""
    ctx = context(spec)
    successors, decode = ctx.env.successors, ctx.decode
    n = 0
    with gc_off():
        for rec in records:
            if len(rec) == 3 and rec[1] < vparent:
                for _ in successors(decode(rec[2])):
                    n += 1
    yield n


class StatsParam:
    """Accumulator parameter (duck-typed, so this module needs no pyspark import) of a level's
    statistics: {partition: stats}; a partition's update overwrites, so a re-run task cannot count
    twice."""

    def zero(self, value):
        return {}

    def addInPlace(self, a, b):
        a.update(b)
        return a
