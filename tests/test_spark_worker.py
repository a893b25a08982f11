"""The Spark engine's per-partition merge and level step, and the fingerprint-set helpers it shares
with the in-process BFS, against plain Python sets and dicts and the in-process engine.

No JVM: these run the worker functions directly. Fingerprints are drawn from a few 8-byte prefixes,
so that many of them share a prefix and the exact fallbacks of `member` and `insert_sorted` (which
search on 64-bit prefixes) run too.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from zabmc.explore.seen import FP_DTYPE, insert_sorted, member
from zabmc.spark import worker  # zstandard, which it needs, is one of zabmc's dependencies

PREFIXES = [b"\x00" * 8, b"\x00" * 7 + b"\x01", b"\x7f" * 8, b"\xff" * 8]
fingerprints = st.builds(lambda p, s: p + s, st.sampled_from(PREFIXES),
                         st.binary(min_size=8, max_size=8) | st.sampled_from([b"\x00" * 8,
                                                                             b"\x01" * 8]))


def arr(fps) -> np.ndarray:
    return np.frombuffer(b"".join(fps), FP_DTYPE) if fps else np.empty(0, FP_DTYPE)


@settings(max_examples=300, deadline=None)
@given(st.sets(fingerprints), st.lists(fingerprints))
def test_member_is_set_membership(run, cand):
    got = member(arr(sorted(run)), arr(cand))
    assert got.tolist() == [c in run for c in cand]


@settings(max_examples=300, deadline=None)
@given(st.sets(fingerprints), st.sets(fingerprints))
def test_insert_sorted_is_the_sorted_union(run, new):
    new -= run
    got = insert_sorted(arr(sorted(run)), arr(sorted(new)))
    assert got.tobytes() == b"".join(sorted(run | new))


def test_a_prefix_shared_by_visited_fingerprints_does_not_hide_one():
    """Two visited fingerprints with one 64-bit prefix: the prefix search alone would land on the
    first of them and miss the second."""
    a, b = b"\x05" * 8 + b"\x01" * 8, b"\x05" * 8 + b"\x02" * 8
    assert member(arr([a, b]), arr([b, a])).tolist() == [True, True]
    c = b"\x05" * 8 + b"\x00" * 8  # belongs before both
    assert insert_sorted(arr([a, b]), arr([c])).tobytes() == c + a + b


class Acc:
    def __init__(self):
        self.value = {}

    def add(self, x):
        self.value.update(x)


KL = 4  # key length of the level in these tests
keys = st.binary(min_size=KL, max_size=KL).map(lambda k: bytes(b % 3 for b in k))
batch = st.lists(st.tuples(fingerprints, keys), max_size=12)


@settings(max_examples=300, deadline=None)
@given(visited=st.sets(fingerprints, max_size=10), batches=st.lists(batch, max_size=5))
def test_merge_keeps_the_smallest_key_of_each_unvisited_fingerprint(visited, batches):
    """What `merge` yields and counts is what a dict keeping the smallest key per fingerprint gives:
    the new visited set (sorted), the frontier as (key, encoded state) with the chosen candidate's
    own encoding, and the partition's statistics."""
    records = [worker.Seen(chunk) for chunk in np.array_split(arr(sorted(visited)), 2)]
    want: dict = {}
    for b in batches:
        # a candidate's encoded state names it: fingerprint and key
        enc = [fp + k for fp, k in b]
        records.append(worker.Candidates(b"".join(fp for fp, _ in b),
                                         worker.pack_keys(b"".join(k for _, k in b)),
                                         *worker.pack_states(enc)))
        for fp, k in b:
            if fp not in visited and (fp not in want or k < want[fp]):
                want[fp] = k
    m: list = []
    out = list(worker.merge(iter(records), m))

    seen = b"".join(r.fps.tobytes() for r in out if isinstance(r, worker.Seen))
    assert seen == b"".join(sorted(visited | set(want)))
    frontier = sorted(worker.frontier_states(out))
    assert frontier == sorted((k, fp + k) for fp, k in want.items())
    kept_batches = {r.z for r in out if isinstance(r, worker.Frontier)}
    new, nseen, nbytes, ncand, _ = m[0]
    assert (new, nseen, ncand) == (len(want), len(visited | set(want)),
                                   sum(len(b) for b in batches))
    assert nbytes == sum(len(z) for z in kept_batches)


