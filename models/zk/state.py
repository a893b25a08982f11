"""Node state and messages of the `zk` model: ZooKeeper 3.7's ZAB 1.0 (models/zk/README.md).

Everything is an immutable value: a node is a `Node` named tuple, a message a plain tuple whose
first element is its kind. Zxids are `(epoch, counter)` tuples; `(0, 0)` means "none".
Transactions are `(zxid, payload)`, as in the other models.
"""

from __future__ import annotations

from collections import namedtuple
from typing import NamedTuple

from models.common.state import (  # noqa: F401  (re-exported)
    FOLLOWING,
    LEADING,
    LOOKING,
    ROLE_NAMES,
    ZERO,
    bits,
    quorum,
)
from models.common.state import history_last as last_zxid  # zk's takes a history  # noqa: F401

# Phases. A follower: F_DISCOVERY (FOLLOWERINFO sent, waiting for LEADERINFO), F_SYNC (ACKEPOCH
# sent: the sync packets, NEWLEADER and UPTODATE), F_BROADCAST. A leader: L_INFO (collecting
# FOLLOWERINFO from a quorum), L_EPOCH (LEADERINFO sent, collecting ACKEPOCH), L_SYNC (collecting
# the acknowledgements of NEWLEADER), L_BROADCAST (established).
ELECTION, F_DISCOVERY, F_SYNC, F_BROADCAST, L_INFO, L_EPOCH, L_SYNC, L_BROADCAST = range(8)
PHASE_NAMES = ("Election", "Discovery", "Synchronization", "Broadcast", "Discovery (FOLLOWERINFO)",
               "Discovery (ACKEPOCH)", "Synchronization", "Broadcast")

# Sync modes (what the leader's first sync packet says).
NONE, DIFF, TRUNC, SNAP = range(4)
MODE_NAMES = ("NONE", "DIFF", "TRUNC", "SNAP")

# Message kinds.
(FOLLOWERINFO, LEADERINFO, ACKEPOCH, SYNC, NEWLEADER, ACKLD, UPTODATE, PROPOSAL, ACK, COMMIT,
 NOTIFICATION, PING) = range(12)
MSG_NAMES = ("FOLLOWERINFO", "LEADERINFO", "ACKEPOCH", "SYNC", "NEWLEADER", "ACK-NEWLEADER",
             "UPTODATE", "PROPOSAL", "ACK", "COMMIT", "NOTIFICATION", "PING")
# Every message carries, first, the connection it travels on (`conn`, D8).
MSG_FIELDS = (
    ("conn", "accepted_epoch"),
    ("conn", "epoch"),
    ("conn", "current_epoch", "last_zxid"),  # current_epoch -1: the epoch was accepted already
    ("conn", "mode", "zxid", "txns", "committed"),  # DIFF/TRUNC(zxid), then PROPOSAL (+ COMMIT)
    ("conn", "epoch"),
    ("conn", "epoch"),
    ("conn",),
    ("conn", "txn"),
    ("conn", "zxid"),
    ("conn", "zxid"),
    ("conn", "vote", "round", "state"),  # FLE (D1): vote = (peer epoch, zxid, leader); conn 0
    ("conn",),  # the leader's heartbeat (D10): read by no handler
)


class Node(NamedTuple):
    id: int
    role: int = LOOKING
    phase: int = ELECTION
    leader: int = -1  # the leader a follower follows (and a leader itself)
    # --- on disk (the durable fields, D4) ---
    accepted_epoch: int = 0  # the acceptedEpoch file
    current_epoch: int = 0  # the currentEpoch file
    history: tuple = ()  # transactions on disk (snapshot and transaction log together, D4)
    last_committed: tuple = ZERO  # the last transaction the node has applied (delivered, D5)
    # --- kept across a crash, though not on disk (D8) ---
    conn: int = 0  # the connections to a leader this node has opened: the current one's id
    # --- in memory ---
    cut: int = 0  # peers whose connection to this node lost a message: nothing more arrives on it
    # --- in memory ---
    mem: tuple = ()  # transactions held beyond the disk: queued for the SyncThread (D6), or,
    #                  during a TRUNC synchronisation, applied to memory until NEWLEADER's snapshot
    commit: tuple = ZERO  # the highest zxid the node knows to be committed
    mode: int = NONE  # follower: the sync mode of this synchronisation
    pending: tuple = ()  # follower: packetsNotCommitted
    pcommit: tuple = ZERO  # follower: the last zxid of packetsCommitted
    nl: bool = False  # follower: NEWLEADER received
    # --- Fast Leader Election, in memory (only with the election at FLE's grain, D1) ---
    lclock: int = 0  # logicalclock: the election round
    vote: tuple = ()  # the proposed vote (peer epoch, zxid, leader); once decided, the elected one
    recv: tuple = ()  # recvset: per node, None or (vote, round, state) of this round
    ooe: tuple = ()  # outofelection: per node, None or (vote, round, state) of a decided peer
    # --- leader ---
    learners: int = 0  # followers connected (bit set, the leader included)
    lconn: tuple = ()  # per node: the id of the learner's connection (its `conn`), or 0
    tmax: int = 0  # the epoch to propose: 1 + the greatest acceptedEpoch heard
    connecting: int = 0  # FOLLOWERINFO received (connectingFollowers)
    electing: int = 0  # ACKEPOCH counted (electingFollowers)
    peers: tuple = ()  # per node: the lastZxid of an ACKEPOCH waiting to be synced, or None
    ackld: int = 0  # acknowledgements of NEWLEADER (newLeaderProposal's ack set)
    forwarding: int = 0  # followers that get PROPOSAL and COMMIT (forwardingFollowers)
    acks: tuple = ()  # outstanding proposals: ((zxid, ack bit set), ...)


