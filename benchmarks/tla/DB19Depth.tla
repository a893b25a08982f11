------------------------------ MODULE DB19Depth ------------------------------
(***************************************************************************)
(* DB19 within zabmc's --depth bound, for spaces too large to exhaust.     *)
(* With one worker TLC searches breadth first, and a state outside the     *)
(* constraint is neither counted nor expanded.  In TLC 2.15, as evaluated  *)
(* in a constraint, TLCGet("level") <= MaxDepth keeps exactly the states   *)
(* at most MaxDepth events from the initial state: the states zabmc check  *)
(* --depth MaxDepth counts (the two counts agree on every space tried,     *)
(* tests/test_tlc.py).  But TLC still generates, and counts, the           *)
(* successors of the states at depth MaxDepth, which zabmc never computes  *)
(* (it expands only the states fewer than MaxDepth events deep).           *)
(* NextWithin expands exactly those: as evaluated in the next-state        *)
(* relation, TLCGet("level") is the level of the state being expanded, the *)
(* initial state's being 1.  With NEXT NextWithin (what                    *)
(* benchmarks/tlc_bench.py writes) both the distinct and the generated     *)
(* counts are zabmc's.                                                     *)
(***************************************************************************)
EXTENDS DB19, TLC

CONSTANT MaxDepth

WithinDepth == TLCGet("level") <= MaxDepth

NextWithin == TLCGet("level") <= MaxDepth /\ Next
=============================================================================
