"""Every finding `zabmc real` runs, on every release it can start (#63): the section "Releases, on
real servers" of reports/zookeeper.md, one row per finding, one column per release, each cell what
three real servers did with the finding's trace (or schedule) and whether the release's model
(reports/data/release-models.json, through models.zk.releases.SAME) says the same.

Each cell is one run, in a fresh process, of

    flock /tmp/zabmc-real.lock python -m zabmc real [--release V] TRACE --json -q

(no --release: Debian's zookeeper 3.8.0), appended as one JSON line to
reports/data/real-matrix.jsonl: the exact command, the commit, the date, the exit code, how many
steps (or entries) the servers realised, why they stopped, the violated properties and the wall
seconds. A cell already in that file for this commit is not run again (unless --again), so an
interrupted run resumes; the table shows the latest run of each cell.

    python benchmarks/real_matrix.py                      # every cell not yet run at this commit
    python benchmarks/real_matrix.py --only 3.9.5 --only zookeeper-4646-acked
    python benchmarks/real_matrix.py --table [--write]    # the section from the file, no run

Needs what `zabmc real` needs (make install-test); releases from Maven Central are fetched once
into ~/.cache/zabmc/releases. About 30 s a cell on two cores.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from benchmarks.common import commit, write_zk_section  # noqa: E402

HEADING = "## Releases, on real servers"
DATA = os.path.join(ROOT, "reports", "data", "real-matrix.jsonl")
LOCK = "/tmp/zabmc-real.lock"
CORPUS = "tests/corpus/zk"
DEBIAN = "debian-3.8.0"
#: the columns: Debian's package, then releases from Maven Central (3.8.0-3.8.2 from Maven are
#: optional: `--only` them)
RELEASES = (DEBIAN, "3.8.3", "3.8.4", "3.8.5", "3.8.6", "3.9.0", "3.9.1", "3.9.2", "3.9.3",
            "3.9.4", "3.9.5")
OPTIONAL = ("3.8.0", "3.8.1", "3.8.2")
#: the rows: finding -> (its file under tests/corpus/zk, the row of release-models.json whose
#: verdict the model side shows, what the row is). A control is not a finding: the model it was
#: searched on (zk-fixed, 3.8.5's rules) finds nothing there
FINDINGS = {
    "zookeeper-4646-acked": ("zookeeper-4646-acked.trace.json", "ZOOKEEPER-4646", "finding"),
    "zookeeper-4643-acked": ("zookeeper-4643-acked.trace.json", "ZOOKEEPER-4643", "finding"),
    "zookeeper-4685-diff": ("zookeeper-4685-diff.trace.json", "ZOOKEEPER-4685", "finding"),
    "zookeeper-4712-served": ("zookeeper-4712-served.trace.json", "ZOOKEEPER-4712", "finding"),
    "zookeeper-4394-join": ("zookeeper-4394-join.trace.json", "ZOOKEEPER-4394", "finding"),
    "zookeeper-2354-trunc": ("zookeeper-2354-trunc.trace.json", "ZOOKEEPER-2354", "finding"),
    "truncate-keeps-uncommitted": ("truncate-keeps-uncommitted.schedule.json",
                                   "TRUNC-KEEPS-UNCOMMITTED", "finding"),
    "truncate-keeps-zk-3.8.0-held": ("truncate-keeps-zk-3.8.0-held.trace.json",
                                     "TRUNC-KEEPS-UNCOMMITTED", "finding"),
    "zookeeper-4646-acked-fixed": ("zookeeper-4646-acked-fixed.trace.json", "ZOOKEEPER-4646",
                                   "control"),
    "zookeeper-3911": ("zookeeper-3911.trace.json", "ZOOKEEPER-3911", "finding"),
}


def argv_of(finding: str, release: str) -> list[str]:
    """The command of one cell (run from the repository's root)."""
    argv = ["flock", LOCK, "python", "-m", "zabmc", "real"]
    if release != DEBIAN:
        argv += ["--release", release]
    return argv + [f"{CORPUS}/{FINDINGS[finding][0]}", "--json", "-q"]


def one_run(finding: str, release: str, at: str) -> dict:
    """Run one cell; its JSON line."""
    argv = argv_of(finding, release)
    t0 = time.monotonic()
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    run = [a if a != "python" else sys.executable for a in argv]
    p = subprocess.run(run, capture_output=True, text=True, cwd=ROOT, timeout=3600)
    rec = {"finding": finding, "release": release, "command": " ".join(argv), "commit": at,
           "date": started, "exit": p.returncode,
           "elapsed_seconds": round(time.monotonic() - t0, 1)}  # with the wait for the lock
    try:
        out = json.loads(p.stdout)
    except ValueError:
        rec["error"] = (p.stderr.strip().splitlines() or ["no output"])[-1][:500]
        return rec
    rec["zookeeper"] = out.get("zookeeper")
    rec["realised"] = out.get("realised")
    rec["realised_to_step"] = out.get("realised_to_step")
    rec["model_steps"] = out.get("model_steps")
    rec["entries"] = out.get("entries")
    rec["entries_done"] = out.get("entries_done")
    rec["stop"] = (out.get("not_realised") or {}).get("text")
    rec["violations"] = list(dict.fromkeys(v["property"] for v in out.get("violations", ())))
    rec["messages"] = [v["message"] for v in out.get("violations", ())][:3]
    rec["verdict"] = ("violation" if rec["violations"] else
                      "no violation" if rec["realised"] else "not realised")
    rec["notes"] = list(out.get("notes", ()))
    rec["writes"] = [{k: w.get(k) for k in ("path", "server", "outcome", "zxid", "error")}
                     for w in out.get("writes", ())]
    rec["log_evidence"] = list(out.get("log_evidence", ()))[:40]  # what explains a stop
    rec["wall_seconds"] = out.get("wall_seconds")
    return rec


def load(path: str = DATA) -> list[dict]:
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(ln) for ln in f if ln.strip()]


