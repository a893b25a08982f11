#!/usr/bin/env python3
"""The gate's mutation score (`make mutate`): every single-point mutant of models/zab/handlers.py
(`zabmc mutate --model zab`) run against the CI gate, then against wider searches, and classified:

- caught by the gate: which run, which property, at which depth;
- caught only by a wider search: which search, which property, at which depth;
- surviving every search: "equivalent within bounds B", B being the union of the searches' bounds.

Results are cached per (mutant, search) in reports/data/mutants.json, keyed by the handler module's
SHA-256 and each search's flags, so an interrupted campaign resumes where it stopped and a changed
search or model reruns only what it changes. `--write` renders the score into
reports/verification.md (section "## Mutation score") from the cache.

    python benchmarks/mutation_report.py --jobs 2 --write     # everything (about 110 min on 2 cores)
    python benchmarks/mutation_report.py --only gate          # the gate's searches only
    python benchmarks/mutation_report.py --write --no-run     # re-render from the cache
    python benchmarks/mutation_report.py --probes-only        # probe what is not yet, run nothing

`--model zk-fixed` does the same for the ZooKeeper model's fixed variant (models/zk/handlers.py,
shared with `zk` and `zk-pre3911`) against its own gate (`zabmc.mutate.ZK_FIXED_GATE`) and wider
searches, cached in reports/data/mutants-zk-fixed.json and written to the section
"## Mutation score: zk-fixed":

    python benchmarks/mutation_report.py --model zk-fixed --jobs 2 --write
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import resource
import signal
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.common import commit, update_section  # noqa: E402
from zabmc.mutate import (GATES, WIDE, Escape, Probe, _exhaustive, mutants, reachable,  # noqa: E402
                          run_model, run_search)

GATE = GATES["zab"]  # zab's runs and the zab-omega run: the Makefile's gate of models/zab
CACHE = ROOT / "reports" / "data" / "mutants.json"
REPORT = ROOT / "reports" / "verification.md"
SECTION = "## Mutation score"
MODEL = "zab"
PROBES = "__probes__"  # results key of each search's weak-mutation probe
REACH = "__reach__"  # a survivor's record: exhaustive search -> whether it reaches only the
                     # original's states there

#: a wider search for the zk-fixed mutants its gate misses: random walks with another seed, more
#: faults (drops stall a connection: the explorer's partitions) and twice the walks
ZK_FIXED_WIDE = (
    "--model zk-fixed --network fifo --nodes 3 --proposals 2 --max-timeouts 2 --max-drops 2 "
    "--max-crashes 2 --depth 50 --strategy random --seed 7 --walks 20000",
)


def use(model: str) -> None:
    """Point the campaign at `model`: its gate and wider searches, its cache, its section and its
    reasons. `zab` is the default, and its cache and section are the ones they always were."""
    global MODEL, CACHE, SECTION, GATE, WIDE, REASONS
    if model not in CAMPAIGNS:
        raise SystemExit(f"mutation_report.py: error: no campaign for model {model!r} (there are: "
                         f"{', '.join(CAMPAIGNS)})")
    MODEL = model
    CACHE, SECTION, GATE, WIDE, REASONS = CAMPAIGNS[model]


def handlers_sha(model: str | None = None) -> str:
    from zabmc.mutate import _package, _source

    model = model or MODEL
    return hashlib.sha256(_source(_package(model))[1].encode()).hexdigest()


def load_cache(sha: str) -> dict:
    try:
        data = json.loads(CACHE.read_text())
    except (OSError, ValueError):
        return {}
    return data.get("results", {}) if data.get("handlers_sha256") == sha else {}


def save_cache(sha: str, results: dict) -> None:
    tmp = CACHE.with_suffix(".tmp")
    tmp.write_text(json.dumps({"model": MODEL, "handlers_sha256": sha, "results": results},
                              indent=1, sort_keys=True) + "\n")
    tmp.replace(CACHE)


#: a mutant's search stops after this many CPU seconds, or this many times the unmutated model's CPU
#: time on it, whichever is longer; a search that stops so "blows up" (not complete, not caught)
TIME_FLOOR, TIME_FACTOR = 60.0, 5.0
#: zk-fixed's: a minute a mutant that blows up on an exhaustive two-node run (its original takes
#: under a second) made that campaign's first stage alone take an hour; 20 s catch the same
TIME_POLICY = {"zk-fixed": (20.0, 3.0)}


class CpuLimit(KeyboardInterrupt):
    """A mutant's search used up its CPU seconds (SIGXCPU): the strategies stop as if interrupted,
    keeping their figures."""


def _cpu_limit(signum, frame):
    # once: the kernel repeats SIGXCPU every second past the limit, and a second one would land
    # wherever the first was handled
    signal.signal(signal.SIGXCPU, signal.SIG_IGN)
    raise CpuLimit


def _one(job):
    """One mutant's search, in a worker process of its own (the pool's `maxtasksperchild=1`), whose
    CPU time is limited by the kernel (RLIMIT_CPU): a wall-clock limit would count the time another
    process held the core, so a loaded machine would make mutants look as if they blow up."""
    index, search, limit = job
    m = mutants(MODEL)[index]
    t = time.process_time()
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    signal.signal(signal.SIGXCPU, _cpu_limit)
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (int(t + limit) + 1, hard))
        r = run_search(MODEL, m, search)
    except CpuLimit:  # raised where no strategy catches it (the liveness search)
        r = {"caught": False, "complete": False, "stop": "cpu-limit"}
    finally:
        signal.signal(signal.SIGXCPU, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_CPU, (hard, hard))
    if not r["caught"] and r.get("stop") == "interrupted":
        r = r | {"stop": "cpu-limit"}
    r["cpu"] = round(time.process_time() - t, 1)
    return m.name, search, r


def _caught_before(rec: dict, searches: list[str], stage: int) -> bool:
    """Whether a mutant's record has a catch by a search before `stage` (1-based): the searches
    from `stage` on have nothing to decide for it."""
    return any(rec.get(s, {}).get("caught") for s in searches[:stage - 1])


def _differs(probe: dict) -> set:
    """The mutants whose state graph may differ from the original's in a probed search: those
    whose handlers ever returned something else (firm mutation), or, for a probe that predates
    that, whose expression ever evaluated differently (weak mutation)."""
    return set(probe.get("propagated", probe.get("infected", ())))


def campaign(searches: list[str], jobs: int, log, probes_only: bool = False) -> dict:
    sha = handlers_sha()
    results = load_cache(sha)
    if set(searches) >= set(GATE) | set(WIDE):  # a full campaign: forget what is no longer run
        names = {m.name for m in mutants(MODEL)} | {PROBES}
        for name in [k for k in results if k not in names]:
            del results[name]
        for rec in results.values():
            for s in [s for s in rec if s not in searches and s != REACH]:
                del rec[s]
            if REACH in rec:
                rec[REACH] = {s: v for s, v in rec[REACH].items() if s in searches}
    probes = results.setdefault(PROBES, {})
    ms = mutants(MODEL)
    for m in ms:  # a fresh cache has no record yet: the first stage's test below reads them
        results.setdefault(m.name, {})
    # every search probed first: a mutant never infected in any is settled (the original's graph
    # everywhere) before the first mutant runs, so an interrupted campaign still classifies it
    for stage, search in enumerate(searches, 1):
        # the mutants this search decides for (not caught by an earlier one): to run, or to
        # classify if they survive
        live = any(not _caught_before(results[m.name], searches, stage) for m in ms)
        if live and "propagated" not in probes.get(search, {}):
            # one run of the unmutated model with every mutant probed: who is ever infected, and
            # whose handlers ever return something else (a probe of an older campaign knew only
            # the first; it is run again, for the survivors' classes if nothing else)
            t = time.process_time()
            r = run_search(MODEL, None, search)  # the original alone: what a mutant's time is to
            original = round(time.process_time() - t, 1)  # be measured against
            if r["caught"]:
                raise SystemExit(f"the unmutated model fails {search}: {r}")
            t = time.process_time()
            probe = Probe(run_model(search, MODEL))
            run_search(MODEL, None, search, model=probe.model)
            probes[search] = {"reached": sorted(probe.reached), "infected": sorted(probe.infected),
                              "propagated": sorted(probe.propagated),
                              "distinct": r.get("distinct"), "complete": r.get("complete"),
                              "original_cpu": original, "cpu": round(time.process_time() - t, 1)}
            save_cache(sha, results)
            log(f"search {stage} probed: {len(probe.infected)} of {len(ms)} mutants infected, "
                f"{len(probe.propagated)} propagated ({original} s, the probe "
                f"{probes[search]['cpu']} s)")
        if search in probes:
            differs = _differs(probes[search])
            for m in ms:
                if (m.index not in differs and search not in results[m.name]
                        and not _caught_before(results[m.name], searches, stage)):
                    results[m.name][search] = {"caught": False, "same_graph": True}
    save_cache(sha, results)
    if probes_only:
        return results
    for stage, search in enumerate(searches, 1):
        pending = [m for m in ms if not _caught_before(results[m.name], searches, stage)
                   and search not in results[m.name]]
        differs = _differs(probes.get(search, {}))
        todo = []
        for m in pending:
            if m.index not in differs:
                # never differs from the original on this search: the same graph, no catch
                results[m.name][search] = {"caught": False, "same_graph": True}
            else:
                floor, factor = TIME_POLICY.get(MODEL, (TIME_FLOOR, TIME_FACTOR))
                p = probes[search]
                limit = max(floor, factor * p.get("original_cpu", p["cpu"]))
                todo.append((m.index, search, limit))
        save_cache(sha, results)
        log(f"search {stage}/{len(searches)} ({search}): {len(todo)} infected mutants to run, "
            f"{len(pending) - len(todo)} never infected")
        if not todo:
            continue
        with multiprocessing.get_context("fork").Pool(jobs, maxtasksperchild=1) as pool:
            for k, (name, s, r) in enumerate(pool.imap_unordered(_one, todo), 1):
                results[name][s] = r
                save_cache(sha, results)
                verdict = (f"caught: {r.get('property') or r.get('error')} at {r.get('depth')}"
                           if r["caught"] else "survives" if r.get("complete", True)
                           else f"does not finish ({r.get('distinct') or 0:,} states)")
                log(f"  [{k}/{len(todo)}] {name}: {verdict} ({r['cpu']} s)")
    restrictions(results, searches, jobs, log)
    save_cache(sha, results)
    return results


_ORIGINAL: dict = {}  # exhaustive search -> the original's reachable fingerprints, for the workers


def _reach_one(job):
    index, search = job
    m = mutants(MODEL)[index]
    reach = reachable(MODEL, m, search, within=_ORIGINAL[search])
    return m.name, search, not isinstance(reach, Escape)


def restrictions(results: dict, searches: list[str], jobs: int, log) -> None:
    """For each survivor, in each exhaustive search where its model returned something else than
    the original's (firm mutation): whether every state it reaches there is one the original
    reaches too (`zabmc.mutate.reachable`). Such a mutant removes behaviour and adds none, so no
    safety property can fail on it within those bounds, whatever it does. Survivors with a
    hand-written reason (REASONS) are skipped: zab's are all read, and its exhaustive runs are
    the large ones."""
    probes = results.get(PROBES, {})
    rows = {r["name"]: r for r in classify(results, searches)}
    todo = [(m.index, s) for m in mutants(MODEL)  # a survivor read by hand has its reason
            if rows[m.name]["class"] == "survives" and m.name not in REASONS
            for s in rows[m.name]["propagated"]
            if _exhaustive(s) and s not in results[m.name].get(REACH, {})]
    if not todo:
        return
    log(f"restrictions: {len(todo)} (survivor, exhaustive search) pairs to compare")
    for s in sorted({s for _, s in todo}, key=searches.index):
        _ORIGINAL[s] = reachable(MODEL, None, s)
        if len(_ORIGINAL[s]) != probes[s]["distinct"]:
            raise SystemExit(f"the original reaches {len(_ORIGINAL[s])} states in {s}, "
                             f"its search {probes[s]['distinct']}")
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        for k, (name, s, sub) in enumerate(pool.imap_unordered(_reach_one, todo), 1):
            results[name].setdefault(REACH, {})[s] = sub
            log(f"  [{k}/{len(todo)}] {name}: "
                f"{'only the original' + chr(39) + 's states' if sub else 'new states'} "
                f"in {_label(s)}")


def classify(results: dict, searches: list[str]) -> list[dict]:
    """One row a mutant: its class (gate, wide, survives, not run), the search that caught it
    first, and for a survivor what the probes saw: `reached` and `infected` in which searches,
    and the searches that did not finish (`unfinished`)."""
    probes = results.get(PROBES, {})
    rows = []
    for m in mutants(MODEL):
        rec = results.get(m.name, {})
        row = m.to_json() | {"name": m.name, "class": None, "search": None}
        for s in searches:
            r = rec.get(s)
            if r is None:
                row["class"] = "not run"
                break
            if r["caught"]:
                row["class"] = "gate" if s in GATE else "wide"
                row["search"] = s
                row |= {k: r.get(k) for k in ("property", "depth", "error", "cpu")}
                row["lasso"] = r.get("kind")
                break
        else:
            row["class"] = "survives"
            row["reached"] = [s for s in searches if m.index in probes.get(s, {}).get("reached", ())]
            row["infected"] = [s for s in searches
                               if m.index in probes.get(s, {}).get("infected", ())]
            row["propagated"] = [s for s in searches if m.index in _differs(probes.get(s, {}))]
            row["unfinished"] = [s for s in searches if not rec[s].get("complete", True)]
            row["reach"] = rec.get(REACH, {})
        rows.append(row)
    return rows


#: why a survivor that differs from the original in some search is not caught (mutant name ->
#: (class, reason)), from reading the handler and the mutant's runs. The classes, from harmless to
#: not: the same observable behaviour; slower, not wrong (progress delayed, then restored); allowed
#: by the protocol (a node acts as the paper lets it); lost progress that no property sees (the
#: properties say less than they should); a weakening whose counterexample lies beyond the bounds.
CLASSES = ("same behaviour", "slower, not wrong", "allowed by the protocol", "a restriction",
           "lost progress no property sees", "a weakening beyond B")
#: a survivor that adds behaviour no property rejects within B, and that nobody has read yet
UNREAD = "equivalent within B, not yet explained"
REASONS: dict[str, tuple[str, str]] = {
    "models/zab/handlers.py:69:15 cmp: (peer_zxid, voter) > (target_zxid, target) -> (peer_zxid, voter) >= (target_zxid, target)":
        ("slower, not wrong", "a node switches to the vote it already holds: it clears its tally and sends the same vote again; the same node is elected, after more messages"),
    "models/zab/handlers.py:69:15 cmp: (peer_zxid, voter) > (target_zxid, target) -> (peer_zxid, voter) < (target_zxid, target)":
        ("slower, not wrong", "the election prefers the least up-to-date node, then the lowest id: other leaders, but still a total order, so elections end; ZAB's safety does not rest on whom the election names, since Phase 1 adopts the latest history of a quorum (l.1.2)"),
    "models/zab/handlers.py:69:15 swap: (peer_zxid, voter) > (target_zxid, target) -> (target_zxid, target) > (peer_zxid, voter)":
        ("slower, not wrong", "the election prefers the least up-to-date node, then the lowest id: other leaders, but still a total order, so elections end; ZAB's safety does not rest on whom the election names, since Phase 1 adopts the latest history of a quorum (l.1.2)"),
    "models/zab/handlers.py:77:15 cmp: (epoch, zxid) > (best_epoch, best_zxid) -> (epoch, zxid) >= (best_epoch, best_zxid)":
        ("same behaviour", "a tie is the same epoch and the same last zxid, which by the prefix property is the same history; the same state counts in every exhaustive search"),
    "models/zab/handlers.py:108:15 cmp: voter > target -> voter >= target":
        ("slower, not wrong", "zab-omega's election (votes by node id): a node switches to the vote it already holds, clears its tally and sends the same vote again; the same node is elected, after more messages"),
    "models/zab/handlers.py:108:15 cmp: voter > target -> voter < target":
        ("allowed by the protocol", "zab-omega's election elects the lowest id instead of the highest: still a total order blind to the data, so elections end and Phases 1 and 2 alone carry the committed history, as with any leader the oracle names"),
    "models/zab/handlers.py:108:15 swap: voter > target -> target > voter":
        ("allowed by the protocol", "zab-omega's election elects the lowest id instead of the highest: still a total order blind to the data, so elections end and Phases 1 and 2 alone carry the committed history, as with any leader the oracle names"),
    "models/zab/handlers.py:211:11 cmp: node.role == FOLLOWING -> node.role != FOLLOWING":
        ("slower, not wrong", "a follower whose leader started a new election answers it with its vote instead of joining (D6); it joins at its own timeout, which safety runs allow at any step within the budget and liveness runs when all is quiet"),
    "models/zab/handlers.py:215:15 cmp: node.role != LOOKING -> node.role == LOOKING":
        ("slower, not wrong", "the follower that rejoins the election does not count the LookForLeader that woke it; the sender answers the follower's own LookForLeader with the same vote (D3), one message later"),
    "models/zab/handlers.py:233:7 bool: is_lfl and (not switched) -> not switched":
        ("slower, not wrong", "the node sends its current vote in more cases (after a vote it did not switch on; after a LookForLeader it switched on, which its switch already answered); a repeated vote tells the receiver nothing new"),
    "models/zab/handlers.py:233:7 bool: is_lfl and (not switched) -> is_lfl":
        ("slower, not wrong", "the node sends its current vote in more cases (after a vote it did not switch on; after a LookForLeader it switched on, which its switch already answered); a repeated vote tells the receiver nothing new"),
    "models/zab/handlers.py:254:7 cmp: node.cepochs.bit_count() < c.q -> node.cepochs.bit_count() > c.q":
        ("slower, not wrong", "the prospective leader picks its epoch before a quorum's CEPOCH; followers that promised that epoch or a later one refuse it (f.1.2 acknowledges only a later epoch), so establishing still takes a quorum of fresh promises (ACK-E): the CEPOCH quorum serves progress, not safety"),
    "models/zab/handlers.py:254:7 swap: node.cepochs.bit_count() < c.q -> c.q < node.cepochs.bit_count()":
        ("slower, not wrong", "the prospective leader picks its epoch before a quorum's CEPOCH; followers that promised that epoch or a later one refuse it (f.1.2 acknowledges only a later epoch), so establishing still takes a quorum of fresh promises (ACK-E): the CEPOCH quorum serves progress, not safety"),
    "models/zab/handlers.py:254:34 quorum: c.q -> c.q - 1":
        ("slower, not wrong", "the prospective leader picks its epoch before a quorum's CEPOCH; followers that promised that epoch or a later one refuse it (f.1.2 acknowledges only a later epoch), so establishing still takes a quorum of fresh promises (ACK-E): the CEPOCH quorum serves progress, not safety"),
    "models/zab/handlers.py:274:9 cmp: p < node.pending_new_epoch -> p <= node.pending_new_epoch":
        ("same behaviour", "the leader also answers a late CEPOCH that promised its own epoch; that follower cannot acknowledge NEWEPOCH of an epoch it already promised (f.1.2) and ignores it"),
    "models/zab/handlers.py:274:9 cmp: p < node.pending_new_epoch -> p > node.pending_new_epoch":
        ("lost progress no property sees", "the leader ignores the late CEPOCH it should answer (l.3.3), so a follower whose CEPOCH arrives after the epoch is chosen is never synchronised; it times out, rejoins and is ignored again. While it is looking it is no one's follower, so eventually-commit, a goal about the followers of the moment, is met on every round: the liveness property is too weak to see a follower starved this way"),
    "models/zab/handlers.py:274:9 swap: p < node.pending_new_epoch -> node.pending_new_epoch < p":
        ("lost progress no property sees", "the leader ignores the late CEPOCH it should answer (l.3.3), so a follower whose CEPOCH arrives after the epoch is chosen is never synchronised; it times out, rejoins and is ignored again. While it is looking it is no one's follower, so eventually-commit, a goal about the followers of the moment, is met on every round: the liveness property is too weak to see a follower starved this way"),
    "models/zab/handlers.py:283:7 bool: node.role != FOLLOWING or not c.r.acks_new_epoch(node, e) -> not c.r.acks_new_epoch(node, e)":
        ("a weakening beyond B", "a node that is not following (looking, or leading an older epoch) also promises a later epoch it is offered; a leader that promised keeps proposing in its old epoch, which f.p otherwise stops at followers. A counterexample needs a second leader elected while the first still leads with a quorum: more timeouts and nodes than the exhaustive runs allow; not found by the random walks"),
    "models/zab/handlers.py:287:7 cmp: src == node.leader_id -> src != node.leader_id":
        ("same behaviour", "decides only whether the follower's election timer restarts, a simulator effect; the explorer lets a timeout fire at any step within its budget and liveness runs decide timers from heartbeats, so the state graph is the original's (equal counts in every exhaustive search)"),
    "models/zab/handlers.py:295:7 bool: node.role != LEADING or e != node.pending_new_epoch or node.epoch_acks & bit -> node.role != LEADING or node.epoch_acks & bit":
        ("a weakening beyond B", "the leader counts an acknowledgement of an older epoch of its own as one of the current epoch, from a follower that has not promised it; harmful only if the same node leads twice with such an acknowledgement in flight and that follower then promises a rival leader of the same epoch: more timeouts than the exhaustive runs allow; not found by the random walks"),
    "models/zab/handlers.py:330:7 bool: node.role != FOLLOWING or e != node.accepted_epoch -> e != node.accepted_epoch":
        ("allowed by the protocol", "a node that promised epoch e and stopped following (a timeout) still accepts e's NEWLEADER, as its promise allows; NEWLEADER goes only to nodes that acknowledged e"),
    "models/zab/handlers.py:333:7 cmp: src == node.leader_id -> src != node.leader_id":
        ("same behaviour", "decides only whether the follower's election timer restarts, a simulator effect; the explorer lets a timeout fire at any step within its budget and liveness runs decide timers from heartbeats, so the state graph is the original's (equal counts in every exhaustive search)"),
    "models/zab/handlers.py:341:8 bool: node.role != LEADING or node.phase < P_SYNC or e != node.current_epoch or node.leader_acks & bit -> node.role != LEADING or e != node.current_epoch or node.leader_acks & bit":
        ("same behaviour", "an ACK-LD counted before Phase 2 is forgotten when Phase 2 starts (the leader's acknowledgement set is reset to itself), so it never counts toward the quorum"),
    "models/zab/handlers.py:341:8 bool: node.role != LEADING or node.phase < P_SYNC or e != node.current_epoch or node.leader_acks & bit -> node.role != LEADING or node.phase < P_SYNC or node.leader_acks & bit":
        ("a weakening beyond B", "the leader counts an ACK-LD of an earlier epoch it led as one of the current epoch; harmful only with the same node leading twice and a stale ACK-LD in flight, from a follower that does not hold the new initial history: deeper than the exhaustive runs (run 7 reaches such states and no property fails)"),
    "models/zab/handlers.py:341:32 cmp: node.phase < P_SYNC -> node.phase > P_SYNC":
        ("slower, not wrong", "the established leader ignores a late follower's ACK-LD, so that follower gets no COMMIT-LD; the leader's next COMMIT or heartbeat, sent to every follower it synchronised (D14), delivers the same prefix"),
    "models/zab/handlers.py:341:32 swap: node.phase < P_SYNC -> P_SYNC < node.phase":
        ("slower, not wrong", "the established leader ignores a late follower's ACK-LD, so that follower gets no COMMIT-LD; the leader's next COMMIT or heartbeat, sent to every follower it synchronised (D14), delivers the same prefix"),
    "models/zab/handlers.py:355:7 bool: node.phase != P_SYNC or node.leader_acks.bit_count() < c.q -> node.phase != P_SYNC":
        ("a weakening beyond B", "the leader commits its initial history without a quorum of ACK-LD. That history is the latest of a quorum's (l.1.2) and stays on the leader's and its source's disks, and with three nodes every later discovery quorum contains one of the two; a counterexample needs a quorum without both, so five nodes"),
    "models/zab/handlers.py:355:31 cmp: node.leader_acks.bit_count() < c.q -> node.leader_acks.bit_count() > c.q":
        ("a weakening beyond B", "the leader commits its initial history without a quorum of ACK-LD. That history is the latest of a quorum's (l.1.2) and stays on the leader's and its source's disks, and with three nodes every later discovery quorum contains one of the two; a counterexample needs a quorum without both, so five nodes"),
    "models/zab/handlers.py:355:31 swap: node.leader_acks.bit_count() < c.q -> c.q < node.leader_acks.bit_count()":
        ("a weakening beyond B", "the leader commits its initial history without a quorum of ACK-LD. That history is the latest of a quorum's (l.1.2) and stays on the leader's and its source's disks, and with three nodes every later discovery quorum contains one of the two; a counterexample needs a quorum without both, so five nodes"),
    "models/zab/handlers.py:355:62 quorum: c.q -> c.q - 1":
        ("a weakening beyond B", "the leader commits its initial history without a quorum of ACK-LD. That history is the latest of a quorum's (l.1.2) and stays on the leader's and its source's disks, and with three nodes every later discovery quorum contains one of the two; a counterexample needs a quorum without both, so five nodes"),
    "models/zab/handlers.py:358:59 minmax: max(node.last_committed, lz) -> min(node.last_committed, lz)":
        ("lost progress no property sees", "the new leader announces its old delivery point in COMMIT-LD instead of its initial history's last zxid, so the initial history is delivered only with the epoch's first commit (D13); with no new proposal it is never delivered. The fault-free liveness runs never have a second epoch with a non-empty initial history, so they cannot see it"),
    "models/zab/handlers.py:368:11 cmp: t[0] < zxid -> t[0] > zxid":
        ("slower, not wrong", "a follower delivers a commit only when the committed zxid is its latest transaction; an earlier one waits for a later commit, which delivers it too (D13)"),
    "models/zab/handlers.py:368:11 swap: t[0] < zxid -> zxid < t[0]":
        ("slower, not wrong", "a follower delivers a commit only when the committed zxid is its latest transaction; an earlier one waits for a later commit, which delivers it too (D13)"),
    "models/zab/handlers.py:376:7 bool: zxid > node.last_committed and _holds(node, zxid) -> _holds(node, zxid)":
        ("same behaviour", "on FIFO links a leader's commits (COMMIT-LD, COMMIT, heartbeats) reach a follower in non-decreasing order, so a commit below the delivery point never arrives; the gate runs FIFO only (equal counts in every exhaustive search)"),
    "models/zab/handlers.py:376:7 cmp: zxid > node.last_committed -> zxid >= node.last_committed":
        ("same behaviour", "re-delivering up to the delivery point sets it to the value it already has"),
    "models/zab/handlers.py:383:7 bool: node.role != FOLLOWING or e != node.current_epoch -> e != node.current_epoch":
        ("allowed by the protocol", "a node that stopped following (a timeout) still delivers its former leader's COMMIT-LD of its own epoch: the commit of a quorum-acknowledged history it holds, as a follower would"),
    "models/zab/handlers.py:383:7 bool: node.role != FOLLOWING or e != node.current_epoch -> node.role != FOLLOWING":
        ("allowed by the protocol", "a follower delivers another epoch's COMMIT-LD only up to a zxid it holds, and a history that holds a committed zxid holds the same prefix before it (the prefix property the gate checks)"),
    "models/zab/handlers.py:383:7 cmp: node.role != FOLLOWING -> node.role == FOLLOWING":
        ("slower, not wrong", "followers ignore COMMIT-LD (a non-follower or another epoch's COMMIT-LD is handled as in the mutants above); they deliver the initial history with the leader's next COMMIT or heartbeat (D14)"),
    "models/zab/handlers.py:383:33 cmp: e != node.current_epoch -> e == node.current_epoch":
        ("slower, not wrong", "followers ignore COMMIT-LD (a non-follower or another epoch's COMMIT-LD is handled as in the mutants above); they deliver the initial history with the leader's next COMMIT or heartbeat (D14)"),
    "models/zab/handlers.py:385:7 cmp: src == node.leader_id -> src != node.leader_id":
        ("same behaviour", "decides only whether the follower's election timer restarts, a simulator effect; the explorer lets a timeout fire at any step within its budget and liveness runs decide timers from heartbeats, so the state graph is the original's (equal counts in every exhaustive search)"),
    "models/zab/handlers.py:401:7 bool: node.role != FOLLOWING or not c.r.accepts_proposal(node, txn) -> not c.r.accepts_proposal(node, txn)":
        ("allowed by the protocol", "a node that stopped following still accepts its epoch's proposals while it has promised nothing later (f.a = f.p = the proposal's epoch), which the paper's invariant 1 allows"),
    "models/zab/handlers.py:406:7 cmp: src == node.leader_id -> src != node.leader_id":
        ("same behaviour", "decides only whether the follower's election timer restarts, a simulator effect; the explorer lets a timeout fire at any step within its budget and liveness runs decide timers from heartbeats, so the state graph is the original's (equal counts in every exhaustive search)"),
    "models/zab/handlers.py:432:72 cmp: item[0] > zxid -> item[0] >= zxid":
        ("same behaviour", "the leader keeps the committed zxid's acknowledgements in its table; acknowledgements at or below the commit point are never read again (l.3.2 ignores them), so only the state's bytes differ"),
    "models/zab/handlers.py:439:8 bool: node.role != LEADING or node.phase != P_BROADCAST or zxid[0] != node.current_epoch or (zxid <= node.last_committed) or (zxid > last_zxid(node)) -> node.role != LEADING or zxid[0] != node.current_epoch or zxid <= node.last_committed or (zxid > last_zxid(node))":
        ("allowed by the protocol", "a leader re-elected after a timeout counts late ACKs of its previous term's proposals before it is established; they are real acknowledgements by a quorum of that epoch, so committing on them is what the previous term would have done"),
    "models/zab/handlers.py:439:8 bool: node.role != LEADING or node.phase != P_BROADCAST or zxid[0] != node.current_epoch or (zxid <= node.last_committed) or (zxid > last_zxid(node)) -> node.role != LEADING or node.phase != P_BROADCAST or zxid[0] != node.current_epoch or (zxid > last_zxid(node))":
        ("same behaviour", "the leader records an acknowledgement of an already committed zxid, which l.3.2 never reads again; only the state's bytes differ"),
    "models/zab/handlers.py:440:15 cmp: zxid <= node.last_committed -> zxid < node.last_committed":
        ("same behaviour", "the leader records an acknowledgement of an already committed zxid, which l.3.2 never reads again; only the state's bytes differ"),
    "models/zab/handlers.py:440:46 cmp: zxid > last_zxid(node) -> zxid < last_zxid(node)":
        ("slower, not wrong", "the leader counts acknowledgements of its latest proposal only; committing it commits everything before it (D13), so earlier proposals are delivered with the latest"),
    "models/zab/handlers.py:440:46 swap: zxid > last_zxid(node) -> last_zxid(node) > zxid":
        ("slower, not wrong", "the leader counts acknowledgements of its latest proposal only; committing it commits everything before it (D13), so earlier proposals are delivered with the latest"),
    "models/zab/handlers.py:449:7 bool: node.role != FOLLOWING or e != node.current_epoch -> e != node.current_epoch":
        ("allowed by the protocol", "as for COMMIT-LD above: a node that stopped following delivers its epoch's COMMIT of a zxid it holds, and a COMMIT of another epoch is delivered only up to a zxid the follower holds, which fixes the prefix before it"),
    "models/zab/handlers.py:449:7 bool: node.role != FOLLOWING or e != node.current_epoch -> node.role != FOLLOWING":
        ("allowed by the protocol", "as for COMMIT-LD above: a node that stopped following delivers its epoch's COMMIT of a zxid it holds, and a COMMIT of another epoch is delivered only up to a zxid the follower holds, which fixes the prefix before it"),
    "models/zab/handlers.py:451:7 cmp: src == node.leader_id -> src != node.leader_id":
        ("same behaviour", "decides only whether the follower's election timer restarts, a simulator effect; the explorer lets a timeout fire at any step within its budget and liveness runs decide timers from heartbeats, so the state graph is the original's (equal counts in every exhaustive search)"),
    "models/zab/handlers.py:465:7 cmp: node.role != LOOKING -> node.role == LOOKING":
        ("slower, not wrong", "a starting node waits for its first election timeout before it looks for a leader (the timeout runs the same election): runs without a timeout budget explore the initial state alone, and liveness runs fire that timer at once, since all is quiet"),
    "models/zab/handlers.py:515:7 bool: node.role != LEADING or node.phase != P_BROADCAST -> node.role != LEADING":
        ("allowed by the protocol", "a prospective leader sends heartbeats too: a COMMIT of its delivery point, which is committed, delivered only by followers that hold it"),
    "models/zab/handlers.py:524:11 cmp: node.role == LEADING -> node.role != LEADING":
        ("lost progress no property sees", "no node can propose (only a leader reaches the Broadcast phase): the cluster elects leaders and commits nothing. No safety property forbids that, and eventually-commit, about proposals made, holds vacuously; a gate run that requires some transaction to be delivered would catch it"),
}


#: zk-fixed's survivors that differ from the original somewhere, as REASONS has zab's
ZK_FIXED_REASONS: dict[str, tuple[str, str]] = {
    "models/zk/handlers.py:104:15 minmax: max(node.commit, node.last_committed) -> min(node.commit, node.last_committed)":
        ("slower, not wrong", "a node that leaves its role forgets the commits it had learned but not yet applied (its commit point drops to what it delivered); the transactions stay in its log, and the next leader's synchronisation commits them again"),
}

#: model -> (cache, section, gate, wider searches, reasons)
CAMPAIGNS = {
    "zab": (CACHE, SECTION, GATE, WIDE, REASONS),
    "zk-fixed": (ROOT / "reports" / "data" / "mutants-zk-fixed.json", "## Mutation score: zk-fixed",
                 GATES["zk-fixed"], ZK_FIXED_WIDE, ZK_FIXED_REASONS),
}


def _times(factor: float) -> str:
    return {5.0: "five times", 3.0: "three times"}.get(factor, f"{factor:g} times")


def _secs(floor: float) -> str:
    return "a minute" if floor == 60 else f"{floor:g} seconds"


def _label(search: str) -> str:
    if search in GATE:
        return f"gate {GATE.index(search) + 1}"
    return f"wide {WIDE.index(search) + 1}"


def _flags(search: str) -> str:
    return "`" + search.replace(f"--model {MODEL} ", "").replace("--network fifo ", "") + "`"


def survivor_reason(row: dict) -> tuple[str, str]:
    """(class, reason) of a surviving mutant: from the probes when its expression never ran or
    never differed, else from REASONS."""
    if not row["reached"]:
        return ("not run by the explorer",
                f"never evaluated in any search: code the explorer does not call for `{MODEL}` "
                "(a variant's rule, or a helper only the simulator uses)")
    if not row["infected"]:
        return ("same behaviour", "evaluated, and equal to the original every time, in every "
                "search: the same state graph")
    if not row["propagated"]:
        return ("same behaviour", "evaluated differently in "
                + ", ".join(_label(s) for s in row["infected"]) + ", but every call of the "
                "model returned the original's result, in every search: the same state graph")
    differs = ", ".join(_label(s) for s in row["propagated"])
    if row["name"] in REASONS:
        cls, reason = REASONS[row["name"]]
        return cls, f"differs in {differs}; {reason}"
    exhaustive = [s for s in row["propagated"] if _exhaustive(s)]
    if exhaustive and all(row.get("reach", {}).get(s) for s in exhaustive):
        others = [s for s in row["propagated"] if s not in exhaustive]
        return ("a restriction",
                "differs in " + differs + "; in " + ", ".join(_label(s) for s in exhaustive)
                + ", every state it reaches the original reaches too: it removes behaviour and "
                "adds none, so no safety property can fail on it there"
                + (f" (in {', '.join(_label(s) for s in others)}, sampled, none fails)"
                   if others else "")
                + ("" if MODEL == "zab" else
                   f"; whether what it removes is progress, `{MODEL}` has no liveness property "
                   "to say"))
    added = [s for s in exhaustive if row.get("reach", {}).get(s) is False]
    if added:
        return (UNREAD, f"differs in {differs}; in {', '.join(_label(s) for s in added)} it "
                "reaches states the original does not, and no property fails on any of them "
                "within B; not yet read by hand")
    return UNREAD, f"differs in {differs}; no property fails within B; not yet read by hand"


def cpu_seconds(results: dict, searches: list[str]) -> float:
    """The campaign's CPU time as cached: every mutant's searches and every probe run."""
    total = sum(p.get("cpu", 0) + p.get("original_cpu", 0)
                for s, p in results.get(PROBES, {}).items() if s in searches)
    for name, rec in results.items():
        if name != PROBES:
            total += sum(r.get("cpu", 0) for s, r in rec.items() if s in searches)
    return total


def render(rows: list[dict], searches: list[str], minutes: float | None) -> str:
    n = len(rows)
    gate = [r for r in rows if r["class"] == "gate"]
    wide = [r for r in rows if r["class"] == "wide"]
    surv = [r for r in rows if r["class"] == "survives"]
    notrun = [r for r in rows if r["class"] == "not run"]
    pct = (lambda k: f"{100 * k / n:.0f}%") if n else (lambda k: "-")
    kinds: dict = {}
    for r in rows:
        kinds[r["kind"]] = kinds.get(r["kind"], 0) + 1
    if MODEL == "zab":
        took = (f"; the campaign takes {minutes:.0f} CPU minutes (about {minutes / 2:.0f} minutes "
                "on this machine's two cores)" if minutes else "")
        how = "`make mutate` (`python benchmarks/mutation_report.py --jobs 2 --write`)"
        fails = "a violated property, a liveness lasso, or a kernel that raises"
    else:
        took = (f"; the campaign takes {minutes:.0f} CPU minutes" if minutes else "")
        if minutes and any(r["class"] == "not run" for r in rows):
            took = (f"; the campaign is partial: the mutants not run yet resume from the cache, "
                    f"and what ran took {minutes:.0f} CPU minutes")
        how = (f"`make mutate MODEL={MODEL}` (`python benchmarks/mutation_report.py --model "
               f"{MODEL} --jobs 2 --write`)")
        fails = ("a violated property, an exhaustive run (`--require-complete`) stopped at its "
                 "depth bound, or a kernel that raises")
    from zabmc.mutate import _package

    pkg = _package(MODEL)
    out = [SECTION, "",
           f"Produced by {how} "
           f"at commit `{commit()}`{took}; do not edit by hand. `zabmc mutate --model {MODEL}` "
           f"lists the {n} single-point mutants of models/{pkg}/handlers.py ("
           + ", ".join(f"{k} {kinds[k]}" for k in sorted(kinds, key=lambda k: -kinds[k]))
           + f"); `zabmc mutate --model {MODEL} --run` runs the gate on them. Each mutant is run "
           f"against the searches below in order until one fails ({fails}). Before a search "
           "runs on the mutants, one "
           "run of the unmutated model evaluates every mutant's version of its expression beside "
           "the original (weak mutation) and, on each call of the model (a delivery, a timeout, "
           "an action) where a mutant's version differed, calls the mutant's model with the same "
           "arguments and compares the results (firm mutation): a mutant whose model returns the "
           "original's result on every call of the search has the original's state graph there, "
           "so it is not run.",
           "",
           f"**Score: {len(gate)} of {n} mutants caught by the gate ({pct(len(gate))}); "
           f"{len(wide)} more caught only by a wider search; {len(surv)} survive every search"
           + (f"; {len(notrun)} not run yet" if notrun else "") + ".**",
           "",
           "| search | flags | caught first here |",
           "|---|---|---|"]
    for s in searches:
        k = sum(1 for r in rows if r["search"] == s)
        out.append(f"| {_label(s)} | {_flags(s)} | {k} |")
    floor, factor = TIME_POLICY.get(MODEL, (TIME_FLOOR, TIME_FACTOR))
    out += ["",
            f"A mutant whose search takes {_times(factor)} the original's CPU time on it (at "
            f"least {_secs(floor)} of CPU) is stopped there and counted as not caught by it.",
            ""]
    out += ["### Caught by the gate", "",
            "The first gate run that fails on each, what it reports and the length of its "
            "counterexample (for a liveness lasso, of its path to the end of the loop; for "
            "`incomplete`, the depth at which the run gave up; an exception is the protocol code "
            "itself failing).", "",
            "| mutant | run | fails with | depth |", "|---|---|---|---|"]
    for r in gate:
        out.append(f"| `{r['name']}` | {GATE.index(r['search']) + 1} | "
                   f"{r['property'] or r.get('error')} | {r.get('depth') or '-'} |")
    out.append("")
    if wide:
        out += ["### Caught only by a wider search", "",
                "| mutant | search | property | depth |", "|---|---|---|---|"]
        for r in wide:
            out.append(f"| `{r['name']}` | {_label(r['search'])} | "
                       f"{r['property'] or r.get('error')} | {r.get('depth') or '-'} |")
        out.append("")
    if surv:
        bound = "; ".join(f"{_label(s)}: {_flags(s)}" for s in searches)
        by_class: dict = {}
        for r in surv:
            by_class[survivor_reason(r)[0]] = by_class.get(survivor_reason(r)[0], 0) + 1
        out += ["### Survivors", "",
                f"No search above fails on these; B, the bounds they survive, is the union of "
                f"the searches ({bound}). Each has a class, from harmless to not: "
                + "; ".join(f"{k} {v}" for k, v in sorted(
                    by_class.items(), key=lambda kv: (("not run by the explorer",) + CLASSES
                                                      + (UNREAD,)).index(kv[0])))
                + ". *Same behaviour*: nothing a property or the explorer observes changes. "
                "*Slower, not wrong*: progress is delayed and then restored by a later message "
                "or timer. *Allowed by the protocol*: a node does what the paper lets it do. "
                + ("*A restriction*: in each exhaustive search where it differs, every state "
                   "the mutant reaches is one the original reaches (the two reachable sets "
                   "compared, fingerprint by fingerprint): it only removes behaviour, so no "
                   "safety property can fail on it there; what it removes may be progress. "
                   if "a restriction" in by_class else "")
                + (f"*{UNREAD.capitalize()}*: it reaches states the original does not and no "
                   "search fails on them, and no one has yet read the handler to say why: "
                   "these, with the two classes that follow, are where to look first. "
                   if UNREAD in by_class else "")
                + "*Lost progress no property sees* and *a weakening beyond B* are not "
                + ("equivalent: the first are where the liveness properties say less than they "
                   "should, " if MODEL == "zab" else
                   f"equivalent: the first are where the properties say less than they should "
                   f"(`{MODEL}` has safety properties only), ")
                + "the second real weakenings whose counterexamples need more nodes or "
                "faults than B.", "",
                "| mutant | class | why no search catches it |", "|---|---|---|"]
        for r in surv:
            cls, why = survivor_reason(r)
            out.append(f"| `{r['name']}` | {cls} | {why} |")
        out.append("")
    return "\n".join(out)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="zab", help="zab (default) or zk-fixed")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--only", choices=("gate", "all"), default="all")
    p.add_argument("--no-run", action="store_true")
    p.add_argument("--probes-only", action="store_true",
                   help="probe the searches (settling what they can) but run no mutant")
    p.add_argument("--write", action="store_true")
    a = p.parse_args(argv)
    use(a.model)
    searches = list(GATE) + ([] if a.only == "gate" else list(WIDE))

    def log(msg):
        print(time.strftime("%H:%M:%S"), msg, flush=True)

    results = (load_cache(handlers_sha()) if a.no_run
               else campaign(searches, a.jobs, log, a.probes_only))
    rows = classify(results, searches)
    minutes = cpu_seconds(results, searches) / 60
    counts = {c: sum(1 for r in rows if r["class"] == c)
              for c in ("gate", "wide", "survives", "not run")}
    log(f"{len(rows)} mutants: {counts}")
    if a.write:
        REPORT.write_text(update_section(REPORT.read_text(), SECTION,
                                         render(rows, searches, minutes),
                                         "# Verification of the zab model"))
        log(f"wrote {REPORT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
