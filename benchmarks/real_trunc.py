"""How often the TRUNC that keeps an uncommitted write (reports/zookeeper.md, "A TRUNC to an epoch
boundary...") happens on real servers, per build and session mode (#63).

Runs, RUNS times each, round-robin, each run waiting for the lock that keeps one ensemble at a
time on the machine:

    flock /tmp/zabmc-real.lock python -m zabmc real [--release V] [--global-sessions] \
        tests/corpus/zk/truncate-keeps-uncommitted.schedule.json --json -q

for Debian's 3.8.0 (unless --no-debian) and each --release given, with local sessions
(localSessionsEnabled=true, what `zabmc real` runs by default) and with global ones
(--global-sessions). Each run's summary
is appended to a JSON-lines file (so a later invocation adds runs), and the table of every run
in it is printed: the exit codes (10 lost write reproduced, 0 realised without violation, 3 not
realised), the violated properties, what the client of /w-1 (written to the cut-off leader,
server 3) was told, and what clients of each server read at the end.

    python benchmarks/real_trunc.py --runs 5 --release 3.9.5 --out reports/data/real-trunc-runs.jsonl
    python benchmarks/real_trunc.py --table reports/data/real-trunc-runs.jsonl   # the table only
    python benchmarks/real_trunc.py --runs 10 --release 3.9.5 --local-only --kept /zab-0 \
        --source tests/corpus/zk/truncate-keeps-zk-3.8.0-held.trace.json \
        --out reports/data/real-trunc-search-runs.jsonl   # the search's own run (#62)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import Counter
from contextlib import nullcontext
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from benchmarks.common import REAL_LOCK, real_lock  # noqa: E402

SCHEDULE = "tests/corpus/zk/truncate-keeps-uncommitted.schedule.json"
#: one ensemble at a time on this machine: each run waits for this lock (flock(1))
LOCK = REAL_LOCK


def held():
    """The lock `flock LOCK` takes (flock(2)), held by this process for a batch of runs."""
    return real_lock(LOCK)


def one_run(release: str | None, global_sessions: bool, source: str = SCHEDULE,
            kept: str = "/w-1", locked: bool = False) -> dict:
    """One run, waiting for the lock; with `locked`, the caller holds it (--batch)."""
    argv = ([] if locked else ["flock", LOCK]) + [sys.executable, "-m", "zabmc", "real"]
    if release:
        argv += ["--release", release]
    if global_sessions:
        argv.append("--global-sessions")
    argv += [source, "--json", "-q"]
    t = time.time()
    p = subprocess.run(argv, capture_output=True, text=True, cwd=str(REPO), timeout=600)
    rec = {"build": release or "debian-3.8.0", "sessions": "global" if global_sessions else "local",
           "command": " ".join(["python" if a == sys.executable else a for a in argv]),
           "exit": p.returncode,
           "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))}
    if locked:
        rec["lock"] = f"{LOCK} held by benchmarks/real_trunc.py --batch across several runs"
    try:
        out = json.loads(p.stdout)
    except ValueError:
        rec["error"] = (p.stderr.strip().splitlines() or ["no output"])[0]
        return rec
    rec["zookeeper"] = out["zookeeper"]
    rec["not_realised"] = (out["not_realised"] or {}).get("text")
    rec["violations"] = sorted({v["property"] for v in out["violations"]})
    rec["writes"] = [{k: w[k] for k in ("path", "server", "outcome", "zxid", "error")}
                     for w in out["writes"]]
    last = {}
    for d in out["deliveries"]:  # what a client of each server read after each entry
        last[d["server"]] = d["txns"]
    rec["client_reads_at_end"] = {str(s): last[s] for s in sorted(last)}
    rec["kept_write"] = kept
    rec["served_w1"] = sorted(s for s, txns in last.items()
                              if any(kept in str(t) for t in txns))
    rec["wall_seconds"] = out["wall_seconds"]
    return rec


def table(records: list) -> str:
    groups: dict = {}
    for r in records:
        groups.setdefault((r.get("zookeeper", r["build"]), r["sessions"]), []).append(r)
    kept = next((r["kept_write"] for r in records if r.get("kept_write")), "/w-1")
    rows = ["| ZooKeeper | sessions | runs | exit 10 (the write kept by one server) | exit 0 | "
            f"exit 3 | other | the client of {kept} was told | servers whose client read {kept} "
            "at the end |", "|---|---|---|---|---|---|---|---|---|"]
    for (zk, sess), rs in sorted(groups.items()):
        ex = Counter(r["exit"] for r in rs)
        told = Counter(next((f"{w['outcome']}" + (f" ({w['error']})" if w.get("error") else "")
                             for w in r.get("writes", ()) if w["path"] == kept), "-")
                       for r in rs)
        served = Counter(", ".join(map(str, r.get("served_w1", []))) or "none" for r in rs)
        other = sum(v for k, v in ex.items() if k not in (10, 0, 3))
        rows.append(f"| {zk} | {sess} | {len(rs)} | {ex[10]} | {ex[0]} | {ex[3]} | {other} | "
                    + "; ".join(f"{k}: {v}" for k, v in sorted(told.items())) + " | "
                    + "; ".join(f"{k}: {v}" for k, v in sorted(served.items())) + " |")
    return "\n".join(rows)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--release", action="append", default=[],
                    help="a release from Maven Central to run beside Debian's 3.8.0 (repeatable)")
    ap.add_argument("--out", default="real-trunc-runs.jsonl")
    ap.add_argument("--table", metavar="JSONL", help="print the table of JSONL and exit")
    ap.add_argument("--source", default=SCHEDULE,
                    help=f"the trace or schedule to run [default: {SCHEDULE}]")
    ap.add_argument("--kept", default="/w-1", metavar="PATH",
                    help="the write no quorum accepted, whose readers the table counts")
    ap.add_argument("--no-debian", action="store_true",
                    help="only the --release builds, not Debian's 3.8.0 beside them")
    ap.add_argument("--batch", type=int, default=0, metavar="N",
                    help="hold the lock across N runs at a time (each a fresh process) instead "
                         "of each run waiting for it")
    ap.add_argument("--local-only", action="store_true",
                    help="local sessions only (not --global-sessions too)")
    ap.add_argument("--global-only", action="store_true",
                    help="global sessions only (--global-sessions, not local sessions too)")
    a = ap.parse_args()
    if a.local_only and a.global_only:
        ap.error("--local-only and --global-only exclude each other")
    if a.table:
        recs = [json.loads(ln) for ln in Path(a.table).read_text().splitlines() if ln.strip()]
        print(table(recs))
        return 0
    configs = [(rel, g) for rel in ([] if a.no_debian else [None]) + a.release
               for g in ((False,) if a.local_only else (True,) if a.global_only
                         else (False, True))]
    out = Path(a.out)
    runs = [(k, rel, g) for k in range(a.runs) for rel, g in configs]
    step = a.batch or 1
    for i in range(0, len(runs), step):
        with held() if a.batch else nullcontext():
            for k, rel, g in runs[i:i + step]:
                rec = one_run(rel, g, a.source, a.kept, bool(a.batch))
                with out.open("a") as f:
                    f.write(json.dumps(rec) + "\n")
                print(f"run {k}: {rec['build']} {rec['sessions']}: exit {rec['exit']} "
                      f"{rec.get('violations', rec.get('error'))}", flush=True)
    recs = [json.loads(ln) for ln in out.read_text().splitlines() if ln.strip()]
    print(table(recs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
