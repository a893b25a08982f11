"""The zk model adapter: binds the kernel in `handlers`, with one `Rules` object, to the
`zabmc.core.model.Model` interface. `zk`, `zk-pre3911` and `zk-fixed` differ only in their `Rules`
(models/zk/README.md)."""

from __future__ import annotations

from models.common.model import RulesModel
from zabmc.core.model import EPOCH_STEP, LEAKED_SYNC_THREAD, NEWLEADER_ACK_STEP, Symmetry

from . import codec, footprint, handlers
from . import properties as _props
from .issues import known_issues as _known_issues
from .handlers import Committed393Rules, FixedFleRules, FixedRules, FleRules, Pre3911Rules, Rules
from .state import ELECTION, FOLLOWING, L_BROADCAST, LEADING, Node, leaks, snap_clears


def fresh_node(node_id: int, n: int) -> Node:
    return Node(node_id)


class ZkModel(RulesModel):
    handlers = handlers
    codec = codec
    #: the zk package's own properties this kernel can break (models/zk/properties.py)
    properties = _props.BASE
    #: the known ZooKeeper issues a run passes through (models/zk/issues.py)
    known_issues = staticmethod(_known_issues)
    fresh = staticmethod(fresh_node)
    #: the features of this grain that a real schedule follows (zabmc.core.model, "zabmc real")
    real_grain = frozenset()
    #: the ZooKeeper release this model is (releases.py), or None: an abstraction
    release = None
    #: payloads only, in every grain (docs/check.md, "Symmetry"); the election reads node ids
    symmetry = Symmetry(
        payloads=True,
        why="client payloads are symmetric (models/zk/handlers.py and the grains over it copy "
            "them and compare transactions by zxid and equality only); node ids are not: the "
            "election elects the greatest vote (currentEpoch, last zxid, id) (handlers.vote, "
            "read by handlers.actions' elect and by FLE's _on_notification: v > node.vote)")

    def __init__(self, rules: Rules | None = None, description: str = "", real: bool = False):
        """`real`: the release this variant models is the one `zabmc real` runs (Debian's 3.8.0,
        docs/real-zookeeper.md), so its traces translate to schedules at `real_grain`."""
        super().__init__(rules if rules is not None else Rules())
        tag = self.rules.tag
        self.name = "zk" if not tag else f"zk-{tag}"
        self.description = description
        self.real_translation = self.real_grain if real else None

    def __repr__(self) -> str:
        return f"ZkModel({type(self.rules).__name__}())"

    # --- the model's own actions, and what a lost message does (D1, D6, D8) -------------------------
    def actions(self, nodes, down: int, n: int) -> list:
        return handlers.actions(nodes, down, n, self.rules)

    def act(self, nodes, label: tuple, n: int) -> list:
        return handlers.act(nodes, label, n, self.rules)

    def on_drop(self, nodes, src: int, dst: int, msg, n: int) -> list:
        return handlers.on_drop(nodes, src, dst, msg, n, self.rules)

    describe_action = staticmethod(codec.describe_action)

    # --- what the actions read and write, for partial-order reduction (footprint.py) -------------
    def footprint(self, nodes, down: int, label: tuple, n: int) -> tuple:
        return footprint.footprint(nodes, down, label, n, self.rules)

    def couplings(self, nodes, down: int, n: int, left) -> tuple:
        return footprint.couplings(nodes, down, n, left, self.rules)

    def may_send(self, nodes, down: int, n: int) -> int:
        return footprint.may_send(nodes, down, n, self.rules)

    def undone(self, nodes, down: int, n: int, ev, after) -> bool:
        return footprint.undone(self, nodes, down, n, ev, after, self.rules)

    # --- liveness (docs/liveness.md) ---------------------------------------------------------------
    @staticmethod
    def leader_of(node):
        """The node this one follows: itself when leading; a follower's leader once it is
        connected to it (from FOLLOWERINFO on: `Learner.connectToLeader` has succeeded; with FLE a
        decided follower waits for `connect`, D1); None while looking or not yet connected."""
        if node.role == LEADING:
            return node.id
        if node.role == FOLLOWING and node.phase != ELECTION:
            return node.leader
        return None

    @staticmethod
    def established(node) -> bool:
        """A leader that a quorum (itself included) acknowledged NEWLEADER to
        (`Leader.waitForNewLeaderAck`, then `startZkServer`: the phase L_BROADCAST)."""
        return node.role == LEADING and node.phase == L_BROADCAST


