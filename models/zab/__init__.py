"""ZAB as DSN 2011 §IV-V describes it (Discovery, Synchronization, Broadcast), with db-19's
FastLeaderElection as Phase 0: state, messages, handlers, codecs and the model adapter.

Every deviation from the paper and every addition to it is listed, with its reason, in
`models/zab/README.md` (D1 to D21); the handlers cite those numbers.
"""

from .handlers import OmegaRules, Rules
from .model import MODEL, OMEGA, VOTE_CYCLE, VoteCycleRules, ZabModel

__all__ = ["MODEL", "OMEGA", "OmegaRules", "Rules", "VOTE_CYCLE", "VoteCycleRules", "ZabModel"]
