"""Breadth-first search on several cores of one machine (`zabmc check --workers N`): the same
search as `bfs`, level by level, with each level's expansion shared among N worker processes.

The workers are forked when the search starts and live as long as it does, each with its own
copy of the visited set and its own kernel memos. At each level worker k expands the k-th
contiguous slice of the frontier; the parent sends it the fingerprints the last level added
(which the worker adds to its visited set). The worker builds every successor of its slice
through the same kernel, checks it, takes its fingerprint, drops those already visited and its
own repeats, keeps the states of the rest, and hands back their fingerprints in the order it met
them, with every violating step and how many successors it built. The parent merges the slices in
frontier order: it records the violations in that order and adds the candidates to the visited
set in one batch, where the first occurrence of a fingerprint wins (none was visited before the
level, so the set is not searched: `SortedRunSet.add_unseen`). That is the order in which
the one-core search meets them, so the next level holds the same states in the same order with
the same parent pointers, and every count, verdict and counterexample is the one-core search's.
A search that stops at its first violation stops where the one-core search does, with the same
counts: each candidate carries its position among its slice's successors.

States stay with the worker that built them: the parent holds a level as fingerprints and which
worker holds each state (`Blobs`), and before a level it has the bytes of a state sent from the
worker that built it to the one whose slice it falls in only where those differ (most of a slice
is its own worker's). A worker expands its own states as they are, not decoded, so that their
nodes are the objects the kernel's memos (keyed by identity) know. Neither the states' bytes nor
the states travel for the rest: on the zab depth-40 space to depth 32, levels in memory both, that
took two workers from 1.19x one process's speed to 1.59x (reports/benchmarks.md, "The reduced
search on both cores"; each ratio from one round, side by side). With a checkpoint to write, the
parent also fetches each level's bytes as the level ends, since a checkpoint may have to be
written after the workers are gone (a signal in the middle of a level).

With partial-order reduction (`--reduction por`) each worker chooses every state's stubborn set
and builds the kept events' successors; it also decides the ignoring proviso, since whether a kept
event leads back to this level or an earlier one is whether its fingerprint was visited as the
level began, which its copy of the visited set is, and builds the left-out events' successors of
the states the proviso expands fully. The one-process search meets those after the chunk of
candidates their state's kept ones fell in (bfs.py, `_Chunk`); the parent replays that order,
chunk by chunk, from every successor's fingerprint, so that the reduced search, too, gives the
one-process result, parent pointers and the counts of states expanded in part and in full
included.

Not here: sleep sets (`--reduction por+sleep`, whose bookkeeping follows the order one process
expands a level in), levels on disk (the workers hold the frontier's states in memory), and stopping
inside a level: a signal or the time limit stops the search at the level boundary before it (the
level being expanded is dropped, the workers are killed; a checkpoint then holds that boundary).
"""

from __future__ import annotations

import functools
import os
import pickle
import signal
import sys
import time
from array import array
from itertools import compress

import numpy as np
from xxhash import xxh3_128_digest

from .bfs import BFS, CHUNK
from .codec import choose_codec, make_codec
from .por import Expansion
from .search import Stopped, signals_noted
from .seen import FP_DTYPE


class Blobs(list):
    """A frontier: each state's codec bytes, or None where only the worker that built it holds
    it; then `owner` (an array("b") beside the list) names that worker, and `fps` (16 bytes a
    state, in order) its fingerprint. `owner` is -1 where the bytes are here, and None for a
    level no merge built (the initial state, a resumed level)."""

    owner = None
    fps = b""


class _Slice:
    """What one worker hands back: the successors it built (`generated`), its candidates in the
    order met (fingerprints, 16 bytes each in one bytes object, parent and event indices as
    arrays "I" and "H", positions among its successors), its
    violating steps `(position, parent index, event index, violation)`, and the exception that
    stopped it, with its position, if one did. The candidates' states stay with the worker."""

    __slots__ = ("generated", "fps", "parents", "events", "positions", "violations", "error")