MODEL = ZkModel(description="ZooKeeper 3.7.0's ZAB 1.0 (FLE outcome, DIFF/TRUNC sync, "
                            "asynchronous transaction log)", real=True)
PRE3911 = ZkModel(Pre3911Rules(), description="zk before ZOOKEEPER-3911: DIFF proposals logged "
                                              "only at UPTODATE", real=True)
FIXED = ZkModel(FixedRules(), description="zk with ZOOKEEPER-4785's fix (PR #2111): proposals "
                                          "written, then currentEpoch, then ACK of NEWLEADER",
                  real=True)
FLE = ZkModel(FleRules(), description="zk with the election at Fast Leader Election's grain "
                                     "(notifications, logical clocks)", real=True)
FIXED_FLE = ZkModel(FixedFleRules(), description="zk-fixed with the election at Fast Leader "
                                                 "Election's grain", real=True)
class Coarse393Rules(Committed393Rules):
    """3.9.3's NEWLEADER at the coarse grain (one history for memory and disk, D4, D8): what
    `zk-3.9.3-store` was before the storage grain; `zk-3.9.3-store` is now models/zk/storage.py's."""

    tag = "3.9.3-coarse"


R393C = ZkModel(Coarse393Rules(), description="ZooKeeper 3.9.3's NEWLEADER at the coarse grain: the "
                                               "DIFF's committed transactions written, outstanding "
                                               "ones kept for UPTODATE (PR #2152)")


# --- the finer grain of ZooKeeper's follower threads (models/zk/README.md, F1-F8) ----------------
from . import fine  # noqa: E402


class Fine370Rules(Rules):
    """ZooKeeper 3.7.0 at its threads' grain: NEWLEADER's ACK a step of its own after the queueing
    (F1), the SyncThread acknowledging every transaction it writes (F3), the leader taking the
    first ACK it reads as the NEWLEADER ack (F4)."""

    tag = "3.7.0-threads"


class Fine392Rules(FixedRules):
    """ZooKeeper 3.9.2 (and 3.8.5) at the same grain: ZOOKEEPER-4785's fix (PR #2111; #2132 in
    3.8.5, #2133 in 3.9.2) writes the proposals in the QuorumPeer thread before the NEWLEADER ACK
    and acknowledges them only after UPTODATE's (F6): ZOOKEEPER-4685 cannot happen."""

    tag = "3.9.2-threads"


class KernelZkModel(ZkModel):
    """A `ZkModel` whose kernel is a finer module (`kernel`: fine.py, storage.py, forward.py)
    over the bound `handlers`, which it passes on every call, so that a mutated kernel
    (`zabmc mutate`) reaches these variants too. The module is also the codec (its views: the
    coarse ones and its finer fields)."""

    kernel = None

    def __init_subclass__(cls, **kw):
        k = cls.__dict__.get("kernel")
        if k is not None:  # before RulesModel binds the views from `codec`
            cls.codec = k
            cls.fresh = staticmethod(k.fresh)
            cls.describe_action = staticmethod(k.describe_action)
        super().__init_subclass__(**kw)

    def start(self, node, n: int):
        return self.kernel.start(self.handlers, node, n, self.rules)

    def deliver(self, node, src: int, msg, n: int):
        return self.kernel.deliver(self.handlers, node, src, msg, n, self.rules)

    def timeout(self, node, n: int):
        return self.kernel.timeout(self.handlers, node, n, self.rules)

    def propose(self, node, payload: bytes, n: int):
        return self.kernel.propose(self.handlers, node, payload, n, self.rules)

    def actions(self, nodes, down: int, n: int) -> list:
        return self.kernel.actions(self.handlers, nodes, down, n, self.rules)

    def act(self, nodes, label: tuple, n: int) -> list:
        return self.kernel.act(self.handlers, nodes, label, n, self.rules)

    def on_drop(self, nodes, src: int, dst: int, msg, n: int) -> list:
        return self.kernel.on_drop(self.handlers, nodes, src, dst, msg, n, self.rules)


