"""Build four counterexamples of the release model zk-3.8.0 (with its storage grain: SNAP, DIFF
or TRUNC chosen from the committed log, models/zk/README.md S11-S14) that `zabmc real` runs on
Debian's 3.8.0, step by step through the model (`do` checks each event is the one enabled that
matches, so the file is what the model does).

Each was, when it was built, the shortest run we found that a real ensemble could be driven
through, where the search's own counterexample of its property stopped as not realised. Since
commit 5bc82fe `zabmc real` holds what a trace keeps in flight (an ACKEPOCH: the `ackepoch`
hook; a PROPOSAL: `proposal-read`, docs/real-zookeeper.md), and the search's own runs of 4685,
2354 and 4394 are realised on Debian's 3.8.0 as found (tests/corpus/zk/*-zk-3.8.0-search,
tests/test_real_run.py); the three built runs below are kept as the second runs of each bug
they were, and what their text says about the search's runs is the history of that finding:

- `zookeeper-4685-zk-3.8.0` (26 events). `zabmc check --model zk-3.8.0 --nodes 3 --proposals 2
  --max-timeouts 1 --depth 30 --invariant leader-unexpected-ack` finds 25 events, in which the
  follower's SyncThread writes 1.1 after the leader's timeout and before the follower notices
  its leader gone. On real servers the leader's timeout is the follower's own doing: the held
  SyncThread leaves 1.1 unacknowledged, `LearnerHandler.ping`'s `syncLimitCheck` closes the
  follower's connection ("Closing connection to peer due to transaction timeout"), and the
  follower's read fails at once, before zabmc lets its SyncThread go: its data tree stays at 0
  (`fastForwardDataBase` finds an empty log) and the next leader sends it a snapshot. Here 1.1
  is committed first, so that it is on the follower's disk before its leader goes; 1.2 is held
  in the SyncThread the shutdown leaves running (ZOOKEEPER-4712) and the follower's data tree
  is at 1.1, inside the leader's committed log 1.1-1.2: DIFF 1.2, which its next SyncThread
  writes and acknowledges before NEWLEADER's ACK (`leader-unexpected-ack`, event 26).
- `zookeeper-2354-zk-3.8.0` (22 events). The search (`--nodes 3 --proposals 1 --max-crashes 1
  --depth 40 --invariant load-exception`) finds 21, in which node 1's ACKEPOCH waits in flight
  until the leader has committed 1.1; a real leader reads it at once and synchronises the
  follower before. Here node 1 joins the established leader (its links healed, `join`): the
  leader sends it a snapshot at 1.1 (its zxid 0 is below the committed log), which it writes at
  NEWLEADER, and it is killed before `setCurrentEpoch` (the `set-epoch` hook): its restart
  throws "The current epoch, 0, is older than the last zxid, 4294967297" (K4, event 22).
- `zookeeper-4394-zk-3.8.0` (22 events). The search (`--nodes 3 --proposals 1 --depth 100
  --invariant sync-exception`) finds 20, with the same in-flight ACKEPOCH. Here node 1 joins
  while 1.1 is outstanding: the leader, established (its data tree at 1.0, S14), sends a
  snapshot at 1.0, the outstanding PROPOSAL 1.1 (`startForwarding`) and NEWLEADER, at which
  3.8.0 empties packetsNotCommitted; node 0 then acknowledges 1.1, node 1 writes NEWLEADER's ACK
  (a step of its own, so that the `newleader-ack` hook lets the QuorumPeer thread go after the
  COMMIT was sent: held to the end, it would never read it), and the COMMIT reaches node 1
  before UPTODATE: a NullPointerException in `Learner.syncWithLeader` (event 22).

- `zookeeper-4646-acked-zk-3.8.0` (57 events): the 4646 loss `zookeeper-4646-acked` (`zk`)
  shows, lifted into zk-3.8.0 (`lift_4646_acked`). The search finds the window (`ack-before-disk`,
  23 events, two nodes) in a run whose crash drops a PROPOSAL the real leader has already sent;
  this one is realised, the acknowledged write /zab-1 lost on the servers.

- `zookeeper-5094-zk-3.8.0` (75 events): ZOOKEEPER-5094 (an interrupted TRUNC keeps memory
  ahead of the log; unfixed, PR #2459 proposed), built because no search reaches it. The window
  search (`--nodes 3 --proposals 1 --max-timeouts 1 --depth 34 --invariant ack-from-memory`)
  finds 4712's window at 31 events (a leaked SyncThread's queue, not a TRUNC's memory), and a
  TRUNC that carries a committed transaction needs two epochs' proposals and three timeouts.
  `zookeeper-5094` (`zk-3.9.2-shutdown`, build_5094.py) does not lift into zk-3.8.0: its
  follower at 1.1 joins a leader whose committed log is 2.1, which a real leader (and the
  storage grain) sends a SNAP, not a TRUNC (release-3.8.0-1 LearnerHandler.syncFollower: 1.1 is
  below minCommittedLog and not in the on-disk log; a TRUNC never crosses an epoch,
  `queueCommittedProposals`). Here the TRUNC is the one 3.8.0 sends: in epoch 1 node 2 leads
  node 1, commits 1.1 and writes 1.2 alone (node 1 has timed out); node 1 leads node 0 in
  epoch 2 (a SNAP at 1.1 for node 0, at zxid 0) and proposes 2.1, which node 0's SyncThread
  holds; node 2 joins with 1.2, beyond the leader's maxCommittedLog 1.1 (its committed log
  holds no 2.x yet): TRUNC to 1.1, then `startForwarding`'s PROPOSAL 2.1. Node 0 acknowledges
  2.1 before the leader queues node 2's NEWLEADER (the forwarding grain's `newleader`, F9), so
  2.1's COMMIT reaches node 2 before it, and node 2 applies it in memory (`Learner.syncWithLeader`
  under TRUNC: `writeToTxnLog` false). Node 2 times out before NEWLEADER and keeps 2.1
  (`Learner.shutdown`: `zk.shutdown(syncMode == SNAP)`, shutdown(false) for TRUNC); its next
  ACKEPOCH names 2.1, the DIFF is empty, and it acknowledges NEWLEADER with 2.1 on no disk of its
  own (`ack-from-memory`, event 51). It writes 2.2 after the gap, crashes, restarts with 1.1 and
  2.2 on disk, and at UPTODATE delivers 2.2 as epoch 2's first (`local-primary-order`, event 75).

Run: python tests/corpus/zk/build_380_snap.py [NAME ...] (each NAME one of the five; all
without one) writes tests/corpus/zk/NAME.trace.json.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[2]))

from build_4646_acked import INVARIANTS, Builder, write_trace  # noqa: E402

MODEL = "zk-3.8.0"
CONFIG = {"nodes": 3, "network": "fifo", "max_drops": 0, "max_timeouts": 0,
          "max_heartbeats": 0, "proposals": 1, "depth": 40, "max_crashes": 0}
DISCOVERY = ("FOLLOWERINFO", "LEADERINFO", "ACKEPOCH", "SYNC")


def _sync(b: Builder, leader: int, f: int) -> None:
    for typ in DISCOVERY:
        src, dst = (f, leader) if typ in ("FOLLOWERINFO", "ACKEPOCH") else (leader, f)
        b.do(kind="deliver", src=src, dst=dst, msg=typ)


def _epoch(b: Builder, leader: int, f: int, mask: int) -> None:
    """`leader` elected with `mask`, then follower `f` through discovery to NEWLEADER."""
    b.do(kind="action", action=["elect", leader, mask])
    _sync(b, leader, f)
    b.do(kind="deliver", src=leader, dst=f, msg="NEWLEADER")


def _established(b: Builder, leader: int, f: int, mask: int) -> None:
    _epoch(b, leader, f, mask)
    b.do(kind="action", action=["ack-newleader", f])
    b.do(kind="deliver", src=f, dst=leader, msg="ACK-NEWLEADER")
    b.do(kind="deliver", src=leader, dst=f, msg="UPTODATE")


def build_4685() -> Builder:
    b = Builder(MODEL, dict(CONFIG, max_timeouts=1, proposals=2, depth=30),
                INVARIANTS + ["leader-unexpected-ack"])
    _established(b, 1, 0, 0b011)  # epoch 1: node 1 leads node 0; node 2 stays apart
    b.do(kind="propose", node=1)  # 1.1, committed by node 0's ACK
    b.do(kind="deliver", src=1, dst=0, msg="PROPOSAL")
    b.do(kind="action", action=["log", 0])
    b.do(kind="deliver", src=0, dst=1, msg="ACK")
    b.do(kind="propose", node=1)  # 1.2: node 0 queues it, and never acknowledges it
    b.do(kind="deliver", src=1, dst=0, msg="COMMIT")
    b.do(kind="deliver", src=1, dst=0, msg="PROPOSAL")
    b.do(kind="timeout", node=1)
    b.do(kind="action", action=["lost", 0, 1])  # node 0's SyncThread with 1.2 keeps running
    _epoch(b, 1, 0, 0b011)  # epoch 2: DIFF 1.2 from the committed log 1.1-1.2
    b.do(kind="action", action=["log", 0])  # the new SyncThread writes 1.2 and acknowledges it
    b.do(kind="deliver", src=0, dst=1, msg="ACK")
    return b


def build_2354() -> Builder:
    b = Builder(MODEL, dict(CONFIG, max_crashes=1), INVARIANTS + ["load-exception"])
    _established(b, 2, 0, 0b101)  # epoch 1: node 2 leads node 0; node 1 is cut off
    b.do(kind="propose", node=2)  # 1.1, committed
    b.do(kind="deliver", src=2, dst=0, msg="PROPOSAL")
    b.do(kind="action", action=["log", 0])
    b.do(kind="deliver", src=0, dst=2, msg="ACK")
    b.do(kind="action", action=["join", 1, 2])  # node 1 at zxid 0: a snapshot at 1.1
    _sync(b, 2, 1)
    b.do(kind="action", action=["newleader", 2, 1])
    b.do(kind="deliver", src=2, dst=1, msg="NEWLEADER")  # the snapshot written; epoch owed
    b.do(kind="crash", node=1)
    b.do(kind="restart", node=1)
    return b


def build_4394() -> Builder:
    b = Builder(MODEL, CONFIG, INVARIANTS + ["sync-exception"])
    _established(b, 2, 0, 0b101)
    b.do(kind="propose", node=2)  # 1.1, outstanding
    b.do(kind="deliver", src=2, dst=0, msg="PROPOSAL")
    b.do(kind="action", action=["join", 1, 2])  # a snapshot at 1.0, then PROPOSAL 1.1
    _sync(b, 2, 1)
    b.do(kind="action", action=["newleader", 2, 1])
    b.do(kind="deliver", src=2, dst=1, msg="NEWLEADER")  # packetsNotCommitted emptied
    b.do(kind="action", action=["log", 0])
    b.do(kind="deliver", src=0, dst=2, msg="ACK")  # 1.1 committed
    # node 1's QuorumPeer thread writes NEWLEADER's ACK (the `newleader-ack` hook lets it go
    # here, after the COMMIT was sent), then reads the COMMIT with nothing pending: the NPE
    b.do(kind="action", action=["ack-newleader", 1])
    b.do(kind="deliver", src=2, dst=1, msg="COMMIT")
    return b


def _owed_epoch(b: Builder, f: int) -> None:
    """After a SNAP's NEWLEADER, currentEpoch is a step of its own (`epoch f`, K1)."""
    if any(ev.to_json(b.env.model).get("action") == ["epoch", f]
           for ev, _, _ in b.env.successors(b.s)):
        b.do(kind="action", action=["epoch", f])


