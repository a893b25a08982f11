"""The zk models' scenarios: named states to search from (`zabmc check --model zk --scenario
NAME`, `zabmc models --scenarios`), each a trace file in this directory, one per model (a trace
is a run of one model), made by the command its `origin` names.

- `remix-epoch1`: the state from which Remix (Ouyang et al., EuroSys 2025) starts its TLC search
  of ZooKeeper's ZAB: epoch 1 established, 1.1 committed, 1.2 in flight
  (tests/corpus/zk/build_remix_epoch1.py). `zk-3.8.0-mspec2` (models/zk/mspec2.py, Remix's MSPEC_2
  grain, registered by benchmarks/remix_grain.py only) has it too, with its followers' second
  NEWLEADER steps among the events, for the search of ZOOKEEPER-4643 from Remix's start
  (benchmarks/remix_targets.py).

  Every release model (and every release with a patch) has it as a goal instead: the same state
  described as a predicate (`epoch1_in_flight`), which that model's own breadth-first search
  reaches from the initial state (two proposals, no fault), so a search from it is a search from
  the initial state in two stages, each model by its own runs.
- `epoch1-cut-off` (a goal of every release model): epoch 1 established by node 2, 1.1 applied
  by all three, 1.2 committed by nodes 2 and 1, node 0 looking and cut off from 1.2
  (`epoch1_cut_off`), reached by the model's own search from the initial state (two
  proposals, one timeout): where the search's own ZOOKEEPER-4643 loss starts
  (tests/corpus/zk/zookeeper-4643-zk-3.8.0-loss.trace.json).
- `deposed-leader` (every release model and release with a patch, a goal only: `deposed_leader`):
  ZOOKEEPER-5094's start, the state after the first 18 events of
  tests/corpus/zk/zookeeper-5094-zk-3.8.0.trace.json (tests/corpus/zk/build_380_snap.py): epoch
  1's leader deposed with 1.2 on its disk alone, every node looking. Each release model reaches it
  in 17 or 18 events within two proposals and two timeouts; the release matrix's row
  "ZOOKEEPER-5094 from a deposed leader" (benchmarks/release_matrix.py) searches from it.
- `deposed-leader-synced` (every release model and release with a patch, a goal only:
  `deposed_leader_synced`): ZOOKEEPER-4925's start before 3.9.3, the state after the first 32
  events of tests/corpus/zk/zookeeper-4925-zk-3.9.3.trace.json
  (tests/corpus/zk/build_4925_release.py): all three in epoch 1 with 1.1 on disk and applied,
  epoch 1's leader deposed with 1.2 on its disk alone, every node looking. zk-3.8.0 reaches it
  in 30 events within two proposals and one timeout (2,020,635 states, about 2 CPU minutes);
  the search's own 4925 loss on zk-3.8.0 from the initial state starts there
  (tests/corpus/zk/zookeeper-4925-zk-3.8.0-loss-search.trace.json), and the release matrix's
  row "ZOOKEEPER-4925 through a TRUNC" searches from it.
"""

from __future__ import annotations

import os

from zabmc.core.events import DOWN
from zabmc.core.model import Scenario

from ..state import ELECTION, F_BROADCAST, LOOKING, PROPOSAL, log_of

HERE = os.path.dirname(os.path.abspath(__file__))

REMIX_EPOCH1 = ("epoch 1 established (node 2 leads 0 and 1), 1.1 committed by all three, 1.2 "
                "proposed and in flight to both followers: where Remix (EuroSys 2025) starts its "
                "TLC search")
#: model name -> its scenarios
SCENARIOS = {
    model: (Scenario("remix-epoch1", REMIX_EPOCH1,
                     os.path.join(HERE, f"{model}.remix-epoch1.trace.json")),)
    for model in ("zk", "zk-fixed", "zk-3.8.0-mspec2")
}



def _links(env, s, src: int, dst: int) -> list:
    """The messages in flight from `src` to `dst` (fifo: the link's queue; bag: its copies)."""
    if env.fifo:
        return list(s.net[src * env.n + dst])
    return [m for (a, b, m), count in s.net if (a, b) == (src, dst) for _ in range(count)]


def epoch1_in_flight(env, s) -> bool:
    """Remix's start as a predicate on a cluster of three: no node down; one leader of epoch 1,
    established (`Leader.waitForNewLeaderAck` done), both others following it in broadcast; every
    node has applied 1.1; the leader's history ends with 1.2 and a PROPOSAL of 1.2 is in flight
    to each follower (so neither has it)."""
    if env.n != 3 or s.budgets[DOWN]:
        return False
    model, nodes = env.model, s.nodes
    for L, x in enumerate(nodes):
        if not model.established(x) or x.current_epoch != 1 or not x.history \
                or x.history[-1][0] != (1, 2):
            continue
        others = [y for y in nodes if y.id != L]
        return all(model.leader_of(y) == L and y.phase == F_BROADCAST for y in others) \
            and all(y.last_committed == (1, 1) for y in nodes) \
            and all(any(m[0] == PROPOSAL and m[2][0] == (1, 2) for m in _links(env, s, L, y.id))
                    for y in others)
    return False


