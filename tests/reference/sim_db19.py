"""A second, independent implementation of the db-19 seeded tick simulator and its canonical
dump, written from the protocol's own description (docs/semantics.md: the db-19 design's
pseudo-code, with its clarifications C1-C27), to check the golden digests that tests/test_sim.py
pins. It imports nothing of zabmc or models/ (tests/test_sim_reference.py checks that) and
shares none of their code: one flat loop over plain mutable objects, the way the design's text
reads, with the messages as (kind, fields...) tuples.

    python tests/reference/sim_db19.py --seed 42 --nodes 3 --rounds 2000 --proposals 10
        [--partition 0,1,1,0]     # prints the lowercase hex SHA-256 of the dump, no newline

Crash and restart directives are not implemented: the pinned digests have none.
"""

from __future__ import annotations

import argparse
import hashlib
import heapq
import struct
import sys

MASK = (1 << 64) - 1
LOOKING, FOLLOWING, LEADING = 0, 1, 2  # the dump's role byte
NONE_ZXID = (0, 0)


def splitmix64(x: int) -> int:
    """The first output of splitmix64 seeded with x, with the design's constants (C3)."""
    z = (x + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E7B5) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


class Server:
    """One node's variables, named as in the design's state table."""

    def __init__(self, ident: int):
        self.id = ident
        # persistent
        self.current_epoch = 0
        self.accepted_epoch = 0
        self.history: list[tuple[tuple[int, int], bytes]] = []
        self.last_committed = NONE_ZXID
        # volatile
        self.role = LOOKING
        self.leader_id = None
        # election
        self.vote_target_id = ident
        self.vote_target_zxid = NONE_ZXID
        self.vote_view: dict[int, int] = {}
        # leader only
        self.pending_new_epoch = 0
        self.epoch_acks: set[int] = set()
        self.leader_acks: set[int] = set()
        self.synced = False
        self.next_counter = 0
        self.ack_set: dict[tuple[int, int], set[int]] = {}
        # timers
        self.election_deadline = 0
        self.last_heartbeat_sent = 0

    def last_zxid(self):
        return self.history[-1][0] if self.history else NONE_ZXID