class _RSlice:
    """What one worker hands back under `--reduction por` (`ParallelBFS._expand_slice_reduced`),
    per state of its slice from parent index `lo` on: `mode` (0 expanded fully, 1 in part, 2 in
    part and then fully by the proviso), `nk` its kept successors (all of them in mode 0) and `nr`
    its left-out ones (mode 2), as flat runs of fingerprints (`kfps`, `rfps`, 16 bytes each), event
    indices (`keis`, `reis`) and violations by position (`kviol`, `rviol`); `rerr`, a kernel error
    met building a state's left-out successors, by parent index; `error`, (parent index, error)
    of the state whose kept successors could not be built (the slice ends there). The successors'
    states stay with the worker."""

    __slots__ = ("lo", "mode", "nk", "nr", "kfps", "keis", "kviol", "rfps", "reis", "rviol", "rerr",
                 "error")

    def __init__(self, lo: int):
        self.lo = lo
        self.mode, self.nk, self.nr = array("b"), array("I"), array("I")
        self.kfps, self.keis, self.kviol = [], array("H"), {}
        self.rfps, self.reis, self.rviol = [], array("H"), {}
        self.rerr: dict = {}
        self.error = None


class _Lost(BaseException):
    """A worker's own state missing from what it kept: a bug of this module, not of the model
    (a `BaseException`, so that no handler of the kernel's errors takes it for one)."""


_BATCH = 1_000
#: the module of the one-core search, whose `CHUNK` the reduced merge follows (the package's name
#: `bfs` is the function's)
_one_core = sys.modules[BFS.__module__]  # states a worker expands between two looks into its visited set


def _note(fingerprint, items, fps, eis, viol, base: int) -> list:
    """Append `items`' successors, `(event index, (event, state, violation))` pairs, to a
    slice's flat lists (fingerprints, event indices, violations by position from `base`); their
    (fingerprint, state)."""
    got = []
    for q, (ei, (_ev, s2, v)) in enumerate(items, base):
        fp = fingerprint(s2)
        fps.append(fp)
        eis.append(ei)
        if v is not None:
            viol[q] = v
        got.append((fp, s2))
    return got


def _proviso(r: _RSlice, batch: list, old: list, note) -> list:
    """Each state of `batch` (parent index, `Expansion`, kept indices or None, its noted
    successors, and with a progress measure where each kept one takes it, or None) into the slice
    `r`: expanded fully (mode 0), in part (1), or in part and then fully, because a kept successor
    was visited as the level began (`old`, by successor; with a measure, only one that leaves it
    equal counts) or lowers the measure: then its left-out successors are noted too (2). Those
    successors' (fingerprint, state)."""
    k = 0
    rest_got: list = []
    for pi, x, kept, items, dirs in batch:
        r.nk.append(len(items))
        if dirs is None:
            back = any(old[k:k + len(items)])
        else:  # bfs.py, `_Chunk._edge`
            back = any(d < 0 or d == 0 and o for d, o in zip(dirs, old[k:k + len(items)]))
        k += len(items)
        if kept is None or not back:
            r.mode.append(0 if kept is None else 1)
            r.nr.append(0)
            continue
        r.mode.append(2)
        left = set(kept)
        try:
            items = x.pairs([e for e in range(len(x.events)) if e not in left])
        except Exception as e:  # noqa: BLE001 - met by the parent after a flush
            r.rerr[pi] = e
            r.nr.append(0)
            continue
        r.nr.append(len(items))
        rest_got += note(items, r.rfps, r.reis, r.rviol, len(r.reis))
    return rest_got


