"""ZooKeeper 3.7's implementation of ZAB 1.0 (models/zk/README.md): `zk` as released,
`zk-pre3911` before ZOOKEEPER-3911's fix, `zk-fixed` with ZOOKEEPER-4785's fix, `zk-3.9.3-store` with
3.9.3's, `zk-fle` and `zk-fixed-fle` with the election at Fast Leader Election's grain, and
`zk-3.7.0-threads` and `zk-3.9.2-threads` at the grain of the follower's threads (models/zk/fine.py), `zk-3.9.3-store` and
`zk-3.9.4-store` at the grain of 3.9's in-memory committed log (models/zk/storage.py; the coarse 3.9.3 is
`zk-3.9.3-coarse`), and `zk-3.7.0-fwd`, `zk-3.7.0-threads` with broadcasts between SYNC and NEWLEADER
(models/zk/forward.py), and `zk-3.7.0-shutdown` and `zk-3.9.2-shutdown`, with a follower's shutdown
as those releases do it (models/zk/shutdown.py), and `zk-3.7.0-epoch`, `zk-3.9.2-epoch`,
`zk-3.9.3-epoch` and `zk-3.9.4-epoch`, with currentEpoch written a step after NEWLEADER's writes to disk and the start-up's epoch check
(models/zk/epoch.py); and `zk-3.8.0+trunc-fix` and `zk-3.9.4+trunc-fix`, 3.8.0's and 3.9.4's
models with the TRUNC finding's patch (reports/bugs/trunc-keeps-uncommitted.fix.diff): not releases."""

from .handlers import Committed393Rules, FixedFleRules, FixedRules, FleRules, Pre3911Rules, Rules
from .model import (FIXED, FIXED_FLE, FLE, MODEL, PRE3911, R370, R392, R393, R393C, R394, R370F,
                    R370S, R392S, R370E, R392E, R393E, R394E, EpochZkModel, StoreEpochZkModel, FineZkModel, ForwardZkModel, ShutdownZkModel,
                    StoreZkModel, ZkModel)

__all__ = ["FIXED", "FIXED_FLE", "FLE", "MODEL", "PRE3911", "R370", "R392", "R393", "R393C", "R394",
           "R370F", "R370S", "R392S", "R370E", "R392E", "R393E", "R394E", "EpochZkModel", "StoreEpochZkModel", "Committed393Rules", "FineZkModel", "ForwardZkModel",
           "ShutdownZkModel", "StoreZkModel",
           "FixedFleRules", "FixedRules", "FleRules", "Pre3911Rules", "Rules", "ZkModel"]


def register() -> None:
    """Add the zk models, their release names and their properties to zabmc's registries (the
    entry point `zk` of the group `zabmc.models`, pyproject.toml)."""
    from zabmc.core.model import register_alias, register_model
    from zabmc.core.properties import register as register_property

    from . import model, releases
    from .properties import PROPERTIES

    for prop in PROPERTIES:
        register_property(prop)
    for attr in ("MODEL", "PRE3911", "FIXED", "FLE", "FIXED_FLE", "R393C", "R370", "R392",
                 "R393", "R394", "R370F", "R370S", "R392S", "R370E", "R392E", "R393E", "R394E"):
        register_model(model, attr)
    # one model per release (models/zk/releases.py), then the releases whose ZAB code is the same
    # as a modelled one's
    for attr in ("Z362", "Z370", "Z380", "Z385", "Z392", "Z393", "Z394"):
        register_model(model, attr)
    for version, (target, _why) in releases.SAME.items():
        register_alias(f"zk-{version}", f"zk-{target}")
    # releases with one patch, not releases: the TRUNC finding's fix (model.TRUNC_FIX)
    for attr in ("Z380T", "Z394T"):
        register_model(model, attr)
    from .scenarios import attach  # the named states to search from (--scenario)

    attach(model)