class FineZkModel(KernelZkModel):
    """A `ZkModel` whose kernel is `fine` over the bound `handlers`."""

    kernel = fine
    properties = _props.FINE
    real_grain = frozenset({NEWLEADER_ACK_STEP})

    @staticmethod
    def busy(node) -> bool:
        """The QuorumPeer thread owes the ACK of NEWLEADER (F1): it writes it at once, before a
        timeout could fire (check --liveness waits for it, docs/liveness.md)."""
        return node.owed


R370 = FineZkModel(Fine370Rules(), description="ZooKeeper 3.7.0 at its threads' grain: NEWLEADER's "
                                                "ACK a step after the queueing, the SyncThread "
                                                "acknowledging all it writes, the leader's first "
                                                "ACK read as NEWLEADER's (ZOOKEEPER-4685)",
                   real=True)
R392 = FineZkModel(Fine392Rules(), description="ZooKeeper 3.9.2 and 3.8.5 at the same grain: "
                                                "proposals written before the NEWLEADER ACK, "
                                                "acknowledged after UPTODATE's (PR #2111)")


# --- the storage grain of ZooKeeper 3.9 (models/zk/README.md, S1-S10) -----------------------------
from . import storage  # noqa: E402


class Store393Rules(Committed393Rules):
    """ZooKeeper 3.9.3 with its in-memory committed log: `Learner.syncWithLeader` applies the
    transactions its synchronisation committed with `processTxn(TxnHeader, Record)`, which does
    not add them to `ZKDatabase.committedLog` (S4; ZOOKEEPER-4925)."""

    tag = "3.9.3-store"
    sync_in_clog = False


class Store394Rules(Committed393Rules):
    """ZooKeeper 3.9.4: 4925's fix (PR #2254, #2266 in 3.9.4) applies them with
    `processTxn(Request)`, which adds them to the committed log (S4)."""

    tag = "3.9.4-store"
    sync_in_clog = True


class StoreZkModel(KernelZkModel):
    """A `ZkModel` whose kernel is `storage` over the bound `handlers`."""

    kernel = storage
    properties = _props.STORE


R393 = StoreZkModel(Store393Rules(), description="ZooKeeper 3.9.3 with its in-memory committed log: "
                                                  "the sync's committed transactions applied "
                                                  "outside it, DIFF chosen from it "
                                                  "(ZOOKEEPER-4925)")
R394 = StoreZkModel(Store394Rules(), description="ZooKeeper 3.9.4: as zk-3.9.3-store, with the sync's "
                                                  "committed transactions added to the committed "
                                                  "log (4925's fix, PR #2254)")


# --- the leader's NEWLEADER a step after its synchronisation (models/zk/README.md, F9-F11) --------
from . import forward  # noqa: E402


class Fwd370Rules(Fine370Rules):
    """`zk-3.7.0-threads` with an established leader's NEWLEADER queued a step after the sync packets, so
    that its broadcasts can fall between them (LearnerHandler.syncFollower's startForwarding, F9)."""

    tag = "3.7.0-fwd"


class ForwardZkModel(FineZkModel):
    """A `ZkModel` whose kernel is `forward` (over fine.py over the bound `handlers`)."""

    kernel = forward.KERNEL

    @staticmethod
    def busy(node) -> bool:
        """As `zk-3.7.0-threads`'s, and a leader that owes NEWLEADER: its LearnerHandler queues it right
        after syncFollower (F9), before a timer could fire."""
        return node.owed or bool(node.nlq)


R370F = ForwardZkModel(Fwd370Rules(), description="zk-3.7.0-threads with an established leader's NEWLEADER "
                                                   "a step after the sync packets: broadcasts can "
                                                   "fall between them (startForwarding, F9-F11)")


