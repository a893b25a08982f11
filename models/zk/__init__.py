"""ZooKeeper 3.7's implementation of ZAB 1.0 (models/zk/README.md): `zk` as released,
`zk-pre3911` before ZOOKEEPER-3911's fix, `zk-fixed` with ZOOKEEPER-4785's fix, `zk-3.9.3` with
3.9.3's, `zk-fle` and `zk-fixed-fle` with the election at Fast Leader Election's grain, and
`zk-3.7.0` and `zk-3.9.2` at the grain of the follower's threads (models/zk/fine.py)."""

from .handlers import Committed393Rules, FixedFleRules, FixedRules, FleRules, Pre3911Rules, Rules
from .model import FIXED, FIXED_FLE, FLE, MODEL, PRE3911, R370, R392, R393, FineZkModel, ZkModel

__all__ = ["FIXED", "FIXED_FLE", "FLE", "MODEL", "PRE3911", "R370", "R392", "R393",
           "Committed393Rules", "FineZkModel",
           "FixedFleRules", "FixedRules", "FleRules", "Pre3911Rules", "Rules", "ZkModel"]
