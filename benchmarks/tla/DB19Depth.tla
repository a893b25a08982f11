------------------------------ MODULE DB19Depth ------------------------------
(***************************************************************************)
(* DB19 within zabmc's --depth bound, for spaces too large to exhaust.     *)
(* With one worker TLC searches breadth first, and a state outside the     *)
(* constraint is neither counted nor expanded.  In TLC 2.15, as evaluated  *)
(* in a constraint, TLCGet("level") <= MaxDepth keeps exactly the states   *)
(* at most MaxDepth events from the initial state: the states zabmc check  *)
(* --depth MaxDepth counts (the two counts agree on every space tried,     *)
(* tests/test_tlc.py).                                                     *)
(***************************************************************************)
EXTENDS DB19, TLC

CONSTANT MaxDepth

WithinDepth == TLCGet("level") <= MaxDepth
=============================================================================
