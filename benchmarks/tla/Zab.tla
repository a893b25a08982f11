--------------------------------- MODULE Zab ---------------------------------
(***************************************************************************)
(* zabmc's `zab` model (ZAB as DSN 2011 sections IV-V describe it, with    *)
(* db-19's FastLeaderElection as Phase 0; models/zab/README.md, D1-D21)    *)
(* as `zabmc check --no-invariants` explores it on FIFO links: the node    *)
(* state of models/zab/state.py, the handlers of models/zab/handlers.py    *)
(* (one operator per Python function, same order of effects, each named    *)
(* after the function it mirrors) and the explorer's events               *)
(* (zabmc/explore/events.py, env.py; docs/semantics.md E1-E9).  Its        *)
(* reachable states are exactly zabmc's distinct states, and its           *)
(* transitions zabmc's generated ones, so TLC's "distinct states found"    *)
(* and "states generated" are zabmc's counts (tests/test_tlc.py).          *)
(*                                                                         *)
(* Omega = TRUE is `zab-omega`: the model's one switch, OmegaRules'        *)
(* vote_better (votes ordered by node id only).  Every other Rules member  *)
(* is the protocol's in both.                                              *)
(*                                                                         *)
(* Correspondence with zabmc's canonical encoding (Env.encode):            *)
(*  - every Node field is a record field below, except `id`, which is the  *)
(*    node's index in `nodes`; short names, Python's in the comment of     *)
(*    Fresh;                                                               *)
(*  - None (leader_id, vote_view entries) is -1, node ids being 0..N-1;    *)
(*  - bit sets of node ids (cepochs, epoch_acks, leader_acks, ack masks)   *)
(*    are sets;                                                            *)
(*  - ack_set, a tuple of (zxid, mask) sorted by zxid with one entry per   *)
(*    zxid, is the set of its <<zxid, mask>> pairs;                        *)
(*  - a transaction (zxid, b"zab-<k>") is <<zxid, k>>;                     *)
(*  - the phase is its number (state.py: 0 not leading, 1 cepoch,          *)
(*    2 ack-e, 3 synchronization, 4 broadcast);                            *)
(*  - net is one FIFO queue per ordered pair of nodes (zabmc keeps n*n     *)
(*    queues, the self links staying empty);                               *)
(*  - budgets are the same six numbers: drops, timeouts and heartbeats     *)
(*    left, proposals made, crashes left, and the set of down nodes;       *)
(*  - no ghost (invariants off), no timers (not part of the state).        *)
(* Handlers' effects ("timer", "leading", "synced", "proposed") feed only  *)
(* the invariant checker and the simulator, so they are left out.          *)
(***************************************************************************)
EXTENDS Integers, Sequences, FiniteSets

CONSTANTS N,             \* cluster size
          MaxDrops,      \* --max-drops
          MaxTimeouts,   \* --max-timeouts (shared by all nodes)
          MaxHeartbeats, \* --max-heartbeats
          Proposals,     \* --proposals
          MaxCrashes,    \* --max-crashes (restarts are unbudgeted)
          Omega          \* TRUE: zab-omega (OmegaRules), FALSE: zab (Rules)

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
\* Node.phase (state.py)
NotLeading == 0
PCepoch == 1
PAckEpoch == 2
PSync == 3
PBroadcast == 4

Max(a, b) == IF a >= b THEN a ELSE b

\* Zxids <<epoch, counter>> compare lexicographically, as Python tuples do.
ZLt(a, b) == a[1] < b[1] \/ (a[1] = b[1] /\ a[2] < b[2])
ZLe(a, b) == a = b \/ ZLt(a, b)
ZMax(a, b) == IF ZLt(a, b) THEN b ELSE a

\* history_last / last_zxid
HistLast(h) == IF h = << >> THEN Zero ELSE h[Len(h)][1]
LastZxid(nd) == HistLast(nd.hist)

\* ack_set: the mask of a zxid (empty when it has no entry) ...
AckEntry(S, z) == IF \E p \in S : p[1] = z THEN (CHOOSE p \in S : p[1] = z)[2] ELSE {}
\* ... and _with_ack(ack_set, zxid, bit): the entry of z gains node b (created when missing).
WithAck(S, z, b) == {p \in S : p[1] # z} \cup {<<z, AckEntry(S, z) \cup {b}>>}

\* fresh_node(i, n) (state.py; election_fresh in models/common/state.py)
Fresh(i) == [cur |-> 0,                       \* current_epoch (f.a)
             acc |-> 0,                       \* accepted_epoch (f.p)
             hist |-> << >>,                  \* history (h_f)
             lc |-> Zero,                     \* last_committed
             role |-> Looking,
             lid |-> None,                    \* leader_id
             vtid |-> i,                      \* vote_target_id
             vtz |-> Zero,                    \* vote_target_zxid
             vview |-> [j \in Nodes |-> None],\* vote_view
             phase |-> NotLeading,
             pne |-> 0,                       \* pending_new_epoch
             cep |-> {},                      \* cepochs
             cepmax |-> 0,                    \* cepoch_max
             eacks |-> {},                    \* epoch_acks
             bepoch |-> 0,                    \* best_epoch
             bhist |-> << >>,                 \* best_history
             lacks |-> {},                    \* leader_acks
             nc |-> 0,                        \* next_counter
             acks |-> {}]                     \* ack_set

\* zabmc.model.crashed with Rules.durable: f.a, f.p, h_f and last_committed kept (D19, E7).
Crashed(nd, i) == [Fresh(i) EXCEPT !.cur = nd.cur, !.acc = nd.acc, !.hist = nd.hist,
                                   !.lc = nd.lc]

(***************************************************************************)
(* Rules (handlers.py): the decision points.  Only vote_better differs     *)
(* between Rules and OmegaRules.                                           *)
(***************************************************************************)
\* Rules.vote_better: (peer_zxid, voter) > (target_zxid, target); OmegaRules: voter > target.
VoteBetter(pz, voter, tz, t) ==
    IF Omega THEN voter > t ELSE ZLt(tz, pz) \/ (pz = tz /\ voter > t)
\* Rules.acks_new_epoch
AcksNewEpoch(nd, e) == e > nd.acc
\* Rules.better_history: (epoch, zxid) > (best_epoch, best_zxid)
BetterHistory(e, z, be, bz) == e > be \/ (e = be /\ ZLt(bz, z))
\* Rules.accepts_proposal
AcceptsProposal(nd, txn) == txn[1][1] = nd.cur /\ nd.cur = nd.acc
\* Rules.in_zxid_order
InZxidOrder(nd, txn) ==
    LET l == LastZxid(nd)
        z == txn[1]
    IN IF z[1] = l[1] THEN z[2] = l[2] + 1 ELSE z[1] > l[1] /\ z[2] = 1
\* Rules.commit_ready
CommitReady(mask) == Cardinality(mask) >= Q

(***************************************************************************)
(* Messages: tuples whose first element is the kind, fields in the order   *)
(* of state.py's MSG_FIELDS.                                               *)
(*   <<"LFL", src_id, last_zxid, peer_epoch>>                              *)
(*   <<"VOTE", voter_id, last_zxid, peer_epoch, leader_id>>                *)
(*   <<"CEPOCH", accepted_epoch>>  <<"NEWEPOCH", new_epoch>>               *)
(*   <<"ACKEPOCH", new_epoch, current_epoch, last_zxid, history>>          *)
(*   <<"NEWLEADER", new_epoch, history>>  <<"ACKLEADER", new_epoch>>       *)
(*   <<"COMMITLEADER", new_epoch, zxid>>  <<"PROPOSE", txn>>               *)
(*   <<"ACK", zxid>>  <<"COMMIT", epoch, zxid>>                            *)
(*                                                                         *)
(* A handler call runs on a context c = [me, nd, o] (handlers.py's _Ctx):  *)
(* the node's id, its evolving state, and its sends so far as one queue    *)
(* per destination (only the order of the messages on one link matters).   *)
(***************************************************************************)
Ctx(i) == [me |-> i, nd |-> nodes[i], o |-> [d \in Nodes |-> << >>]]

\* _Ctx.broadcast: to every peer, ascending
Bcast(c, m) == [c EXCEPT !.o = [d \in Nodes |-> IF d = c.me THEN @[d] ELSE Append(@[d], m)]]
\* _Ctx.multicast: to every node of a set but self, ascending
Mcast(c, S, m) ==
    [c EXCEPT !.o = [d \in Nodes |-> IF d \in S /\ d # c.me THEN Append(@[d], m) ELSE @[d]]]
\* _Ctx.send
Send(c, d, m) == [c EXCEPT !.o[d] = Append(@, m)]

\* LEADER_RESET (state.py): the leader-only fields as a follower or a Looking node holds them.
LeaderReset(nd) ==
    [nd EXCEPT !.phase = NotLeading, !.pne = 0, !.cep = {}, !.cepmax = 0, !.eacks = {},
               !.bepoch = 0, !.bhist = << >>, !.lacks = {}, !.nc = 0, !.acks = {}]

\* --- Phase 0: FastLeaderElection (D1-D4) ---

\* _leave_looking (D4): the tally is cleared.
LeaveLooking(nd) == [nd EXCEPT !.vtz = Zero, !.vview = [j \in Nodes |-> None]]

\* _become_following, f.1.1: follow l and send it CEPOCH(f.p).
BecomeFollowing(c, l) ==
    LET nd == [LeaveLooking(c.nd) EXCEPT !.role = Following, !.lid = l]
    IN Send([c EXCEPT !.nd = nd], l, <<"CEPOCH", nd.acc>>)

\* _try_finish_sync, l.2.2: with ACK-LD from a quorum the leader is established.
TryFinishSync(c) ==
    IF c.nd.phase # PSync \/ Cardinality(c.nd.lacks) < Q THEN c
    ELSE LET nd == [c.nd EXCEPT !.phase = PBroadcast, !.lc = ZMax(c.nd.lc, LastZxid(c.nd))]
         IN Mcast([c EXCEPT !.nd = nd], nd.lacks, <<"COMMITLEADER", nd.cur, nd.lc>>)

\* _try_finish_discovery, l.1.2 + l.2.1: adopt the best history, send NEWLEADER.
TryFinishDiscovery(c) ==
    IF c.nd.phase # PAckEpoch \/ Cardinality(c.nd.eacks) < Q THEN c
    ELSE LET e == c.nd.pne
             nd == [c.nd EXCEPT !.phase = PSync, !.cur = e, !.hist = c.nd.bhist, !.bepoch = 0,
                                !.bhist = << >>, !.lacks = {c.me}]
         IN TryFinishSync(Mcast([c EXCEPT !.nd = nd], nd.eacks, <<"NEWLEADER", e, nd.hist>>))

\* _try_choose_epoch, l.1.1: with CEPOCH from a quorum, propose a later epoch.
TryChooseEpoch(c) ==
    IF Cardinality(c.nd.cep) < Q THEN c
    ELSE LET e == c.nd.cepmax + 1
             nd == [c.nd EXCEPT !.phase = PAckEpoch, !.pne = e, !.acc = e, !.eacks = {c.me},
                                !.bepoch = c.nd.cur, !.bhist = c.nd.hist]
         IN TryFinishDiscovery(Mcast([c EXCEPT !.nd = nd], nd.cep, <<"NEWEPOCH", e>>))

\* _become_leading: Phase 1 with fresh leader state; the leader's own CEPOCH counts (D7).
BecomeLeading(c) ==
    LET nd0 == LeaderReset([LeaveLooking(c.nd) EXCEPT !.role = Leading, !.lid = c.me])
        nd == [nd0 EXCEPT !.phase = PCepoch, !.cep = {c.me}, !.cepmax = nd0.acc]
    IN TryChooseEpoch([c EXCEPT !.nd = nd])

\* _check_election
CheckElection(c) ==
    LET t == c.nd.vtid
    IN IF Cardinality({j \in Nodes : c.nd.vview[j] = t}) >= Q
       THEN IF t = c.me THEN BecomeLeading(c) ELSE BecomeFollowing(c, t)
       ELSE c

\* _enter_looking: a new iteration (D5), LookForLeader to every peer (D2).
EnterLooking(c) ==
    LET me == c.me
        lz == LastZxid(c.nd)
        nd == LeaderReset([c.nd EXCEPT !.role = Looking, !.lid = None, !.vtid = me, !.vtz = lz,
                           !.vview = [j \in Nodes |-> IF j = me THEN me ELSE None]])
    IN CheckElection(Bcast([c EXCEPT !.nd = nd], <<"LFL", me, lz, c.nd.cur>>))

\* _on_vote's part for a Looking node: switch the vote (its new target only, D3), record the
\* voter's choice, answer a LookForLeader that did not switch us (D3), check the election.
OnVoteLooking(c, src, voter, pz, chosen, isLfl) ==
    LET better == VoteBetter(pz, voter, c.nd.vtz, c.nd.vtid)
        c1 == IF better
              THEN LET nd == [c.nd EXCEPT !.vtid = voter, !.vtz = pz,
                                          !.vview = [j \in Nodes |-> IF j = c.me THEN voter
                                                                     ELSE None]]
                   IN Send([c EXCEPT !.nd = nd], voter,
                           <<"VOTE", c.me, LastZxid(nd), nd.cur, voter>>)
              ELSE c
        c2 == [c1 EXCEPT !.nd.vview[voter] = chosen]
        c3 == IF isLfl /\ ~better
              THEN Send(c2, src, <<"VOTE", c.me, LastZxid(c2.nd), c2.nd.cur, c2.nd.vtid>>)
              ELSE c2
    IN CheckElection(c3)

\* _on_vote: a Vote or a LookForLeader.
OnVote(c, src, voter, pz, chosen, isLfl) ==
    IF c.nd.role # Looking
    THEN IF ~isLfl THEN c      \* D3: only a LookForLeader is answered
         ELSE IF c.nd.role = Following /\ src = c.nd.lid
              THEN \* D6: our leader looks again; a new iteration, then the LFL as Looking
                   LET c1 == EnterLooking(c)
                   IN IF c1.nd.role # Looking THEN c1
                      ELSE OnVoteLooking(c1, src, voter, pz, chosen, isLfl)
              ELSE Send(c, src, <<"VOTE", c.me, LastZxid(c.nd), c.nd.cur, c.nd.vtid>>)
    ELSE OnVoteLooking(c, src, voter, pz, chosen, isLfl)

\* --- Phase 1: Discovery ---

\* _on_cepoch (l.1.1; D8: a late follower gets the epoch already proposed)
OnCEpoch(c, src, p) ==
    IF c.nd.role # Leading THEN c
    ELSE IF c.nd.phase = PCepoch
         THEN TryChooseEpoch([c EXCEPT !.nd.cep = @ \cup {src},
                                       !.nd.cepmax = Max(@, p)])
         ELSE IF p < c.nd.pne THEN Send(c, src, <<"NEWEPOCH", c.nd.pne>>)
         ELSE c

\* _on_new_epoch, f.1.2 (D10)
OnNewEpoch(c, src, e) ==
    IF c.nd.role # Following \/ ~AcksNewEpoch(c.nd, e) THEN c
    ELSE LET nd == [c.nd EXCEPT !.acc = e]
         IN Send([c EXCEPT !.nd = nd], src, <<"ACKEPOCH", e, nd.cur, LastZxid(nd), nd.hist>>)

\* _on_ack_epoch (l.1.2; D8 once the initial history is chosen)
OnAckEpoch(c, src, e, fe, fz, fh) ==
    IF c.nd.role # Leading \/ e # c.nd.pne \/ src \in c.nd.eacks THEN c
    ELSE IF c.nd.phase = PAckEpoch
         THEN LET nd0 == [c.nd EXCEPT !.eacks = @ \cup {src}]
                  nd == IF BetterHistory(fe, fz, nd0.bepoch, HistLast(nd0.bhist))
                        THEN [nd0 EXCEPT !.bepoch = fe, !.bhist = fh]
                        ELSE nd0
              IN TryFinishDiscovery([c EXCEPT !.nd = nd])
         ELSE Send([c EXCEPT !.nd.eacks = @ \cup {src}], src, <<"NEWLEADER", e, c.nd.hist>>)

\* --- Phase 2: Synchronization ---

\* _on_new_leader, f.2.1 (D10)
OnNewLeader(c, src, e, h) ==
    IF c.nd.role # Following \/ e # c.nd.acc THEN c
    ELSE Send([c EXCEPT !.nd.cur = e, !.nd.hist = h], src, <<"ACKLEADER", e>>)

\* --- D17: a follower that rejoins its leader's epoch (the wrappers at the end of handlers.py) ---

\* the current epoch of an ACKEPOCH that does not acknowledge (NOT_AN_ACK)
NotAnAck == -1

\* _on_cepoch_rejoin: a CEPOCH of the chosen epoch itself gets NEWEPOCH of it too.
OnCEpochRejoin(c, src, p) ==
    IF c.nd.role = Leading /\ c.nd.phase # PCepoch /\ p = c.nd.pne
    THEN Send(c, src, <<"NEWEPOCH", p>>)
    ELSE OnCEpoch(c, src, p)

\* _on_new_epoch_rejoin: NEWEPOCH of the promised epoch, from the leader, is answered with an
\* ACKEPOCH that does not acknowledge it.
OnNewEpochRejoin(c, src, e) ==
    IF c.nd.role = Following /\ src = c.nd.lid /\ e = c.nd.acc /\ ~AcksNewEpoch(c.nd, e)
    THEN Send(c, src, <<"ACKEPOCH", e, NotAnAck, LastZxid(c.nd), c.nd.hist>>)
    ELSE OnNewEpoch(c, src, e)

\* _on_ack_epoch_rejoin: a non-acknowledgement never counts; once the history is chosen its
\* sender is synchronised again (and, after establishment, its ACK-LD awaited again).
OnAckEpochRejoin(c, src, e, fe, fz, fh) ==
    IF fe # NotAnAck THEN OnAckEpoch(c, src, e, fe, fz, fh)
    ELSE IF c.nd.role # Leading \/ e # c.nd.pne \/ c.nd.phase < PSync THEN c
    ELSE LET la == IF c.nd.phase = PBroadcast THEN c.nd.lacks \ {src} ELSE c.nd.lacks
         IN Send([c EXCEPT !.nd.lacks = la, !.nd.eacks = @ \cup {src}], src,
                 <<"NEWLEADER", e, c.nd.hist>>)

\* _on_new_leader_rejoin (D13): an accepted NEWLEADER whose history ends in a proposal of epoch e
\* is followed by the ACK of that proposal.
OnNewLeaderRejoin(c, src, e, h) ==
    LET c1 == OnNewLeader(c, src, e, h)
    IN IF c1 # c /\ HistLast(h)[1] = e THEN Send(c1, src, <<"ACK", HistLast(h)>>) ELSE c1

\* _on_ack_leader (l.2.2; l.3.4 for a late follower)
OnAckLeader(c, src, e) ==
    IF c.nd.role # Leading \/ c.nd.phase < PSync \/ e # c.nd.cur \/ src \in c.nd.lacks THEN c
    ELSE LET c1 == [c EXCEPT !.nd.lacks = @ \cup {src}]
         IN IF c1.nd.phase = PBroadcast
            THEN Send(c1, src, <<"COMMITLEADER", e, c1.nd.lc>>)
            ELSE TryFinishSync(c1)

\* _holds: scanning the history from its end, the first zxid not above z is z.
Holds(nd, z) ==
    LET ks == {k \in 1 .. Len(nd.hist) : ZLe(nd.hist[k][1], z)}
    IN ks # {} /\ nd.hist[CHOOSE k \in ks : \A j \in ks : j <= k][1] = z

\* _deliver_upto (D12)
DeliverUpto(c, z) ==
    IF ZLt(c.nd.lc, z) /\ Holds(c.nd, z) THEN [c EXCEPT !.nd.lc = z] ELSE c

\* _on_commit_leader, f.2.2
OnCommitLeader(c, src, e, z) ==
    IF c.nd.role # Following \/ e # c.nd.cur THEN c ELSE DeliverUpto(c, z)

\* --- Phase 3: Broadcast ---

\* _on_propose, f.3.2 (D10, D11)
OnPropose(c, src, txn) ==
    IF c.nd.role # Following \/ ~AcceptsProposal(c.nd, txn) THEN c
    ELSE IF ~InZxidOrder(c.nd, txn) THEN c
    ELSE Send([c EXCEPT !.nd.hist = Append(@, txn)], src, <<"ACK", txn[1]>>)

\* _try_commit, l.3.2 (D13); _forward(node) is epoch_acks.
TryCommit(c, z) ==
    IF ZLe(z, c.nd.lc) \/ ~CommitReady(AckEntry(c.nd.acks, z)) THEN c
    ELSE LET nd == [c.nd EXCEPT !.lc = z, !.acks = {p \in @ : ZLt(z, p[1])}]
         IN Mcast([c EXCEPT !.nd = nd], nd.eacks, <<"COMMIT", nd.cur, z>>)

\* _on_ack
OnAck(c, src, z) ==
    IF c.nd.role # Leading \/ c.nd.phase # PBroadcast \/ z[1] # c.nd.cur
       \/ ZLe(z, c.nd.lc) \/ ZLt(LastZxid(c.nd), z) THEN c
    ELSE TryCommit([c EXCEPT !.nd.acks = WithAck(@, z, src)], z)

\* _on_commit, f.3.3
OnCommit(c, src, e, z) ==
    IF c.nd.role # Following \/ e # c.nd.cur THEN c ELSE DeliverUpto(c, z)

\* --- the kernel's public functions ---

\* deliver(node, src, msg)
Deliver(c, src, m) ==
    LET k == m[1] IN
    CASE k = "VOTE"         -> OnVote(c, src, m[2], m[3], m[5], FALSE)
      [] k = "LFL"          -> OnVote(c, src, m[2], m[3], m[2], TRUE)
      [] k = "CEPOCH"       -> OnCEpochRejoin(c, src, m[2])
      [] k = "NEWEPOCH"     -> OnNewEpochRejoin(c, src, m[2])
      [] k = "ACKEPOCH"     -> OnAckEpochRejoin(c, src, m[2], m[3], m[4], m[5])
      [] k = "NEWLEADER"    -> OnNewLeaderRejoin(c, src, m[2], m[3])
      [] k = "ACKLEADER"    -> OnAckLeader(c, src, m[2])
      [] k = "COMMITLEADER" -> OnCommitLeader(c, src, m[2], m[3])
      [] k = "PROPOSE"      -> OnPropose(c, src, m[2])
      [] k = "ACK"          -> OnAck(c, src, m[2])
      [] k = "COMMIT"       -> OnCommit(c, src, m[2], m[3])

\* start(node): Rules.recover is the identity; a Looking node enters Looking (D20).
Start(c) == IF c.nd.role # Looking THEN c ELSE EnterLooking(c)

\* heartbeat(node) (D14): enabled at an established leader only.
CanHeartbeat(nd) == nd.role = Leading /\ nd.phase = PBroadcast
HeartbeatStep(c) == Mcast(c, c.nd.eacks, <<"COMMIT", c.nd.cur, c.nd.lc>>)

\* can_propose(node)
CanPropose(nd) == nd.role = Leading /\ nd.phase = PBroadcast

\* propose(node, payload zab-<k>), l.3.1
ProposeStep(c, k) ==
    LET z == <<c.nd.cur, c.nd.nc + 1>>
        txn == <<z, k>>
        nd == [c.nd EXCEPT !.nc = @ + 1, !.hist = Append(@, txn), !.acks = WithAck(@, z, c.me)]
    IN TryCommit(Mcast([c EXCEPT !.nd = nd], nd.eacks, <<"PROPOSE", txn>>), z)

(***************************************************************************)
(* The explorer (zabmc/explore/events.py).                                 *)
(***************************************************************************)

\* Node i's sends appended to their links; a message to a down node is lost at send (E8).
AddOuts(nt, i, o, dn) ==
    [l \in Links |-> IF l[1] = i /\ l[2] \notin dn THEN nt[l] \o o[l[2]] ELSE nt[l]]

\* Env._apply: node c.me takes the step whose result is context c.
Apply(c, nt, dn) ==
    /\ nodes' = [nodes EXCEPT ![c.me] = c.nd]
    /\ net' = AddOuts(nt, c.me, c.o, dn)

\* E3 (initial_steps): every node fresh, then started, in ascending id.
StartCtx(i) == Start([me |-> i, nd |-> Fresh(i), o |-> [d \in Nodes |-> << >>]])

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

\* Deliver (E4/E5): the head of a link is delivered to its receiver.
DeliverHead(l) ==
    /\ net[l] # << >>
    /\ Apply(Deliver(Ctx(l[2]), l[1], Head(net[l])), [net EXCEPT ![l] = Tail(@)], down)
    /\ UNCHANGED <<drops, timeouts, heartbeats, made, crashes, down>>

\* Drop: ... or lost (budget; zab has no on_drop).
DropHead(l) ==
    /\ drops > 0
    /\ net[l] # << >>
    /\ net' = [net EXCEPT ![l] = Tail(@)]
    /\ drops' = drops - 1
    /\ UNCHANGED <<nodes, timeouts, heartbeats, made, crashes, down>>

\* Timeout: timeout(node) is enter_looking for every up node, a leader included (D9).
TimeoutA(i) ==
    /\ timeouts > 0
    /\ i \notin down
    /\ Apply(EnterLooking(Ctx(i)), net, down)
    /\ timeouts' = timeouts - 1
    /\ UNCHANGED <<drops, heartbeats, made, crashes, down>>

\* Heartbeat: an up established leader re-sends Commit(e, last_committed) (D14).
HeartbeatA(i) ==
    /\ heartbeats > 0
    /\ i \notin down
    /\ CanHeartbeat(nodes[i])
    /\ Apply(HeartbeatStep(Ctx(i)), net, down)
    /\ heartbeats' = heartbeats - 1
    /\ UNCHANGED <<drops, timeouts, made, crashes, down>>

\* Propose: client proposal number `made` goes to the lowest-id up node that can take it (D18).
ProposeA ==
    LET can == {i \in Nodes \ down : CanPropose(nodes[i])}
    IN /\ made < Proposals
       /\ can # {}
       /\ LET i == CHOOSE j \in can : \A x \in can : j <= x
          IN Apply(ProposeStep(Ctx(i), made), net, down)
       /\ made' = made + 1
       /\ UNCHANGED <<drops, timeouts, heartbeats, crashes, down>>

\* Crash (E7): an up node crashes, keeping its durable fields; its links in both directions empty.
CrashA(i) ==
    /\ crashes > 0
    /\ i \notin down
    /\ nodes' = [nodes EXCEPT ![i] = Crashed(@, i)]
    /\ net' = [l \in Links |-> IF l[1] = i \/ l[2] = i THEN << >> ELSE net[l]]
    /\ crashes' = crashes - 1
    /\ down' = down \cup {i}
    /\ UNCHANGED <<drops, timeouts, heartbeats, made>>

\* Restart (E9, D20): a down node restarts (no budget) and runs start(node) for itself alone.
RestartA(i) ==
    /\ i \in down
    /\ down' = down \ {i}
    /\ Apply(Start(Ctx(i)), net, down \ {i})
    /\ UNCHANGED <<drops, timeouts, heartbeats, made, crashes>>

Next ==
    \/ \E l \in Links : DeliverHead(l) \/ DropHead(l)
    \/ \E i \in Nodes : TimeoutA(i) \/ HeartbeatA(i) \/ CrashA(i) \/ RestartA(i)
    \/ ProposeA

Spec == Init /\ [][Next]_vars
=============================================================================
