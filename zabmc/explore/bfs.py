"""Level-synchronous breadth-first search: the default strategy, giving shortest counterexamples.

Memory: only the current and next frontier hold full states. Every visited state costs 16 bytes in
the fingerprint set plus 6 bytes of parent pointer (parent's index in the previous level, uint32, and
the event's index among the parent's successors, uint16); a trace is rebuilt by walking those
pointers back and replaying the events through the kernel (`trace.rebuild`).

Within a level, candidates are deduplicated in chunks by a small dict and then offered to the
fingerprint set in one batch; the set's answer is also its insertion.
"""

from __future__ import annotations

import os
import time
from array import array

import numpy as np
from xxhash import xxh3_128_digest

from .checkpoint import CheckpointWriteError
from .env import Env
from .outcome import DEPTH_BOUND, EXHAUSTED, Outcome, StopReason
from .por import Expansion
from .search import Search
from .seen import SortedRunSet, as_array, member
from .spill import Level

CHUNK = 20_000  # candidate states per batch offered to the fingerprint set


class ParentTable:
    """Per level: parent index (uint32) and event index (uint16) of every state, in level order."""

    def __init__(self) -> None:
        self.parents: list[array] = [array("I", [0])]
        self.events: list[array] = [array("H", [0])]

    def new_level(self) -> None:
        self.parents.append(array("I"))
        self.events.append(array("H"))

    def add(self, parent: int, event: int) -> None:
        self.parents[-1].append(parent)
        self.events[-1].append(event)

    def path(self, depth: int, index: int) -> tuple:
        """Event indices from the initial state to state `index` of level `depth`."""
        out = []
        for d in range(depth, 0, -1):
            out.append(self.events[d][index])
            index = self.parents[d][index]
        return tuple(reversed(out))

    @property
    def nbytes(self) -> int:
        return sum(a.itemsize * len(a) for a in self.parents) + sum(
            a.itemsize * len(a) for a in self.events
        )