def test_merge_of_the_initial_state_has_an_empty_key():
    """Level 0's one candidate carries the empty key (its path has no events)."""
    fp = b"\x11" * 16
    m: list = []
    out = list(worker.merge(iter([worker.Candidates(fp, worker.pack_keys(b""),
                                                    *worker.pack_states([b"init"]))]), m))
    assert list(worker.frontier_states(out)) == [(b"", b"init")]
    assert m[0][:2] == (1, 1)


def test_seed_and_merge_round_trip_through_the_shuffle_encoding():
    """`seed` emits (partition id, pickled batch) byte pairs, which `merge` reads back."""
    fp = b"\x22" * 16
    split, payload = list(worker.seed(4, fp, b"state", iter(())))
    assert int.from_bytes(split, "big") == worker.fp_partition(fp) % 4
    out = list(worker.merge(iter(pickle.loads(payload))))
    assert list(worker.frontier_states(out)) == [(b"", b"state")]


def _step_levels(env, nparts: int, levels: int):
    """Run `step` level after level in this process, the shuffle replaced by lists: per level,
    what the tasks yielded, per partition, and what they reported."""
    from zabmc.spark.engine import env_spec

    spec = env_spec(env)
    codec = worker.make_codec(spec.codec, env)
    init, _ = env.initial()
    inbox: dict = {p: [] for p in range(nparts)}
    split, payload = worker.seed(nparts, env.fingerprint(init), codec.encode(init), iter(()))
    inbox[int.from_bytes(split, "big")] += pickle.loads(payload)
    for _ in range(levels):
        acc = Acc()
        nxt: dict = {p: [] for p in range(nparts)}
        for pid in range(nparts):
            out = list(worker.step(acc, spec, False, nparts, True, pid, iter(inbox[pid])))
            for split, payload in zip(out[::2], out[1::2]):
                nxt[int.from_bytes(split, "big")].append((pid, pickle.loads(payload)))
        inbox = {p: [r for _, batch in nxt[p] for r in batch] for p in nxt}
        yield nxt, acc.value


def _check_step_levels(env, want, nparts: int) -> tuple[int, int]:
    """Run `step` level after level and check it against the in-process BFS `want`: each task
    sends its visited set (the states up to the level it merged, in its fingerprint range) only to
    itself and every candidate to the partition owning its fingerprint, and the per-depth and
    successor counts are BFS's. Returns (candidates merged, most candidate batches one task sent
    one partition in one level)."""
    visited, generated, ncands, most = 0, 1, 0, 0
    levels = len(want.per_depth)
    for level, (nxt, rep) in enumerate(_step_levels(env, nparts, levels)):
        new, nseen, _nbytes, ncand, merge_s, gen, _viol, expand_s = (
            [(*rep[p].merge, *rep[p].expand)[i] for p in sorted(rep)] for i in range(8))
        assert len(new) == nparts  # one report per partition
        if level:
            assert sum(new) == want.per_depth[level]
        visited += sum(new)
        ncands += sum(ncand)
        assert sum(nseen) == visited
        assert all(s >= 0 for s in merge_s + expand_s)
        if level < levels - 1:  # stage j's successors are level j+1's
            generated += sum(gen)
        for dest, sent in nxt.items():
            batches: dict = {}
            for src, batch in sent:
                for rec in batch:
                    if isinstance(rec, worker.Seen):
                        assert src == dest
                        fps = rec.fps
                    else:
                        assert isinstance(rec, worker.Candidates)
                        fps = np.frombuffer(rec.fps, FP_DTYPE)
                        batches[src] = batches.get(src, 0) + 1
                    assert all(worker.fp_partition(fp) % nparts == dest for fp in fps.tolist())
            most = max([most, *batches.values()])
    assert (visited, generated) == (want.distinct, want.generated)
    return ncands, most