def _bounds(proposals: int, timeouts: int, depth: int) -> dict:
    """A goal's reaching search: `proposals` and `timeouts`, no other fault, up to `depth`."""
    return {"proposals": proposals, "max_timeouts": timeouts, "max_crashes": 0, "max_drops": 0,
            "max_heartbeats": 0, "depth": depth}


REMIX_GOAL = ("epoch 1 established (a leader followed by both others in broadcast), 1.1 applied "
              "by all three, 1.2 proposed and in flight to both followers: where Remix (EuroSys "
              "2025) starts its TLC search")
#: the bounds within which a release model's own search reaches it (two proposals, no fault)
REMIX_BOUNDS = _bounds(2, 0, 40)


def epoch1_cut_off(env, s) -> bool:
    """ZOOKEEPER-4643's start as a predicate on a cluster of three, with the node ids of Remix's
    start and of the built run zookeeper-4646-acked-zk-3.8.0 (its step 32): no node down; node 2
    leads epoch 1, established, and has applied 1.2 (so 1.2 is committed), the last of its
    history; node 1 follows it in broadcast, has applied 1.1 and has 1.2 on disk; node 0 is
    looking, has applied 1.1 and holds no 1.2 (not in its log, on disk or in memory, nor in the
    queue of a SyncThread its follower's shutdown left running: ZOOKEEPER-4712), and nothing is
    in flight between it and node 2 (cut off from 1.2). A loss through 4643 alone starts here:
    1.2 is committed before the epoch in whose NEWLEADER node 0 writes currentEpoch without it.

    The ids matter to the later stages, not to the goal: where two runs of a stage are equally
    short, a search takes the one whose first differing event comes first in the explorer's
    order (a crash of node 0 before one of node 1); with node 0 cut off, the loss stage crashes
    the follower in 4643's window, as the issue describes, rather than its leader (the same
    length: the follower then loses 1.2 because the SyncThread its shutdown leaves running has
    not written it, ZOOKEEPER-4712's ground)."""
    if env.n != 3 or s.budgets[DOWN]:
        return False
    model, (t, f, x) = env.model, s.nodes
    return (model.established(x) and x.current_epoch == 1 and x.last_committed == (1, 2)
            and x.history[-1][0] == (1, 2)
            and model.leader_of(f) == 2 and f.phase == F_BROADCAST and f.last_committed >= (1, 1)
            and any(z[0] == (1, 2) for z in f.history)
            and t.role == LOOKING and t.last_committed == (1, 1)
            and all(z[0] != (1, 2) for z in _held(t))
            and not _links(env, s, 2, 0) and not _links(env, s, 0, 2))


def _held(node) -> tuple:
    """Every transaction `node` holds: its log and memory, and, in a model with the storage or
    shutdown layer, the file on disk and a leaked SyncThread's queue."""
    return log_of(node) + tuple(getattr(node, "disk", ())) + tuple(getattr(node, "leak", ()))


CUT_OFF_GOAL = ("epoch 1 established by node 2, 1.1 applied by all three, 1.2 committed by node "
                "2 and node 1, node 0 looking and cut off from 1.2: where a loss through "
                "ZOOKEEPER-4643 alone can start")
#: the bounds within which a release model's own search reaches it (two proposals, one timeout)
CUT_OFF_BOUNDS = _bounds(2, 1, 40)


def _zxids(txns: tuple) -> list:
    return [t[0] for t in txns]


def _quiet_and_looking(env, s) -> bool:
    """Three nodes, none down, nothing in flight, every one looking (role LOOKING, in election):
    the deposed leaders' goals share it."""
    return (env.n == 3 and not s.budgets[DOWN]
            and not any(_links(env, s, a, b) for a in range(3) for b in range(3) if a != b)
            and all(x.role == LOOKING and x.phase == ELECTION for x in s.nodes))


def deposed_leader(env, s) -> bool:
    """ZOOKEEPER-5094's start as a predicate on a cluster of three: no node down, nothing in
    flight, every node looking (role LOOKING, in election); one node, epoch 1's deposed leader,
    has currentEpoch 1, 1.1 and 1.2 on its disk and 1.1 as its last applied (1.2 proposed, on
    its disk alone, committed nowhere); another has currentEpoch 1, 1.1 alone on its disk and
    applied (it acknowledged 1.1, which is so committed by a quorum of two); the third has
    never joined an epoch (accepted and current epoch 0, an empty disk)."""
    if not _quiet_and_looking(env, s):
        return False
    nodes = s.nodes
    one, two = ((1, 1),), ((1, 1), (1, 2))
    kinds = sorted(
        (2 if _zxids(x.disk) == list(two) and x.current_epoch == 1 and x.last_committed == (1, 1)
         else 1 if _zxids(x.disk) == list(one) and x.current_epoch == 1
         and x.last_committed == (1, 1)
         else 0 if not x.disk and x.current_epoch == 0 and x.accepted_epoch == 0 else -1)
        for x in nodes)
    return kinds == [0, 1, 2]