def todo(records: list, findings, releases, at: str, again: bool) -> list[tuple]:
    done = {(r["finding"], r["release"]) for r in records if r.get("commit") == at}
    return [(f, r) for f in findings for r in releases if again or (f, r) not in done]


def section(records: list) -> str:
    raise NotImplementedError


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", action="append", default=[], metavar="RELEASE|FINDING",
                    help="only these releases (debian-3.8.0, 3.8.0 ... 3.9.5) and/or findings "
                         "(repeatable)")
    ap.add_argument("--again", action="store_true",
                    help="run cells already in the data file for this commit again")
    ap.add_argument("--table", action="store_true",
                    help="build the section from the data file and run nothing")
    ap.add_argument("--write", action="store_true", help="write the section into "
                    "reports/zookeeper.md (else print it)")
    ap.add_argument("--data", default=DATA, help="the JSON-lines file [default: %(default)s]")
    a = ap.parse_args()
    known = set(RELEASES) | set(OPTIONAL)
    bad = [x for x in a.only if x not in known and x not in FINDINGS]
    if bad:
        ap.error(f"--only {bad[0]}: neither a release ({', '.join(RELEASES + OPTIONAL)}) nor a "
                 f"finding ({', '.join(FINDINGS)})")
    if not a.table:
        rels = [r for r in RELEASES + OPTIONAL if r in a.only] or list(RELEASES)
        finds = [f for f in FINDINGS if f in a.only] or list(FINDINGS)
        at = commit()
        for f, r in todo(load(a.data), finds, rels, at, a.again):
            rec = one_run(f, r, at)
            with open(a.data, "a") as fh:
                fh.write(json.dumps(rec) + "\n")
            print(f"{rec['date']} {f} on {r}: exit {rec['exit']} {rec.get('verdict', '')} "
                  f"{rec.get('violations') or rec.get('stop') or rec.get('error') or ''} "
                  f"({rec.get('wall_seconds')} s)", flush=True)
        print(f"{len(load(a.data))} runs in {a.data}; the section: --table [--write]")
        return 0
    write_zk_section(HEADING, section(load(a.data)), a.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