def test_step_merges_expands_and_sends_the_visited_set_to_itself(monkeypatch):
    """Level after level, `step` on 2 partitions gives the in-process BFS's counts
    (`_check_step_levels`): with the default buffers (one candidate batch per task and owner per
    level here), and with an expansion that flushes every 3 candidates and forgets what it sent
    past 5 fingerprints, which sends more batches and more (duplicate) candidates for the same
    result."""
    from zabmc.explore import Env, ExploreConfig, bfs
    from zabmc.invariants import DEFAULT_PROPERTIES, Checker

    from models.db19 import MODEL

    env = Env(MODEL, ExploreConfig(nodes=3, network="fifo", proposals=1, depth=5),
              Checker(DEFAULT_PROPERTIES))
    want = bfs(env, stop_at_first=False)
    assert want.per_depth == [1, 6, 23, 63, 140, 268]
    ncand, most = _check_step_levels(env, want, 2)
    assert most == 1
    from zabmc.spark.worker import expansion

    monkeypatch.setattr(expansion, "CHUNK_MAP", 3)
    monkeypatch.setattr(expansion, "SENT_LIMIT", 5)
    ncand_small, most_small = _check_step_levels(env, want, 2)
    assert most_small > 1
    assert ncand_small > ncand


@settings(max_examples=500, deadline=None)
@given(st.lists(st.tuples(fingerprints, st.binary(min_size=3, max_size=3)), max_size=40),
       st.sampled_from([0, 1, 3]))
def test_smallest_key_rows_picks_each_fingerprints_smallest_key_in_fingerprint_order(rows, kl):
    """Against a dict; the fingerprints share a few prefixes, so groups of one prefix hold one
    fingerprint twice (the vectorised path), several fingerprints, or three rows and more (the
    exact sort), and keys of length 0 all tie."""
    fps = arr([fp for fp, _ in rows])
    keys = np.frombuffer(b"".join(k[:kl] for _, k in rows), np.uint8).reshape(len(rows), kl)
    want: dict = {}
    for fp, k in rows:
        if fp not in want or k[:kl] < want[fp]:
            want[fp] = k[:kl]
    got = worker.smallest_key_rows(fps, keys)
    assert [(fps[i:i + 1].tobytes(), keys[i].tobytes()) for i in got] == sorted(want.items())
    # and the very rows of one stable sort: among equal rows, the earliest
    assert got.tolist() == worker._smallest_key_rows_exact(fps, keys).tolist()


def test_smallest_key_rows_on_pairs_of_one_fingerprint_picks_the_smaller_key():
    """The common case in a merge (one fingerprint sent by two map tasks), with distinct
    prefixes, so only the vectorised comparison decides."""
    a, b, c = b"\x01" * 16, b"\x02" * 16, b"\x03" * 16
    fps = arr([c, a, b, a, c, b])
    keys = np.frombuffer(bytes([9, 1, 5, 0, 2, 5]), np.uint8).reshape(6, 1)
    assert worker.smallest_key_rows(fps, keys).tolist()[:2] == [3, 2]
    got = worker.smallest_key_rows(fps, keys)
    assert [keys[i, 0] for i in got] == [0, 5, 2]


@pytest.mark.parametrize("model,invariants", [("db19", None), ("zab", ("prefix",)), ("zk", ())])
def test_the_executors_env_is_the_drivers(model, invariants):
    """An executor rebuilds the driver's Env from the EnvSpec (not through CheckSpec, which sits
    above the engines): the same initial fingerprint and the same successors, event for event."""
    from zabmc.explore.env import ExploreConfig
    from zabmc.spark.engine import env_spec
    from zabmc.spark.worker.context import _CONTEXTS, context
    from zabmc.spec import CheckSpec

    driver = CheckSpec.from_config(model, ExploreConfig(nodes=3, max_crashes=1, max_timeouts=1),
                                   invariants).env()
    _CONTEXTS.clear()
    worker = context(env_spec(driver)).env
    assert worker is not driver and worker.checker.names == driver.checker.names
    s, t = driver.initial()[0], worker.initial()[0]
    assert driver.fingerprint(s) == worker.fingerprint(t)
    for a, b in zip(driver.successors(s), worker.successors(t), strict=True):
        assert a[0] == b[0] and driver.fingerprint(a[1]) == worker.fingerprint(b[1])
