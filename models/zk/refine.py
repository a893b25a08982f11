"""Refine a counterexample of the `zk` variants, whose election is one action (D1), into the same
run at Fast Leader Election's grain (`zk-fle`, `zk-fixed-fle`).

Each `elect L Q` and `join i L` of the coarse trace becomes the shortest run of election events
(NOTIFICATION deliveries, `decide` and `connect`) after which the same nodes lead and follow, with
the followers' FOLLOWERINFO sent; every other event is taken as it is (same kind, nodes and message
type), after the shortest run of election events that enables it (a notification still in flight
may stand before it on its FIFO link). A coarse counterexample that refines this way is one that
the election as ZooKeeper runs it can produce: the outcome grain added no behaviour to it.
"""

from __future__ import annotations

from collections import deque

from .state import F_DISCOVERY, FOLLOWING, L_INFO, LEADING, LOOKING


def shape(d: dict) -> tuple:
    """What identifies an event across models: its kind, nodes and message type."""
    if d["kind"] == "action":
        return ("action", tuple(d["action"]))
    if d["kind"] in ("deliver", "drop"):
        return (d["kind"], d["src"], d["dst"], d["msg"]["type"])
    return (d["kind"], d.get("node"))


def _is_election(d: dict) -> bool:
    if d["kind"] == "deliver":
        return d["msg"]["type"] == "NOTIFICATION"
    return d["kind"] == "action" and d["action"][0] in ("decide", "connect")


def _elected(label: tuple, coarse_nodes):
    """The goal for a coarse `elect`/`join`: which nodes must lead and follow whom."""
    if label[0] == "elect":
        _, leader, qm = label
        members = [i for i in range(len(coarse_nodes)) if qm >> i & 1]
        others = [i for i in range(len(coarse_nodes)) if not qm >> i & 1]
    else:
        _, i, leader = label
        members, others = [i], []

    def goal(s) -> bool:
        nodes = s.nodes
        for i in members:
            x = nodes[i]
            if i == leader:
                if x.role != LEADING or x.phase != L_INFO:
                    return False
            elif x.role != FOLLOWING or x.leader != leader or x.phase != F_DISCOVERY:
                return False
        return all(nodes[k].role == coarse_nodes[k].role for k in others
                   if coarse_nodes[k].role == LOOKING)

    return goal


def _search(env, s, goal, limit: int):
    """The shortest run of election events from `s` to a state where `goal` holds."""
    q = deque([(s, ())])
    seen = {env.fingerprint(s)}
    while q:
        cur, path = q.popleft()
        hit = goal(cur)
        if hit:
            return cur, path, hit
        if len(path) >= limit:
            continue
        for ev, s2, v in env.successors(cur):
            if not _is_election(ev.to_json(env.model)):
                continue
            f = env.fingerprint(s2)
            if f not in seen:
                seen.add(f)
                q.append((s2, path + ((ev, s2, v),)))
    return None


def refine(coarse_env, coarse_events: list, fine_env, limit: int = 14):
    """The events of `coarse_events` (JSON, as a trace stores them) refined for `fine_env`:
    (events, states, violations by step); None if some step cannot be matched within `limit`
    election events."""
    cs, _ = coarse_env.initial()
    s, _ = fine_env.initial()
    events, states, found = [], [s], []

    def take(steps):
        for ev, s2, v in steps:
            events.append(ev)
            states.append(s2)
            if v is not None:
                found.append((len(events), v))

    for d in coarse_events:
        want = shape(d)
        nxt = [x for x in coarse_env.successors(cs) if shape(x[0].to_json(coarse_env.model)) == want]
        if not nxt:
            return None
        coarse_next = nxt[0][1]
        if want[0] == "action" and want[1][0] in ("elect", "join"):
            r = _search(fine_env, s, _elected(want[1], cs.nodes), limit)
            if r is None:
                return None
            s, path, _ = r
            take(path)
        else:
            def enabled(st, want=want):
                for x in fine_env.successors(st):
                    if shape(x[0].to_json(fine_env.model)) == want:
                        return x
                return None
            r = _search(fine_env, s, enabled, limit)
            if r is None:
                return None
            _, path, step = r
            take(path + (step,))
            s = step[1]
        cs = coarse_next
    return events, states, found