# --- a follower's shutdown as 3.7.0-3.9.2 do it (models/zk/README.md, H1-H9) ---------------------
from . import shutdown  # noqa: E402


class Sd370Rules(Fine370Rules):
    """`zk-3.7.0-threads` with its follower's shutdown (ZOOKEEPER-4712, fixed in 3.9.3 by PR #2154): the
    SyncThread's queue leaks, the data tree is kept, votes and ACKEPOCH read memory (H1-H9)."""

    tag = "3.7.0-shutdown"
    durable = shutdown.DURABLE


class Sd392Rules(Fine392Rules):
    """`zk-3.9.2-threads` (and 3.8.5) with the same shutdown: PR #2111 writes the synchronisation's
    proposals before the NEWLEADER ack, but a broadcast's queue still leaks (H1-H9)."""

    tag = "3.9.2-shutdown"
    durable = shutdown.DURABLE


class ShutdownZkModel(FineZkModel):
    """A `ZkModel` whose kernel is `shutdown` (over fine.py over the bound `handlers`)."""

    kernel = shutdown.KERNEL
    properties = _props.SHUTDOWN
    real_grain = FineZkModel.real_grain | {LEAKED_SYNC_THREAD}


R370S = ShutdownZkModel(Sd370Rules(), description="zk-3.7.0-threads with a follower's shutdown as 3.7.0 "
                                                   "does it: the SyncThread's queue leaks, memory "
                                                   "is kept and read by votes and ACKEPOCH "
                                                   "(ZOOKEEPER-4712, 5094)", real=True)
R392S = ShutdownZkModel(Sd392Rules(), description="zk-3.9.2-threads with the same shutdown (ZOOKEEPER-4712 "
                                                   "until 3.9.3; 5094)")


# --- currentEpoch a step after NEWLEADER's writes to disk (models/zk/README.md, K1-K4) -----------
from . import epoch  # noqa: E402


class Epoch370Rules(Fine370Rules):
    """`zk-3.7.0-threads` with currentEpoch written a step after a TRUNC's snapshot (Learner.java 746-749),
    and the start-up's epoch check (QuorumPeer.loadDataBase; ZOOKEEPER-2354)."""

    tag = "3.7.0-epoch"


class Epoch392Rules(Fine392Rules):
    """`zk-3.9.2-threads` (and 3.8.5) with currentEpoch written a step after the snapshot and the
    synchronisation's proposals (PR #2111; 3.9.2 Learner.java 746-775), and the same check."""

    tag = "3.9.2-epoch"


class EpochZkModel(FineZkModel):
    """A `ZkModel` whose kernel is `epoch.FINE` (over fine.py over the bound `handlers`)."""

    kernel = epoch.FINE
    properties = _props.EPOCH
    real_grain = FineZkModel.real_grain | {EPOCH_STEP}

    @staticmethod
    def busy(node) -> bool:
        """As `zk-3.7.0-threads`'s, and a follower that owes currentEpoch: its QuorumPeer thread writes it
        before it reads again (E2)."""
        return node.owed or bool(node.snapped)


R370E = EpochZkModel(Epoch370Rules(), description="zk-3.7.0-threads with currentEpoch written a step "
                                                   "after NEWLEADER's snapshot, and the start-up's "
                                                   "epoch check (ZOOKEEPER-2354)", real=True)
#: what each -epoch variant adds to its release's
_EPOCH = ("with currentEpoch written a step after NEWLEADER's writes to disk, and the start-up's "
          "epoch check (ZOOKEEPER-2354)")
R392E = EpochZkModel(Epoch392Rules(), description=f"zk-3.9.2-threads {_EPOCH}")


class Epoch393Rules(Store393Rules):
    """`zk-3.9.3-store` with currentEpoch written a step after NEWLEADER's snapshot and the DIFF's
    committed transactions (PR #2152; 3.9.4 Learner.java 759-813), and the start-up's check."""

    tag = "3.9.3-epoch"


class Epoch394Rules(Store394Rules):
    """`zk-3.9.4-store` with the same window and check (ZOOKEEPER-2354 is unfixed in 3.9.4)."""

    tag = "3.9.4-epoch"


