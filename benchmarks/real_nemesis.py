"""A nemesis campaign per ZooKeeper build on real servers, and the section "Nemeses on real
ZooKeeper" of reports/zookeeper.md (#63 item 6).

For Debian's 3.8.0 (unless --no-debian) and each --release, runs

    python -m zabmc real --nemesis all --random N --seed S [--release V] \
        --out reports/data/real-nemesis/BUILD --json -q

(BUILD the release, or debian-3.8.0; N = --per times the five nemeses, taken in turn), holding `flock(2)` on LOCK while it runs when
--lock is given (the lock `flock LOCK command` takes, on a machine where other jobs run real
ensembles too); the commit is read once the lock is held, just before the run
("+changes" when zabmc/ or models/ differ from it). Each schedule's result is appended to a
JSON-lines file with the command, the commit and the time it ran (so that a later invocation adds
builds), failing schedules are saved under reports/data/real-nemesis/BUILD/ by `zabmc real` itself
(each records the command that made it and the servers its letters were bound to), and --write
rewrites the section from every line of the file.

    python benchmarks/real_nemesis.py --per 2 --seed 1 --release 3.9.5 --lock /tmp/zabmc-real.lock
    python benchmarks/real_nemesis.py --write            # the section from the lines only
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
from benchmarks.common import real_lock, write_zk_section  # noqa: E402
DATA = "reports/data/real-nemesis.jsonl"
KEPT = "reports/data/real-nemesis"
HEADING = "## Nemeses on real ZooKeeper"


def _locked(path: str | None):
    """flock(2) on `path` (what `flock PATH command` takes) while a campaign runs."""
    return real_lock(path)


def commit() -> str:
    r = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                       cwd=ROOT)
    dirty = subprocess.run(["git", "status", "--porcelain", "zabmc", "models"],
                           capture_output=True, text=True, cwd=ROOT).stdout.strip()
    return r.stdout.strip() + ("+changes" if dirty else "")


def command(release: str | None, n: int, seed: int) -> list:
    """The campaign's `zabmc real` command line. Each build keeps its failing schedules in a
    folder of its own: `zabmc real` names them by seed and index only (zabmc-real-S-K), so in one
    folder a later build's failure at an index would overwrite an earlier build's."""
    return ["python", "-m", "zabmc", "real", "--nemesis", "all", "--random", str(n),
            "--seed", str(seed)] + (["--release", release] if release else []) \
        + ["--out", f"{KEPT}/{release or 'debian-3.8.0'}", "--json", "-q"]


def campaign(release: str | None, n: int, seed: int, lock: str | None) -> list:
    argv = command(release, n, seed)
    with _locked(lock):
        at = commit()  # the code that runs, once the lock is ours and before it runs
        t = time.time()
        p = subprocess.run([sys.executable] + argv[1:], capture_output=True, text=True, cwd=ROOT,
                           timeout=7200)
    try:
        out = json.loads(p.stdout)
    except ValueError:
        raise SystemExit(f"{' '.join(argv)}: exit {p.returncode}: {p.stderr[-2000:]}")
    base = {"command": " ".join(argv), "commit": at, "exit": p.returncode,
            "build": release or "debian-3.8.0", "zookeeper": out["zookeeper"],
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))}
    rows = []
    for r in out["runs"]:
        rows.append(dict(base, index=r["index"], nemesis=r["nemesis"],
                         bound=r["servers_bound"], verdict=r["verdict"],
                         properties=r["properties"], writes=r["writes"],
                         acknowledged=r["acknowledged"], wall_seconds=r["wall_seconds"],
                         notes=r["notes"], schedule=r.get("schedule")))
    return rows


def section(rows: list) -> list:
    from zabmc.real.nemesis import NEMESES
    cmds = sorted({(_build(r), r["command"], r["commit"], r["started"][:10]) for r in rows},
                  key=lambda c: _order(c[0]))
    lines = [HEADING, "",
             "Produced by `python benchmarks/real_nemesis.py --write` from "
             f"[{DATA.split('/', 1)[1]}]({DATA.split('/', 1)[1]}), one JSON line per schedule, "
             "made by these campaigns (`zabmc real --nemesis`, docs/real-zookeeper.md "
             "\"Nemeses\"; three servers on 127.0.0.1, each schedule in a fresh ensemble; wall "
             "seconds on a two-core machine shared with other jobs). The same seed gives every "
             "build the same schedules, letter for letter; the servers and the timing are the "
             "builds' own:", ""]
    lines += [f"- {b}: `{c}` at {k} on {d}" for b, c, k, d in cmds]
    lines += ["", "| ZooKeeper | nemesis | schedules | writes | acknowledged | violations | "
              "wall seconds |", "|---|---|---:|---:|---:|---:|---:|"]
    groups = defaultdict(list)
    for r in rows:
        groups[(_build(r), r["nemesis"])].append(r)
    order = list(NEMESES)
    for (zk, nem), rs in sorted(groups.items(), key=lambda kv: (_order(kv[0][0]),
                                                                 order.index(kv[0][1]))):
        bad = [r for r in rs if r["verdict"] == "violation"]
        lines.append(f"| {zk} | {nem} | {len(rs)} | {sum(r['writes'] for r in rs)} | "
                     f"{sum(r['acknowledged'] for r in rs)} | {len(bad)}"
                     + (" (" + "; ".join(f"{r['index']}: {', '.join(r['properties'])}"
                                         for r in bad) + ")" if bad else "")
                     + f" | {sum(r['wall_seconds'] for r in rs):.0f} |")
    bad = [r for r in rows if r["verdict"] == "violation"]
    lines += [""]
    if bad:
        lines += ["The failing schedules, as they ran (each names its command and the servers "
                  "its letters were bound to; `zabmc real FILE` runs it again):", ""]
        lines += [f"- {r['zookeeper']}, {r['nemesis']}: `{r['schedule']}` "
                  f"({', '.join(r['properties'])})" for r in bad]
    else:
        lines += ["No schedule broke a property of the verdict (agreement, prefix, "
                  "acknowledged-durable, epoch-monotonic, epoch-order, leader-unexpected-ack, "
                  "sync-exception, load-exception: docs/real-zookeeper.md, \"The verdict\"). "
                  "A handful of schedules per nemesis is a smoke test of the nemeses, not a "
                  "measure of how rare a loss is."]
    binds = defaultdict(int)
    for r in rows:
        binds[", ".join(f"{k}={v}" for k, v in sorted(r["bound"].items()))] += 1
    lines += ["", "The servers the letters were bound to (L the leader, F1 and F2 the others, M "
              "the leader after L's SIGKILL), in how many schedules: "
              + "; ".join(f"{b}: {n}" for b, n in sorted(binds.items())) + "."]
    notes = sorted({n for r in rows for n in r["notes"]})
    if notes:
        lines += ["", "What the runs noted:", ""] + [f"- {n}" for n in notes]
    return lines + [""]


def _build(r: dict) -> str:
    return (f"{r['zookeeper']} (Debian)" if r["build"].startswith("debian")
            else f"{r['zookeeper']} (Maven Central)")


def _order(build: str) -> tuple:
    return (0 if "Debian" in build else 1, [int(x) for x in build.split()[0].split(".")])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--per", type=int, default=0, help="schedules per nemesis (0: run none)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--release", action="append", default=[], help="a release (repeatable)")
    ap.add_argument("--no-debian", action="store_true", help="not Debian's 3.8.0")
    ap.add_argument("--lock", help="run each campaign under `flock LOCK`")
    ap.add_argument("--write", action="store_true", help="rewrite the report's section")
    a = ap.parse_args()
    from zabmc.real.nemesis import NEMESES
    path = os.path.join(ROOT, DATA)
    builds = ([] if a.no_debian else [None]) + a.release
    for rel in builds if a.per > 0 else ():
        rows = campaign(rel, a.per * len(NEMESES), a.seed, a.lock)
        with open(path, "a") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
        print(f"{rel or 'debian-3.8.0'}: {len(rows)} schedules, "
              f"{sum(r['verdict'] == 'violation' for r in rows)} with a violation", flush=True)
    if a.write:
        rows = [json.loads(ln) for ln in open(path).read().splitlines() if ln.strip()]
        # the section in place of its old text, every other section as it is
        write_zk_section(HEADING, "\n".join(section(rows)).rstrip("\n") + "\n", True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
