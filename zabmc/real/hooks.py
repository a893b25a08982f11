"""Byteman hook points: where zabmc holds a thread of a real ZooKeeper server.

A model step that is finer than what a real server does in one go (a follower that acknowledges
NEWLEADER while its SyncThread has not yet written the transactions) is realised by holding the
thread that would make the difference, then killing the server while it is held. Each hook point
names one method of ZooKeeper's source; the rules are loaded at the JVM's start
(`-javaagent:byteman.jar=script:FILE`) and stay inert until zabmc arms them:

- armed: a control file `hold-<point>` exists in the server's control directory (the rule's
  condition tests it each time the method is entered, a stat() call);
- held: the thread that entered the method waits (Byteman's `waitFor`) and the rule prints
  `zabmc-hook: held <point>` on the server's stdout, which zabmc waits on;
- released: zabmc removes the control file and sends the four-letter word `ruok`, whose handler
  (`RuokCommand.commandRun`) carries a rule per point that wakes the threads held there once
  that point's files are gone (so releasing one point leaves the others held); the held thread
  prints `zabmc-hook: released <point>`. A one-thread point (`once`) renames its control file
  to `held-<point>` as it holds, so that the threads entering after it pass, and its release
  removes that file too.

A server killed while held loses what the held thread had not done: killing a JVM (SIGKILL) does
not drop the page cache, so a write that must be lost has to be kept inside the JVM, and holding
the thread before it flushes keeps the bytes in the JVM's buffer.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class HookPoint:
    name: str
    cls: str
    method: str
    where: str  # Byteman location clause
    what: str  # what holding it does (docs/real-zookeeper.md has a row for each point)
    source: str  # the ZooKeeper source it follows
    #: the rule disarms itself when it holds a thread (it deletes its control file), so that it
    #: holds one thread only: the others that enter the method later (a new role's) pass
    once: bool = False
    #: a further condition on the method's arguments (Byteman's expression language)
    when: str = ""
    #: what the thread does once released, instead of going on (a Byteman action: `throw ...`)
    then: str = ""
    #: the point is armed for one packet, named by its zxid (hex, as Long.toHexString writes
    #: it): its control file is `hold-<point>-<zxid>`, and only the packet (`$1`) of that zxid
    #: is held
    keyed: bool = False


CATALOGUE = (
    HookPoint(
        "sync-commit", "org.apache.zookeeper.server.ZKDatabase", "commit", "AT ENTRY",
        "holds the SyncThread before it flushes and fsyncs the transactions it appended: they stay "
        "in the JVM's buffered log stream, so a follower's ACKs after them are not sent and a "
        "SIGKILL loses them",
        "3.8.0 SyncRequestProcessor.run/flush -> ZKDatabase.commit -> FileTxnLog.commit "
        "(BufferedOutputStream flushed there); Learner.syncWithLeader hands NEWLEADER's "
        "packetsNotCommitted to it with FollowerZooKeeperServer.logRequest before the ACK"),
    HookPoint(
        "snapshot", "org.apache.zookeeper.server.ZooKeeperServer", "takeSnapshot", "AT ENTRY",
        "holds the thread that is about to write a snapshot (a learner's NEWLEADER after SNAP or "
        "TRUNC, Learner.syncWithLeader)",
        "3.8.0 Learner.syncWithLeader: `if (snapshotNeeded) zk.takeSnapshot(syncSnapshot)`"),
    HookPoint(
        "sync-append", "org.apache.zookeeper.server.ZKDatabase", "append", "AT ENTRY",
        "holds the SyncThread that took the next queued transaction, before it appends it to "
        "the log: nothing of it is written, in the JVM or on disk, until zabmc releases the "
        "thread (it then appends and flushes it, and whatever it queued after it) or kills the "
        "server. It holds one thread: the rule disarms itself, so the SyncThread of a role the "
        "server takes later writes freely, as it does beside a SyncThread that a follower's "
        "shutdown left running (ZOOKEEPER-4712)",
        "3.8.0 SyncRequestProcessor.run (line 181: `zks.getZKDatabase().append(si)`) -> "
        "ZKDatabase.append (line 638); Learner.shutdown (line 873) calls "
        "ZooKeeperServer.shutdown(boolean), which shuts down firstProcessor only (line 859), "
        "not FollowerZooKeeperServer's syncProcessor",
        once=True),
    HookPoint(
        "newleader-ack", "org.apache.zookeeper.server.quorum.Learner", "writePacket", "AT ENTRY",
        "holds the follower's QuorumPeer thread before it writes NEWLEADER's ACK, after it handed "
        "the synchronised transactions to the SyncThread: the SyncThread writes them and sends "
        "their ACKs first (SendAckRequestProcessor, the same writePacket). It holds one thread, "
        "the first ACK of a zxid with counter 0 (NEWLEADER's; a proposal's ACK has a counter)",
        "3.8.0 Learner.syncWithLeader, NEWLEADER: fzk.logRequest for packetsNotCommitted, then "
        "`writePacket(new QuorumPacket(Leader.ACK, newLeaderZxid, null, null), true)` (line "
        "769); SendAckRequestProcessor.processRequest calls learner.writePacket (line 46); the "
        "leader takes the first ACK it reads as NEWLEADER's (LearnerHandler.run line 627, "
        "Leader.waitForNewLeaderAck): ZOOKEEPER-4685",
        once=True, when="$1 != null && $1.getType() == 3 && $1.getZxid() % 4294967296L == 0L"),
    HookPoint(
        "set-epoch", "org.apache.zookeeper.server.quorum.QuorumPeer", "setCurrentEpoch",
        "AT ENTRY",
        "holds the follower's QuorumPeer thread before it writes the currentEpoch file at "
        "NEWLEADER, after NEWLEADER's snapshot (TRUNC or SNAP) is on disk: a SIGKILL then leaves "
        "a disk of the new epoch beside the old currentEpoch, which QuorumPeer.loadDataBase "
        "refuses at the next start (ZOOKEEPER-2354). It holds one thread",
        "3.8.0 Learner.syncWithLeader, NEWLEADER: `if (snapshotNeeded) "
        "zk.takeSnapshot(syncSnapshot)` (line 749), then `self.setCurrentEpoch(newEpoch)` (line "
        "752); QuorumPeer.loadDataBase (lines 1165-1176) throws \"The current epoch, X, is older "
        "than the last zxid, Y\"",
        once=True),
    HookPoint(
        "learner-sync", "org.apache.zookeeper.server.quorum.LearnerHandler", "run",
        "AFTER INVOKE syncFollower",
        "holds the leader's LearnerHandler thread of a learner after it has queued the "
        "synchronisation (DIFF or TRUNC and their proposals) and registered the learner for "
        "forwarding, before it queues NEWLEADER and starts the thread that sends the queue: "
        "a COMMIT the leader broadcasts meanwhile is queued before NEWLEADER, as the model's "
        "owed `newleader i j` lets it be (models/zk/README.md F9). It holds one thread",
        "3.8.0 LearnerHandler.run: `syncFollower(peerLastZxid, learnerMaster)` (line 555, "
        "ending in `learnerMaster.startForwarding`), then `queuedPackets.add(newLeaderQP)` "
        "(604) and `startSendingPackets()` (609); Leader.commit queues a COMMIT for every "
        "forwarding follower (Leader.sendPacket)",
        once=True),
    HookPoint(
        "sync-read", "org.apache.zookeeper.server.quorum.Learner", "readPacket", "AT ENTRY",
        "holds the follower's QuorumPeer thread as it is about to read the packet after a "
        "COMMIT (the QuorumPacket it reads into still holds the COMMIT: `syncWithLeader` "
        "reads every packet into one), and once released it fails the read as a broken "
        "connection does (an IOException): during a TRUNC synchronisation the COMMIT is "
        "applied in memory, and the follower gives up before it reads NEWLEADER "
        "(ZOOKEEPER-5094). It holds one thread",
        "3.8.0 Learner.syncWithLeader: one `qp` for every `readPacket(qp)` (lines 551, 560, "
        "624); under TRUNC `writeToTxnLog` is false and a COMMIT is `zk.processTxn(pif.hdr, "
        "pif.rec)` (669); Follower.followLeader catches the exception and QuorumPeer.run calls "
        "`follower.shutdown()`: `zk.shutdown(syncMode == SNAP)` (Learner.java 873)",
        once=True, when="$1 != null && $1.getType() == 4",
        then="throw new java.io.IOException(\"zabmc-hook: connection lost at sync-read\")"),
    HookPoint(
        "ackepoch", "org.apache.zookeeper.server.quorum.Learner", "writePacket", "AT ENTRY",
        "holds the learner's QuorumPeer thread before it writes ACKEPOCH, its answer to "
        "LEADERINFO: the leader's LearnerHandler waits for it (reading with initLimit's "
        "timeout) and synchronises the learner only once it has it, as the model's leader does "
        "when it delivers an ACKEPOCH that stayed in flight. It holds one thread",
        "3.8.0 Learner.registerWithLeader: `writePacket(ackNewEpoch, true)` (line 528); "
        "LearnerHandler.run reads it (`ia.readRecord(ackEpochPacket, ...)`, line 540) before "
        "`syncFollower` (555)",
        once=True, when="$1 != null && $1.getType() == 18"),
    HookPoint(
        "proposal-read", "org.apache.zookeeper.server.quorum.Follower", "processPacket",
        "AT ENTRY",
        "holds the follower's QuorumPeer thread with one PROPOSAL (named by its zxid) read "
        "and not yet handled: it neither queues it for the SyncThread nor reads what follows "
        "(pings, or its leader's closing the connection), as the model's follower to which "
        "that PROPOSAL is still in flight. It holds one thread",
        "3.8.0 Follower.followLeader: `readPacket(qp); processPacket(qp);` (lines 124-125); "
        "Follower.processPacket, PROPOSAL: `fzk.logRequest(hdr, txn, digest)` (lines 162-180)",
        once=True, when="$1 != null && $1.getType() == 2", keyed=True),
    HookPoint(
        "proposal-lost", "org.apache.zookeeper.server.quorum.Follower", "processPacket",
        "AT ENTRY",
        "holds the follower's QuorumPeer thread with one PROPOSAL (named by its zxid) read and "
        "not yet handled, and once released fails it as a broken connection does (an "
        "IOException): the follower gives up its leader without the PROPOSAL, as the model's "
        "follower that notices its lost connection before that PROPOSAL arrives. It holds one "
        "thread",
        "3.8.0 Follower.followLeader: `readPacket(qp); processPacket(qp);` (lines 124-125) in a "
        "`try` whose `catch (Exception e)` closes the socket (lines 127-133), and QuorumPeer.run "
        "then shuts the follower down and goes back to LOOKING",
        once=True, when="$1 != null && $1.getType() == 2", keyed=True,
        then="throw new java.io.IOException(\"zabmc-hook: connection lost at proposal-lost\")"),
)
POINTS = {h.name: h for h in CATALOGUE}
#: the points whose release waits until the thread is held there: what the schedule does next
#: depends on it (a COMMIT queued before NEWLEADER, the read that fails)
WAIT_HELD = frozenset({"learner-sync", "sync-read", "proposal-lost"})
#: the points that hold another thread than a SyncThread (conformance expects none held there)
NOT_SYNC_THREAD = frozenset({"newleader-ack", "ackepoch", "proposal-read"}) | WAIT_HELD
RELEASE_CLASS = "org.apache.zookeeper.server.command.RuokCommand"
HELD = "zabmc-hook: held "
RELEASED = "zabmc-hook: released "


def control_file(control_dir: str | Path, point: str) -> Path:
    return Path(control_dir) / f"hold-{point}"


def held_file(control_dir: str | Path, point: str) -> Path:
    """Where a one-thread point's control file goes while it holds its thread."""
    return Path(control_dir) / f"held-{point}"