def log_of(node) -> tuple:
    """Everything the node holds, on disk or only in memory (its lastProcessed end)."""
    return node.history + node.mem if node.mem else node.history


def queued(node) -> bool:
    """Whether `mem` waits for the SyncThread (rather than for NEWLEADER's snapshot)."""
    return bool(node.mem) and not (node.mode == 2 and not node.nl)


def cut(log: tuple, zxid: tuple, how: str) -> tuple:
    """`log` after `FileTxnLog.truncate(zxid)` (D3, H6): "exact", every transaction up to `zxid`;
    "file", as ZooKeeper does it (release-3.8.0 to release-3.9.5 and master, FileTxnLog.truncate):
    a FileTxnIterator positioned at the first transaction at or past `zxid`, and the file cut
    after it, so that when `zxid` is not in the log (an epoch's first zxid X.0, or 0) the first
    transaction past it stays (reports/bugs/trunc-keeps-uncommitted.md)."""
    kept = tuple(t for t in log if t[0] <= zxid)
    if how == "file" and (not kept or kept[-1][0] != zxid) and len(kept) < len(log):
        kept += (log[len(kept)],)
    return kept


def truncate_log(disk: tuple, zxid: tuple, base: tuple, how: str) -> tuple:
    """`disk` after `ZKDatabase.truncateLog(zxid)` (release-3.6.2 to release-3.9.4: `clear()`,
    `FileTxnSnapLog.truncateLog`, then `loadDataBase()`): `FileTxnSnapLog.truncateLog` cuts the
    log files only (`FileTxnLog.truncate`, `cut`) and deletes no snapshot, and the load restores
    the newest snapshot and replays the log past it. `base` is the zxid of the snapshot the
    node's log begins after (storage.Storage's `logbase`, S12; ZERO: none, the whole disk is
    log): what `disk` holds up to it is the snapshot's and stays; the cut applies to the rest."""
    if base == ZERO:
        return cut(disk, zxid, how)
    snap = tuple(t for t in disk if t[0] <= base)
    return snap + cut(disk[len(snap):], zxid, how)


def leaks(rules) -> bool:
    """Whether a follower's shutdown leaves its SyncThread running with its queue (3.7.0-3.9.2:
    the default) or writes the queue first (3.6.2: `leaks = False`; shutdown.py, H2). Read with
    a default here, not declared on handlers.Rules, so that the mutated kernel's lines stay put."""
    return getattr(rules, "leaks", True)


def snap_clears(rules) -> bool:
    """Whether a follower's shutdown before NEWLEADER of a SNAP synchronisation clears its database
    (`Learner.shutdown`'s `zk.shutdown(syncMode == SNAP)`: `ZooKeeperServer.shutdown(true)` calls
    `zkDb.clear()`, release-3.7.0 to release-3.9.4; storage.py S13) or keeps it (3.6.2's
    `zk.shutdown()`, that is `shutdown(false)`). By default as `leaks`: 3.6.2 neither leaks nor
    clears, 3.7.0-3.9.2 do both; 3.9.3 and 3.9.4 (`snap_clears = True`, `leaks = False`) shut the
    SyncThread down (PR #2154) and still clear. Read with a default as `leaks`."""
    return getattr(rules, "snap_clears", leaks(rules))


def truncation(rules) -> str:
    """How a TRUNC cuts the log (`cut`): "exact" (the default) or "file" as FileTxnLog does (the
    release models' rules: `truncate = "file"`, README R4). Read with a default as `leaks`."""
    return getattr(rules, "truncate", "exact")


def truncate_keeps(node_id: int, zxid: tuple, kept: tuple, sent: tuple,
                   base: tuple = ZERO) -> tuple:
    """The effects of a TRUNC to `zxid` that cut a log to `kept` (`cut`) while the leader sends
    `sent` after it: none when nothing past `zxid` stayed, or only what the leader sends too (an
    outstanding proposal of its own, which it forwards again); otherwise the failure
    `truncate-keeps` (a window, as D18's: the state the TRUNC finding names as its cause,
    reports/bugs/trunc-keeps-uncommitted.md)."""
    theirs = set(sent)
    past = [t[0] for t in kept if t[0] > zxid and t not in theirs]
    if not past:
        return ()
    from zabmc.core.model import FAILED

    z = past[0]
    how = ("FileTxnLog.truncate cuts after the first transaction at or past the zxid" if z > base
           else f"its snapshot at {base[0]}.{base[1]} holds it, and truncateLog cuts the log "
           "files only")
    what = (f"node {node_id} is told to TRUNC to {zxid[0]}.{zxid[1]}, which its log lacks, and "
            f"keeps {z[0]}.{z[1]} past it, which its leader does not send: {how} "
            "(TRUNC-KEEPS-UNCOMMITTED, reports/bugs/trunc-keeps-uncommitted.md; no JIRA issue "
            "describes it)")
    return ((FAILED, "truncate-keeps", what),)


def extend_node(name: str, module: str, doc: str, base=Node, **extra):
    """A node type of a finer grain: `base`'s fields (`Node`'s or a finer type's) in its order
    with their defaults, then `extra` (field name -> default), in the order given. A node of it
    is a `base` with more fields: the coarser kernels' `_replace` calls keep them, and the
    canonical encoding is the same bytes for the same values."""
    fields = base._fields + tuple(extra)
    defaults = tuple(base._field_defaults[f] for f in base._fields[1:]) + tuple(extra.values())
    cls = namedtuple(name, fields, defaults=defaults, module=module)
    cls.__doc__ = doc
    return cls
