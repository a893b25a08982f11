"""ZooKeeper 3.7's implementation of ZAB 1.0 (models/zk/README.md): `zk` as released,
`zk-pre3911` before ZOOKEEPER-3911's fix, `zk-fixed` with ZOOKEEPER-4785's fix, `zk-3.9.3` with
3.9.3's, `zk-fle` and `zk-fixed-fle` with the election at Fast Leader Election's grain, and
`zk-3.7.0` and `zk-3.9.2` at the grain of the follower's threads (models/zk/fine.py), `zk-3.9.3` and
`zk-3.9.4` at the grain of 3.9's in-memory committed log (models/zk/storage.py; the coarse 3.9.3 is
`zk-3.9.3-coarse`), and `zk-3.7.0-fwd`, `zk-3.7.0` with broadcasts between SYNC and NEWLEADER
(models/zk/forward.py), and `zk-3.7.0-shutdown` and `zk-3.9.2-shutdown`, with a follower's shutdown
as those releases do it (models/zk/shutdown.py), and `zk-3.7.0-epoch`, `zk-3.9.2-epoch`,
`zk-3.9.3-epoch` and `zk-3.9.4-epoch`, with currentEpoch written a step after NEWLEADER's writes to disk and the start-up's epoch check
(models/zk/epoch.py)."""

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

    from . import model
    from .properties import PROPERTIES

    for prop in PROPERTIES:
        register_property(prop)
    for attr in ("MODEL", "PRE3911", "FIXED", "FLE", "FIXED_FLE", "R393", "R370", "R392", "R393C",
                 "R394", "R370F", "R370S", "R392S", "R370E", "R392E", "R393E", "R394E"):
        register_model(model, attr)
    from .scenarios import attach  # the named states to search from (--scenario)
    attach(model)
    # ZooKeeper releases by version, each the registered model whose rules it ships
    register_alias("zk-3.6.2", "zk-pre3911")  # before ZOOKEEPER-3911's fix (PR #1445, in 3.6.3, 3.7.0)
    register_alias("zk-3.8.0", "zk")  # Debian's zookeeper package; `zabmc real` runs it (zk's grain)
    register_alias("zk-3.8.5", "zk-3.9.2")  # ZOOKEEPER-4785's fix (PR #2132; #2133 in 3.9.2)
    # 3.8.0's follower shutdown (ZOOKEEPER-4712): from release-3.7.0 to 3.8.0, Learner, Follower,
    # ZKDatabase, FileTxnLog, FileTxnSnapLog and LearnerHandler change only in property names,
    # metrics and log text; `zabmc real` runs this variant's traces on Debian's 3.8.0
    register_alias("zk-3.8.0-shutdown", "zk-3.7.0-shutdown")