class _ReducedMerge:
    """One level's merge under `--reduction por` (`ParallelBFS._merge_reduced`): the chunk's
    candidates (`cand`: fingerprint -> (slice, parent index, event index)), the states whose
    left-out successors follow the chunk's merge (`pending`: (slice, parent index, first of
    them, how many)), the level's new fingerprints in order (`delta`) and the successors
    offered so far (`gen`)."""

    def __init__(self, bfs, slices, depth: int, nxt, generated0: int):
        self.out, self.por, self.seen = bfs.out, bfs.options["reduction"], bfs.seen
        self.record, self.path, self.depth = bfs.record, bfs.table.path, depth
        self.parents, self.events = bfs.table.parents[-1], bfs.table.events[-1]
        self.slices, self.nxt, self.owned = slices, nxt, nxt.owner.append
        self.delta: list = []
        self.cand: dict = {}
        self.pending: list = []
        self.gen = generated0
        # each slice's kept and left-out successors' fingerprints, 16 bytes each
        self.split = [([f[q:q + 16] for q in range(0, len(f), 16)],
                       [g[q:q + 16] for q in range(0, len(g), 16)])
                      for f, g in ((r.kfps, r.rfps) for r in slices)]

    def offer(self, k: int, pi: int, fps, eis, viol, a: int, n: int) -> None:
        """Offer successors `a` to `a + n` of slice `k`'s state `pi`."""
        cand, depth = self.cand, self.depth
        gen = self.gen
        for q in range(a, a + n):
            gen += 1
            v = viol.get(q)
            if v is not None:
                self.out.generated = self.gen = gen
                self.record(v, depth + 1, self.path(depth, pi) + (eis[q],))
            fp = fps[q]
            if fp not in cand:
                cand[fp] = (k, pi, eis[q])
        self.gen = gen

    def flush(self) -> None:
        """Merge the chunk's candidates into the visited set and the level."""
        cand = self.cand
        fps = list(cand)
        new = self.seen.add_batch(fps).tolist()
        nxt, owned, parents, events, delta = (self.nxt, self.owned, self.parents, self.events,
                                              self.delta)
        for fp, is_new in zip(fps, new):
            if is_new:
                k, pi, ei = cand[fp]
                nxt.append(None)
                owned(k)
                parents.append(pi)
                events.append(ei)
                delta.append(fp)
        cand.clear()

    def expand_rest(self) -> None:
        """Offer the left-out successors of the states the proviso expands fully."""
        por = self.por
        for k, pi, a, n in self.pending:
            r = self.slices[k]
            e = r.rerr.get(pi)
            if e is not None:
                raise e
            self.offer(k, pi, self.split[k][1], r.reis, r.rviol, a, n)
            por.reduced -= 1
            por.full += 1
        self.pending.clear()


