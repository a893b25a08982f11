"""zabmc: an explicit-state model checker for ZooKeeper's atomic broadcast (ZAB)."""

__version__ = "0.1.0"
