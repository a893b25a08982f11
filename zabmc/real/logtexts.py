"""The texts of ZooKeeper's log lines that zabmc reads, and whether a build still writes them (#63).

zabmc learns a server's role, how it was synchronised and what it truncated from its log lines
(zabmc/real/ensemble.py, runner.py, verdict.py). Those were written against Debian's 3.8.0; a
release that rewords one would leave its parser blind, and a run would read as "not realised" or
as no evidence. `missing(dist)` looks for each text among the string constants of the build's
class files (the message formats passed to slf4j, e.g. "Peer state changed: {}", and javac's
string-concatenation recipes hold them verbatim) and returns those a build lacks, so that the
CLI can say, before the run, which release the parser expects.

Checked on 2026-11-29 (`python -c 'from zabmc.real import logtexts; ...'`, and the test
tests/test_real_releases.py): Debian's 3.8.0 and Maven Central's 3.8.0-3.8.6 and 3.9.0-3.9.5
write every one of them. What differs between those builds is the logging backend only: Debian's
package logs through slf4j 1.7 to log4j 1.2 (zabmc adds Debian's slf4j-log4j12), the releases
from Maven Central through logback (1.2.x for 3.8, 1.3.x for 3.9, with slf4j 2); each server's
conf dir carries both a log4j.properties and a logback.xml with the same line layout, so the
parsers read both alike.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

#: (text, who reads it, the 3.8.0 source that writes it)
TEXTS = (
    ("Peer state changed: ", "ensemble.py PEER_STATE_RE: every role",
     "QuorumPeer.setPeerState/setZabState/setSyncMode"),
    ("LOOKING", "ensemble.py LOOKING_RE: the first election", "QuorumPeer.run, case LOOKING"),
    ("Have quorum of supporters", "runner.py _EVIDENCE", "Leader.lead"),
    ("Truncating log to get in sync with the leader", "runner.py _EVIDENCE",
     "Learner.syncWithLeader, TRUNC"),
    ("Getting a diff from the leader", "runner.py _EVIDENCE", "Learner.syncWithLeader, DIFF"),
    ("Getting a snapshot from leader", "runner.py _EVIDENCE", "Learner.syncWithLeader, SNAP"),
    ("Synchronizing with Learner sid: ", "runner.py _EVIDENCE", "LearnerHandler.syncFollower"),
    ("Snapshot loaded in ", "runner.py _EVIDENCE", "ZKDatabase.loadDataBase"),
    ("(highestZxid) > ", "runner.py _EVIDENCE", "FileTxnSnapLog.fastForwardFromEdits"),
    ("NEWLEADER ACK from sid: ", "verdict.py leader-unexpected-ack", "Leader.waitForNewLeaderAck"),
    ("Shutdown called. For the reason ", "verdict.py leader-unexpected-ack", "Leader.shutdown"),
    ("Exception when following the leader", "verdict.py sync-exception", "Follower.followLeader"),
    ("is older than the last zxid", "verdict.py load-exception", "QuorumPeer.loadDataBase"),
)


def _blob(jar: Path) -> bytes:
    with zipfile.ZipFile(jar) as z:
        return b"".join(z.read(n) for n in z.namelist() if n.endswith(".class"))


def missing(classpath: list, main_jar: str | None = None) -> list[tuple]:
    """The TEXTS rows no class of the build's ZooKeeper jar holds ([] when all are there, or when
    no jar has QuorumPeerMain: nothing to say)."""
    from zabmc.real.install import _jar_has_main
    jars = [Path(main_jar)] if main_jar else [Path(p) for p in classpath
                                              if p.endswith(".jar") and _jar_has_main(Path(p))]
    if not jars:
        return []
    try:
        blob = _blob(jars[0])
    except (OSError, zipfile.BadZipFile):
        return []
    return [row for row in TEXTS if row[0].encode() not in blob]