class ParallelBFS(BFS):
    """`BFS` with each level's expansion shared among `workers` forked processes."""

    name = "bfs"

    def __init__(self, env, *, workers: int = 2, **kw):
        if workers < 2:
            raise ValueError(f"ParallelBFS needs at least 2 workers, got {workers}")
        if kw.get("spill") is not None:
            raise ValueError("ParallelBFS does not take the option 'spill'")
        por = kw.get("reduction")
        if por is not None and por.sleep is not None:
            raise ValueError("ParallelBFS takes no sleep sets (--reduction por+sleep)")
        super().__init__(env, **kw)
        self.workers = workers
        self.codec = kw.get("codec")  # chosen as the search starts, when not given
        self._conns: list = []  # a pipe to each worker
        self._pids: list[int] = []
        self._delta = b""  # the fingerprints the last merge added, for the workers' visited sets
        self._made: dict = {}  # a worker's: the states it kept last level, by fingerprint
        self._canonical = False  # whether a blob's xxh3-128 is its state's fingerprint

    def search(self) -> None:
        if self.codec is None:
            self.codec = make_codec(choose_codec(self.env), self.env)
        self._canonical = self.codec.encode == self.env.encode
        super().search()

    # --- the level --------------------------------------------------------------------------------
    def _expand_level(self, frontier, depth: int, fingerprint, blobs) -> None:
        out = self.out
        lt = time.perf_counter()
        n = len(frontier)
        if not isinstance(frontier, Blobs):  # the initial state, or a resumed level
            frontier = Blobs(map(self.codec.encode, frontier))
        if not self._conns:
            self._start_workers()
        k = len(self._conns)
        bounds = [n * i // k for i in range(k + 1)]
        generated0 = out.generated
        try:
            if frontier.owner is not None:  # what a worker expands and another built
                owner = np.frombuffer(frontier.owner, dtype=np.int8)
                dest = np.repeat(np.arange(k, dtype=np.int8), np.diff(bounds))
                self._fetch(frontier, np.nonzero((owner >= 0) & (owner != dest))[0])
            for i, conn in enumerate(self._conns):
                # None: a state of the worker's own, which it finds by fingerprint
                conn.send_bytes(pickle.dumps(("level", depth, bounds[i],
                                              frontier[bounds[i]:bounds[i + 1]], self._delta),
                                             pickle.HIGHEST_PROTOCOL))
            slices = self._gather(depth, n)
        except BaseException:
            self._stop_workers()
            raise
        self.table.new_level()
        nxt = Blobs()
        nxt.owner = array("b")
        stop = None
        try:
            # a signal waits for the merge: stopped halfway, it would leave a visited set that
            # no level matches
            with signals_noted(then_raise=True):
                merge = self._merge if self.options.get("reduction") is None else \
                    self._merge_reduced
                stop = merge(slices, depth, nxt, generated0)
                nxt.fps = self._delta
                if stop is None and self.options.get("checkpoint") is not None:
                    # a checkpoint may be written of this level after the workers are gone
                    self._fetch(nxt, np.nonzero(np.frombuffer(nxt.owner, np.int8) >= 0)[0])
        finally:
            if nxt:
                depth += 1
                out.per_depth.append(len(nxt))
            self._level_done = stop is None
            if stop is None:
                self._boundary = (depth, out.generated, nxt, time.perf_counter())
            else:
                self.partial = nxt
            self.observer.on_level(depth, n, len(nxt), time.perf_counter() - lt)
            self.frontier = nxt
            self.depth = depth
        if stop is not None:
            raise stop

    def _fetch(self, frontier: Blobs, idx) -> None:
        """Bring the bytes of the states `idx` of `frontier` here from the workers that hold
        them."""
        owner, fps = frontier.owner, frontier.fps
        want: list = [[] for _ in self._conns]
        for i in idx.tolist():
            want[owner[i]].append(i)
        for j, ii in enumerate(want):
            if ii:
                self._conns[j].send_bytes(pickle.dumps(
                    ("export", [fps[16 * i:16 * i + 16] for i in ii]), pickle.HIGHEST_PROTOCOL))
        for j, ii in enumerate(want):
            if ii:
                try:
                    got = pickle.loads(self._conns[j].recv_bytes())
                except EOFError:
                    raise RuntimeError(f"a search worker (pid {self._pids[j]}) ended") from None
                for i, b in zip(ii, got):
                    frontier[i] = b
                    owner[i] = -1

    def _start_workers(self) -> None:
        """Fork the workers: each keeps, level after level, its copy of the visited set (brought up
        to date with each level's new fingerprints) and its own kernel memos."""
        from multiprocessing import Pipe

        self._delta = b""
        for _ in range(self.workers):
            mine, theirs = Pipe()
            pid = os.fork()
            if pid == 0:  # the worker
                code = 0
                try:
                    signal.signal(signal.SIGINT, signal.SIG_IGN)
                    signal.signal(signal.SIGTERM, signal.SIG_DFL)
                    for c in self._conns:  # the earlier workers' ends are not this one's
                        c.close()
                    mine.close()
                    self._serve(theirs)
                except BaseException:  # noqa: BLE001 - the parent sees the pipe close
                    code = 1
                finally:
                    os._exit(code)
            theirs.close()
            self._conns.append(mine)
            self._pids.append(pid)

    def _serve(self, conn) -> None:
        """A worker's loop, until the pipe closes: a level's slice in, what it found out back; or
        fingerprints of states it built in the last level in, their bytes back."""
        seen = self.seen
        encode = self.codec.encode
        while True:
            try:
                msg = pickle.loads(conn.recv_bytes())
            except EOFError:
                return
            if msg[0] == "export":
                made = self._made
                conn.send_bytes(pickle.dumps([encode(made[fp]) for fp in msg[1]],
                                             pickle.HIGHEST_PROTOCOL))
                continue
            _, depth, lo, part, delta = msg
            if delta:
                seen.add_unseen(np.frombuffer(delta, dtype=FP_DTYPE))  # the merge's new ones
            if self.options.get("reduction") is None:
                r = self._expand_slice(part, lo, delta)
            else:
                r = self._expand_slice_reduced(part, lo, delta)
            conn.send_bytes(pickle.dumps(r, pickle.HIGHEST_PROTOCOL))

    @staticmethod
    def _own(made: dict, delta: bytes, i: int):
        """State `i` of the level, which this worker built last level (its bytes were not sent):
        `delta` holds the level's fingerprints in order."""
        s = made.get(delta[16 * i:16 * i + 16])
        if s is None:  # not a kernel's error: the worker ends, and the parent says so
            raise _Lost(f"a search worker lost state {i} of the level")
        return s

    def _expand_slice(self, part, lo: int, delta: bytes) -> _Slice:
        successors, fingerprint = self.env.successors, self.env.fingerprint
        decode = self.codec.decode
        seen = self.seen
        r = _Slice()
        r.fps, r.violations, r.error = [], [], None
        r.parents, r.events, r.positions = array("I"), array("H"), array("Q")
        # the candidates not yet checked against seen, in the order met: fingerprints, parent and
        # event indices, positions among the slice's successors
        cfps: list = []
        cpi, cei, cpos = array("I"), array("H"), array("Q")
        gen = 0

        def flush():
            was = seen.contains_batch(cfps)
            if was.any():
                for fp in compress(cfps, was.tolist()):
                    del keep[fp]
                now = ~was
                r.fps.extend(compress(cfps, now.tolist()))
                r.parents.frombytes(np.frombuffer(cpi, np.uint32)[now].tobytes())
                r.events.frombytes(np.frombuffer(cei, np.uint16)[now].tobytes())
                r.positions.frombytes(np.frombuffer(cpos, np.uint64)[now].tobytes())
            else:
                r.fps.extend(cfps)
                r.parents.extend(cpi)
                r.events.extend(cei)
                r.positions.extend(cpos)
            del cfps[:], cpi[:], cei[:], cpos[:]

        # the states this worker built last level, by fingerprint: one of them in its slice now
        # is taken as it is, not decoded, so that its nodes are the very objects the kernel's
        # memos know (a decoded node is a new object, and the memos are keyed by identity)
        made, self._made = self._made, {}
        # this level's: its candidates and the states kept of them, by fingerprint (so a
        # fingerprint in it was met before in this slice)
        keep = self._made
        fp_of = xxh3_128_digest if self._canonical else None
        own = self._own
        add_fp, add_pi, add_ei, add_pos = cfps.append, cpi.append, cei.append, cpos.append
        try:
            for pi, blob in enumerate(part, lo):
                if blob is None:
                    s = own(made, delta, pi)
                else:
                    s = made.get(fp_of(blob)) if fp_of is not None else None
                for ei, (_ev, s2, v) in enumerate(successors(s or decode(blob))):
                    if v is not None:
                        r.violations.append((gen, pi, ei, v))
                    fp = fingerprint(s2)
                    if fp not in keep:
                        keep[fp] = s2
                        add_fp(fp)
                        add_pi(pi)
                        add_ei(ei)
                        add_pos(gen)
                    gen += 1
                if len(cfps) >= CHUNK:
                    flush()
        except Exception as e:  # noqa: BLE001 - the parent raises it where the search met it
            r.error = (gen, e)
        if cfps:
            flush()
        r.fps = b"".join(r.fps)
        r.generated = gen
        return r

    def _gather(self, depth: int, n: int) -> list:
        """Every worker's slice, in order; progress and the time limit meanwhile."""
        from multiprocessing.connection import wait

        got: dict = {}
        index = {c: i for i, c in enumerate(self._conns)}
        while len(got) < len(self._conns):
            timeout = max(0.0, self.next_progress - time.perf_counter())
            for c in wait([c for c in self._conns if index[c] not in got], timeout):
                try:
                    got[index[c]] = pickle.loads(c.recv_bytes())
                except EOFError:
                    raise RuntimeError(f"a search worker (pid {self._pids[index[c]]}) ended at "
                                       f"depth {depth + 1}") from None
            if time.perf_counter() >= self.next_progress:
                self.progress(depth + 1, len(self.seen), n)
        return [got[i] for i in range(len(self._conns))]

    def _stop_workers(self) -> None:
        """Close the pipes, stop and wait for every worker."""
        for c in self._conns:
            c.close()
        for pid in self._pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in self._pids:
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        self._conns, self._pids = [], []

    # --- the merge --------------------------------------------------------------------------------
    def _merge(self, slices, depth: int, nxt: Blobs, generated0: int):
        """Record the slices' violations and merge their candidates into the visited set and the
        next level, in frontier order; the exception to raise where the one-core search would
        have stopped (`Stopped` at a first violation, or the kernel's own error), or None."""
        out, table = self.out, self.table
        base = generated0
        stop = None
        cut = None  # (slice index, position): nothing from there on was met
        for k, r in enumerate(slices):
            for pos, pi, ei, v in r.violations:
                out.generated = base + pos + 1
                try:
                    self.record(v, depth + 1, table.path(depth, pi) + (ei,))
                except Stopped as e:
                    stop, cut = e, (k, pos)
                    break
            if stop is None and r.error is not None:
                stop, cut = r.error[1], (k, r.error[0])
                out.generated = base + r.error[0]
            if stop is not None:
                break
            base += r.generated
        fps, parents, events, owners = [], [], [], []
        for k, r in enumerate(slices):
            end = len(r.fps) // 16
            if cut is not None and k == cut[0]:
                end = next((i for i, p in enumerate(r.positions) if p >= cut[1]), end)
            fps.append(np.frombuffer(r.fps, FP_DTYPE, end))
            parents.append(np.frombuffer(r.parents, np.uint32, end))
            events.append(np.frombuffer(r.events, np.uint16, end))
            owners.append(np.full(end, k, np.int8))
            if cut is not None and k == cut[0]:
                break
        fps = np.concatenate(fps)
        # each worker kept only candidates its copy of the visited set, this set as the level
        # began, did not hold: what is left is the repeats among the slices
        new = self.seen.add_unseen(fps)
        table.parents[-1].frombytes(np.concatenate(parents)[new].tobytes())
        table.events[-1].frombytes(np.concatenate(events)[new].tobytes())
        nxt.owner.frombytes(np.concatenate(owners)[new].tobytes())
        nxt.extend([None] * int(np.count_nonzero(new)))
        self._delta = fps[new].tobytes()  # the workers' visited sets take these at the next level
        if stop is None:
            out.generated = base
        return stop

    # --- with partial-order reduction (`--reduction por`) -----------------------------------------
    def _expand_slice_reduced(self, part, lo: int, delta: bytes) -> _RSlice:
        """A worker's slice under `--reduction por`: for each state, in order, the successors of
        the events its stubborn set keeps (of every event where it has none), and for a state
        whose kept events lead back to the visited set (the proviso, which expands it fully) the
        successors of the events the set left out. Each successor as its fingerprint, event index
        and violation; the worker keeps the state of each fingerprint not visited before this
        level.

        The proviso is decided here: whether a kept event leads to a state of this level or an
        earlier one is whether its fingerprint is in the visited set as the level began, which
        this worker's copy is (bfs.py, `_Chunk.proviso`). Where the one-core search meets each
        state's left-out successors (after the chunk the state's kept ones fall in) is the
        parent's to replay (`_merge_reduced`)."""
        env, por, seen = self.env, self.options["reduction"], self.seen
        progress = por.progress
        fingerprint, decode = env.fingerprint, self.codec.decode
        r = _RSlice(lo)
        made, self._made = self._made, {}
        keep = self._made
        fp_of = xxh3_128_digest if self._canonical else None

        note = functools.partial(_note, fingerprint)

        def keep_the_new(got) -> None:
            fps = [g[0] for g in got]
            for (fp, s2), was in zip(got, seen.contains_batch(fps).tolist() if fps else ()):
                if not was and fp not in keep:
                    keep[fp] = s2

        n, i = len(part), 0
        while i < n and r.error is None:
            batch = []  # (parent index, Expansion, kept indices or None, its successors)
            for j in range(i, min(n, i + _BATCH)):
                blob = part[j]
                if blob is None:
                    s = self._own(made, delta, lo + j)
                else:
                    s = made.get(fp_of(blob)) if fp_of is not None else None
                try:
                    s = s or decode(blob)
                    x = Expansion(env, s)
                    kept = por.choose(s, x)
                    items = list(x.everything() if kept is None else x.pairs(kept))
                except Exception as e:  # noqa: BLE001 - the parent raises it where it was met
                    r.error = (lo + j, e)
                    break
                dirs = None
                if kept is not None and progress is not None:
                    dirs = [progress.direction(s, ev, s2) for _, (ev, s2, _) in items]
                batch.append((lo + j, x, kept, note(items, r.kfps, r.keis, r.kviol,
                                                     len(r.keis)), dirs))
            i += _BATCH
            got = [g for b in batch for g in b[3]]
            old = seen.contains_batch([g[0] for g in got]).tolist() if got else []
            rest_got = _proviso(r, batch, old, note)
            keep_the_new([g for g, was in zip(got, old) if not was])
            keep_the_new(rest_got)
        r.kfps = b"".join(r.kfps)
        r.rfps = b"".join(r.rfps)
        return r

    def _merge_reduced(self, slices, depth: int, nxt: Blobs, generated0: int):
        """`_merge` under `--reduction por`: the slices' successors offered in the order the
        one-core reduced search offers them (bfs.py, `_Chunk`): each state's kept ones in
        frontier order, merged into the visited set a chunk at a time (`CHUNK` distinct
        fingerprints), and after each chunk's merge the left-out successors of that chunk's
        states the proviso expands fully. So the level, its parent pointers, the counts (also of
        the states expanded in part and in full), the violations and where a first violation or a
        kernel error stops the search are the one-core search's."""
        m = _ReducedMerge(self, slices, depth, nxt, generated0)
        por, chunk = m.por, _one_core.CHUNK  # read at each level (the tests change it)
        stop = None
        try:
            for k, r in enumerate(slices):
                fps, a, ra = m.split[k][0], 0, 0
                for j, mode in enumerate(r.mode):
                    pi, n = r.lo + j, r.nk[j]
                    m.offer(k, pi, fps, r.keis, r.kviol, a, n)
                    a += n
                    if mode == 0:
                        por.full += 1
                    else:
                        por.reduced += 1
                        if mode == 2:
                            m.pending.append((k, pi, ra, r.nr[j]))
                            ra += r.nr[j]
                    if len(m.cand) >= chunk:
                        m.flush()
                        m.expand_rest()
                if r.error is not None:
                    raise r.error[1]
            while m.cand:  # the proviso's full expansions, to the end
                m.flush()
                m.expand_rest()
        except Exception as e:  # noqa: BLE001 - `Stopped`, or the kernel's own error
            stop = e
        finally:
            if m.cand:  # what the level found so far, as the one-core search keeps it
                m.flush()
            self._delta = b"".join(m.delta)
            self.out.generated = m.gen
        return stop

    # --- what the one-core search reads as states -------------------------------------------------
    def _measure_frontier(self, frontier) -> None:
        if not isinstance(frontier, Blobs):
            return super()._measure_frontier(frontier)
        n = len(frontier)
        if n <= self.frontier_peak:
            return
        self.frontier_peak = n
        step = max(1, n // 256)
        if frontier.owner is not None:  # the sample's bytes, from the workers that hold them
            idx = np.arange(0, n, step)
            self._fetch(frontier, idx[np.frombuffer(frontier.owner, np.int8)[idx] >= 0])
        sample = frontier[::step]
        if self.codec.encode == self.env.encode:
            self.frontier_sample_bytes = sum(map(len, sample)) / len(sample)
        else:
            encode, decode = self.env.encode, self.codec.decode
            self.frontier_sample_bytes = sum(len(encode(decode(b))) for b in sample) / len(sample)

    def _write_checkpoint(self) -> None:
        """The one-core search's checkpoint, of the states the blobs hold (with a checkpoint to
        write, every level's bytes are brought here as the level ends)."""
        b = self._boundary
        decode = self.codec.decode
        if b is not None and isinstance(b[2], Blobs):
            self._boundary = b[:2] + ([decode(x) for x in b[2]],) + b[3:]
        try:
            return super()._write_checkpoint()
        finally:
            self._boundary = b

    def _partial_fps(self):
        if isinstance(self.partial, Blobs) and self.partial.owner is not None:
            return np.frombuffer(self.partial.fps, dtype=FP_DTYPE)
        return super()._partial_fps()

    def finish(self) -> None:
        self._stop_workers()
        super().finish()
        self.out.extra["workers"] = self.workers


def parallel_bfs(env, workers: int = 2, **kw):
    """Breadth-first search of `env` on `workers` processes (see `Search` for the keywords)."""
    return ParallelBFS(env, workers=workers, **kw).run()
