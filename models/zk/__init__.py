"""ZooKeeper 3.7's implementation of ZAB 1.0 (models/zk/README.md): `zk` as released,
`zk-pre3911` before ZOOKEEPER-3911's fix, `zk-fixed` with the later fix."""

from .handlers import FixedRules, Pre3911Rules, Rules
from .model import FIXED, MODEL, PRE3911, ZkModel

__all__ = ["FIXED", "MODEL", "PRE3911", "FixedRules", "Pre3911Rules", "Rules", "ZkModel"]
