------------------------------- MODULE ZkRelease -------------------------------
(***************************************************************************)
(* zabmc's release models (models/zk/releases.py: the THREADS stack of     *)
(* zk-3.6.2 to zk-3.9.4), the STORE stack's abstractions (zk-3.9.3-store,  *)
(* zk-3.9.4-store, their -epoch) and the abstractions each of the THREADS  *)
(* stack's layers makes alone, as `zabmc check --no-invariants` explores   *)
(* them on FIFO links.  It extends Zk.tla, the                             *)
(* coarse kernel (models/zk/handlers.py), whose operators it calls as the  *)
(* layers call `h`, and stacks over it one section per layer, each         *)
(* operator named after the Python function or method it mirrors (same    *)
(* order of effects):                                                      *)
(*                                                                         *)
(*   Fine*   models/zk/fine.py       (F1-F6: the threads' grain)           *)
(*   Fwd*    models/zk/forward.py    (F9-F11: NEWLEADER a step after SYNC) *)
(*   StoreK* models/zk/storage.py as a kernel (S1-S10, the STORE stack)    *)
(*   Sd*     models/zk/shutdown.py   (H1-H8: memory and disk apart)        *)
(*   Ep*     models/zk/epoch.py      (K1-K4: currentEpoch's own step)      *)
(*   Store*  models/zk/storage.py    (Storage, S11-S15 and R5, with S2-S8) *)
(*   Serve*  models/zk/serve.py      (R6: served at UPTODATE)              *)
(*                                                                         *)
(* Kernel chooses the kernel the layers stack on ("fine": fine.py over Zk; *)
(* "storage": storage.py over Zk).  Each layer calls the nearest layer     *)
(* below it that is switched on (UseFwd, UseSd, UseEp, UseStore,           *)
(* UseServe), as layer.Layer calls `parent`; each layer's normal form is   *)
(* its own after its parent's (Layer.norm).  The switches and the rules    *)
(* constants make these models (benchmarks/tlc_bench.py SPECS):            *)
(*   zk-3.7.0-threads   fine.py alone                                      *)
(*   zk-3.7.0-fwd       UseFwd                                             *)
(*   zk-3.7.0-shutdown  UseSd                                              *)
(*   zk-3.7.0-epoch     UseEp                                              *)
(*   zk-3.9.2-threads, -shutdown, -epoch: the same, NewLeaderRule "sync"   *)
(*   zk-3.6.2, zk-3.7.0, zk-3.8.0, zk-3.8.5, zk-3.9.2: every layer over    *)
(*                      fine.py, Truncate = "file" (3.7.0 and 3.8.0 share  *)
(*                      their rules, as do 3.8.5 and 3.9.2: model.py)      *)
(*   zk-3.9.3, zk-3.9.4: every layer over fine.py, Truncate = "file",      *)
(*                      NewLeaderRule "committed", Leaks = FALSE,          *)
(*                      SnapClears = TRUE (differing in SyncInClog)        *)
(*   zk-3.9.3-store, zk-3.9.4-store: storage.py alone                      *)
(*   zk-3.9.3-epoch, zk-3.9.4-epoch: storage.py, UseEp                     *)
(* NewLeaderRule is Zk.tla's (Rules.newleader; also "committed", 3.9.3's:  *)
(* handlers._on_newleader with `_persist_committed`, OnNewLeader393,       *)
(* which FineNewLeader calls through RulesOnNewLeader and the STORE        *)
(* kernel through Deliver393),                                             *)
(* Truncate the rules' `truncate` (state.cut: "exact" or "file",           *)
(* FileTxnLog.truncate), Leaks the rules' `leaks` (shutdown.py H2),        *)
(* SnapClears state.snap_clears(rules) (storage.py S13: an interrupted     *)
(* SNAP's database cleared at shutdown; Leaks unless the rules say),       *)
(* SyncInClog `sync_in_clog` (S4).                                         *)
(*                                                                         *)
(* Correspondence with zabmc's canonical encoding (Env.encode): Zk.tla's   *)
(* for the coarse fields, and for the layers' fields, in the node's order: *)
(*   owed, toack (a sequence of zxids), nlread (<< >> or a function on     *)
(*   Nodes), nlq (a bit set: a set), disk, leak (transactions), snapped,   *)
(*   clog (a sequence of zxids), dt, snap, lbase (`logbase`: left out of   *)
(*   the encoding where it is Zero), szx (`sync_zxid`).                    *)
(* A field of a layer a model lacks keeps its default, as the model's node *)
(* type has no such field.  A handler runs on a node and returns a context *)
(* [me, nd, o] (Zk.tla's), whose o starts empty: what a layer sends before *)
(* its parent's step (`pre` in the Python) is prepended (Prepend).         *)
(* Effects (failures, windows) feed only the invariant checker and are     *)
(* left out.  tests/test_tlc.py compares the counts, also from states of   *)
(* corpus traces (`zabmc check --from`; benchmarks/tlc_bench.py zk_state). *)
(***************************************************************************)
EXTENDS Zk, TLC

CONSTANTS Kernel,      \* the kernel the layers stack on: "fine" (fine.py) or "storage" (storage.py)
          UseFwd, UseSd, UseEp, UseStore, UseServe,  \* the layers stacked over it
          Truncate,    \* rules.truncate: "exact" or "file"
          Leaks,       \* rules.leaks (shutdown.py H2): FALSE for 3.6.2, 3.9.3 and 3.9.4
          SnapClears,  \* state.snap_clears(rules) (storage.py S13): Leaks but for 3.9.3, 3.9.4
          SyncInClog   \* rules.sync_in_clog (storage.py S4)

Snap == 3           \* state.SNAP
NoOp == <<-1, NoZ>> \* _queue's op None

\* the node of the release models: state.Node's fields (Zk.tla's Fresh), then the layers'
RFresh == [role |-> Looking, phase |-> Election, leader |-> -1, acc |-> 0, cur |-> 0,
           hist |-> << >>, lc |-> Zero, conn |-> 0, cut |-> {}, mem |-> << >>, commit |-> Zero,
           mode |-> ModeNone, pending |-> << >>, pcommit |-> Zero, nl |-> FALSE,
           learners |-> {}, lconn |-> << >>, tmax |-> 0, connecting |-> {}, electing |-> {},
           peers |-> << >>, ackld |-> {}, forwarding |-> {}, acks |-> << >>,
           owed |-> FALSE, toack |-> << >>, nlread |-> << >>,      \* fine.FineNode
           nlq |-> {},                                             \* forward.Forward
           disk |-> << >>, leak |-> << >>,                         \* shutdown.Shutdown
           snapped |-> 0,                                          \* epoch.Kernel
           clog |-> << >>, dt |-> Zero, snap |-> FALSE, lbase |-> Zero,  \* storage.Storage
           szx |-> Zero]                                           \* serve.Serve

\* zabmc.core.model.crashed with the rules' durable fields (shutdown.DURABLE adds `disk`, the
\* THREADS releases `logbase`, which stays Zero where no Storage layer sets it)
RCrashed(nd) == [RFresh EXCEPT !.acc = nd.acc, !.cur = nd.cur, !.hist = nd.hist, !.lc = nd.lc,
                               !.conn = nd.conn, !.disk = IF UseSd THEN nd.disk ELSE << >>,
                               !.lbase = nd.lbase]

Min(a, b) == IF a <= b THEN a ELSE b
ZMin(a, b) == IF ZLt(b, a) THEN b ELSE a
\* the zxids of a sequence of transactions (storage._zx), and their set
Zx(txns) == [k \in 1 .. Len(txns) |-> txns[k][1]]
ZSet(txns) == {txns[k][1] : k \in 1 .. Len(txns)}
LastOf(zs) == IF zs = << >> THEN Zero ELSE zs[Len(zs)]
\* a set of zxids in order
SortedZ(Z) == [k \in 1 .. Cardinality(Z) |-> CHOOSE z \in Z : Cardinality({w \in Z : ZLt(w, z)}) = k - 1]
IsPrefix(a, b) == Len(a) <= Len(b) /\ SubSeq(b, 1, Len(a)) = a
Prepend(pre, c) == [c EXCEPT !.o = [d \in Nodes |-> pre.o[d] \o c.o[d]]]
ZerosN == [k \in Nodes |-> 0]

\* fine._live: a message on the follower's live connection to its leader (D8)
Live(nd, src, m) == nd.role = Following /\ src = nd.leader /\ m[2] = nd.conn /\ nd.cut = {}

(***************************************************************************)
(* The normal forms (Layer.norm: each layer's own_norm after its parent's) *)
(***************************************************************************)

\* fine.norm
FineNorm(nd0) ==
    LET nd == IF (nd0.owed \/ nd0.toack # << >>) /\ ~nd0.nl
              THEN [nd0 EXCEPT !.owed = FALSE, !.toack = << >>] ELSE nd0
    IN IF nd.role # Leading
       THEN IF nd.nlread # << >> THEN [nd EXCEPT !.nlread = << >>] ELSE nd
       ELSE IF nd.nlread # << >>
            THEN [nd EXCEPT !.nlread = [k \in Nodes |-> IF nd.nlread[k] # 0 /\ nd.nlread[k] = nd.lconn[k]
                                                        THEN nd.nlread[k] ELSE 0]]
            ELSE nd
\* Forward.own_norm
FwdOwn(nd) ==
    IF nd.nlq = {} THEN nd
    ELSE [nd EXCEPT !.nlq = IF nd.role = Leading THEN nd.nlq \cap nd.forwarding \cap nd.learners ELSE {}]
FwdNorm(nd) == FwdOwn(FineNorm(nd))
\* Shutdown has no own_norm: its norm is its parent's
SdNorm(nd) == FwdNorm(nd)
\* Kernel.own_norm
EpOwn(nd) == IF nd.snapped # 0 /\ (nd.role # Following \/ ~nd.nl) THEN [nd EXCEPT !.snapped = 0] ELSE nd
EpNorm(nd) == EpOwn(SdNorm(nd))
\* Storage.own_norm
StoreOwn(nd) == IF nd.snap /\ (nd.role # Following \/ nd.nl \/ nd.mode # Trunc)
                THEN [nd EXCEPT !.snap = FALSE] ELSE nd
StoreNorm(nd) == StoreOwn(EpNorm(nd))
\* Serve.own_norm
ServeOwn(nd) == IF nd.szx # Zero /\ ~(nd.role = Following /\ nd.phase = FSync)
                THEN [nd EXCEPT !.szx = Zero] ELSE nd
ServeNorm(nd) == ServeOwn(StoreNorm(nd))

Normed(c, Norm(_)) == [c EXCEPT !.nd = Norm(c.nd)]

(***************************************************************************)
(* handlers.py's _on_newleader under Rules.newleader = "committed"         *)
(* (Committed393Rules, `_persist_committed`: 3.9.3's NEWLEADER), which     *)
(* Zk.tla's OnNewLeader does not have; fine.py's _newleader and the        *)
(* STORE kernel's deliver call it                                          *)
(***************************************************************************)

\* _on_newleader under Rules.newleader = "committed": the DIFF's committed prefix written and
\* applied, the outstanding proposals kept for UPTODATE (the "uptodate" rule from there)
OnNewLeader393(c, e) ==
    LET nd0 == IF c.nd.mode = Trunc THEN [c.nd EXCEPT !.hist = @ \o c.nd.mem, !.mem = << >>]
               ELSE c.nd
        nd1 == [nd0 EXCEPT !.cur = e, !.nl = TRUE]
        p == nd1.pending
        cn == Cardinality({k \in 1 .. Len(p) : ZLe(p[k][1], nd1.pcommit)})   \* bisect_right
        nd2 == IF cn > 0
               THEN [nd1 EXCEPT !.hist = LogOf(nd1) \o SubSeq(p, 1, cn), !.mem = << >>,
                                !.pending = SubSeq(p, cn + 1, Len(p)), !.commit = nd1.pcommit]
               ELSE nd1
    IN Send(SetNd(c, Settle(nd2)), nd2.leader, <<"ACKLD", nd2.conn, e>>)
\* handlers._on_newleader under the rules' NEWLEADER (_AT_NEWLEADER): 3.9.3's, or Zk.tla's
RulesOnNewLeader(c, e) ==
    IF NewLeaderRule = "committed" THEN OnNewLeader393(c, e) ELSE OnNewLeader(c, e)

(***************************************************************************)
(* fine.py (F1-F6) over the coarse kernel (Zk.tla)                         *)
(***************************************************************************)

\* _ack_newleader (F1): the QuorumPeer thread writes NEWLEADER's ACK
AckNewLeader(c) == Send([c EXCEPT !.nd.owed = FALSE], c.nd.leader, <<"ACKLD", c.nd.conn, c.nd.cur>>)

\* log (F3): the SyncThread acknowledges every transaction it writes, whatever its epoch
FineLog(i, nd0) ==
    LET new == nd0.mem
        nd == Settle([nd0 EXCEPT !.hist = @ \o new, !.mem = << >>])
        c == CtxOf(i, nd)
    IN IF nd.role = Following /\ (nd.phase = FBroadcast \/ (nd.phase = FSync /\ nd.nl))
       THEN [c EXCEPT !.o[nd.leader] = [k \in 1 .. Len(new) |-> <<"ACK", nd.conn, new[k][1]>>]]
       ELSE c

\* _newleader: 3.7.0 (F1) the coarse NEWLEADER without its ACK, now owed; 3.9.2 (F6) as it is,
\* remembering what it wrote to acknowledge after UPTODATE; 3.9.3 ("committed") as 3.7.0, after
\* 3.9.3's own NEWLEADER (h._on_newleader with the rules)
FineNewLeader(i, nd, e) ==
    LET s == RulesOnNewLeader(CtxOf(i, nd), e)
    IN IF NewLeaderRule = "sync" THEN [s EXCEPT !.nd.toack = Zx(nd.pending)]
       ELSE CtxOf(i, [s.nd EXCEPT !.owed = TRUE])

\* _leader_ack (F4, F5): the first ACK a LearnerHandler reads after NEWLEADER is NEWLEADER's
FineLeaderAck(i, nd, src, m) ==
    LET cn == IF nd.lconn # << >> THEN nd.lconn[src] ELSE 0
    IN IF src \notin nd.learners \/ m[2] # cn \/ src \in nd.cut \/ src \notin nd.forwarding
       THEN Deliver(CtxOf(i, nd), src, m)
       ELSE LET read == IF nd.nlread # << >> THEN nd.nlread ELSE ZerosN
            IN IF read[src] = cn
               THEN IF m[1] = "ACKLD" THEN CtxOf(i, nd) ELSE Deliver(CtxOf(i, nd), src, m)
               ELSE LET nd2 == [nd EXCEPT !.nlread = [read EXCEPT ![src] = cn]]
                    IN IF m[1] = "ACKLD"
                       THEN LET s == Deliver(CtxOf(i, nd2), src, m)
                                ld == s.nd
                            IN IF nd2.phase = LSync /\ ld.phase = LBroadcast
                               THEN [s EXCEPT !.o = [d \in Nodes |->
                                        IF d # i /\ ld.lconn[d] # 0 /\ ld.nlread[d] = ld.lconn[d]
                                           /\ d \notin ld.ackld
                                        THEN Append(@[d], <<"UPTODATE", ld.lconn[d]>>) ELSE @[d]]]
                               ELSE s
                       ELSE IF nd2.phase = LBroadcast
                            THEN Send(CtxOf(i, nd2), src, <<"UPTODATE", cn>>)
                            ELSE CtxOf(i, nd2)

\* deliver
FineDeliver(i, nd0, src, m) ==
    LET pre == IF nd0.owed THEN AckNewLeader(CtxOf(i, nd0)) ELSE CtxOf(i, nd0)   \* F2
        nd == pre.nd
        k == m[1]
        s == IF nd.role = Leading /\ (k = "ACK" \/ k = "ACKLD") THEN FineLeaderAck(i, nd, src, m)
             ELSE IF k = "NEWLEADER" /\ Live(nd, src, m) /\ nd.phase = FSync /\ nd.mode # ModeNone
                     /\ ~nd.nl
             THEN FineNewLeader(i, nd, m[3])
             ELSE IF k = "UPTODATE" /\ Live(nd, src, m) /\ nd.phase = FSync /\ nd.nl
             THEN LET u == Deliver(CtxOf(i, nd), src, m)
                  IN IF nd.toack # << >>
                     THEN [u EXCEPT !.nd.toack = << >>,
                                    !.o[nd.leader] = @ \o [q \in 1 .. Len(nd.toack) |->
                                                             <<"ACK", nd.conn, nd.toack[q]>>]]
                     ELSE u
             ELSE Deliver(CtxOf(i, nd), src, m)
    IN Prepend(pre, Normed(s, FineNorm))

FineStart(i, nd) == CtxOf(i, FineNorm(StartNd(nd)))
FineTimeout(i, nd) == Normed(Look(CtxOf(i, nd)), FineNorm)
FinePropose(i, nd, k) == Normed(ProposeStep(CtxOf(i, nd), k), FineNorm)
FineDrop(i, nd, src, m) == CtxOf(i, FineNorm(OnDropNd(nd, src, m)))

\* act: the coarse actions (elect, join, lost; `log` is fine's own) and ack-newleader.
\* A label is <<kind, ...>>; ns is the nodes the action reads.
CoarseAct(lb, i, ns) ==
    CASE lb[1] = "elect" ->
           LET qm == lb[2]
               ldr == lb[3]
               lconn == [k \in Nodes |-> IF k \in qm /\ k # ldr THEN ns[k].conn + 1 ELSE 0]
           IN IF i = ldr THEN CtxOf(i, BecomeLeader(ns[i], i, qm, lconn))
              ELSE BecomeFollower(CtxOf(i, ns[i]), ldr)
      [] lb[1] = "join" ->
           IF i = lb[2] THEN BecomeFollower(CtxOf(i, ns[i]), lb[3])
           ELSE CtxOf(i, [ns[i] EXCEPT !.learners = @ \cup {lb[2]},
                                       !.lconn[lb[2]] = ns[lb[2]].conn + 1])
      [] lb[1] = "lost" -> LostStep(CtxOf(i, ns[i]), lb[3])
FineAct(lb, i, ns) ==
    CASE lb[1] = "ack-newleader" -> AckNewLeader(CtxOf(i, ns[i]))
      [] lb[1] = "log" -> Normed(FineLog(i, ns[i]), FineNorm)
      [] OTHER -> Normed(CoarseAct(lb, i, ns), FineNorm)

(***************************************************************************)
(* forward.py (F9-F11): Forward over fine.py                               *)
(***************************************************************************)

\* _before_newleader (F10)
BeforeNewLeader(nd, m) ==
    IF m[1] = "PROPOSAL" THEN [nd EXCEPT !.pending = Append(@, m[3])]
    ELSE IF nd.mode # Trunc THEN [nd EXCEPT !.pcommit = ZMax(@, m[3])]
    ELSE IF nd.pending # << >> /\ nd.pending[1][1] = m[3]
    THEN [nd EXCEPT !.mem = Append(@, nd.pending[1]), !.pending = Tail(@), !.commit = ZMax(@, m[3])]
    ELSE nd

\* Forward.deliver, with _hold_newleader (F9)
FwdDeliver(i, nd, src, m) ==
    IF m[1] = "ACKEPOCH" /\ nd.role = Leading /\ nd.phase = LBroadcast
    THEN LET s == FineDeliver(i, nd, src, m)
         IN IF \E q \in 1 .. Len(s.o[src]) : s.o[src][q][1] = "NEWLEADER"
            THEN [s EXCEPT !.nd = FwdNorm([s.nd EXCEPT !.nlq = @ \cup {src}]),
                           !.o[src] = SelectSeq(@, LAMBDA mm : mm[1] # "NEWLEADER")]
            ELSE Normed(s, FwdNorm)
    ELSE IF (m[1] = "PROPOSAL" \/ m[1] = "COMMIT") /\ Live(nd, src, m) /\ nd.phase = FSync
            /\ nd.mode # ModeNone /\ ~nd.nl
    THEN CtxOf(i, FwdNorm(BeforeNewLeader(nd, m)))
    ELSE Normed(FineDeliver(i, nd, src, m), FwdNorm)

FwdStart(i, nd) == Normed(FineStart(i, nd), FwdNorm)
FwdTimeout(i, nd) == Normed(FineTimeout(i, nd), FwdNorm)
FwdPropose(i, nd, k) == Normed(FinePropose(i, nd, k), FwdNorm)
FwdDrop(i, nd, src, m) == Normed(FineDrop(i, nd, src, m), FwdNorm)
FwdAct(lb, i, ns) ==
    IF lb[1] = "newleader"
    THEN LET lead == ns[i]
             j == lb[3]
         IN Send(CtxOf(i, [lead EXCEPT !.nlq = @ \ {j}]), j, <<"NEWLEADER", lead.lconn[j], lead.acc>>)
    ELSE Normed(FineAct(lb, i, ns), FwdNorm)

(***************************************************************************)
(* The utilities of storage.py's grain (the Storage layer of the THREADS   *)
(* stack and the storage.py kernel of the STORE stack share them)          *)
(***************************************************************************)

\* state.cut: the log after FileTxnLog.truncate(zxid), "exact" or as the "file" is cut (R4)
Cut(log, z, how) ==
    LET kept == SelectSeq(log, LAMBDA t : ZLe(t[1], z))
    IN IF how = "file" /\ (kept = << >> \/ LastZ(kept) # z) /\ Len(kept) < Len(log)
       THEN Append(kept, log[Len(kept) + 1])
       ELSE kept

\* state.truncate_log: ZKDatabase.truncateLog cuts the log files only (Cut) and reloads the newest
\* snapshot: what the disk holds up to `base` (the snapshot the log begins after, S12) stays
TruncLog(disk, z, base, how) ==
    IF base = Zero THEN Cut(disk, z, how)
    ELSE LET s == SelectSeq(disk, LAMBDA t : ZLe(t[1], base))
         IN s \o Cut(SubSeq(disk, Len(s) + 1, Len(disk)), z, how)

\* storage._track: the committed log and data tree brought along (path "request", "sync", "snap")
StTrack(x, y, path) ==
    IF x.role # Looking /\ y.role = Looking
    THEN LET last == LastZ(y.hist)
         IN IF ZLt(last, x.dt) THEN [y EXCEPT !.clog = SelectSeq(x.clog, LAMBDA z : ZLe(z, last)),
                                              !.dt = last]
            ELSE LET new == SelectSeq(Zx(y.hist), LAMBDA z : ZLt(x.dt, z))
                 IN IF new # << >> THEN [y EXCEPT !.clog = x.clog \o new, !.dt = last] ELSE y
    ELSE IF path = "snap" THEN [y EXCEPT !.clog = << >>, !.dt = LastZ(y.mem)]
    ELSE IF path = "sync" /\ y.mode = Trunc /\ x.mode = ModeNone
    THEN LET applied == Zx(y.mem)
             base == Zx(y.hist)
         IN [y EXCEPT !.clog = IF SyncInClog THEN base \o applied ELSE base,
                      !.dt = IF applied # << >> THEN applied[Len(applied)] ELSE LastZ(y.hist)]
    ELSE IF ZLe(y.commit, x.dt) THEN y
    ELSE LET applied == SelectSeq(Zx(LogOf(y)), LAMBDA z : ZLt(x.dt, z) /\ ZLe(z, y.commit))
         IN IF applied = << >> THEN y
            ELSE [y EXCEPT !.clog = IF path = "request" \/ SyncInClog THEN x.clog \o applied
                                    ELSE x.clog,
                           !.dt = applied[Len(applied)]]

\* _queue (LearnerHandler.queueCommittedProposals) over entries es from index k: <<op, queued, last>>
RECURSIVE QLoop(_, _, _, _, _, _, _, _)
QFin(op, q, last, peer) == <<IF op = NoOp /\ peer[2] = 0 THEN <<Diff, NoZ>> ELSE op, q, last>>
QLoop(es, k, peer, upto, op, q, last, prev) ==
    IF k > Len(es) THEN QFin(op, q, last, peer)
    ELSE LET z == es[k]
         IN IF upto # NoZ /\ ZLt(upto, z) THEN QFin(op, q, last, peer)
            ELSE IF ZLt(z, peer) THEN QLoop(es, k + 1, peer, upto, op, q, last, z)
            ELSE IF op = NoOp /\ z = peer THEN QLoop(es, k + 1, peer, upto, <<Diff, NoZ>>, q, last, prev)
            ELSE IF op = NoOp /\ peer[2] # 0 /\ z[1] # peer[1] THEN <<NoOp, q, last>>
            ELSE LET op2 == IF op # NoOp THEN op
                            ELSE IF peer[2] = 0 THEN <<Diff, NoZ>> ELSE <<Trunc, prev>>
                 IN IF ZLe(z, last) THEN QLoop(es, k + 1, peer, upto, op2, q, last, prev)
                    ELSE QLoop(es, k + 1, peer, upto, op2, Append(q, z), z, prev)

\* sync_follower (LearnerHandler.syncFollower, then startForwarding): <<mode, zxid, txns, committed>>
SyncFollower(lead, peer) ==
    LET h == lead.hist
        dt == lead.dt
        clog == lead.clog
        lo == IF clog # << >> THEN clog[1] ELSE dt
        hi == IF clog # << >> THEN clog[Len(clog)] ELSE dt
        r == IF peer = dt THEN <<<<Diff, peer>>, << >>, peer>>
             ELSE IF ZLt(hi, peer) /\ peer[2] # 0 THEN <<<<Trunc, hi>>, << >>, hi>>
             ELSE IF ZLe(lo, peer) /\ ZLe(peer, hi) THEN QLoop(clog, 1, peer, NoZ, NoOp, << >>, peer, Zero)
             ELSE IF ZLt(peer, lo) /\ peer \in ZSet(h)
             THEN LET a == QLoop(Zx(h), 1, peer, lo, NoOp, << >>, peer, Zero)
                  IN IF a[1] # NoOp /\ ZLe(lo, a[3])
                     THEN LET b == QLoop(clog, 1, a[3], NoZ, a[1], << >>, a[3], Zero)
                          IN <<b[1], a[2] \o b[2], b[3]>>
                     ELSE <<NoOp, << >>, peer>>
             ELSE <<NoOp, << >>, peer>>
        r2 == IF r[1] = NoOp THEN <<<<Snap, dt>>, SelectSeq(Zx(h), LAMBDA z : ZLe(z, dt)), dt>> ELSE r
        zxid == IF r2[1][2] = NoZ THEN hi ELSE r2[1][2]
        byz(z) == h[CHOOSE k \in 1 .. Len(h) : h[k][1] = z]
        sent == [k \in 1 .. Len(r2[2]) |-> byz(r2[2][k])]
        outz == IF lead.phase = LBroadcast
                THEN SelectSeq([k \in 1 .. Len(lead.acks) |-> lead.acks[k][1]], LAMBDA z : ZLt(r2[3], z))
                ELSE << >>
    IN <<r2[1][1], zxid, sent \o [k \in 1 .. Len(outz) |-> byz(outz[k])], Len(sent)>>

\* resync (S6): each SYNC of the leader's ACKEPOCH step chosen again from its committed log
Resync(x, c, src, m) ==
    LET y == StTrack(x, c.nd, "request")
        re(d, mm) == IF mm[1] # "SYNC" THEN mm
                     ELSE LET sf == SyncFollower(y, IF d = src THEN m[4] ELSE x.peers[d])
                          IN <<"SYNC", mm[2], sf[1], sf[2], sf[3], sf[4]>>
    IN [c EXCEPT !.nd = y, !.o = [d \in Nodes |-> [q \in 1 .. Len(@[d]) |-> re(d, @[d][q])]]]

(***************************************************************************)
(* storage.py as the kernel of the STORE stack (zk-3.9.3-store,            *)
(* zk-3.9.4-store and their -epoch; S1-S10) over the coarse kernel, with   *)
(* 3.9.3's NEWLEADER (OnNewLeader393 above)                                *)
(***************************************************************************)

\* handlers.deliver with 3.9.3's NEWLEADER (the branch of Zk.tla's Deliver that calls OnNewLeader)
Deliver393(c, src, m) ==
    IF NewLeaderRule = "committed" /\ m[1] = "NEWLEADER" /\ Live(c.nd, src, m)
       /\ c.nd.phase = FSync /\ c.nd.mode # ModeNone /\ ~c.nd.nl
    THEN OnNewLeader393(c, m[3])
    ELSE Deliver(c, src, m)

\* storage.deliver: S7's SNAP taken as the coarse TRUNC to nothing; the "file" cut (R4)
StoreKDeliver(i, nd, src, m) ==
    IF nd.role = Leading /\ m[1] = "ACKEPOCH"
    THEN Resync(nd, Deliver393(CtxOf(i, nd), src, m), src, m)
    ELSE LET live == Live(nd, src, m) /\ nd.phase = FSync
             issync == live /\ m[1] = "SYNC" /\ nd.mode = ModeNone
             path == IF issync /\ m[3] = Snap THEN "snap"
                     ELSE IF issync \/ (live /\ m[1] = "NEWLEADER" /\ nd.mode # ModeNone /\ ~nd.nl)
                     THEN "sync" ELSE "request"
             m2 == IF path = "snap" THEN <<"SYNC", m[2], Trunc, Zero, m[5], m[6]>> ELSE m
             s == Deliver393(CtxOf(i, nd), src, m2)
             y == IF path = "sync" /\ m[1] = "SYNC" /\ m[3] = Trunc /\ s.nd.mode = Trunc
                     /\ Truncate # "exact"
                  THEN [s.nd EXCEPT !.hist = Cut(nd.hist, m[4], "file")] ELSE s.nd
         IN [s EXCEPT !.nd = StTrack(nd, y, path)]
StoreKTracked(x, c) == [c EXCEPT !.nd = StTrack(x, c.nd, "request")]
\* storage.start (S2)
StoreKStart(i, nd) ==
    LET y == StartNd(nd) IN CtxOf(i, [y EXCEPT !.clog = Zx(y.hist), !.dt = LastZ(y.hist)])
StoreKTimeout(i, nd) == StoreKTracked(nd, Look(CtxOf(i, nd)))
StoreKPropose(i, nd, k) == StoreKTracked(nd, ProposeStep(CtxOf(i, nd), k))
StoreKDrop(i, nd, src, m) == StoreKTracked(nd, CtxOf(i, OnDropNd(nd, src, m)))
\* the coarse actions, `log` the coarse one (D6), each tracked
StoreKAct(lb, i, ns) ==
    StoreKTracked(ns[i], IF lb[1] = "log" THEN LogStep(CtxOf(i, ns[i])) ELSE CoarseAct(lb, i, ns))

\* the layer below shutdown.py (or epoch.py on the STORE stack): the kernel, then Forward
D1Deliver(i, nd, src, m) == IF Kernel = "storage" THEN StoreKDeliver(i, nd, src, m)
                            ELSE IF UseFwd THEN FwdDeliver(i, nd, src, m) ELSE FineDeliver(i, nd, src, m)
D1Start(i, nd) == IF Kernel = "storage" THEN StoreKStart(i, nd)
                  ELSE IF UseFwd THEN FwdStart(i, nd) ELSE FineStart(i, nd)
D1Timeout(i, nd) == IF Kernel = "storage" THEN StoreKTimeout(i, nd)
                    ELSE IF UseFwd THEN FwdTimeout(i, nd) ELSE FineTimeout(i, nd)
D1Propose(i, nd, k) == IF Kernel = "storage" THEN StoreKPropose(i, nd, k)
                       ELSE IF UseFwd THEN FwdPropose(i, nd, k) ELSE FinePropose(i, nd, k)
D1Drop(i, nd, src, m) == IF Kernel = "storage" THEN StoreKDrop(i, nd, src, m)
                         ELSE IF UseFwd THEN FwdDrop(i, nd, src, m) ELSE FineDrop(i, nd, src, m)
D1Act(lb, i, ns) == IF Kernel = "storage" THEN StoreKAct(lb, i, ns)
                    ELSE IF UseFwd THEN FwdAct(lb, i, ns) ELSE FineAct(lb, i, ns)

(***************************************************************************)
(* shutdown.py (H1-H8): Shutdown, a Tracking layer                         *)
(***************************************************************************)

\* _write: disk with txns written, read back in zxid order, each zxid once (the disk's first)
Write(disk, txns) ==
    IF txns = << >> THEN disk
    ELSE IF disk = << >> \/ (ZLt(LastZ(disk), txns[1][1])
                            /\ \A k \in 1 .. Len(txns) - 1 : ZLt(txns[k][1], txns[k + 1][1]))
    THEN disk \o txns
    ELSE LET dz == ZSet(disk)
             S == SortedZ(dz \cup ZSet(txns))
             pick(z) == IF z \in dz THEN disk[CHOOSE k \in 1 .. Len(disk) : disk[k][1] = z]
                        ELSE txns[CHOOSE k \in 1 .. Len(txns) :
                                    txns[k][1] = z /\ \A q \in 1 .. k - 1 : txns[q][1] # z]
         IN [k \in 1 .. Len(S) |-> pick(S[k])]

\* _durable (H4): last_committed only over memory that is on disk
Durable(nd) ==
    LET h == nd.hist
        d == nd.disk
        lc == nd.lc
    IN IF h = d \/ IsPrefix(h, d) \/ lc = Zero THEN nd
       ELSE LET on == ZSet(d)
                p == MaxOf({k \in 0 .. Len(h) : \A q \in 1 .. k : ZLe(h[q][1], lc) /\ h[q][1] \in on})
                best == IF p = 0 THEN Zero ELSE h[p][1]
            IN IF best = lc THEN nd ELSE [nd EXCEPT !.lc = best]

After(txns, z) == SelectSeq(txns, LAMBDA t : ZLt(z, t[1]))

\* _shutdown (H2, H3): x leaves its role; y is the kernel's shutdown
SdShutdown(x, y) ==
    IF x.role = Following /\ ~Leaks /\ Queued(x)
    THEN LET disk == Write(x.disk, x.mem)
             h == x.hist \o x.mem
         IN SdNorm([y EXCEPT !.hist = h \o After(disk, LastZ(h)), !.disk = disk])
    ELSE LET r == IF x.role = Following
                  THEN IF Queued(x)
                       THEN <<x.leak \o x.mem,
                              x.hist \o SelectSeq(x.mem, LAMBDA t : ZLe(t[1], x.commit)), x.disk>>
                       ELSE <<x.leak, x.hist \o x.mem, x.disk>>
                  ELSE <<x.leak, y.hist,
                         Write(x.disk, SubSeq(y.hist, Len(x.hist) + 1, Len(y.hist)))>>
         IN SdNorm([y EXCEPT !.hist = r[2] \o After(r[3], LastZ(r[2])), !.disk = r[3],
                             !.leak = r[1]])

\* _track: y, the parent's node after a step from x, with its disk and leaked queue
SdTrack(x, y, tr) ==
    IF x.role # Looking /\ y.role = Looking THEN Durable(SdShutdown(x, y))
    ELSE IF tr # NoZ    \* H6: truncateLog cuts the disk, then clear() and loadDataBase()
    THEN LET d == TruncLog(x.disk, tr, x.lbase, Truncate) IN Durable([y EXCEPT !.disk = d, !.hist = d])
    ELSE IF y.hist = x.hist THEN Durable(y)
    ELSE IF x.mode = Trunc /\ ~x.nl /\ y.nl THEN Durable([y EXCEPT !.disk = Write(x.disk, y.hist)])
    ELSE IF IsPrefix(x.hist, y.hist)
    THEN Durable([y EXCEPT !.disk = Write(x.disk, SubSeq(y.hist, Len(x.hist) + 1, Len(y.hist)))])
    ELSE Assert(FALSE, "history changed other than by a write or a TRUNC")
SdTracked(x, c) == [c EXCEPT !.nd = SdTrack(x, c.nd, NoZ)]

\* flush (H2): the leaked SyncThread writes its queue
SdFlush(i, nd) == CtxOf(i, Durable(Settle([nd EXCEPT !.disk = Write(nd.disk, nd.leak), !.leak = << >>])))

\* Shutdown.start (H7): loadDataBase makes the data tree of the disk
SdStart(i, nd) ==
    LET d == nd.disk
        below == {z \in ZSet(d) : ZLe(z, nd.lc)}
        lc == IF below = {} THEN Zero ELSE CHOOSE z \in below : \A w \in below : ZLe(w, z)
        s == D1Start(i, [nd EXCEPT !.hist = d, !.lc = lc, !.leak = << >>])
    IN [s EXCEPT !.nd.disk = d]

\* Shutdown.deliver: a TRUNC taken cuts the disk (H6)
SdDeliver(i, nd, src, m) ==
    LET tr0 == IF m[1] = "SYNC" /\ m[3] = Trunc /\ Live(nd, src, m) /\ nd.mode = ModeNone
                  /\ ~nd.nl /\ nd.role = Following THEN m[4] ELSE NoZ
        s == D1Deliver(i, nd, src, m)
        tr == IF tr0 # NoZ /\ s.nd.mode # Trunc THEN NoZ ELSE tr0
    IN [s EXCEPT !.nd = SdTrack(nd, s.nd, tr)]

SdTimeout(i, nd) == SdTracked(nd, D1Timeout(i, nd))
SdPropose(i, nd, k) == SdTracked(nd, D1Propose(i, nd, k))
SdDrop(i, nd, src, m) == SdTracked(nd, D1Drop(i, nd, src, m))
SdAct(lb, i, ns) == IF lb[1] = "flush" THEN SdFlush(i, ns[i]) ELSE SdTracked(ns[i], D1Act(lb, i, ns))

\* the layer below epoch.py
D2Deliver(i, nd, src, m) == IF UseSd THEN SdDeliver(i, nd, src, m) ELSE D1Deliver(i, nd, src, m)
D2Start(i, nd) == IF UseSd THEN SdStart(i, nd) ELSE D1Start(i, nd)
D2Timeout(i, nd) == IF UseSd THEN SdTimeout(i, nd) ELSE D1Timeout(i, nd)
D2Propose(i, nd, k) == IF UseSd THEN SdPropose(i, nd, k) ELSE D1Propose(i, nd, k)
D2Drop(i, nd, src, m) == IF UseSd THEN SdDrop(i, nd, src, m) ELSE D1Drop(i, nd, src, m)
D2Act(lb, i, ns) == IF UseSd THEN SdAct(lb, i, ns) ELSE D1Act(lb, i, ns)

(***************************************************************************)
(* epoch.py (K1-K4): Kernel over the layers below (over fine.py the ACK is *)
(* owed, F1; over storage.py it is sent, `owes_ack`)                       *)
(***************************************************************************)

\* set_epoch (K1): currentEpoch written; 3.7.0 owes the ACK (over fine.py), the later releases
\* send it
SetEpoch(c) ==
    LET e == c.nd.snapped
        nd == [c.nd EXCEPT !.cur = e, !.snapped = 0]
    IN IF Kernel = "fine" /\ NewLeaderRule # "sync" THEN SetNd(c, [nd EXCEPT !.owed = TRUE])
       ELSE Send(SetNd(c, nd), nd.leader, <<"ACKLD", nd.conn, e>>)
\* _settled (K2)
Settled(c) == IF c.nd.snapped = 0 THEN c ELSE SetEpoch(c)

EpDeliver(i, nd, src, m) ==
    IF nd.snapped # 0
    THEN LET pre == SetEpoch(CtxOf(i, nd))
         IN Prepend(pre, Normed(D2Deliver(i, pre.nd, src, m), EpNorm))
    ELSE LET s == D2Deliver(i, nd, src, m)
             y == s.nd
         IN IF m[1] = "NEWLEADER" /\ y.nl /\ ~nd.nl /\ y.hist # nd.hist /\ y.cur # nd.cur
            THEN [s EXCEPT !.nd = EpNorm([y EXCEPT !.cur = nd.cur, !.snapped = y.cur, !.owed = FALSE]),
                           !.o = [d \in Nodes |-> SelectSeq(@[d], LAMBDA mm : mm[1] # "ACKLD")]]
            ELSE Normed(s, EpNorm)

EpStart(i, nd) == Normed(D2Start(i, nd), EpNorm)
EpTimeout(i, nd) ==
    LET pre == Settled(CtxOf(i, nd))
    IN Prepend(pre, Normed(D2Timeout(i, pre.nd), EpNorm))
EpPropose(i, nd, k) == Normed(D2Propose(i, nd, k), EpNorm)
EpDrop(i, nd, src, m) == Normed(D2Drop(i, nd, src, m), EpNorm)
EpAct(lb, i, ns) ==
    IF lb[1] = "epoch" THEN SetEpoch(CtxOf(i, ns[i]))
    ELSE IF lb[1] = "lost" /\ ns[i].snapped # 0
    THEN LET pre == SetEpoch(CtxOf(i, ns[i]))
         IN Prepend(pre, Normed(D2Act(lb, i, [ns EXCEPT ![i] = pre.nd]), EpNorm))
    ELSE Normed(D2Act(lb, i, ns), EpNorm)

\* the layer below storage.Storage
D3Deliver(i, nd, src, m) == IF UseEp THEN EpDeliver(i, nd, src, m) ELSE D2Deliver(i, nd, src, m)
D3Start(i, nd) == IF UseEp THEN EpStart(i, nd) ELSE D2Start(i, nd)
D3Timeout(i, nd) == IF UseEp THEN EpTimeout(i, nd) ELSE D2Timeout(i, nd)
D3Propose(i, nd, k) == IF UseEp THEN EpPropose(i, nd, k) ELSE D2Propose(i, nd, k)
D3Drop(i, nd, src, m) == IF UseEp THEN EpDrop(i, nd, src, m) ELSE D2Drop(i, nd, src, m)
D3Act(lb, i, ns) == IF UseEp THEN EpAct(lb, i, ns) ELSE D2Act(lb, i, ns)

(***************************************************************************)
(* storage.py: Storage (S11-S15) over the layers below, with the module's  *)
(* _track, sync_follower and _queue (StTrack, SyncFollower, QLoop above)   *)
(* and _snap (S12)                                                         *)
(***************************************************************************)

\* Storage._track (S13, S14)
StoreTrack(x, c, path) ==
    LET y == c.nd
        left == x.role # Looking /\ y.role = Looking
        y2 == IF left /\ x.snap /\ SnapClears
              THEN [y EXCEPT !.hist = y.disk, !.clog = Zx(y.disk), !.dt = LastZ(y.disk)]
              ELSE IF left /\ ZLt(LastZ(y.hist), x.dt) THEN [y EXCEPT !.clog = x.clog, !.dt = x.dt]
              ELSE LET y1 == StTrack(x, y, path)
                   IN IF x.role = Leading /\ x.phase = LSync /\ y1.phase = LBroadcast
                      THEN [y1 EXCEPT !.dt = <<y1.acc, 0>>] ELSE y1
    IN [c EXCEPT !.nd = StoreNorm(y2)]

\* _snap (S12): the coarse TRUNC to nothing in memory, the disk untouched until NEWLEADER
CommonPrefix(a, b) == MaxOf({k \in 0 .. Min(Len(a), Len(b)) : \A q \in 1 .. k : a[q] = b[q]})
StoreSnap(nd, m) ==
    LET y == OnSyncNd(nd, Trunc, Zero, m[5], m[6])
        tree == y.mem
        k == CommonPrefix(tree, nd.hist)
    IN [y EXCEPT !.hist = SubSeq(tree, 1, k), !.mem = SubSeq(tree, k + 1, Len(tree)), !.snap = TRUE,
                 !.clog = << >>, !.dt = m[4]]

\* logged (R5): QuorumPeer.getLastLoggedZxid, the data tree's lastProcessedZxid (at least the
\* kernel's last zxid)
Logged(nd) == IF ZLt(nd.dt, LastZ(LogOf(nd))) THEN LastZ(LogOf(nd)) ELSE nd.dt
\* vote (R5): FLE's vote as ZooKeeper reads it
StoreVote(nd, i) == <<nd.cur, Logged(nd), i>>
\* _epoch_ack (R5): an ACKEPOCH between the leader's last zxid and its data tree's is read as its
\* last zxid by the kernel's D9 (waitForEpochAck against leaderStateSummary), on the connection
\* the leader has open with src
EpochAck(ld, src, m) ==
    IF ld.phase # LEpoch \/ m[3] # ld.cur \/ src \notin ld.learners \/ m[2] # ld.lconn[src]
       \/ src \in ld.cut
    THEN m
    ELSE LET last == LastZ(LogOf(ld))
         IN IF ZLt(last, m[4]) /\ ZLe(m[4], Logged(ld)) THEN <<m[1], m[2], m[3], last>> ELSE m
\* R5: a follower's ACKEPOCH names `logged`
AckEpochLogged(c, z) ==
    [c EXCEPT !.o = [d \in Nodes |-> [q \in 1 .. Len(@[d]) |->
                        IF @[d][q][1] = "ACKEPOCH" THEN <<"ACKEPOCH", @[d][q][2], @[d][q][3], z>>
                        ELSE @[d][q]]]]

\* Storage.deliver
StoreDeliver(i, nd, src, m) ==
    IF nd.role = Leading /\ m[1] = "ACKEPOCH"
    THEN LET rd == EpochAck(nd, src, m)
             s == D3Deliver(i, nd, src, rd)
             s2 == IF rd # m /\ s.nd.peers[src] # NoZ THEN [s EXCEPT !.nd.peers[src] = m[4]] ELSE s
         IN Normed(Resync(nd, s2, src, m), StoreNorm)
    ELSE LET live == Live(nd, src, m) /\ nd.phase = FSync
             issync == live /\ m[1] = "SYNC" /\ nd.mode = ModeNone
         IN IF issync /\ m[3] = Snap THEN CtxOf(i, StoreNorm(StoreSnap(nd, m)))
            ELSE LET path == IF issync \/ (live /\ m[1] = "NEWLEADER" /\ nd.mode # ModeNone /\ ~nd.nl)
                                \/ (live /\ m[1] = "COMMIT" /\ nd.mode = Trunc /\ ~nd.nl)  \* S15
                             THEN "sync" ELSE "request"
                     s0 == StoreTrack(nd, D3Deliver(i, nd, src, m), path)
                     s == IF m[1] = "LEADERINFO" THEN AckEpochLogged(s0, Logged(nd)) ELSE s0
                     y == s.nd
                 IN IF nd.snap /\ y.nl   \* S12: NEWLEADER's snapshot replaces the log below it
                    THEN [s EXCEPT !.nd = Durable([y EXCEPT !.disk = y.hist \o After(nd.disk, LastZ(y.hist)),
                                                            !.lbase = LastZ(y.hist)])]
                    ELSE s

\* Storage.start (S2): loadDataBase fills the data tree and the committed log
StoreStart(i, nd) ==
    LET s == D3Start(i, nd)
    IN Normed([s EXCEPT !.nd.clog = Zx(s.nd.hist), !.nd.dt = LastZ(s.nd.hist)], StoreNorm)
StoreTimeout(i, nd) == StoreTrack(nd, D3Timeout(i, nd), "request")
StorePropose(i, nd, k) == StoreTrack(nd, D3Propose(i, nd, k), "request")
StoreDrop(i, nd, src, m) == StoreTrack(nd, D3Drop(i, nd, src, m), "request")
StoreAct(lb, i, ns) == StoreTrack(ns[i], D3Act(lb, i, ns), "request")

\* the layer below serve.Serve
D4Deliver(i, nd, src, m) == IF UseStore THEN StoreDeliver(i, nd, src, m) ELSE D3Deliver(i, nd, src, m)
D4Start(i, nd) == IF UseStore THEN StoreStart(i, nd) ELSE D3Start(i, nd)
D4Timeout(i, nd) == IF UseStore THEN StoreTimeout(i, nd) ELSE D3Timeout(i, nd)
D4Propose(i, nd, k) == IF UseStore THEN StorePropose(i, nd, k) ELSE D3Propose(i, nd, k)
D4Drop(i, nd, src, m) == IF UseStore THEN StoreDrop(i, nd, src, m) ELSE D3Drop(i, nd, src, m)
D4Act(lb, i, ns) == IF UseStore THEN StoreAct(lb, i, ns) ELSE D3Act(lb, i, ns)

(***************************************************************************)
(* serve.py (R6): Serve over the stack                                     *)
(***************************************************************************)

\* served: the log up to the sync's starting point taken as committed (D5; H4)
Served(y, sz) ==
    IF ZLe(sz, y.commit) THEN y
    ELSE LET y1 == Settle([y EXCEPT !.commit = sz]) IN IF UseSd THEN Durable(y1) ELSE y1

ServeDeliver(i, nd, src, m) ==
    LET s == D4Deliver(i, nd, src, m)
        y == s.nd
    IN IF nd.role # Following \/ nd.phase # FSync \/ y.role # Following THEN Normed(s, ServeNorm)
       ELSE IF m[1] = "SYNC" /\ nd.mode = ModeNone /\ y.mode # ModeNone
       THEN [s EXCEPT !.nd = ServeNorm([y EXCEPT !.szx = IF m[3] = Snap THEN Zero
                                                         ELSE ZMin(m[4], LastZ(LogOf(nd)))])]
       ELSE IF y.phase = FBroadcast THEN [s EXCEPT !.nd = ServeNorm(Served(y, nd.szx))]
       ELSE Normed(s, ServeNorm)

\* the model's kernel: the top of the stack
TopDeliver(i, nd, src, m) == IF UseServe THEN ServeDeliver(i, nd, src, m) ELSE D4Deliver(i, nd, src, m)
TopStart(i, nd) == IF UseServe THEN Normed(D4Start(i, nd), ServeNorm) ELSE D4Start(i, nd)
TopTimeout(i, nd) == IF UseServe THEN Normed(D4Timeout(i, nd), ServeNorm) ELSE D4Timeout(i, nd)
TopPropose(i, nd, k) == IF UseServe THEN Normed(D4Propose(i, nd, k), ServeNorm) ELSE D4Propose(i, nd, k)
TopDrop(i, nd, src, m) == IF UseServe THEN Normed(D4Drop(i, nd, src, m), ServeNorm) ELSE D4Drop(i, nd, src, m)
TopAct(lb, i, ns) == IF UseServe THEN Normed(D4Act(lb, i, ns), ServeNorm) ELSE D4Act(lb, i, ns)

(***************************************************************************)
(* The explorer (Zk.tla's events, over the stack)                          *)
(***************************************************************************)

RApply(c) ==
    /\ nodes' = [nodes EXCEPT ![c.me] = c.nd]
    /\ net' = AddOuts(net, c.me, c.o, down)

RInit ==
    /\ nodes = [i \in Nodes |-> TopStart(i, RFresh).nd]
    /\ net = [l \in Links |-> << >>]
    /\ drops = MaxDrops
    /\ timeouts = MaxTimeouts
    /\ heartbeats = MaxHeartbeats
    /\ made = 0
    /\ crashes = MaxCrashes
    /\ down = {}

RDeliverHead(l) ==
    /\ net[l] # << >>
    /\ LET c == TopDeliver(l[2], nodes[l[2]], l[1], Head(net[l]))
       IN /\ nodes' = [nodes EXCEPT ![l[2]] = c.nd]
          /\ net' = AddOuts([net EXCEPT ![l] = Tail(@)], l[2], c.o, down)
    /\ UNCHANGED Budgets

\* on_drop (D8): only a message of the receiver's connection stalls it; otherwise no step
DropApplies(nd, src, m) ==
    \/ nd.role = Following /\ nd.leader = src /\ nd.conn = m[2]
    \/ nd.role = Leading /\ src \in nd.learners /\ nd.lconn[src] = m[2]
RDropHead(l) ==
    /\ drops > 0
    /\ net[l] # << >>
    /\ net' = [net EXCEPT ![l] = Tail(@)]
    /\ nodes' = [nodes EXCEPT ![l[2]] = IF DropApplies(@, l[1], Head(net[l])) = TRUE
                                        THEN TopDrop(l[2], @, l[1], Head(net[l])).nd ELSE @]
    /\ drops' = drops - 1
    /\ UNCHANGED <<timeouts, heartbeats, made, crashes, down>>

RTimeoutA(i) ==
    /\ timeouts > 0
    /\ i \notin down
    /\ CanTimeout(nodes[i])
    /\ RApply(TopTimeout(i, nodes[i]))
    /\ timeouts' = timeouts - 1
    /\ UNCHANGED <<drops, heartbeats, made, crashes, down>>

RProposeA ==
    LET can == {i \in Nodes \ down : CanPropose(nodes[i])}
    IN /\ made < Proposals
       /\ can # {}
       /\ LET i == CHOOSE j \in can : \A x \in can : j <= x
          IN RApply(TopPropose(i, nodes[i], made))
       /\ made' = made + 1
       /\ UNCHANGED <<drops, timeouts, heartbeats, crashes, down>>

RCrashA(i) ==
    /\ crashes > 0
    /\ i \notin down
    /\ nodes' = [nodes EXCEPT ![i] = RCrashed(@)]
    /\ net' = [l \in Links |-> IF l[1] = i \/ l[2] = i THEN << >> ELSE net[l]]
    /\ crashes' = crashes - 1
    /\ down' = down \cup {i}
    /\ UNCHANGED <<drops, timeouts, heartbeats, made>>

RRestartA(i) ==
    /\ i \in down
    /\ down' = down \ {i}
    /\ nodes' = [nodes EXCEPT ![i] = TopStart(i, @).nd]
    /\ UNCHANGED <<net, drops, timeouts, heartbeats, made, crashes>>

\* an action: the nodes S it steps, each by TopAct from the same nodes
ActA(lb, S) ==
    LET cs == [i \in S |-> TopAct(lb, i, nodes)]
    IN /\ nodes' = [i \in Nodes |-> IF i \in S THEN cs[i].nd ELSE nodes[i]]
       /\ net' = [l \in Links |-> IF l[1] \in S /\ l[2] \notin down
                                  THEN net[l] \o cs[l[1]].o[l[2]] ELSE net[l]]
       /\ UNCHANGED Budgets

\* handlers.actions' elect: the leader of a quorum of looking nodes is its greatest vote (with
\* storage.Storage, R5, the vote as ZooKeeper reads it: Storage.actions)
RVote(nd, i) == IF UseStore THEN StoreVote(nd, i) ELSE Vote(nd, i)
Elected(qm) == CHOOSE x \in qm : \A y \in qm : y = x \/ VoteLt(RVote(nodes[y], y), RVote(nodes[x], x))

RNext ==
    \/ \E l \in Links : RDeliverHead(l) \/ RDropHead(l)
    \/ \E i \in Nodes : RTimeoutA(i) \/ RCrashA(i) \/ RRestartA(i)
    \/ RProposeA
    \/ \E qm \in SUBSET LookingUp : Cardinality(qm) >= Q /\ ActA(<<"elect", qm, Elected(qm)>>, qm)
    \/ \E i \in LookingUp, j \in Nodes : JoinEnabled(i, j) /\ ActA(<<"join", i, j>>, {i, j})
    \* log (D6); epoch.py K3: not while the node owes currentEpoch
    \/ \E i \in Up : Queued(nodes[i]) /\ nodes[i].snapped = 0 /\ ActA(<<"log", i>>, {i})
    \/ \E i, j \in Nodes : LostEnabled(i, j) = TRUE /\ ActA(<<"lost", i, j>>, {i})
    \/ \E i \in Up : nodes[i].owed /\ ActA(<<"ack-newleader", i>>, {i})          \* fine.py F1
    \/ \E i \in Up : \E j \in nodes[i].nlq : ActA(<<"newleader", i, j>>, {i})    \* forward.py F9
    \/ \E i \in Up : nodes[i].leak # << >> /\ ActA(<<"flush", i>>, {i})         \* shutdown.py H2
    \/ \E i \in Up : nodes[i].snapped # 0 /\ ActA(<<"epoch", i>>, {i})          \* epoch.py K1

RSpec == RInit /\ [][RNext]_vars
=============================================================================