def _rejoin(b: Builder, leader: int, f: int) -> None:
    """`f` joins the established `leader` and is synchronised to the end."""
    b.do(kind="action", action=["join", f, leader])
    _sync(b, leader, f)
    b.do(kind="action", action=["newleader", leader, f])
    b.do(kind="deliver", src=leader, dst=f, msg="NEWLEADER")
    b.do(kind="action", action=["ack-newleader", f])
    b.do(kind="deliver", src=f, dst=leader, msg="ACK-NEWLEADER")
    b.do(kind="deliver", src=leader, dst=f, msg="UPTODATE")


def build_5094() -> Builder:
    b = Builder(MODEL, dict(CONFIG, max_timeouts=3, max_crashes=1, proposals=4, depth=80),
                INVARIANTS + ["ack-from-memory"])
    _established(b, 2, 1, 0b110)  # epoch 1: node 2 leads node 1; node 0 stays apart
    b.do(kind="propose", node=2)  # 1.1, committed by node 1
    b.do(kind="deliver", src=2, dst=1, msg="PROPOSAL")
    b.do(kind="action", action=["log", 1])
    b.do(kind="deliver", src=1, dst=2, msg="ACK")
    b.do(kind="deliver", src=2, dst=1, msg="COMMIT")
    b.do(kind="timeout", node=1)
    b.do(kind="propose", node=2)  # 1.2: node 2's own log only
    b.do(kind="deliver", src=2, dst=1, msg="PROPOSAL")  # on a closed connection: ignored
    b.do(kind="timeout", node=2)
    b.do(kind="action", action=["elect", 1, 0b011])  # epoch 2: node 1 (1.1) leads node 0 (0)
    _sync(b, 1, 0)  # a SNAP at 1.1
    b.do(kind="deliver", src=1, dst=0, msg="NEWLEADER")
    _owed_epoch(b, 0)
    b.do(kind="action", action=["ack-newleader", 0])
    b.do(kind="deliver", src=0, dst=1, msg="ACK-NEWLEADER")
    b.do(kind="deliver", src=1, dst=0, msg="UPTODATE")
    b.do(kind="propose", node=1)  # 2.1: node 0's SyncThread holds it
    b.do(kind="deliver", src=1, dst=0, msg="PROPOSAL")
    b.do(kind="action", action=["join", 2, 1])  # node 2 at 1.2: TRUNC to 1.1, PROPOSAL 2.1
    for typ in ("FOLLOWERINFO", "LEADERINFO", "ACKEPOCH"):
        src, dst = (2, 1) if typ != "LEADERINFO" else (1, 2)
        b.do(kind="deliver", src=src, dst=dst, msg=typ)
    b.do(kind="action", action=["log", 0])
    b.do(kind="deliver", src=0, dst=1, msg="ACK")  # 2.1 committed: its COMMIT to nodes 0 and 2
    b.do(kind="action", action=["newleader", 1, 2])  # node 2's NEWLEADER after that COMMIT
    b.do(kind="deliver", src=1, dst=2, msg="SYNC")
    b.do(kind="deliver", src=1, dst=2, msg="COMMIT")  # 2.1 applied in memory
    b.do(kind="timeout", node=2)  # before NEWLEADER: shutdown(false) keeps 2.1
    b.do(kind="action", action=["lost", 1, 2])
    b.do(kind="deliver", src=1, dst=0, msg="COMMIT")
    b.do(kind="deliver", src=1, dst=2, msg="NEWLEADER")  # on the closed connection: ignored
    _rejoin(b, 1, 2)  # ACKEPOCH names 2.1 from memory: an empty DIFF; ack-from-memory
    b.do(kind="propose", node=1)  # 2.2, written by node 2 after the gap
    b.do(kind="deliver", src=1, dst=2, msg="PROPOSAL")
    b.do(kind="deliver", src=1, dst=0, msg="PROPOSAL")
    b.do(kind="action", action=["log", 2])
    b.do(kind="deliver", src=2, dst=1, msg="ACK")
    b.do(kind="deliver", src=1, dst=2, msg="COMMIT")
    b.do(kind="deliver", src=1, dst=0, msg="COMMIT")
    b.do(kind="action", action=["log", 0])
    b.do(kind="deliver", src=0, dst=1, msg="ACK")
    b.do(kind="crash", node=2)
    b.do(kind="action", action=["lost", 1, 2])
    b.do(kind="restart", node=2)  # it loads 1.1 and 2.2
    _rejoin(b, 1, 2)  # names 2.2: an empty DIFF; at UPTODATE it delivers 2.2 without 2.1
    return b


