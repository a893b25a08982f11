"""Breadth-first search on several cores of one machine (`zabmc check --workers N`): the same
search as `bfs`, level by level, with each level's expansion shared among forked processes.

At each level the parent forks N workers. Worker k takes the k-th contiguous slice of the frontier
(each worker sees the whole search as it stood at the fork: the frontier, the visited set, the
parent pointers), builds every successor of its slice through the same kernel, checks it, takes
its fingerprint and canonical bytes in one encoding, drops those already visited and its own
repeats, and hands back the rest in the order it met them, with every violating step and how many
successors it built. The parent merges the slices in frontier order: it records the violations
in that order and offers the candidates to the visited set in one batch, where the first
occurrence of a fingerprint wins. That is the order in which the one-core search meets them, so
the next level holds the same states in the same order with the same parent pointers, and every
count, verdict and counterexample is the one-core search's. A search that stops at its first
violation stops where the one-core search does, with the same counts: each candidate carries its
position among its slice's successors.

The frontier travels as canonical bytes (the codec `choose_codec` picks, `zabmc.explore.codec`);
a worker decodes its own slice. The parent's share of a state is a dictionary lookup, a batch
insertion and a few appends, so the expansion (most of the time) runs on every core.

Not here: partial-order reduction, levels on disk (the frontier stays in memory, as compact
bytes), and stopping inside a level: a signal or the time limit stops the search at the level
boundary before it (the level being expanded is dropped; a checkpoint then holds that boundary).
"""

from __future__ import annotations

import os
import pickle
import select
import shutil
import signal
import tempfile
import time
from array import array

from .bfs import BFS, CHUNK
from .codec import choose_codec, make_codec
from .search import Stopped


class Blobs(list):
    """A frontier held as its states' codec bytes (decoded by the worker that expands them)."""


class _Slice:
    """What one worker hands back: the successors it built (`generated`), its candidates in the
    order met (fingerprints, parent and event indices, positions among its successors, bytes),
    its violating steps `(position, parent index, event index, violation)`, and the exception
    that stopped it, with its position, if one did."""

    __slots__ = ("generated", "fps", "parents", "events", "positions", "blobs", "violations",
                 "error")


def _dev_shm() -> str | None:
    d = "/dev/shm"
    return d if os.path.isdir(d) and os.access(d, os.W_OK) else None