class StoreEpochZkModel(StoreZkModel):
    """A `ZkModel` whose kernel is `epoch.STORE` (over storage.py over the bound `handlers`)."""

    kernel = epoch.STORE
    properties = _props.STORE_EPOCH
    real_grain = frozenset({EPOCH_STEP})

    @staticmethod
    def busy(node) -> bool:
        """A follower that owes currentEpoch: its QuorumPeer thread writes it before it reads
        again (K2)."""
        return bool(node.snapped)


R393E = StoreEpochZkModel(Epoch393Rules(), description=f"zk-3.9.3-store {_EPOCH}")
R394E = StoreEpochZkModel(Epoch394Rules(), description=f"zk-3.9.4-store {_EPOCH}")


# --- one model per release: every grain its stack has at once (models/zk/releases.py) ----------
from . import releases, serve  # noqa: E402


class _Release:
    """What every release model's rules share: a TRUNC cuts the log as FileTxnLog.truncate does
    (releases.py, models/zk/README.md R4)."""

    truncate = "file"


class _ThreadsRelease(_Release):
    """A release on the THREADS stack: shutdown.py's disk apart from memory is durable; a TRUNC's
    or SNAP's committed transactions are applied outside the committed log (Learner.syncWithLeader
    calls `zk.processTxn(pif.hdr, pif.rec)` from release-3.6.2 to release-3.9.3, S4)."""

    durable = shutdown.DURABLE + ("logbase",)  # the snapshot files are on disk (S12)
    sync_in_clog = False


class Rel362Rules(_ThreadsRelease, Pre3911Rules):
    """ZooKeeper 3.6.2: proposals logged only at UPTODATE (before ZOOKEEPER-3911's fix); its
    follower's shutdown writes the SyncThread's queue and keeps the data tree (no leak)."""

    tag = "3.6.2"
    leaks = False


class Rel370Rules(_ThreadsRelease, Fine370Rules):
    """ZooKeeper 3.7.0 (releases.py)."""

    tag = "3.7.0"


class Rel380Rules(Rel370Rules):
    """ZooKeeper 3.8.0, Debian's build: 3.7.0's rules (releases.py)."""

    tag = "3.8.0"


class Rel385Rules(_ThreadsRelease, Fine392Rules):
    """ZooKeeper 3.8.5 (and 3.8.6): ZOOKEEPER-4785's fix, 3.7.0's shutdown (releases.py)."""

    tag = "3.8.5"


class Rel392Rules(Rel385Rules):
    """ZooKeeper 3.9.2: as 3.8.5 (releases.py)."""

    tag = "3.9.2"


class Rel393Rules(_ThreadsRelease, Store393Rules):
    """ZooKeeper 3.9.3 (releases.py): PR #2152's NEWLEADER (the DIFF's committed transactions
    written and applied outside the committed log, ZOOKEEPER-4925; the outstanding ones logged at
    UPTODATE), and a follower's shutdown that writes the SyncThread's queue (PR #2154:
    `LearnerZooKeeperServer.shutdownComponents` shuts the SyncRequestProcessor down) and still
    clears the database of an interrupted SNAP (`zk.shutdown(syncMode == SNAP)`)."""

    tag = "3.9.3"
    leaks = False
    snap_clears = True


class Rel394Rules(Rel393Rules):
    """ZooKeeper 3.9.4 (and 3.9.5) (releases.py): 4925's fix (PR #2254, #2266) applies the
    synchronisation's committed transactions as Requests, into the committed log."""

    tag = "3.9.4"
    sync_in_clog = True


class ReleaseZkModel(KernelZkModel):
    """A ZooKeeper release: the THREADS stack of releases.py (fine.py, forward.py, shutdown.py
    and epoch.py at once) under that release's rules."""

    kernel = serve.THREADS  # releases.THREADS, and a follower serving at UPTODATE (R6)
    properties = _props.RELEASE
    real_grain = frozenset({NEWLEADER_ACK_STEP, LEAKED_SYNC_THREAD, EPOCH_STEP})

    @staticmethod
    def busy(node) -> bool:
        """A thread that owes a step before it reads again: the NEWLEADER ACK (F1), a
        LearnerHandler's NEWLEADER (F9), currentEpoch (K2)."""
        return node.owed or bool(node.nlq) or bool(node.snapped)


