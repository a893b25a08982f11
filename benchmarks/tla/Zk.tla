---------------------------------- MODULE Zk ----------------------------------
(***************************************************************************)
(* zabmc's `zk` family at its current grain (ZooKeeper 3.7's ZAB 1.0 with *)
(* the election as its outcome, models/zk/README.md D1-D12) as `zabmc     *)
(* check --no-invariants` explores it on FIFO links: the node state of     *)
(* models/zk/state.py, the handlers, actions and on_drop of                *)
(* models/zk/handlers.py (one operator per Python function, same order of  *)
(* effects, each named after the function it mirrors) and the explorer's   *)
(* events (zabmc/explore/events.py, env.py; docs/semantics.md E1-E9),      *)
(* the model's own actions (elect, join, log, lost) included.  Its         *)
(* reachable states are exactly zabmc's distinct states, and its           *)
(* transitions zabmc's generated ones (tests/test_tlc.py).                 *)
(*                                                                         *)
(* NewLeaderRule is the family's one switch, Rules.newleader: "async" is   *)
(* `zk`, "sync" is `zk-fixed`, "uptodate" is `zk-pre3911`.  The variants   *)
(* with the election at FLE's grain (`zk-fle`, `zk-fixed-fle`) are not     *)
(* transliterated: with Rules.election = "outcome" no NOTIFICATION is ever *)
(* sent and the FLE fields (lclock, vote, recv, ooe) keep their fresh      *)
(* value in every reachable state, so they are left out here.              *)
(*                                                                         *)
(* Correspondence with zabmc's canonical encoding (Env.encode):            *)
(*  - every other Node field is a record field below, except `id` (the     *)
(*    node's index in `nodes`);                                            *)
(*  - bit sets of node ids (cut, learners, connecting, electing, ackld,    *)
(*    forwarding, ack masks) are sets;                                     *)
(*  - a tuple indexed by node id (lconn, peers) is a function on Nodes,    *)
(*    and the empty tuple (), which both hold outside a leadership, is     *)
(*    << >>; a None in peers is NoZ;                                       *)
(*  - acks, the sequence ((zxid, mask), ...), is a sequence of <<zxid,     *)
(*    set>>; a transaction (zxid, b"zab-<k>") is <<zxid, k>>;              *)
(*  - phases, roles and sync modes are their numbers (state.py);           *)
(*  - net is one FIFO queue per ordered pair of nodes;                     *)
(*  - budgets are the same six numbers: drops, timeouts and heartbeats     *)
(*    left (zk never heartbeats, D10), proposals made, crashes left, and   *)
(*    the set of down nodes;                                               *)
(*  - no ghost (invariants off).  Effects ("leading", "synced",            *)
(*    "proposed") feed only the invariant checker, so they are left out.   *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS N,             \* cluster size
          MaxDrops,      \* --max-drops
          MaxTimeouts,   \* --max-timeouts (shared by all nodes)
          MaxHeartbeats, \* --max-heartbeats (never spent: zk has no heartbeat, D10)
          Proposals,     \* --proposals
          MaxCrashes,    \* --max-crashes (restarts are unbudgeted)
          NewLeaderRule  \* Rules.newleader: "async" (zk), "sync" (zk-fixed), "uptodate" (zk-pre3911)

VARIABLES nodes, net, drops, timeouts, heartbeats, made, crashes, down

vars == <<nodes, net, drops, timeouts, heartbeats, made, crashes, down>>

Nodes == 0 .. (N - 1)
Links == Nodes \X Nodes
Q == N \div 2 + 1
Zero == <<0, 0>>
NoZ == <<-1, -1>>   \* None in `peers`
Looking == 0
Following == 1
Leading == 2
\* phases (state.py)
Election == 0
FDiscovery == 1
FSync == 2
FBroadcast == 3
LInfo == 4
LEpoch == 5
LSync == 6
LBroadcast == 7
\* sync modes
ModeNone == 0
Diff == 1
Trunc == 2

Max(a, b) == IF a >= b THEN a ELSE b
MaxOf(S) == CHOOSE x \in S : \A y \in S : y <= x

\* Zxids <<epoch, counter>> compare lexicographically, as Python tuples do.
ZLt(a, b) == a[1] < b[1] \/ (a[1] = b[1] /\ a[2] < b[2])
ZLe(a, b) == a = b \/ ZLt(a, b)
ZMax(a, b) == IF ZLt(a, b) THEN b ELSE a

\* last_zxid (state.py: history_last), of a history
LastZ(h) == IF h = << >> THEN Zero ELSE h[Len(h)][1]

\* Node(node_id): every field's default (state.py)
Fresh == [role |-> Looking, phase |-> Election, leader |-> -1,
          acc |-> 0,                 \* accepted_epoch (disk)
          cur |-> 0,                 \* current_epoch (disk)
          hist |-> << >>,            \* history (disk)
          lc |-> Zero,               \* last_committed (disk)
          conn |-> 0,
          cut |-> {},
          mem |-> << >>,
          commit |-> Zero,
          mode |-> ModeNone,
          pending |-> << >>,
          pcommit |-> Zero,
          nl |-> FALSE,
          learners |-> {},
          lconn |-> << >>,
          tmax |-> 0,
          connecting |-> {},
          electing |-> {},
          peers |-> << >>,
          ackld |-> {},
          forwarding |-> {},
          acks |-> << >>]

\* zabmc.model.crashed with Rules.durable: the disk and the connection counter (D4, D8).
Crashed(nd) == [Fresh EXCEPT !.acc = nd.acc, !.cur = nd.cur, !.hist = nd.hist, !.lc = nd.lc,
                             !.conn = nd.conn]

\* log_of: everything the node holds, on disk or in memory
LogOf(nd) == nd.hist \o nd.mem

\* queued: mem waits for the SyncThread (not for NEWLEADER's snapshot)
Queued(nd) == nd.mem # << >> /\ ~(nd.mode = Trunc /\ ~nd.nl)

\* vote: (peer epoch, last zxid, id); VoteLt compares two lexicographically
Vote(nd, i) == <<nd.cur, LastZ(LogOf(nd)), i>>
VoteLt(a, b) == a[1] < b[1] \/ (a[1] = b[1] /\ (ZLt(a[2], b[2]) \/ (a[2] = b[2] /\ a[3] < b[3])))

\* settle (D5): last_committed advances over the last transaction on disk known committed
Settle(nd) ==
    LET ks == {k \in 1 .. Len(nd.hist) : ZLe(nd.hist[k][1], nd.commit)}
    IN IF ks # {} /\ ZLt(nd.lc, nd.hist[MaxOf(ks)][1])
       THEN [nd EXCEPT !.lc = nd.hist[MaxOf(ks)][1]]
       ELSE nd

(***************************************************************************)
(* Messages: tuples whose first element is the kind, then the connection   *)
(* (conn, D8), then the fields of state.py's MSG_FIELDS.                   *)
(*   <<"FOLLOWERINFO", conn, accepted_epoch>>  <<"LEADERINFO", conn, e>>   *)
(*   <<"ACKEPOCH", conn, current_epoch, last_zxid>>                        *)
(*   <<"SYNC", conn, mode, zxid, txns, committed>>                         *)
(*   <<"NEWLEADER", conn, e>>  <<"ACKLD", conn, e>>  <<"UPTODATE", conn>>  *)
(*   <<"PROPOSAL", conn, txn>>  <<"ACK", conn, zxid>>  <<"COMMIT", conn, z>>*)
(* A handler call runs on a context c = [me, nd, o]: the node's id, its    *)
(* evolving state, and its sends so far as one queue per destination.      *)
(***************************************************************************)
Ctx(i) == [me |-> i, nd |-> nodes[i], o |-> [d \in Nodes |-> << >>]]
CtxOf(i, nd) == [me |-> i, nd |-> nd, o |-> [d \in Nodes |-> << >>]]
Send(c, d, m) == [c EXCEPT !.o[d] = Append(@, m)]
\* to every node of a set but self, one message each
Mcast(c, S, M(_)) ==
    [c EXCEPT !.o = [d \in Nodes |-> IF d \in S /\ d # c.me THEN Append(@[d], M(d)) ELSE @[d]]]
SetNd(c, nd) == [c EXCEPT !.nd = nd]

\* shutdown (D8): the SyncThread finishes, memory is rebuilt from disk, role variables reset.
Shutdown(nd) ==
    Settle([nd EXCEPT !.role = Looking, !.phase = Election, !.leader = -1,
                      !.hist = IF Queued(nd) THEN nd.hist \o nd.mem ELSE nd.hist,
                      !.mem = << >>, !.commit = ZMax(nd.commit, nd.lc), !.mode = ModeNone,
                      !.pending = << >>, !.pcommit = Zero, !.nl = FALSE, !.cut = {},
                      !.learners = {}, !.lconn = << >>, !.tmax = 0, !.connecting = {},
                      !.electing = {}, !.peers = << >>, !.ackld = {}, !.forwarding = {},
                      !.acks = << >>])

\* look: with the election as its outcome, nothing is sent (D1).
Look(c) == SetNd(c, Shutdown(c.nd))

\* start: load the disk (no message with the outcome election)
StartNd(nd) == [nd EXCEPT !.commit = nd.lc, !.mem = << >>]

\* become_leader(node, learners, lconn, n)
BecomeLeader(nd, i, learners, lconn) ==
    [nd EXCEPT !.role = Leading, !.phase = LInfo, !.leader = i, !.learners = learners \cup {i},
               !.lconn = lconn, !.tmax = nd.acc + 1, !.connecting = {i}, !.electing = {i},
               !.peers = [k \in Nodes |-> NoZ], !.ackld = {i}, !.forwarding = {}, !.acks = << >>]

\* become_follower(node, leader): a new connection (D8) and FOLLOWERINFO on it
BecomeFollower(c, l) ==
    LET nd == [c.nd EXCEPT !.role = Following, !.phase = FDiscovery, !.leader = l,
                           !.conn = @ + 1, !.cut = {}]
    IN Send(SetNd(c, nd), l, <<"FOLLOWERINFO", nd.conn, nd.acc>>)

\* _try_commit: commit outstanding proposals in order while each has a quorum of acks.
TryCommit(c) ==
    LET a == c.nd.acks
        P == MaxOf({p \in 0 .. Len(a) : \A k \in 1 .. p : Cardinality(a[k][2]) >= Q})
    IN IF P = 0 THEN c
       ELSE LET nd == Settle([c.nd EXCEPT !.commit = a[P][1], !.acks = SubSeq(a, P + 1, Len(a))])
                fw == c.nd.forwarding
            IN [c EXCEPT !.nd = nd,
                         !.o = [d \in Nodes |->
                                  IF d \in fw /\ d # c.me
                                  THEN @[d] \o [k \in 1 .. P |-> <<"COMMIT", c.nd.lconn[d], a[k][1]>>]
                                  ELSE @[d]]]

\* _drop_learner (outcome election: the learner's connection id is forgotten)
DropLearner(nd, j) ==
    [nd EXCEPT !.learners = @ \ {j}, !.lconn = [@ EXCEPT ![j] = 0], !.cut = @ \ {j},
               !.connecting = @ \ {j}, !.electing = @ \ {j}, !.ackld = @ \ {j},
               !.forwarding = @ \ {j}, !.peers = [@ EXCEPT ![j] = NoZ]]

(***************************************************************************)
(* Leader handlers                                                         *)
(***************************************************************************)

\* _on_followerinfo
OnFollowerInfo(c, j, accepted) ==
    LET connecting == c.nd.connecting \cup {j}
    IN IF c.nd.phase # LInfo
       THEN Send([c EXCEPT !.nd.connecting = connecting], j,
                 <<"LEADERINFO", c.nd.lconn[j], c.nd.acc>>)
       ELSE LET tmax == Max(c.nd.tmax, accepted + 1)
                nd == [c.nd EXCEPT !.connecting = connecting, !.tmax = tmax]
            IN IF Cardinality(connecting) < Q THEN SetNd(c, nd)
               ELSE LET nd2 == [nd EXCEPT !.acc = tmax, !.phase = LEpoch]
                    IN Mcast(SetNd(c, nd2), connecting,
                             LAMBDA k : <<"LEADERINFO", nd2.lconn[k], tmax>>)

\* _sync (D3): the sync packets for follower j whose last zxid is `peer`, then NEWLEADER.
\* Its change to the node (peers[j] := None, j forwarding) is SyncNd; its two messages SyncMsgs.
SyncNd(nd, j) == [nd EXCEPT !.peers[j] = NoZ, !.forwarding = @ \cup {j}]
SyncMsgs(nd, j, peer) ==
    LET h == nd.hist
        cc == IF nd.phase = LBroadcast
              THEN LET ks == {k \in 1 .. Len(h) : ZLe(h[k][1], nd.lc)}
                   IN IF ks = {} THEN 0 ELSE MaxOf(ks)
              ELSE Len(h)
        maxc == IF cc > 0 THEN h[cc][1] ELSE Zero
        eq == {k \in 1 .. Len(h) : h[k][1] = peer}
        below == {k \in 1 .. Len(h) : ZLt(h[k][1], peer)}
        bstart == IF below = {} THEN 0 ELSE MaxOf(below)
        \* <<mode, zxid, start>>
        sel == IF ZLt(maxc, peer) THEN <<Trunc, maxc, cc>>
               ELSE IF peer = Zero THEN <<Diff, peer, 0>>
               ELSE IF eq # {} THEN <<Diff, peer, CHOOSE k \in eq : \A x \in eq : k <= x>>
               ELSE <<Trunc, IF bstart > 0 THEN h[bstart][1] ELSE Zero, bstart>>
        start == sel[3]
        txns == SubSeq(h, start + 1, Len(h))
        committed == Max(0, cc - start)
        cn == nd.lconn[j]
    IN <<<<"SYNC", cn, sel[1], sel[2], txns, committed>>, <<"NEWLEADER", cn, nd.acc>>>>

\* _on_ackepoch (D9: a more recent follower makes the leader look again)
OnAckEpoch(c, j, epoch, zxid) ==
    IF c.nd.phase = LInfo THEN c
    ELSE IF c.nd.phase # LEpoch
         THEN [c EXCEPT !.nd = SyncNd(c.nd, j), !.o[j] = @ \o SyncMsgs(c.nd, j, zxid)]
    ELSE LET peers == [c.nd.peers EXCEPT ![j] = zxid]
             lz == LastZ(LogOf(c.nd))
         IN IF epoch = -1 THEN [c EXCEPT !.nd.peers = peers]
            ELSE IF epoch > c.nd.cur \/ (epoch = c.nd.cur /\ ZLt(lz, zxid)) THEN Look(c)
            ELSE LET nd == [c.nd EXCEPT !.peers = peers, !.electing = @ \cup {j}]
                 IN IF Cardinality(nd.electing) < Q THEN SetNd(c, nd)
                    ELSE LET nd2 == [nd EXCEPT !.cur = nd.acc, !.phase = LSync]
                             ks == {k \in Nodes : nd2.peers[k] # NoZ}
                             \* the loop over k syncs each k with a waiting ACKEPOCH; each _sync
                             \* reads only fields the loop does not change
                         IN [c EXCEPT !.nd = [nd2 EXCEPT !.peers = [k \in Nodes |-> NoZ],
                                                         !.forwarding = @ \cup ks],
                                      !.o = [d \in Nodes |->
                                               IF d \in ks THEN @[d] \o SyncMsgs(nd2, d, nd2.peers[d])
                                               ELSE @[d]]]

\* _on_ackld
OnAckLd(c, j, epoch) ==
    IF epoch # c.nd.acc THEN c
    ELSE IF c.nd.phase = LBroadcast THEN Send(c, j, <<"UPTODATE", c.nd.lconn[j]>>)
    ELSE IF c.nd.phase # LSync THEN c
    ELSE LET nd == [c.nd EXCEPT !.ackld = @ \cup {j}]
         IN IF Cardinality(nd.ackld) < Q THEN SetNd(c, nd)
            ELSE LET nd2 == Settle([nd EXCEPT !.phase = LBroadcast, !.commit = LastZ(nd.hist)])
                 IN Mcast(SetNd(c, nd2), nd2.ackld, LAMBDA k : <<"UPTODATE", nd2.lconn[k]>>)

\* _on_ack
OnAck(c, j, zxid) ==
    IF c.nd.phase # LBroadcast \/ j \notin c.nd.forwarding THEN c
    ELSE LET a == c.nd.acks
             ks == {k \in 1 .. Len(a) : a[k][1] = zxid}
         IN IF ks = {} THEN c
            ELSE LET k == CHOOSE x \in ks : \A y \in ks : x <= y
                 IN TryCommit([c EXCEPT !.nd.acks[k] = <<a[k][1], a[k][2] \cup {j}>>])

(***************************************************************************)
(* Follower handlers                                                       *)
(***************************************************************************)

\* _on_leaderinfo
OnLeaderInfo(c, epoch) ==
    LET last == LastZ(LogOf(c.nd))
    IN IF epoch > c.nd.acc
       THEN Send([c EXCEPT !.nd.acc = epoch, !.nd.phase = FSync], c.nd.leader,
                 <<"ACKEPOCH", c.nd.conn, c.nd.cur, last>>)
       ELSE IF epoch = c.nd.acc
       THEN Send([c EXCEPT !.nd.phase = FSync], c.nd.leader, <<"ACKEPOCH", c.nd.conn, -1, last>>)
       ELSE Look(c)

\* _on_sync (D3): DIFF keeps the packets for later; TRUNC cuts the disk, applies in memory.
OnSyncNd(nd, mode, zxid, txns, committed) ==
    IF mode = Diff
    THEN [nd EXCEPT !.mode = Diff, !.pending = txns,
                    !.pcommit = IF committed > 0 THEN txns[committed][1] ELSE Zero]
    ELSE LET applied == SubSeq(txns, 1, committed)
         IN [nd EXCEPT !.mode = Trunc,
                       !.hist = SelectSeq(nd.hist, LAMBDA t : ZLe(t[1], zxid)),
                       !.mem = applied,
                       !.commit = IF applied # << >> THEN applied[Len(applied)][1] ELSE nd.commit,
                       !.pending = SubSeq(txns, committed + 1, Len(txns))]

\* _on_newleader: the variants' one decision (Rules.newleader)
OnNewLeader(c, epoch) ==
    LET nd0 == IF c.nd.mode = Trunc THEN [c.nd EXCEPT !.hist = @ \o c.nd.mem, !.mem = << >>]
               ELSE c.nd
        nd1 == [nd0 EXCEPT !.cur = epoch, !.nl = TRUE]
        nd2 == IF NewLeaderRule # "uptodate" /\ nd1.pending # << >>
               THEN IF NewLeaderRule = "sync"
                    THEN [nd1 EXCEPT !.hist = LogOf(nd1) \o nd1.pending, !.mem = << >>,
                                     !.pending = << >>]
                    ELSE [nd1 EXCEPT !.mem = @ \o nd1.pending, !.pending = << >>]
               ELSE nd1
    IN Send(SetNd(c, Settle(nd2)), nd2.leader, <<"ACKLD", nd2.conn, epoch>>)

\* _on_uptodate
OnUpToDateNd(nd) ==
    LET nd1 == IF nd.pending # << >> THEN [nd EXCEPT !.mem = @ \o nd.pending, !.pending = << >>]
               ELSE nd
    IN Settle([nd1 EXCEPT !.phase = FBroadcast, !.commit = ZMax(nd1.commit, nd1.pcommit),
                          !.pcommit = Zero])

\* deliver (NOTIFICATION never travels with the outcome election)
Deliver(c, src, m) ==
    LET k == m[1]
        nd == c.nd
    IN IF nd.role = Leading
       THEN IF src \in nd.cut /\ m[2] = nd.lconn[src] THEN c    \* a stalled connection (D8)
            ELSE IF src \notin nd.learners \/ m[2] # nd.lconn[src] THEN c  \* not open (D8)
            ELSE CASE k = "FOLLOWERINFO" -> OnFollowerInfo(c, src, m[3])
                   [] k = "ACKEPOCH"     -> OnAckEpoch(c, src, m[3], m[4])
                   [] k = "ACKLD"        -> OnAckLd(c, src, m[3])
                   [] k = "ACK"          -> OnAck(c, src, m[3])
                   [] OTHER              -> c
       ELSE IF nd.role # Following \/ src # nd.leader \/ m[2] # nd.conn \/ nd.cut # {} THEN c
       ELSE IF k = "LEADERINFO" /\ nd.phase = FDiscovery THEN OnLeaderInfo(c, m[3])
       ELSE IF nd.phase = FSync
            THEN IF k = "SYNC" /\ nd.mode = ModeNone
                 THEN SetNd(c, OnSyncNd(nd, m[3], m[4], m[5], m[6]))
                 ELSE IF k = "NEWLEADER" /\ nd.mode # ModeNone /\ ~nd.nl THEN OnNewLeader(c, m[3])
                 ELSE IF nd.nl
                      THEN CASE k = "PROPOSAL" -> [c EXCEPT !.nd.pending = Append(@, m[3])]
                             [] k = "COMMIT"   -> [c EXCEPT !.nd.pcommit = ZMax(@, m[3])]
                             [] k = "UPTODATE" -> SetNd(c, OnUpToDateNd(nd))
                             [] OTHER          -> c
                      ELSE c
       ELSE IF nd.phase = FBroadcast
            THEN IF k = "PROPOSAL"
                 THEN IF ZLt(LastZ(LogOf(nd)), m[3][1]) THEN [c EXCEPT !.nd.mem = Append(@, m[3])]
                      ELSE c
                 ELSE IF k = "COMMIT"
                 THEN SetNd(c, Settle([nd EXCEPT !.commit = ZMax(@, m[3])]))
                 ELSE c
       ELSE c

\* log (D6): the SyncThread writes what is queued; a follower acknowledges the current epoch's.
LogStep(c) ==
    LET new == c.nd.mem
        nd == Settle([c.nd EXCEPT !.hist = @ \o new, !.mem = << >>])
        acks == SelectSeq(new, LAMBDA t : t[1][1] = nd.acc)
    IN IF nd.role = Following /\ (nd.phase = FBroadcast \/ (nd.phase = FSync /\ nd.nl))
       THEN [c EXCEPT !.nd = nd,
                      !.o[nd.leader] = @ \o [k \in 1 .. Len(acks) |-> <<"ACK", nd.conn, acks[k][1]>>]]
       ELSE SetNd(c, nd)

\* lost (D8): node c.me notices its connection to j is gone.
LostStep(c, j) ==
    IF c.nd.role = Following THEN Look(c)
    ELSE LET nd == DropLearner(c.nd, j)
         IN IF Cardinality(nd.learners) < Q THEN Look(SetNd(c, nd)) ELSE SetNd(c, nd)

\* timeout: a node that is not looking gives up on its peers; a looking one has no timeout step.
CanTimeout(nd) == nd.role # Looking

\* can_propose
CanPropose(nd) == nd.role = Leading /\ nd.phase = LBroadcast

\* propose (D7, D11): the leader logs the transaction, sends it, and commits what it can.
ProposeStep(c, k) ==
    LET e == c.nd.acc
        last == LastZ(c.nd.hist)
        z == IF last[1] = e THEN <<e, last[2] + 1>> ELSE <<e, 1>>
        txn == <<z, k>>
        nd == [c.nd EXCEPT !.hist = Append(@, txn), !.acks = Append(@, <<z, {c.me}>>)]
    IN TryCommit(Mcast(SetNd(c, nd), nd.forwarding, LAMBDA d : <<"PROPOSAL", nd.lconn[d], txn>>))

(***************************************************************************)
(* The explorer                                                            *)
(***************************************************************************)

AddOuts(nt, i, o, dn) ==
    [l \in Links |-> IF l[1] = i /\ l[2] \notin dn THEN nt[l] \o o[l[2]] ELSE nt[l]]

Apply(c, nt, dn) ==
    /\ nodes' = [nodes EXCEPT ![c.me] = c.nd]
    /\ net' = AddOuts(nt, c.me, c.o, dn)

\* E3: every node fresh, then started (which changes nothing a fresh node holds).
Init ==
    /\ nodes = [i \in Nodes |-> StartNd(Fresh)]
    /\ net = [l \in Links |-> << >>]
    /\ drops = MaxDrops
    /\ timeouts = MaxTimeouts
    /\ heartbeats = MaxHeartbeats
    /\ made = 0
    /\ crashes = MaxCrashes
    /\ down = {}

Budgets == <<drops, timeouts, heartbeats, made, crashes, down>>

\* Deliver (E4/E5)
DeliverHead(l) ==
    /\ net[l] # << >>
    /\ Apply(Deliver(Ctx(l[2]), l[1], Head(net[l])), [net EXCEPT ![l] = Tail(@)], down)
    /\ UNCHANGED Budgets

\* Drop, and on_drop (D8): a lost message of a connection stalls it at the receiver.
OnDropNd(nd, src, m) ==
    IF nd.role = Following /\ nd.leader = src /\ nd.conn = m[2] THEN [nd EXCEPT !.cut = @ \cup {src}]
    ELSE IF nd.role = Leading /\ src \in nd.learners /\ nd.lconn[src] = m[2]
         THEN [nd EXCEPT !.cut = @ \cup {src}]
    ELSE nd
DropHead(l) ==
    /\ drops > 0
    /\ net[l] # << >>
    /\ net' = [net EXCEPT ![l] = Tail(@)]
    /\ nodes' = [nodes EXCEPT ![l[2]] = OnDropNd(@, l[1], Head(net[l]))]
    /\ drops' = drops - 1
    /\ UNCHANGED <<timeouts, heartbeats, made, crashes, down>>

\* Timeout (timeout(node)): an up node that is not looking looks again.
TimeoutA(i) ==
    /\ timeouts > 0
    /\ i \notin down
    /\ CanTimeout(nodes[i])
    /\ Apply(Look(Ctx(i)), net, down)
    /\ timeouts' = timeouts - 1
    /\ UNCHANGED <<drops, heartbeats, made, crashes, down>>

\* Propose: client proposal number `made` to the lowest-id up node that can take it.
ProposeA ==
    LET can == {i \in Nodes \ down : CanPropose(nodes[i])}
    IN /\ made < Proposals
       /\ can # {}
       /\ LET i == CHOOSE j \in can : \A x \in can : j <= x
          IN Apply(ProposeStep(Ctx(i), made), net, down)
       /\ made' = made + 1
       /\ UNCHANGED <<drops, timeouts, heartbeats, crashes, down>>

\* Crash (E7)
CrashA(i) ==
    /\ crashes > 0
    /\ i \notin down
    /\ nodes' = [nodes EXCEPT ![i] = Crashed(@)]
    /\ net' = [l \in Links |-> IF l[1] = i \/ l[2] = i THEN << >> ELSE net[l]]
    /\ crashes' = crashes - 1
    /\ down' = down \cup {i}
    /\ UNCHANGED <<drops, timeouts, heartbeats, made>>

\* Restart (E9): start(node) loads the disk; nothing is sent.
RestartA(i) ==
    /\ i \in down
    /\ down' = down \ {i}
    /\ nodes' = [nodes EXCEPT ![i] = StartNd(@)]
    /\ UNCHANGED <<net, drops, timeouts, heartbeats, made, crashes>>

\* --- the model's actions (handlers.actions / act), budgets unchanged ---
Up == Nodes \ down
LookingUp == {i \in Up : nodes[i].role = Looking}

\* elect L Q (D1): any quorum of up looking nodes elects its greatest vote; the others follow.
ElectA(qm) ==
    LET ldr == CHOOSE x \in qm : \A y \in qm : y = x \/ VoteLt(Vote(nodes[y], y), Vote(nodes[x], x))
        lconn == [i \in Nodes |-> IF i \in qm /\ i # ldr THEN nodes[i].conn + 1 ELSE 0]
        fc(i) == BecomeFollower(Ctx(i), ldr)
    IN /\ nodes' = [i \in Nodes |-> IF i = ldr THEN BecomeLeader(nodes[i], i, qm, lconn)
                                    ELSE IF i \in qm THEN fc(i).nd
                                    ELSE nodes[i]]
       /\ net' = [l \in Links |-> IF l[1] \in qm /\ l[1] # ldr /\ l[2] = ldr /\ ldr \notin down
                                  THEN net[l] \o fc(l[1]).o[ldr] ELSE net[l]]
       /\ UNCHANGED Budgets

\* join i j (D1): a looking node follows a leader a quorum already backs.
JoinEnabled(i, j) ==
    /\ j \in Up /\ nodes[j].role = Leading /\ i \notin nodes[j].learners
    /\ Cardinality({k \in Up : nodes[k].role = Following /\ nodes[k].leader = j}) + 1 >= Q
JoinA(i, j) ==
    LET fc == BecomeFollower(Ctx(i), j)
        lead == nodes[j]
    IN /\ nodes' = [nodes EXCEPT ![i] = fc.nd,
                                 ![j] = [lead EXCEPT !.learners = @ \cup {i},
                                                     !.lconn[i] = nodes[i].conn + 1]]
       /\ net' = AddOuts(net, i, fc.o, down)
       /\ UNCHANGED Budgets

\* log i (D6)
LogA(i) ==
    /\ i \in Up /\ Queued(nodes[i])
    /\ Apply(LogStep(Ctx(i)), net, down)
    /\ UNCHANGED Budgets

\* lost i j (D8)
LostEnabled(i, j) ==
    LET x == nodes[i]
    IN /\ i \in Up
       /\ \/ /\ x.role = Following /\ j = x.leader
             /\ \/ j \notin Up \/ nodes[j].role # Leading \/ j \in x.cut
                \/ (i \notin nodes[j].learners /\ x.phase # Election)
          \/ /\ x.role = Leading /\ j # i /\ j \in x.learners
             /\ \/ j \notin Up \/ nodes[j].role # Following \/ nodes[j].leader # i \/ j \in x.cut
\* (compared with TRUE so that TLC evaluates it as one value: a disjunction evaluated as an
\* action would give one successor per true disjunct, where zabmc has one `lost i j` event)
LostA(i, j) ==
    /\ LostEnabled(i, j) = TRUE
    /\ Apply(LostStep(Ctx(i), j), net, down)
    /\ UNCHANGED Budgets

Next ==
    \/ \E l \in Links : DeliverHead(l) \/ DropHead(l)
    \/ \E i \in Nodes : TimeoutA(i) \/ CrashA(i) \/ RestartA(i)
    \/ ProposeA
    \/ \E qm \in SUBSET LookingUp : Cardinality(qm) >= Q /\ ElectA(qm)
    \/ \E i \in LookingUp, j \in Nodes : JoinEnabled(i, j) /\ JoinA(i, j)
    \/ \E i \in Nodes : LogA(i)
    \/ \E i, j \in Nodes : LostA(i, j)

Spec == Init /\ [][Next]_vars
=============================================================================
