"""ZAB as DSN 2011 §IV-V describes it (Discovery, Synchronization, Broadcast), with db-19's
FastLeaderElection as Phase 0: state, messages, handlers, codecs and the model adapter.

Every deviation from the paper and every addition to it is listed, with its reason, in
`models/zab/README.md` (D1 to D21); the handlers cite those numbers.
"""

from .handlers import OmegaRules, Rules
from .model import MODEL, OMEGA, VOTE_CYCLE, VoteCycleRules, ZabModel

__all__ = ["MODEL", "OMEGA", "OmegaRules", "Rules", "VOTE_CYCLE", "VoteCycleRules", "ZabModel"]


def register() -> None:
    """Add the zab models to zabmc's registry (the entry point `zab` of the group
    `zabmc.models`, pyproject.toml)."""
    from zabmc.core.model import register_model

    from . import model

    for attr in ("MODEL", "OMEGA", "VOTE_CYCLE"):
        register_model(model, attr)