def lift_4646_acked() -> Builder:
    """zookeeper-4646-acked (`zk`, 53 events, realised on 3.8.0) as a run of zk-3.8.0 (whose rules
    are 3.7.0's, `zk`'s release model): each owed step of a layer `zk` lacks taken as soon as it
    is enabled, as tests/test_zk_releases.py lifts it; its follower's last zxid is inside the
    leader's committed log, so every SYNC is the one `zk` sends but for a DIFF's zxid (the
    leader's maxCommittedLog, S6)."""
    from zabmc.core import events as E
    from zabmc.core.trace import read

    from models.zk import releases

    tf = read(str(HERE / "zookeeper-4646-acked.trace.json"))
    owed = set(releases.LAYER_ACTIONS)
    b = Builder(MODEL, dict(tf.config, depth=10 * len(tf.events) + 50), list(tf.invariants))

    def take(ev, nxt, v):
        b.events.append(ev)
        b.states.append(nxt)
        b.s = nxt
        if b.first is None and v is not None:
            b.first, b.first_step = v, len(b.events)

    for want in tf.events:
        while True:
            x = next((x for x in b.env.successors(b.s) if x[0].kind == "action"
                      and x[0].to_json(b.env.model)["action"][0] in owed), None)
            if x is None:
                break
            take(*x)
        x = E.from_json(b.env, b.s, want) or next(
            x for x in b.env.successors(b.s) if want["msg"]["type"] == "SYNC"
            and x[0].to_json(b.env.model).get("msg", {}).get("type") == "SYNC"
            and (x[0].to_json(b.env.model)["src"], x[0].to_json(b.env.model)["dst"])
            == (want["src"], want["dst"]))
        take(*x)
    return b