class ParallelBFS(BFS):
    """`BFS` with each level's expansion shared among `workers` forked processes."""

    name = "bfs"

    def __init__(self, env, *, workers: int = 2, **kw):
        if workers < 2:
            raise ValueError(f"ParallelBFS needs at least 2 workers, got {workers}")
        for opt in ("reduction", "spill"):
            if kw.get(opt) is not None:
                raise ValueError(f"ParallelBFS does not take the option {opt!r}")
        super().__init__(env, **kw)
        self.workers = workers
        self.codec = kw.get("codec")  # chosen as the search starts, when not given
        self._tmp = None
        self._pids: list[int] = []

    def search(self) -> None:
        if self.codec is None:
            self.codec = make_codec(choose_codec(self.env), self.env)
        super().search()

    # --- the level ---------------------------------------------------------------------------------
    def _expand_level(self, frontier, depth: int, fingerprint, blobs) -> None:
        out = self.out
        lt = time.perf_counter()
        n = len(frontier)
        k = min(self.workers, n)
        bounds = [n * i // k for i in range(k + 1)]
        generated0 = out.generated
        if self._tmp is None:
            self._tmp = tempfile.mkdtemp(prefix="zabmc-par-", dir=_dev_shm())
        files = [os.path.join(self._tmp, f"{depth}-{i}") for i in range(k)]
        try:
            self._pids = [self._fork(frontier, depth, bounds[i], bounds[i + 1], files[i])
                          for i in range(k)]
            self._wait(depth, n)
            slices = [self._load(f) for f in files]
        finally:
            self._reap()
            for f in files:
                try:
                    os.unlink(f)
                except FileNotFoundError:
                    pass
        self.table.new_level()
        nxt = Blobs()
        stop = None
        try:
            stop = self._merge(slices, depth, nxt, generated0)
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

    def _fork(self, frontier, depth: int, lo: int, hi: int, path: str) -> int:
        pid = os.fork()
        if pid:
            return pid
        code = 0
        try:  # the worker: stopped by its parent only
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            r = self._expand_slice(frontier, depth, lo, hi)
            with open(path + ".part", "wb") as f:
                pickle.dump(r, f, protocol=pickle.HIGHEST_PROTOCOL)
            os.rename(path + ".part", path)
        except BaseException:  # noqa: BLE001 - reported by the missing file
            code = 1
        finally:
            os._exit(code)

    def _expand_slice(self, frontier, depth: int, lo: int, hi: int) -> tuple:
        successors = self.env.successors
        fp_blob, decode = self.codec.fp_blob, self.codec.decode
        to_bytes = self.codec.blob
        seen = self.seen
        encoded = isinstance(frontier, Blobs)
        r = _Slice()
        r.fps, r.blobs, r.violations, r.error = [], [], [], None
        r.parents, r.events, r.positions = array("I"), array("H"), array("Q")
        mine: set = set()  # fingerprints this worker kept
        chunk: dict = {}  # fp -> (parent, event, position, bytes), not yet checked against seen
        gen = 0

        def flush():
            fps = list(chunk)
            old = seen.contains_batch(fps).tolist() if fps else []
            for fp, was in zip(fps, old):
                if not was:
                    pi, ei, pos, b = chunk[fp]
                    mine.add(fp)
                    r.fps.append(fp)
                    r.parents.append(pi)
                    r.events.append(ei)
                    r.positions.append(pos)
                    r.blobs.append(to_bytes(b))
            chunk.clear()

        try:
            for pi in range(lo, hi):
                s = frontier[pi]
                if encoded:
                    s = decode(s)
                for ei, (_ev, s2, v) in enumerate(successors(s)):
                    if v is not None:
                        r.violations.append((gen, pi, ei, v))
                    fp, b = fp_blob(s2)
                    if fp not in chunk and fp not in mine:
                        chunk[fp] = (pi, ei, gen, b)
                    gen += 1
                if len(chunk) >= CHUNK:
                    flush()
        except Exception as e:  # noqa: BLE001 - the parent raises it where the search met it
            r.error = (gen, e)
        flush()
        r.generated = gen
        return r

    def _wait(self, depth: int, n: int) -> None:
        """Until every worker has exited; progress and the time limit meanwhile."""
        pending = set(self._pids)
        while pending:
            for pid in list(pending):
                got, status = os.waitpid(pid, os.WNOHANG)
                if got:
                    pending.discard(pid)
                    self._pids.remove(pid)
                    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
                        raise RuntimeError(f"a search worker (pid {pid}) failed at depth "
                                           f"{depth + 1}: status {status}")
            if pending:
                now = time.perf_counter()
                if now >= self.next_progress:
                    self.progress(depth + 1, len(self.seen), n)
                select.select([], [], [], 0.02)

    def _load(self, path: str) -> _Slice:
        with open(path, "rb") as f:
            return pickle.load(f)

    def _reap(self) -> None:
        """Stop and wait for every worker still running (an interrupted level)."""
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
        self._pids = []

    # --- the merge ---------------------------------------------------------------------------------
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
        fps, owners = [], []
        for k, r in enumerate(slices):
            end = len(r.fps)
            if cut is not None and k == cut[0]:
                end = next((i for i, p in enumerate(r.positions) if p >= cut[1]), end)
            fps.extend(r.fps[:end])
            owners.extend((k, i) for i in range(end))
            if cut is not None and k == cut[0]:
                break
        new = self.seen.add_batch(fps).tolist() if fps else []
        parents, events = table.parents[-1], table.events[-1]
        for (k, i), is_new in zip(owners, new):
            if is_new:
                r = slices[k]
                nxt.append(r.blobs[i])
                parents.append(r.parents[i])
                events.append(r.events[i])
        if stop is None:
            out.generated = base
        return stop

    # --- what the one-core search reads as states --------------------------------------------------
    def _measure_frontier(self, frontier) -> None:
        if not isinstance(frontier, Blobs):
            return super()._measure_frontier(frontier)
        n = len(frontier)
        if n <= self.frontier_peak:
            return
        self.frontier_peak = n
        step = max(1, n // 256)
        sample = frontier[::step]
        if self.codec.encode == self.env.encode:
            self.frontier_sample_bytes = sum(map(len, sample)) / len(sample)
        else:
            encode, decode = self.env.encode, self.codec.decode
            self.frontier_sample_bytes = sum(len(encode(decode(b))) for b in sample) / len(sample)

    def _write_checkpoint(self) -> None:
        """The one-core search's checkpoint, of the states the blobs hold."""
        b, partial = self._boundary, self.partial
        decode = self.codec.decode
        if b is not None and isinstance(b[2], Blobs):
            self._boundary = b[:2] + ([decode(x) for x in b[2]],) + b[3:]
        if isinstance(partial, Blobs):
            self.partial = [decode(x) for x in partial]
        try:
            return super()._write_checkpoint()
        finally:
            self._boundary, self.partial = b, partial

    def finish(self) -> None:
        self._reap()
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
        super().finish()
        self.out.extra["workers"] = self.workers


def parallel_bfs(env, workers: int = 2, **kw):
    """Breadth-first search of `env` on `workers` processes (see `Search` for the keywords)."""
    return ParallelBFS(env, workers=workers, **kw).run()