def _release(version: str):
    row = next(r for r in releases.RELEASES if r.version == version)
    rules = globals()[row.rules]()
    what = f"ZooKeeper {version}: {releases.GRAINS[row.stack]}"
    if row.missing:
        what += f"; not yet its {' and '.join(row.missing)} grains"
    # `zabmc real` runs 3.8.0 and later (Debian's, and Maven Central's, docs/real-zookeeper.md);
    # 3.9.3's and 3.9.4's NEWLEADER (PR #2152: the DIFF's committed transactions appended,
    # applied and written by the QuorumPeer thread, then currentEpoch, then the ACK; the
    # outstanding proposals logged after UPTODATE) is the threads' grain's `epoch` and
    # `ack-newleader` steps after a NEWLEADER that writes to disk, as 3.9.2's is: the `set-epoch`
    # and `newleader-ack` holds follow it (tests/corpus/zk/zookeeper-4925-zk-3.9.3.trace.json)
    runs = (3, 8, 0) <= tuple(map(int, version.split(".")))
    model = ReleaseZkModel(rules, description=what, real=runs)
    model.release = version
    if not leaks(rules) and snap_clears(rules):
        # 3.9.3 and 3.9.4: no SyncThread outlives its role (PR #2154) and an interrupted SNAP
        # clears the database, so no disk gets a transaction older than the data tree's last
        # that the tree lacks (models/zk/README.md R3): ZOOKEEPER-4712's write is absent by
        # construction. (3.6.2 keeps an interrupted SNAP's tree beside the old log, S13.)
        model.properties = tuple(p for p in model.properties if p != "stale-log-write")
    return model


Z362, Z370, Z380, Z385, Z392, Z393, Z394 = (_release(r.version) for r in releases.RELEASES)


# --- a release with one patch: the fix of a bug zabmc found, which no release ships -------------

#: the patch of the TRUNC finding (reports/bugs/trunc-keeps-uncommitted.md, "Proposed fix")
TRUNC_FIX = "reports/bugs/trunc-keeps-uncommitted.fix.diff"


class _TruncFix:
    """FileTxnLog.truncate(z) as TRUNC_FIX makes it: the log keeps exactly the transactions with
    zxid <= z (state.cut "exact"), so `truncate-keeps` has no window left."""

    truncate = "exact"


class Rel380TruncFixRules(_TruncFix, Rel380Rules):
    """ZooKeeper 3.8.0 with TRUNC_FIX applied: 3.8.0's rules but the truncation."""

    tag = "3.8.0+trunc-fix"


class Rel394TruncFixRules(_TruncFix, Rel394Rules):
    """ZooKeeper 3.9.4 (and 3.9.5) with TRUNC_FIX applied: 3.9.4's rules but the truncation."""

    tag = "3.9.4+trunc-fix"


def _patched(release, rules, patch: str, what: str):
    """The model of `release` (a release model: its class, so its kernel) under `rules`, which
    differ from the release's in what `patch` changes. Not a release (`release` None): `patched`
    names the release and the patch (`zabmc models` lists these apart); no `zabmc real`
    translation, since no server runs the patch unless built with it."""
    model = type(release)(rules, description=f"ZooKeeper {release.release} with {what}")
    model.patched = (release.release, patch)
    # the window of the bug the patch fixes cannot open: a property it cannot break is refused
    model.properties = tuple(p for p in release.properties if p != "truncate-keeps")
    return model


_FIX_WHAT = "the TRUNC fix"  # `zabmc models` names the patch beside it
Z380T = _patched(Z380, Rel380TruncFixRules(), TRUNC_FIX, _FIX_WHAT)
Z394T = _patched(Z394, Rel394TruncFixRules(), TRUNC_FIX, _FIX_WHAT)