SEARCHES = {
    "zookeeper-4646-acked-zk-3.8.0": "zabmc check --model zk-3.8.0 --nodes 2 --proposals 2 "
                                     "--max-timeouts 1 --max-crashes 1 --depth 100 --invariant "
                                     "ack-before-disk (23 events: its window, no loss)",
    "zookeeper-4685-zk-3.8.0": "zabmc check --model zk-3.8.0 --nodes 3 --proposals 2 "
                               "--max-timeouts 1 --depth 30 --invariant leader-unexpected-ack "
                               "(25 events)",
    "zookeeper-2354-zk-3.8.0": "zabmc check --model zk-3.8.0 --nodes 3 --proposals 1 "
                               "--max-crashes 1 --depth 40 --invariant load-exception (21 events)",
    "zookeeper-4394-zk-3.8.0": "zabmc check --model zk-3.8.0 --nodes 3 --proposals 1 --depth 100 "
                               "--invariant sync-exception (20 events)",
    "zookeeper-5094-zk-3.8.0": None,
}
#: the search's own runs, realised since zabmc real holds what a trace keeps in flight
SEARCH_FILES = {n: f"{n}-search.trace.json" for n in (
    "zookeeper-4685-zk-3.8.0", "zookeeper-2354-zk-3.8.0", "zookeeper-4394-zk-3.8.0")}