class BFS(Search):
    """Options: `checkpoint` (a `checkpoint.Checkpointer`: write checkpoints at level boundaries)
    and `resume` (a `checkpoint.Snapshot` to continue from), with `codec` (a `codec.Codec`) for the
    frontier's states in both."""

    name = "bfs"
    # set by `search`; these defaults keep `finish` sound however early the search stopped
    frontier_peak = 0
    frontier_sample_bytes = 0.0
    partial = None
    _boundary = None  # (depth, generated, frontier, perf_counter time) of the last level boundary
    elapsed_before = 0.0  # seconds the search ran before the checkpoint it resumed from
    _boundary_prev = None
    _ck_written_at = None
    _ck_failed = False  # a checkpoint could not be written: no more are tried

    def search(self) -> None:
        cfg, out = self.config, self.out
        frontier, depth = self._start()
        self._measure_frontier(frontier)
        ck = self.options.get("checkpoint")
        spill = self.options.get("spill")
        blobs, keeping_fingerprint = self._keeping_fingerprint(spill)
        plain_fingerprint = self.env.fingerprint
        while frontier and depth < cfg.depth:
            self._boundary = (depth, out.generated, frontier, time.perf_counter())
            self._boundary_prev = frontier
            self._level_done = False
            fingerprint = plain_fingerprint
            if blobs is not None:  # keep encodings once levels go to disk (they grow)
                fingerprint = keeping_fingerprint if spill.spilled_levels else plain_fingerprint
            self._expand_level(frontier, depth, fingerprint, blobs)
            frontier, depth = self.frontier, self.depth
            if not self._level_done:  # pragma: no cover - the finally clause re-raised
                break
            if spill is not None:
                frontier.finish()
                old = self._boundary_prev
                if isinstance(old, Level):
                    old.drop()  # expanded, and no checkpoint can need it any more
                self._boundary_prev = frontier
            self._measure_frontier(frontier)
            if ck is not None and frontier and depth < cfg.depth and ck.due():
                self._write_checkpoint()

    def _start(self) -> tuple:
        """The search's state at its start: the initial state, or the checkpoint it resumes
        from; (frontier, depth)."""
        env, out = self.env, self.out
        self.seen = SortedRunSet()
        self.table = ParentTable()
        self.depth = depth = 0
        self.frontier = frontier = []
        self._boundary = None
        self._level_done = True
        self.partial = None  # the states of a level stopped in its middle
        self._ck_written_at = None  # the level of the last checkpoint written or resumed from
        self.frontier_peak = 0
        self.frontier_sample_bytes = 0.0
        ck = self.options.get("checkpoint")
        snap = self.options.get("resume")
        if snap is None:
            init, v0 = env.initial()
            self.seen.add_batch([env.fingerprint(init)])
            out.generated = 1
            out.per_depth.append(1)
            self.frontier = frontier = [init]
            self._boundary = (0, 1, frontier, time.perf_counter())
            if v0 is not None:
                self.record(v0, 0, ())
        else:
            self.frontier = frontier = self._restore(snap)
            self.depth = depth = snap.depth
            self._boundary = (depth, out.generated, frontier, time.perf_counter())
            if ck is not None and os.path.realpath(ck.dir) == os.path.realpath(snap.directory):
                self._ck_written_at = depth  # that checkpoint is this state
        return frontier, depth

    def _keeping_fingerprint(self, spill) -> tuple:
        """(blobs, fingerprint) where the canonical encoding is what the fingerprint hashes and
        levels may go to disk: keep each candidate's bytes for the chunk, so that a new state going
        to disk is not encoded a second time; (None, None) otherwise."""
        env = self.env
        codec = self.options.get("codec")
        if spill is None or codec is None or codec.encode != env.encode:
            return None, None
        blobs: dict = {}
        encode = env.encode

        def keeping_fingerprint(s, _h=xxh3_128_digest, _blobs=blobs):
            b = encode(s)
            fp = _h(b)
            _blobs[fp] = b
            return fp

        return blobs, keeping_fingerprint

    def _expand_level(self, frontier, depth: int, fingerprint, blobs) -> None:
        """Expand one level into the next, chunk by chunk; whatever ends it (also a signal or the
        time limit in its middle), keep what it found so far in `self.frontier`, `self.depth`."""
        out = self.out
        lt = time.perf_counter()
        spill = self.options.get("spill")
        por = self.options.get("reduction")  # a `por.Stubborn`, or None: every event expanded
        self.table.new_level()
        nxt = Level(spill) if spill is not None else []
        chunk = _Chunk(self, depth, nxt, fingerprint, blobs, por)
        if chunk.sleep is not None:
            chunk.sleep.start_level()
        successors = self.env.successors
        try:
            for pi, s in enumerate(frontier):
                if por is None:
                    chunk.offer(pi, enumerate(successors(s)))
                else:
                    chunk.offer_reduced(pi, s)
                if len(chunk.cand) >= CHUNK:
                    pending = chunk.flush()
                    if pending:
                        chunk.expand_rest(pending)
                if time.perf_counter() >= self.next_progress:
                    # only what is known: the candidates of the chunk not yet merged may be
                    # states seen before, so neither count includes them
                    self.progress(depth + 1, len(self.seen), len(frontier) - pi - 1 + len(nxt))
            while por is not None and chunk.cand:  # the proviso's full expansions, to the end
                pending = chunk.flush()
                if pending:
                    chunk.expand_rest(pending)
            self._level_done = True
        except MemoryError:
            chunk.cand.clear()  # free what can be freed; the level's count stays what was merged
            raise
        finally:
            # keep what the level found so far, also when the search stops in its middle
            if chunk.cand:
                chunk.flush()
            if nxt:
                depth += 1
                out.per_depth.append(len(nxt))
            if self._level_done:  # the next level boundary, before anything else can stop us
                self._boundary = (depth, out.generated, nxt, time.perf_counter())
            else:
                self.partial = nxt
            self.observer.on_level(depth, len(frontier), len(nxt), time.perf_counter() - lt)
            self.frontier = nxt
            self.depth = depth

    # --- figures -----------------------------------------------------------------------------------
    def _measure_frontier(self, frontier: list) -> None:
        """Track the largest level held and its states' mean encoded size (sampled)."""
        n = len(frontier)
        if n <= self.frontier_peak:
            return
        self.frontier_peak = n
        if isinstance(frontier, Level):
            if frontier.on_disk:  # every state's encoded size is known
                self.frontier_sample_bytes = frontier.raw_bytes / n
                return
            frontier = frontier.mem
        step = max(1, n // 256)
        sample = frontier[::step]
        encode = self.env.encode
        self.frontier_sample_bytes = sum(len(encode(s)) for s in sample) / len(sample)

    def record(self, v, depth: int, path: tuple) -> None:
        """As `Search.record`; in a resumed search, each violation's path (which the parent table
        read from the checkpoint built) is first replayed: one that does not lead to that violation
        at its last step means the checkpoint's table was forged or corrupt, and the search is
        refused in one line rather than reporting what is not there."""
        snap = self.options.get("resume")
        if snap is not None and depth > snap.depth:
            self._confirm_resumed(snap, v, path)
        super().record(v, depth, path)

    def _confirm_resumed(self, snap, v, path: tuple) -> None:
        from .checkpoint import _bad
        from .trace import rebuild

        try:
            t = rebuild(self.env, path, v.property)
            ok = (t.violation is not None and t.violation.property == v.property
                  and t.violation_step == len(self.env.prefix) + len(path))
        except Exception:  # noqa: BLE001 - a forged path the kernel cannot step
            ok = False
        if not ok:
            raise _bad(snap.directory, f"the path to the {v.property} violation found after "
                                       "resuming does not replay to it: its parent table is "
                                       "corrupt or forged")

    # --- checkpoints -------------------------------------------------------------------------------
    def _restore(self, snap) -> list:
        """Load a checkpoint's search state; the frontier (decoded)."""
        from .checkpoint import frontier_states, restore_violations

        out = self.out
        if len(snap.seen):
            self.seen._push(np.ascontiguousarray(snap.seen))
        self.table.parents = [array("I", p) for p in snap.parents]
        self.table.events = [array("H", e) for e in snap.events]
        meta = snap.meta
        self.elapsed_before = float(meta.get("extra", {}).get("elapsed", 0.0))
        out.extra["elapsed_before_resume"] = self.elapsed_before
        out.extra["distinct_before_resume"] = meta["distinct"]  # not counted in this run's rate
        out.generated = meta["generated"]
        out.per_depth = list(meta["per_depth"])
        for f in restore_violations(self.env, meta):
            self._reported[f.violation.property] = len(out.violations)
            out.violations.append(f)
        records = frontier_states(snap, self.options["codec"], self.env.fingerprint, self.seen)
        spill = self.options.get("spill")
        if spill is None:
            return [s for _, s in records]
        level = Level(spill)
        for b, s in records:
            if level.on_disk:
                level.append_blob(b)
            else:
                level.append(s)
        level.finish()
        return level

    def _write_checkpoint(self) -> None:
        """A checkpoint of the last level boundary (rolling back a level stopped in its middle)."""
        ck = self.options.get("checkpoint")
        if ck is None or self._boundary is None or self._ck_failed:
            return
        depth, generated, frontier, at = self._boundary
        if self._ck_written_at == depth:
            return  # nothing new since the last checkpoint (or the one this search resumed from)
        out, table = self.out, self.table
        seen = self.seen.to_array()
        levels = depth + 1
        if len(table.parents) > levels and self.partial:
            # a level stopped in its middle: roll it back
            drop = np.sort(as_array(self._partial_fps()))
            seen = seen[~member(drop, seen)]
        violations = [f for f in out.violations if f.depth <= depth]
        encode = self.options["codec"].encode
        try:
            ck.write(depth=depth, generated=generated, per_depth=out.per_depth[:levels],
                     violations=violations, seen=seen, parents=table.parents[:levels],
                     events=table.events[:levels],
                     frontier_blobs=(frontier.blobs(encode) if isinstance(frontier, Level)
                                     else map(encode, frontier)),
                     extra={"elapsed": round(self.elapsed_before + (at - self.t0), 3)})
        except CheckpointWriteError as e:  # a full disk: the search goes on, without checkpoints
            out.extra["checkpoint_error"] = str(e)
            self._ck_failed = True
            return
        self._ck_written_at = depth

    def _partial_fps(self):
        """The fingerprints of the states the level stopped in its middle had found."""
        fp = self.env.fingerprint
        return [fp(s) for s in self.partial]

    def finish(self) -> None:
        out = self.out
        out.distinct = len(self.seen)
        out.depth_reached = self.depth
        out.seen_bytes = self.seen.nbytes + self.table.nbytes
        out.extra["seen"] = self.seen
        out.extra["frontier_peak_states"] = self.frontier_peak
        out.extra["frontier_encoded_bytes_per_state"] = round(self.frontier_sample_bytes, 1)
        if self.options.get("checkpoint") is not None:
            try:
                self._write_checkpoint()
            except MemoryError:  # out of memory: the last checkpoint written stays the good one
                out.extra["checkpoint_error"] = "out of memory while writing the last checkpoint"
            out.extra["checkpoint"] = self.options["checkpoint"].dir
            out.extra["checkpoint_level"] = self._ck_written_at
        if "memory_limit" in self.options:
            out.extra["memory_limit"] = self.options["memory_limit"]
        por = self.options.get("reduction")
        if por is not None:
            out.extra["reduction"] = {"method": "por", "states_reduced": por.reduced,
                                      "states_expanded_fully": por.full}
            if por.sleep is not None:
                out.extra["reduction"].update(method="por+sleep",
                                              transitions_asleep=por.sleep.pruned)
        spill = self.options.get("spill")
        if spill is not None:
            out.extra["frontier_disk_bytes"] = spill.peak_disk_bytes
            out.extra["spilled_levels"] = spill.spilled_levels
            if spill.removed_stale:
                out.extra["stale_spill_dirs_removed"] = len(spill.removed_stale)
            spill.close()

    def natural_stop(self) -> StopReason:
        if self.frontier and self.depth >= self.config.depth:
            self.out.extra["frontier_left"] = len(self.frontier)
            return DEPTH_BOUND
        return EXHAUSTED

    def run(self) -> Outcome:
        self.out.extra["frontier_left"] = 0
        return super().run()


def bfs(env: Env, **kw) -> Outcome:
    """Breadth-first search of `env` (see `Search` for the keyword arguments)."""
    return BFS(env, **kw).run()


class _Chunk:
    """One level's candidates, merged into the visited set and the next level a chunk at a time:
    each new fingerprint's first (state, parent index, event index); with a reduction, what the
    proviso needs (the edges the stubborn sets kept, the states reduced in this chunk)."""

    def __init__(self, bfs: BFS, depth: int, nxt, fingerprint, blobs, por):
        self.bfs = bfs
        self.out = bfs.out
        self.seen = bfs.seen
        self.table = bfs.table
        self.record = bfs.record
        self.depth = depth
        self.nxt = nxt
        self.fingerprint = fingerprint
        self.blobs = blobs
        self.por = por
        self.sleep = por.sleep if por is not None else None  # a `por.Sleep`, or None
        self.cand: dict = {}  # fp -> (state, parent index, event index), this chunk only
        if por is not None:
            self.level_seen = SortedRunSet()  # the states this level has found so far
            # (parent index, fingerprint) of every event a stubborn set kept (with a progress
            # measure: those that leave it equal)
            self.edges: list = []
            self.progress = por.progress  # a `progress.Progress`, or None
            self.lowered: set = set()  # parents with a kept event that lowers the measure
            # parent index -> (its `Expansion`, kept indices, asleep ones), this chunk only
            self.reduced: dict = {}

    def flush(self) -> list:
        """Merge the chunk's candidates into the visited set and the level; with a reduction, the
        states of the chunk that must now be expanded fully (the proviso)."""
        cand, blobs, table = self.cand, self.blobs, self.table
        fps = list(cand)
        new = self.seen.add_batch(fps)  # a dict's keys: no duplicates
        add_state = self.nxt.append
        parents = table.parents[-1]
        add_parent, add_event = parents.append, table.events[-1].append
        found = self.sleep.found if self.sleep is not None else None
        for fp, is_new in zip(fps, new.tolist()):
            if is_new:
                if found is not None:
                    found(fp, len(parents))  # its index in the next level
                s2, pi, ei = cand[fp]
                if blobs is None:
                    add_state(s2)
                else:
                    add_state(s2, blobs.get(fp))
                add_parent(pi)  # table.add(pi, ei)
                add_event(ei)
        cand.clear()
        if blobs is not None:
            blobs.clear()
        return self.proviso(fps, new) if self.por is not None else ()

    def proviso(self, fps, new) -> list:
        """The chunk's states whose stubborn set leads to a state of this level or an earlier one
        (not new, and not found earlier in this level), and, with a progress measure, those with a
        kept event that lowers it (an event that raises it counts for neither): those are expanded
        fully, so that every cycle of the reduced graph has a fully expanded state."""
        edges, level_seen = self.edges, self.level_seen
        old = set()
        if edges:  # only the ends of kept events can send a state back
            # the ends not new in this chunk (an asleep event's end can be out of the chunk)
            fresh = {fp for fp, is_new in zip(fps, new.tolist()) if is_new}
            again = [fp for fp in {fp for _, fp in edges} if fp not in fresh]
            if again:
                here = level_seen.contains_batch(again).tolist()
                old = {fp for fp, h in zip(again, here) if not h}
        level_seen.add_batch(as_array(fps)[new])
        redo = {pi for pi, fp in edges if fp in old}
        if self.lowered:
            redo |= self.lowered
            self.lowered.clear()
        redo = sorted(redo)
        edges.clear()
        pending = [(pi,) + self.reduced[pi] for pi in redo]
        self.reduced.clear()
        return pending

    def offer_reduced(self, pi: int, s) -> None:
        """Offer state `pi`, `s`, to the chunk with a reduction: its stubborn set's events, or
        every event, less those asleep (`--reduction por+sleep`). Only the offered events'
        successors are built. An asleep event of the stubborn set still counts for the proviso,
        with the end another state's edge reached: the proviso decides as without sleep sets."""
        por, sleep = self.por, self.sleep
        x = Expansion(self.bfs.env, s)
        keep = por.choose(s, x)
        got = None
        zz = {}  # asleep: event index -> fingerprint of its end
        if sleep is not None:
            got = []
            asleep = sleep.asleep(pi)
            if asleep:
                zz = {i: asleep[ev] for i, ev in enumerate(x.events) if ev in asleep}
        if keep is None:
            self.offer(pi, x.pairs([i for i in range(len(x.events)) if i not in zz]) if zz
                       else x.everything(), got=got)
            por.full += 1
            if zz:
                sleep.pruned += len(zz)
        else:
            self.offer(pi, x.pairs([i for i in keep if i not in zz]) if zz else x.pairs(keep),
                       True, got, s)
            if zz:
                for i in keep:
                    if i in zz:
                        sleep.pruned += 1
                        if self.progress is None:
                            self.edges.append((pi, zz[i]))
                        else:  # where it goes needs its state: built, not fingerprinted
                            self._edge(pi, s, x.get(i), zz[i])
            self.reduced[pi] = (x, keep, zz)  # the proviso may want the rest
            por.reduced += 1
        if sleep is not None:
            if zz:  # an asleep event's end is reached too, by another state's edge
                evs = x.events
                got += [(evs[i], f) for i, f in zz.items()]
            sleep.expanded(pi, got)
            sleep.note(s, got)

    def expand_rest(self, pending) -> None:
        """Expand the events the stubborn sets of `pending` left out (less those asleep)."""
        por = self.por
        for pi, x, keep, zz in pending:
            kept = set(keep)
            rest = [i for i in range(len(x.events)) if i not in kept]
            if zz:
                self.sleep.pruned += sum(1 for i in rest if i in zz)
                rest = [i for i in rest if i not in zz]
            self.offer(pi, x.pairs(rest))
            por.reduced -= 1
            por.full += 1

    def _edge(self, pi: int, s, item, fp) -> None:
        """Note kept event `item`, `(event, state, violation)`, of state `pi`, `s`, for the
        proviso by where it takes the progress measure: raising, not at all; lowering, as a state
        to expand fully; equal, as an edge to `fp`."""
        d = self.progress.direction(s, item[0], item[1])
        if d < 0:
            self.lowered.add(pi)
        elif d == 0:
            self.edges.append((pi, fp))

    def offer(self, pi: int, items, track: bool = False, got: list | None = None,
              parent=None) -> None:
        """Offer state `pi`'s successors `items`, `(event index, (event, state, violation))`
        pairs, to the chunk: record their violations, keep each new fingerprint's first parent;
        with `track`, note the edges for the proviso (with a progress measure, `parent` is state
        `pi`, `_edge`); `got` collects `(event, fingerprint)`."""
        out, cand, fingerprint = self.out, self.cand, self.fingerprint
        edges = self.edges if track else None
        measured = track and self.progress is not None
        direction = self.progress.direction if measured else None
        noting = track or got is not None
        depth = self.depth
        before = out.generated  # counted once per state; exact whenever it is read
        k = 0
        for k, (ei, (ev, s2, v)) in enumerate(items, 1):
            if v is not None:
                out.generated = before + k
                self.record(v, depth + 1, self.table.path(depth, pi) + (ei,))
            fp = fingerprint(s2)
            if fp not in cand:
                cand[fp] = (s2, pi, ei)
            if noting:
                if measured:  # `_edge`, inline
                    d = direction(parent, ev, s2)
                    if d == 0:
                        edges.append((pi, fp))
                    elif d < 0:
                        self.lowered.add(pi)
                elif track:
                    edges.append((pi, fp))
                if got is not None:
                    got.append((ev, fp))
        out.generated = before + k