def _java(path: Path) -> str:
    p = str(path).replace("\\", "\\\\").replace('"', '\\"')
    return f'(new java.io.File("{p}"))'


def _keyed_java(control_dir: str | Path, point: str) -> str:
    """The control file of a keyed point for the packet `$1`, as a Java expression."""
    p = str(control_file(control_dir, point)).replace("\\", "\\\\").replace('"', '\\"')
    return f'(new java.io.File("{p}-" + Long.toHexString($1.getZxid())))'


def script(control_dir: str | Path) -> str:
    """The Byteman script for one server: every catalogue point, inert until armed."""
    rules = []
    for h in CATALOGUE:
        flag, held = _java(control_file(control_dir, h.name)), _java(held_file(control_dir, h.name))
        if h.keyed:
            flag = _keyed_java(control_dir, h.name)
        once = f"{flag}.renameTo({held});\n   " if h.once else ""
        rules.append(
            f"RULE zabmc hold {h.name}\n"
            f"CLASS {h.cls}\n"
            f"METHOD {h.method}\n"
            f"{h.where}\n"
            + (f"IF {h.when} && {flag}.exists()\n" if h.keyed else
               f"IF {flag}.exists()" + (f" && {h.when}" if h.when else "") + "\n") +
            f"DO {once}traceln(\"{HELD}{h.name}\");\n"
            f"   waitFor(\"zabmc-{h.name}\");\n"
            f"   traceln(\"{RELEASED}{h.name}\")"
            + (f";\n   {h.then}" if h.then else "") + "\n"
            "ENDRULE\n")
    for h in CATALOGUE:
        flag, held = _java(control_file(control_dir, h.name)), _java(held_file(control_dir, h.name))
        rules.append(
            f"RULE zabmc release {h.name}\n"
            f"CLASS {RELEASE_CLASS}\n"
            "METHOD commandRun\n"
            "AT ENTRY\n"
            # a keyed point's control file names a packet the release rule does not see: its
            # thread is held once the file is renamed to held-<point>
            + (f"IF !{held}.exists()\n" if h.keyed else
               f"IF !{flag}.exists() && !{held}.exists()\n") +
            f"DO signalWake(\"zabmc-{h.name}\", false)\n"
            "ENDRULE\n")
    return "\n".join(rules)


def arm(control_dir: str | Path, point: str, key: str | None = None) -> None:
    """Arm `point`; a keyed point for the packet of zxid `key` (hex) only."""
    if point not in POINTS or POINTS[point].keyed != (key is not None):
        raise KeyError(point)
    f = control_file(control_dir, point)
    (f.with_name(f"{f.name}-{key}") if key is not None else f).touch()


def disarm(control_dir: str | Path, point: str) -> None:
    """Disarm `point` (a keyed one for every packet) and let its held thread go."""
    f = control_file(control_dir, point)
    f.unlink(missing_ok=True)
    if POINTS[point].keyed:
        for g in Path(control_dir).glob(f"{f.name}-*"):
            g.unlink(missing_ok=True)
    held_file(control_dir, point).unlink(missing_ok=True)
