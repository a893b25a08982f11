"""The state codec: a state as compact bytes and back, exactly (same value, same node types, same
fingerprint). Used by the Spark engine (`zabmc.spark.worker`) to ship states, and by the in-process
BFS to write its frontier to checkpoints and spill files.
"""

from __future__ import annotations

import marshal
import pickle
from typing import NamedTuple

# "canonical": a state travels as `Env.encode(state)`, the explorer's canonical encoding (marshal
#     version 2 of the state as plain tuples, decodable), whose xxh3-128 *is* `Env.fingerprint`: one
#     encoding per successor serves both. Chosen only when `choose_codec` finds
#     `xxh3_128(Env.encode(s)) == Env.fingerprint(s)` and an exact round trip on the first states.
# "marshal": marshal version 4 of the same plain tuples; the fingerprint comes from
#     `Env.fingerprint` (when the canonical encoding is not that).
# "pickle": anything else.
# Decoding rebuilds the nodes with their named-tuple class and interns nodes and messages (below).

INTERN_LIMIT = 200_000


class Codec(NamedTuple):
    encode: object  # state -> bytes
    decode: object  # bytes -> state
    fp_blob: object  # state -> (fingerprint, payload)
    blob: object  # payload -> bytes


def _interning_decoder(load_parts, node_make, state_cls, env):
    nodes_seen: dict = {}
    msgs_seen: dict = {}
    ghosts_seen: dict = {}
    canon_node, canon_msg = env._canon, env._canon_msg
    fifo = env.fifo
    dumps = marshal.dumps

    def msg(x):
        y = msgs_seen.get(x)
        if y is None:
            y = msgs_seen[x] = canon_msg(x)
        return y

    def dec(b: bytes):
        """Equal nodes and messages decode to one object each: the environment's own
        (`Env._canon`), which gives the explorer's memos (keyed by object identity) their hits
        back: without it, decoded states share nothing and the successors of a state cost ~25%
        more. Equal ghosts decode to one object too (told apart by their bytes), so that the
        checker's memo (`Env._check`) knows them."""
        nodes, net, budgets, ghost = load_parts(b)
        if len(nodes_seen) > INTERN_LIMIT:
            nodes_seen.clear()
        if len(msgs_seen) > INTERN_LIMIT:
            msgs_seen.clear()
        if len(ghosts_seen) > INTERN_LIMIT:
            ghosts_seen.clear()
        ns = []
        for t in nodes:
            x = nodes_seen.get(t)
            if x is None:
                x = nodes_seen[t] = canon_node(node_make(t))
            ns.append(x)
        if fifo:  # n*n queues, oldest message first
            net = tuple([tuple([msg(x) for x in q]) if q else q for q in net])
        else:  # sorted ((src, dst, msg), count)
            net = tuple([((a, b, msg(x)), c) for (a, b, x), c in net])
        gb = dumps(ghost, 2)
        ghost = ghosts_seen.setdefault(gb, ghost)
        return state_cls(tuple(ns), net, budgets, ghost)

    return dec


def make_codec(name: str, env) -> Codec:
    fingerprint = env.fingerprint
    if name == "pickle":
        dumps, proto = pickle.dumps, pickle.HIGHEST_PROTOCOL

        def enc(s) -> bytes:
            return dumps(s, proto)

        return Codec(enc, pickle.loads, lambda s: (fingerprint(s), s), enc)

    from xxhash import xxh3_128_digest

    from zabmc.explore.env import State

    init, _ = env.initial()
    node_make = type(init.nodes[0])._make
    loads, dumps = marshal.loads, marshal.dumps
    if name == "canonical":
        n = env.n
        encode = env.encode

        def parts(b: bytes):
            a = loads(b)
            return a[:n], a[n], a[n + 1], a[n + 2]

        def fp_blob(s):
            b = encode(s)
            return xxh3_128_digest(b), b

        return Codec(encode, _interning_decoder(parts, node_make, State, env), fp_blob,
                     bytes)

    def enc(s) -> bytes:
        return dumps((tuple(map(tuple, s.nodes)), s.net, s.budgets, s.ghost), 4)

    return Codec(enc, _interning_decoder(loads, node_make, State, env),
                 lambda s: (fingerprint(s), s), enc)


def choose_codec(env, sample: int = 300) -> str:
    """The fastest codec that round-trips the first `sample` states of the space exactly (value
    and node type) and preserves their fingerprints: "canonical", "marshal" or "pickle". A kernel
    that raises is sampled up to the state where it does (the search then raises there itself).

    marshal handles only built-in types, so the first two apply when the nodes are one
    named-tuple class and everything else is plain data (as in db19)."""
    init, _ = env.initial()
    states, todo = [], [init]
    while todo and len(states) < sample:
        s = todo.pop(0)
        states.append(s)
        try:
            todo.extend(x for _, x, _ in env.successors(s))
        except Exception:  # noqa: BLE001 - a kernel that raises (a mutant): the search meets it
            break
    cls = type(init.nodes[0])
    if not (issubclass(cls, tuple) and hasattr(cls, "_make")):
        return "pickle"
    # under `--symmetry` a fingerprint is not the xxh3-128 of the state's own encoding
    for name in ("canonical", "marshal") if env.symmetry is None else ("marshal",):
        try:
            c = make_codec(name, env)
            for s in states:
                fp, payload = c.fp_blob(s)
                s2 = c.decode(c.blob(payload))
                if (fp != env.fingerprint(s) or s2 != s or type(s2) is not type(s)
                        or any(type(a) is not type(b) for a, b in zip(s2.nodes, s.nodes))
                        or env.fingerprint(s2) != fp):
                    break
            else:
                return name
        except (ValueError, TypeError, AttributeError, IndexError, EOFError):
            continue
    return "pickle"