class Cluster:
    def __init__(self, seed: int, n: int, partition: set[tuple[int, int]]):
        self.seed, self.n, self.partition = seed, n, partition
        self.quorum = n // 2 + 1
        self.servers = [Server(i) for i in range(n)]
        self.heap: list = []
        self.seq = 0
        self.now = 0  # the tick whose work is running: sends and timer resets use it

    # --- network ---------------------------------------------------------------------------------
    def send(self, src: int, dst: int, msg: tuple) -> None:
        if (src, dst) in self.partition:
            return  # dropped at send, no sequence number
        t = self.now
        when = t + 1 + splitmix64(self.seed ^ src ^ dst ^ t) % 3
        heapq.heappush(self.heap, (when, src, self.seq, dst, msg))
        self.seq += 1

    def broadcast(self, s: Server, msg: tuple) -> None:
        for peer in range(self.n):
            if peer != s.id:
                self.send(s.id, peer, msg)

    def reset_election_deadline(self, s: Server) -> None:
        t = self.now
        s.election_deadline = t + 150 + splitmix64(self.seed ^ s.id ^ t) % 150

    # --- Phase 0: election -----------------------------------------------------------------------
    def enter_looking(self, s: Server) -> None:
        s.role = LOOKING
        s.vote_target_id = s.id
        s.vote_target_zxid = s.last_zxid()
        s.vote_view = {s.id: s.id}
        self.broadcast(s, ("LookForLeader", s.id, s.last_zxid(), s.current_epoch))
        self.broadcast(s, ("Vote", s.id, s.last_zxid(), s.current_epoch, s.id))
        self.check_election(s)

    def on_vote(self, s: Server, sender: int, voter: int, peer_zxid, leader_chosen: int) -> None:
        if s.role != LOOKING:  # answer with its own current vote, change nothing
            self.send(s.id, sender, ("Vote", s.id, s.last_zxid(), s.current_epoch,
                                     s.vote_target_id))
            return
        if (peer_zxid[0], peer_zxid[1], voter) > (s.vote_target_zxid[0], s.vote_target_zxid[1],
                                                  s.vote_target_id):
            s.vote_target_id = voter
            s.vote_target_zxid = peer_zxid
            s.vote_view = {s.id: voter}
            self.broadcast(s, ("Vote", s.id, s.last_zxid(), s.current_epoch, voter))
        s.vote_view[voter] = leader_chosen
        self.check_election(s)

    def check_election(self, s: Server) -> None:
        target = s.vote_target_id
        if sum(1 for v in s.vote_view.values() if v == target) >= self.quorum:
            if target == s.id:
                self.become_leading(s)
            else:
                self.become_following(s, target)

    @staticmethod
    def become_following(s: Server, leader: int) -> None:
        s.role = FOLLOWING
        s.leader_id = leader

    # --- Phases 1 and 2: discovery and synchronisation --------------------------------------------
    def become_leading(self, s: Server) -> None:
        s.role = LEADING
        s.pending_new_epoch = max(s.accepted_epoch, s.current_epoch) + 1
        s.accepted_epoch = s.pending_new_epoch
        s.epoch_acks = {s.id}
        self.broadcast(s, ("NewEpoch", s.pending_new_epoch))
        self.try_finish_discovery(s)

    def try_finish_discovery(self, s: Server) -> None:
        if len(s.epoch_acks) < self.quorum:
            return
        s.current_epoch = s.pending_new_epoch
        s.next_counter = 0
        s.leader_acks = {s.id}
        self.broadcast(s, ("NewLeader", s.current_epoch, tuple(s.history)))
        self.try_finish_sync(s)

    def try_finish_sync(self, s: Server) -> None:
        if s.synced or len(s.leader_acks) < self.quorum:
            return
        s.synced = True
        if s.last_zxid() > s.last_committed:
            s.last_committed = s.last_zxid()
            self.broadcast(s, ("Commit", s.last_committed))

    # --- Phase 3: broadcast ----------------------------------------------------------------------
    def propose(self, s: Server, payload: bytes) -> None:
        s.next_counter += 1
        zxid = (s.current_epoch, s.next_counter)
        s.history.append((zxid, payload))
        s.ack_set[zxid] = {s.id}
        self.broadcast(s, ("Propose", (zxid, payload)))
        self.try_commit(s, zxid)

    def try_commit(self, s: Server, zxid) -> None:
        if zxid <= s.last_committed:
            return
        if len(s.ack_set[zxid]) >= self.quorum:
            s.last_committed = zxid
            self.broadcast(s, ("Commit", zxid))

    # --- delivery ----------------------------------------------------------------------------------
    def deliver(self, s: Server, sender: int, msg: tuple) -> None:
        kind = msg[0]
        if kind == "LookForLeader":
            _, src_id, zxid, _epoch = msg
            self.on_vote(s, sender, src_id, zxid, src_id)
        elif kind == "Vote":
            _, voter, zxid, _epoch, leader = msg
            self.on_vote(s, sender, voter, zxid, leader)
        elif kind == "NewEpoch":
            e = msg[1]
            if e > s.accepted_epoch:
                s.accepted_epoch = e
                if s.role != FOLLOWING:
                    self.become_following(s, sender)
                self.send(s.id, sender, ("AckEpoch", s.current_epoch, s.last_zxid()))
            elif e == s.accepted_epoch:
                self.send(s.id, sender, ("AckEpoch", s.current_epoch, s.last_zxid()))
            self.reset_election_deadline(s)
        elif kind == "AckEpoch":
            if s.role == LEADING:
                s.epoch_acks.add(sender)
                self.try_finish_discovery(s)
        elif kind == "NewLeader":
            _, e, hist = msg
            if e >= s.accepted_epoch:
                s.accepted_epoch = e
                s.current_epoch = e
                s.history = list(hist)
                if s.role != FOLLOWING:
                    self.become_following(s, sender)
                self.reset_election_deadline(s)
                self.send(s.id, sender, ("AckLeader", e))
        elif kind == "AckLeader":
            if s.role == LEADING and msg[1] == s.current_epoch:
                s.leader_acks.add(sender)
                self.try_finish_sync(s)
        elif kind == "Propose":
            zxid, payload = msg[1]
            if s.role == FOLLOWING and sender == s.leader_id and zxid > s.last_zxid():
                s.history.append((zxid, payload))
                self.reset_election_deadline(s)
                self.send(s.id, sender, ("Ack", zxid))
        elif kind == "Ack":
            if s.role == LEADING:
                zxid = msg[1]
                s.ack_set.setdefault(zxid, set()).add(sender)
                self.try_commit(s, zxid)
        elif kind == "Commit":
            zxid = msg[1]
            if sender == s.leader_id:
                self.reset_election_deadline(s)
            if s.last_committed < zxid <= s.last_zxid():
                s.last_committed = zxid
        else:
            raise ValueError(f"unknown message {msg!r}")

    # --- the run -----------------------------------------------------------------------------------
    def run(self, rounds: int, proposals: int) -> None:
        self.now = 0
        for s in self.servers:  # start-up, before tick 0
            self.reset_election_deadline(s)
            self.enter_looking(s)
        schedule = [(i + 1) * rounds // (proposals + 1) for i in range(proposals)]
        pending: list[bytes] = []
        for t in range(rounds):
            self.now = t
            pending += [f"zab-{i}".encode() for i, slot in enumerate(schedule) if slot == t]
            leaders = [s for s in self.servers if s.role == LEADING and s.synced]
            if leaders and pending:
                for payload in pending:
                    self.propose(leaders[0], payload)
                pending = []
            while self.heap and self.heap[0][0] <= t:
                _when, src, _seq, dst, msg = heapq.heappop(self.heap)
                self.deliver(self.servers[dst], src, msg)
            for s in self.servers:
                if s.role != LEADING:
                    if t >= s.election_deadline:
                        self.reset_election_deadline(s)
                        self.enter_looking(s)
                elif s.synced and t - s.last_heartbeat_sent >= 50:
                    s.last_heartbeat_sent = t
                    self.broadcast(s, ("Commit", s.last_committed))

    def dump(self) -> bytes:
        out = [b"DSEZAB01", struct.pack("<I", self.n)]
        for s in self.servers:
            lz = s.last_zxid()
            out.append(struct.pack("<IBIIIIIII", s.id, s.role, s.current_epoch, s.accepted_epoch,
                                   lz[0], lz[1], s.last_committed[0], s.last_committed[1],
                                   len(s.history)))
            for (e, c), payload in s.history:
                out.append(struct.pack("<III", e, c, len(payload)) + payload)
        return b"".join(out)


def digest(seed: int, nodes: int, rounds: int, proposals: int, partition=()) -> str:
    cluster = Cluster(seed, nodes, set(partition))
    cluster.run(rounds, proposals)
    return hashlib.sha256(cluster.dump()).hexdigest()


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--nodes", type=int, default=3)
    p.add_argument("--rounds", type=int, default=1000)
    p.add_argument("--proposals", type=int, default=0)
    p.add_argument("--partition", default="")
    a = p.parse_args(argv)
    ids = [int(x) for x in a.partition.split(",")] if a.partition else []
    sys.stdout.write(digest(a.seed, a.nodes, a.rounds, a.proposals, zip(ids[0::2], ids[1::2])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
