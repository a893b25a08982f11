------------------------------ MODULE ZabDepth ------------------------------
(***************************************************************************)
(* Zab within zabmc's --depth bound, for spaces too large to exhaust.      *)
(* zabmc check --depth D expands, breadth first, every state fewer than D  *)
(* events from the initial state (zabmc/explore/bfs.py: `while frontier    *)
(* and depth < cfg.depth`).  With one worker TLC searches breadth first    *)
(* too, and TLCGet("level"), as evaluated in the next-state relation, is   *)
(* the level of the state being expanded, the initial state's being 1: so  *)
(* NextWithin expands exactly the states zabmc expands, and TLC's distinct *)
(* and generated counts are those of zabmc check --depth MaxDepth          *)
(* (tests/test_tlc.py).  (A CONSTRAINT on the level would find the same    *)
(* distinct states but also generate, and count, the successors of the     *)
(* states at depth MaxDepth, which zabmc never computes.)                  *)
(***************************************************************************)
EXTENDS Zab, TLC

CONSTANT MaxDepth

NextWithin == TLCGet("level") <= MaxDepth /\ Next
=============================================================================
