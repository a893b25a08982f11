-------------------------------- MODULE DB19 --------------------------------
(***************************************************************************)
(* The db-19 ZAB design as zabmc explores it with --no-invariants and      *)
(* --network fifo: the node state of models/db19/state.py, the handlers of *)
(* models/db19/handlers.py (one operator per Python function, same order   *)
(* of effects), and the explorer's events (zabmc/explore/events.py,        *)
(* env.py; docs/semantics.md E1-E9).  Its reachable states are exactly     *)
(* zabmc's distinct states, so that TLC's "distinct states found" is       *)
(* zabmc's distinct count (benchmarks/tlc_bench.py checks that).           *)
(*                                                                         *)
(* Correspondence with zabmc's canonical encoding (Env.encode):            *)
(*  - every Node field is a record field below, except `id`, which is the  *)
(*    node's index in `nodes` and so carries nothing more;                 *)
(*  - None (leader_id, vote_view entries) is -1, node ids being 0..N-1;    *)
(*  - bit sets of node ids (epoch_acks, leader_acks, ack masks) are sets;  *)
(*  - ack_set, a tuple of (zxid, mask) sorted by zxid with one entry per   *)
(*    zxid, is the set of its <<zxid, mask>> pairs;                        *)
(*  - a transaction (zxid, b"zab-<k>") is <<zxid, k>>;                     *)
(*  - net is one FIFO queue per ordered pair of nodes (zabmc keeps n*n     *)
(*    queues, the self links staying empty);                               *)
(*  - budgets are the same six numbers: drops, timeouts and heartbeats     *)
(*    left, proposals made, crashes left, and the set of down nodes;       *)
(*  - no ghost (invariants off), no timers (E2: not part of the state).    *)
(* Handlers' effects (timer resets, "leading", "synced", "proposed") feed  *)
(* only the invariant checker and the simulator, so they are left out.     *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS N,             \* cluster size
          MaxDrops,      \* --max-drops
          MaxTimeouts,   \* --max-timeouts (shared by all nodes)
          MaxHeartbeats, \* --max-heartbeats
          Proposals,     \* --proposals
          MaxCrashes     \* --max-crashes (restarts are unbudgeted)

VARIABLES nodes, net, drops, timeouts, heartbeats, made, crashes, down

vars == <<nodes, net, drops, timeouts, heartbeats, made, crashes, down>>

Nodes == 0 .. (N - 1)
Links == Nodes \X Nodes
Q == N \div 2 + 1
None == -1
Zero == <<0, 0>>
Looking == 0
Following == 1
Leading == 2

Max(a, b) == IF a >= b THEN a ELSE b

\* Zxids <<epoch, counter>> compare lexicographically (C4).
ZLt(a, b) == a[1] < b[1] \/ (a[1] = b[1] /\ a[2] < b[2])
ZLe(a, b) == a = b \/ ZLt(a, b)

LastZxid(nd) == IF nd.hist = << >> THEN Zero ELSE nd.hist[Len(nd.hist)][1]

\* ack_set: the mask of a zxid (empty when it has no entry) and its update.
AckEntry(S, z) == IF \E p \in S : p[1] = z THEN (CHOOSE p \in S : p[1] = z)[2] ELSE {}
WithAck(S, z, m) == {p \in S : p[1] # z} \cup {<<z, m>>}

\* fresh_node(i, n)
Fresh(i) == [cur |-> 0, acc |-> 0, hist |-> << >>, lc |-> Zero,
             role |-> Looking, lid |-> None,
             vtid |-> i, vtz |-> Zero, vview |-> [j \in Nodes |-> None],
             pne |-> 0, eacks |-> {}, lacks |-> {}, synced |-> FALSE, nc |-> 0,
             acks |-> {}]

\* crashed(): the durable fields, a fresh node's value in every other one (E7).
Crashed(nd, i) == [Fresh(i) EXCEPT !.cur = nd.cur, !.acc = nd.acc, !.hist = nd.hist,
                                   !.lc = nd.lc]

(***************************************************************************)
(* Messages: tuples whose first element is the RPC kind, fields in the     *)
(* order of state.py's MSG_FIELDS.                                         *)
(*   <<"LFL", src_id, last_zxid, peer_epoch>>                              *)
(*   <<"VOTE", voter_id, last_zxid, peer_epoch, leader_id>>                *)
(*   <<"NEWEPOCH", new_epoch>>  <<"ACKEPOCH", current_epoch, last_zxid>>   *)
(*   <<"NEWLEADER", new_epoch, history>>  <<"ACKLEADER", new_epoch>>       *)
(*   <<"PROPOSE", txn>>  <<"ACK", zxid>>  <<"COMMIT", zxid>>               *)
(*                                                                         *)
(* A handler call runs on a context c = [me, nd, o] (handlers.py's _Ctx):  *)
(* the node's id, its evolving state, and its sends so far as one queue    *)
(* per destination (only the order of the messages on one link matters).   *)
(***************************************************************************)
Ctx(i) == [me |-> i, nd |-> nodes[i], o |-> [d \in Nodes |-> << >>]]

\* broadcast: to every peer, ascending (C1)
Bcast(c, m) == [c EXCEPT !.o = [d \in Nodes |-> IF d = c.me THEN @[d] ELSE Append(@[d], m)]]
Send(c, d, m) == [c EXCEPT !.o[d] = Append(@, m)]

\* --- FastLeaderElection (Phase 0) ---

\* C14: nothing but the role and the leader.
BecomeFollowing(c, l) == [c EXCEPT !.nd.role = Following, !.nd.lid = l]

TryFinishSync(c) ==
    IF c.nd.synced \/ Cardinality(c.nd.lacks) < Q THEN c
    ELSE LET c1 == [c EXCEPT !.nd.synced = TRUE]
             lz == LastZxid(c1.nd)
         IN IF ZLt(c1.nd.lc, lz)
            THEN Bcast([c1 EXCEPT !.nd.lc = lz], <<"COMMIT", lz>>)
            ELSE c1

TryFinishDiscovery(c) ==
    IF Cardinality(c.nd.eacks) < Q THEN c
    ELSE LET c1 == [c EXCEPT !.nd.cur = c.nd.pne, !.nd.nc = 0, !.nd.lacks = {c.me}]
         IN TryFinishSync(Bcast(c1, <<"NEWLEADER", c1.nd.cur, c1.nd.hist>>))

\* C15: synced, ack_set and next_counter are left as they are.
BecomeLeading(c) ==
    LET e == Max(c.nd.acc, c.nd.cur) + 1
        c1 == [c EXCEPT !.nd.role = Leading, !.nd.pne = e, !.nd.acc = e,
                        !.nd.eacks = {c.me}]
    IN TryFinishDiscovery(Bcast(c1, <<"NEWEPOCH", e>>))

CheckElection(c) ==
    LET t == c.nd.vtid
    IN IF Cardinality({j \in Nodes : c.nd.vview[j] = t}) >= Q
       THEN IF t = c.me THEN BecomeLeading(c) ELSE BecomeFollowing(c, t)
       ELSE c

\* "on entering Looking" (start-up C6, timeout C10, restart E9)
EnterLooking(c) ==
    LET me == c.me
        lz == LastZxid(c.nd)
        ce == c.nd.cur
        c1 == [c EXCEPT !.nd.role = Looking, !.nd.vtid = me, !.nd.vtz = lz,
                        !.nd.vview = [j \in Nodes |-> IF j = me THEN me ELSE None]]
    IN CheckElection(Bcast(Bcast(c1, <<"LFL", me, lz, ce>>), <<"VOTE", me, lz, ce, me>>))

\* C13: a node that is not Looking answers with its current vote, changing nothing.
VoteReply(c, src) ==
    Send(c, src, <<"VOTE", c.me, LastZxid(c.nd), c.nd.cur, c.nd.vtid>>)

\* A Vote (or by C12 a LookForLeader) while Looking.  C21: our own zxid, the new target.
OnVote(c, voter, pz, chosen) ==
    LET better == ZLt(c.nd.vtz, pz) \/ (pz = c.nd.vtz /\ voter > c.nd.vtid)
        c1 == IF better
              THEN Bcast([c EXCEPT !.nd.vtid = voter, !.nd.vtz = pz,
                                   !.nd.vview = [j \in Nodes |-> IF j = c.me THEN voter
                                                                 ELSE None]],
                         <<"VOTE", c.me, LastZxid(c.nd), c.nd.cur, voter>>)
              ELSE c
    IN CheckElection([c1 EXCEPT !.nd.vview[voter] = chosen])

\* --- Discovery and Synchronization (Phases 1-2) ---

\* C23: a stale NewEpoch only resets the timer (not part of the state).
OnNewEpoch(c, src, e) ==
    IF e > c.nd.acc
    THEN LET c1 == [c EXCEPT !.nd.acc = e]
             c2 == IF c1.nd.role # Following THEN BecomeFollowing(c1, src) ELSE c1
         IN Send(c2, src, <<"ACKEPOCH", c1.nd.cur, LastZxid(c1.nd)>>)
    ELSE IF e = c.nd.acc
         THEN Send(c, src, <<"ACKEPOCH", c.nd.cur, LastZxid(c.nd)>>)
         ELSE c

\* C24: every AckEpoch counts and re-runs discovery.
OnAckEpoch(c, src) ==
    IF c.nd.role # Leading THEN c
    ELSE TryFinishDiscovery([c EXCEPT !.nd.eacks = @ \cup {src}])

\* C19: the whole history is replaced; last_committed is left alone.
OnNewLeader(c, src, e, h) ==
    IF e >= c.nd.acc
    THEN LET c1 == [c EXCEPT !.nd.acc = e, !.nd.cur = e, !.nd.hist = h]
             c2 == IF c1.nd.role # Following THEN BecomeFollowing(c1, src) ELSE c1
         IN Send(c2, src, <<"ACKLEADER", e>>)
    ELSE c

OnAckLeader(c, src, e) ==
    IF c.nd.role # Leading \/ e # c.nd.cur THEN c
    ELSE TryFinishSync([c EXCEPT !.nd.lacks = @ \cup {src}])

\* --- Broadcast (Phase 3) ---

TryCommit(c, z) ==
    IF ZLe(z, c.nd.lc) THEN c
    ELSE IF Cardinality(AckEntry(c.nd.acks, z)) >= Q
         THEN Bcast([c EXCEPT !.nd.lc = z], <<"COMMIT", z>>)
         ELSE c

\* C25: no contiguity check; a rejected Propose resets nothing and sends nothing.
OnPropose(c, src, txn) ==
    IF c.nd.role # Following \/ src # c.nd.lid THEN c
    ELSE IF ZLt(LastZxid(c.nd), txn[1])
         THEN Send([c EXCEPT !.nd.hist = Append(@, txn)], src, <<"ACK", txn[1]>>)
         ELSE c

\* C17: an Ack creates a missing entry.
OnAck(c, src, z) ==
    IF c.nd.role # Leading THEN c
    ELSE TryCommit([c EXCEPT !.nd.acks = WithAck(@, z, AckEntry(@, z) \cup {src})], z)

\* C18: the timer reset for the leader's Commit is not part of the state.
OnCommit(c, src, z) ==
    IF ZLt(c.nd.lc, z) /\ ZLe(z, LastZxid(c.nd)) THEN [c EXCEPT !.nd.lc = z] ELSE c

\* --- the kernel's public functions ---

Deliver(c, src, m) ==
    LET k == m[1] IN
    IF (k = "LFL" \/ k = "VOTE") /\ c.nd.role # Looking THEN VoteReply(c, src)
    ELSE CASE k = "VOTE"      -> OnVote(c, m[2], m[3], m[5])
           [] k = "LFL"       -> OnVote(c, m[2], m[3], m[2])    \* C12
           [] k = "NEWEPOCH"  -> OnNewEpoch(c, src, m[2])
           [] k = "ACKEPOCH"  -> OnAckEpoch(c, src)
           [] k = "NEWLEADER" -> OnNewLeader(c, src, m[2], m[3])
           [] k = "ACKLEADER" -> OnAckLeader(c, src, m[2])
           [] k = "PROPOSE"   -> OnPropose(c, src, m[2])
           [] k = "ACK"       -> OnAck(c, src, m[2])
           [] k = "COMMIT"    -> OnCommit(c, src, m[2])

Heartbeat(c) == Bcast(c, <<"COMMIT", c.nd.lc>>)

CanPropose(nd) == nd.role = Leading /\ nd.synced

\* propose(payload zab-<k>)
Propose(c, k) ==
    LET z == <<c.nd.cur, c.nd.nc + 1>>
        txn == <<z, k>>
        c1 == [c EXCEPT !.nd.nc = @ + 1, !.nd.hist = Append(@, txn),
                        !.nd.acks = WithAck(@, z, {c.me})]
    IN TryCommit(Bcast(c1, <<"PROPOSE", txn>>), z)

(***************************************************************************)
(* The explorer.                                                           *)
(***************************************************************************)

\* Node i's sends appended to their links; a message to a down node is lost at send (E8).
AddOuts(nt, i, o, dn) ==
    [l \in Links |-> IF l[1] = i /\ l[2] \notin dn THEN nt[l] \o o[l[2]] ELSE nt[l]]

\* Node c.me takes the step whose result is context c.
Apply(c, nt, dn) ==
    /\ nodes' = [nodes EXCEPT ![c.me] = c.nd]
    /\ net' = AddOuts(nt, c.me, c.o, dn)

\* E3: every node fresh, then started, in ascending id; each start sees only its own node.
StartCtx(i) == EnterLooking([me |-> i, nd |-> Fresh(i), o |-> [d \in Nodes |-> << >>]])

Init ==
    LET s == [i \in Nodes |-> StartCtx(i)]
    IN /\ nodes = [i \in Nodes |-> s[i].nd]
       /\ net = [l \in Links |-> s[l[1]].o[l[2]]]
       /\ drops = MaxDrops
       /\ timeouts = MaxTimeouts
       /\ heartbeats = MaxHeartbeats
       /\ made = 0
       /\ crashes = MaxCrashes
       /\ down = {}

\* E4/E5: the head of a link is delivered to its receiver.
DeliverHead(l) ==
    /\ net[l] # << >>
    /\ Apply(Deliver(Ctx(l[2]), l[1], Head(net[l])), [net EXCEPT ![l] = Tail(@)], down)
    /\ UNCHANGED <<drops, timeouts, heartbeats, made, crashes, down>>

\* ... or lost (budget).
DropHead(l) ==
    /\ drops > 0
    /\ net[l] # << >>
    /\ net' = [net EXCEPT ![l] = Tail(@)]
    /\ drops' = drops - 1
    /\ UNCHANGED <<nodes, timeouts, heartbeats, made, crashes, down>>

\* C10's timeout branch: a node that is not Leading re-enters Looking (shared budget).
Timeout(i) ==
    /\ timeouts > 0
    /\ i \notin down
    /\ nodes[i].role # Leading
    /\ Apply(EnterLooking(Ctx(i)), net, down)
    /\ timeouts' = timeouts - 1
    /\ UNCHANGED <<drops, heartbeats, made, crashes, down>>

\* C10's heartbeat branch: a synced leader re-sends Commit(last_committed).
HeartbeatA(i) ==
    /\ heartbeats > 0
    /\ i \notin down
    /\ nodes[i].role = Leading /\ nodes[i].synced
    /\ Apply(Heartbeat(Ctx(i)), net, down)
    /\ heartbeats' = heartbeats - 1
    /\ UNCHANGED <<drops, timeouts, made, crashes, down>>

\* Client proposal number `made` goes to the lowest-id up node that can take it.
ProposeA ==
    LET can == {i \in Nodes \ down : CanPropose(nodes[i])}
    IN /\ made < Proposals
       /\ can # {}
       /\ LET i == CHOOSE j \in can : \A x \in can : j <= x
          IN Apply(Propose(Ctx(i), made), net, down)
       /\ made' = made + 1
       /\ UNCHANGED <<drops, timeouts, heartbeats, crashes, down>>

\* E7: an up node crashes, keeping its durable fields; its links in both directions empty.
Crash(i) ==
    /\ crashes > 0
    /\ i \notin down
    /\ nodes' = [nodes EXCEPT ![i] = Crashed(@, i)]
    /\ net' = [l \in Links |-> IF l[1] = i \/ l[2] = i THEN << >> ELSE net[l]]
    /\ crashes' = crashes - 1
    /\ down' = down \cup {i}
    /\ UNCHANGED <<drops, timeouts, heartbeats, made>>

\* E9: a down node restarts (no budget) and runs the start-up for itself alone.
Restart(i) ==
    /\ i \in down
    /\ down' = down \ {i}
    /\ Apply(EnterLooking(Ctx(i)), net, down \ {i})
    /\ UNCHANGED <<drops, timeouts, heartbeats, made, crashes>>

Next ==
    \/ \E l \in Links : DeliverHead(l) \/ DropHead(l)
    \/ \E i \in Nodes : Timeout(i) \/ HeartbeatA(i) \/ Crash(i) \/ Restart(i)
    \/ ProposeA

Spec == Init /\ [][Next]_vars
=============================================================================
