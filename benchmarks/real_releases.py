"""Every ZooKeeper release `zabmc real --release` can run, started for real (#63).

For Debian's 3.8.0 and each release of `zabmc real --releases` (fetched with Maven when not
cached), on loopback behind zabmc's link proxy: Byteman's rule checker on every hook point
(zabmc/real/hookcheck.py), the log texts zabmc reads (zabmc/real/logtexts.py), then a 3-server
ensemble (zabmc.real.Ensemble, the configuration `zabmc real` writes) until one leads and two
follow in broadcast as read from the servers' logs, the leader killed (SIGKILL) and the two
others until one leads and one follows again; each role checked against the four-letter word
`srvr`. Prints a markdown table.

    python benchmarks/real_releases.py [--only 3.9.5 ...]
"""

from __future__ import annotations

import argparse
import time

from zabmc.core.errors import UsageError
from zabmc.real import hookcheck, logtexts, releases
from zabmc.real.ensemble import Ensemble
from zabmc.real.install import find_byteman, find_java, find_zookeeper


def one(version: str | None) -> dict:
    row = {"release": version or "Debian 3.8.0"}
    try:
        dist = find_zookeeper(releases.lib_dir(version) if version else None)
    except UsageError as e:
        row["error"] = str(e)
        return row
    row["backend"] = dist.backend
    byteman = find_byteman() or (releases.byteman_jar(version) if version else None)
    row["hooks"] = ("no Byteman" if byteman is None else
                    ", ".join(hookcheck.not_applying(
                        hookcheck.check(dist.classpath, byteman, find_java())))
                    or "all apply")
    row["log texts"] = ", ".join(t for t, _, _ in logtexts.missing(dist.classpath)) or "all written"
    t0 = time.monotonic()
    try:
        with Ensemble(3, zookeeper=dist) as ens:
            ens.start_all()
            leader = ens.wait_settled(timeout=60)
            modes = {i: ens.srvr(i).get("mode") for i in ens.ids}
            ok1 = all(modes[i] == ("leader" if i == leader else "follower") for i in ens.ids)
            ens.kill(leader)
            rest = [i for i in ens.ids if i != leader]
            leader2 = ens.wait_settled(among=rest, timeout=60)
            modes2 = {i: ens.srvr(i).get("mode") for i in rest}
            ok2 = all(modes2[i] == ("leader" if i == leader2 else "follower") for i in rest)
            row["ensemble"] = (f"server {leader} led, srvr {'agrees' if ok1 else modes}; killed, "
                               f"server {leader2} led, srvr {'agrees' if ok2 else modes2}")
    except Exception as e:  # a row of the table, not the end of the survey
        row["ensemble"] = f"failed: {str(e).splitlines()[0]}"
    row["seconds"] = round(time.monotonic() - t0, 1)
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="these releases (default: Debian's and every one "
                                              "Maven Central lists)")
    a = ap.parse_args()
    if a.only:
        versions = a.only
    else:
        listed, _ = releases.available_versions()
        versions = [None] + listed
    rows = [one(v) for v in versions]
    print("| release | backend | hook points (hookcheck) | log texts (logtexts) | 3 servers, "
          "leader killed | seconds |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['release']} | - | - | - | not run: {r['error']} | - |")
        else:
            print(f"| {r['release']} | {r['backend']} | {r['hooks']} | {r['log texts']} | "
                  f"{r['ensemble']} | {r['seconds']} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