DEPOSED_GOAL = ("epoch 1's leader deposed with 1.2 on its disk alone: 1.1 on its disk and one "
                "follower's, applied by both, 1.2 on the leader's disk only, the third node "
                "empty, every node looking, nothing in flight (ZOOKEEPER-5094's start: "
                "tests/corpus/zk/zookeeper-5094-zk-3.8.0.trace.json after 18 events)")
#: the bounds within which a release model's own search reaches it: two proposals, two timeouts
#: (the follower's, then the leader's), no other fault
DEPOSED_BOUNDS = _bounds(2, 2, 24)


def deposed_leader_synced(env, s) -> bool:
    """ZOOKEEPER-4925's start before 3.9.3, as a predicate on a cluster of three: the state after
    the first 32 events of tests/corpus/zk/zookeeper-4925-zk-3.9.3.trace.json
    (tests/corpus/zk/build_4925_release.py), where the search's own loss through a TRUNC on
    zk-3.8.0 begins (tests/corpus/zk/zookeeper-4925-zk-3.8.0-loss.trace.json). No node down,
    nothing in flight, every node looking (role LOOKING, in election); all three have accepted
    and current epoch 1 and have applied 1.1 (last applied 1.1), with no snapshot under their
    log (a model with the storage grain: `logbase` zero, so 1.1 is a record of each log, S16);
    two, epoch 1's followers, hold 1.1 alone (on disk, in memory, in a leaked SyncThread's
    queue); the third, epoch 1's deposed leader, has 1.1 and 1.2 on its disk and in its log
    (1.2 proposed, on its disk alone, committed nowhere). Where the model keeps a committed log
    (`clog`), each node's is the zxids on its disk."""
    if not _quiet_and_looking(env, s):
        return False
    if any(x.current_epoch != 1
           or x.accepted_epoch != 1 or x.last_committed != (1, 1)
           or getattr(x, "logbase", (0, 0)) != (0, 0) for x in s.nodes):
        return False
    one, two = [(1, 1)], [(1, 1), (1, 2)]
    kinds = sorted(_synced_kind(x, one, two) for x in s.nodes)
    return kinds == [1, 1, 2]


def _synced_kind(x, one: list, two: list) -> int:
    """2: a node with 1.1 and 1.2 on disk and in its log; 1: one that holds 1.1 alone; else -1
    (the committed log, where the model keeps one, the zxids on disk)."""
    disk = _zxids(x.disk)
    if getattr(x, "clog", None) not in (None, tuple(disk)):
        return -1
    if disk == two and _zxids(log_of(x)) == two:
        return 2
    return 1 if disk == one and _zxids(_held(x)) == [(1, 1)] * len(_held(x)) \
        and _zxids(log_of(x)) == one else -1


SYNCED_GOAL = ("epoch 1's leader deposed with 1.2 on its disk alone after both followers "
               "applied 1.1: all three with currentEpoch 1 and 1.1 on disk and applied, 1.2 on "
               "the leader's disk only, every node looking, nothing in flight (ZOOKEEPER-4925's "
               "start before 3.9.3: tests/corpus/zk/zookeeper-4925-zk-3.9.3.trace.json after 32 "
               "events)")
#: the bounds within which a release model's own search reaches it: two proposals, one timeout
#: (the leader's, after it proposed 1.2; its followers notice by `lost`), no other fault
SYNCED_BOUNDS = _bounds(2, 1, 30)
GOALS = (Scenario("remix-epoch1", REMIX_GOAL, None, epoch1_in_flight, REMIX_BOUNDS, 3),
         Scenario("epoch1-cut-off", CUT_OFF_GOAL, None, epoch1_cut_off, CUT_OFF_BOUNDS, 3),
         Scenario("deposed-leader", DEPOSED_GOAL, None, deposed_leader, DEPOSED_BOUNDS, 3),
         Scenario("deposed-leader-synced", SYNCED_GOAL, None, deposed_leader_synced,
                  SYNCED_BOUNDS, 3))


def attach(module) -> None:
    """Give each model of the adapter `module` that has scenarios its `scenarios` attribute: the
    trace scenarios above by name, the goals to every release model and release with a patch."""
    for value in vars(module).values():
        name = getattr(value, "name", None)
        if not isinstance(name, str) or not hasattr(value, "deliver"):
            continue
        if name in SCENARIOS:
            value.scenarios = SCENARIOS[name]
        elif getattr(value, "release", None) or getattr(value, "patched", None):
            value.scenarios = GOALS
