------------------------------- MODULE ZkDepth -------------------------------
(***************************************************************************)
(* Zk within zabmc's --depth bound, as ZabDepth.tla bounds Zab: NextWithin *)
(* expands exactly the states fewer than MaxDepth events from the initial  *)
(* state, which zabmc check --depth MaxDepth expands, so the distinct and  *)
(* the generated counts of both are comparable (tests/test_tlc.py).        *)
(***************************************************************************)
EXTENDS Zk, TLC

CONSTANT MaxDepth

NextWithin == TLCGet("level") <= MaxDepth /\ Next
=============================================================================
