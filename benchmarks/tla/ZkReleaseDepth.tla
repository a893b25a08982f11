---------------------------- MODULE ZkReleaseDepth ----------------------------
(***************************************************************************)
(* ZkRelease within zabmc's --depth bound, as ZkDepth.tla bounds Zk:       *)
(* NextWithin expands exactly the states fewer than MaxDepth events from   *)
(* the initial state, which zabmc check --depth MaxDepth expands.          *)
(***************************************************************************)
EXTENDS ZkRelease, TLC

CONSTANT MaxDepth

NextWithin == TLCGet("level") <= MaxDepth /\ RNext
=============================================================================