BUILDS = {"zookeeper-4646-acked-zk-3.8.0": lift_4646_acked,
          "zookeeper-4685-zk-3.8.0": build_4685, "zookeeper-2354-zk-3.8.0": build_2354,
          "zookeeper-4394-zk-3.8.0": build_4394, "zookeeper-5094-zk-3.8.0": build_5094}


def write(name: str, path: str | None = None) -> str:
    if SEARCHES[name] is None:  # no search reaches it (the builder's docstring says why)
        origin = (f"written by hand through the model (zk-3.8.0, issue #63 item 4): "
                  f"python tests/corpus/zk/build_380_snap.py {name}; no search reaches "
                  "it: the builder's docstring says why")
    elif name in SEARCH_FILES:  # the search's own run is realised now (docstring)
        origin = (f"written by hand through the model (zk-3.8.0 at commit 2be0c19, "
                  f"issue #62 items 1 and 5): python tests/corpus/zk/build_380_snap.py "
                  f"{name}; the search's own run, `{SEARCHES[name]}`, was not realised on "
                  f"3.8.0 then, and is since 5bc82fe: tests/corpus/zk/{SEARCH_FILES[name]}")
    else:
        origin = (f"written by hand through the model (zk-3.8.0 at commit 2be0c19, "
                  f"issue #62 items 1 and 5): python tests/corpus/zk/build_380_snap.py "
                  f"{name}; the search's own run, `{SEARCHES[name]}`, is not one real "
                  "servers can be driven through (the builder's docstring says why)")
    return write_trace(BUILDS[name]().trace(), origin, path or str(HERE / f"{name}.trace.json"))


if __name__ == "__main__":
    for n in sys.argv[1:] or sorted(BUILDS):
        write(n)
