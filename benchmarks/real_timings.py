"""How long a real ensemble (zabmc.real, Debian's ZooKeeper 3.8.0) takes to do what the tests
and `zabmc real` wait for: launch to an elected leader (3 and 5 servers), a follower noticing a
cut link to its leader, a leader noticing it lost its quorum, and an old leader rejoining after
kill -9. Times are wall seconds from the action to the log line showing its effect, with the
Ensemble's defaults (tickTime 200 ms, initLimit 10, syncLimit 5).

    python benchmarks/real_timings.py [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

from zabmc.real.ensemble import Ensemble


def _timed(fn):
    t = time.monotonic()
    v = fn()
    return v, time.monotonic() - t


def one_run(n: int) -> dict:
    out = {}
    t0 = time.monotonic()
    with Ensemble(n) as ens:
        ens.start_all()
        out["launch to all in election"] = time.monotonic() - t0
        leader = ens.wait_leader(timeout=60)
        out["launch to leader in broadcast"] = time.monotonic() - t0
        ens.wait_settled(timeout=60)
        out["launch to all in broadcast"] = time.monotonic() - t0
        f = next(i for i in ens.ids if i != leader)
        mark = ens.log_mark(f)
        ens.cut(f, leader)
        _, out["follower notices a cut link (leaves following)"] = _timed(
            lambda: ens.wait_log(f, "Peer state changed: looking", since=mark, timeout=60))
        ens.heal(f, leader)
        _, out["healed follower back in broadcast"] = _timed(
            lambda: ens.wait_role(f, "following - broadcast", timeout=60))
        ens.wait_settled(timeout=60)
        mark = ens.log_mark(leader)
        ens.isolate(leader)
        _, out["leader notices a lost quorum (leaves leading)"] = _timed(
            lambda: ens.wait_log(leader, "Peer state changed: looking", since=mark, timeout=60))
        others = [i for i in ens.ids if i != leader]
        ens.wait_leader(among=others, timeout=60)
        ens.heal_all()
        ens.wait_settled(timeout=60)
        leader = ens.wait_leader(timeout=60)
        ens.kill(leader)
        others = [i for i in ens.ids if i != leader]
        _, out["kill -9 of the leader to a new leader"] = _timed(
            lambda: ens.wait_leader(among=others, timeout=60))
        _, out["restart of the old leader to following - broadcast"] = _timed(
            lambda: (ens.start(leader), ens.wait_role(leader, "following - broadcast", timeout=60)))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    for n in (3, 5):
        runs = [one_run(n) for _ in range(args.runs)]
        print(f"{n} servers, {args.runs} runs (median, min-max seconds):")
        for key in runs[0]:
            xs = [r[key] for r in runs]
            print(f"  {key:55s} {statistics.median(xs):6.2f}  ({min(xs):.2f}-{max(xs):.2f})")


if __name__ == "__main__":
    main()
