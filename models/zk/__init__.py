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
