"""Driving a real ZooKeeper ensemble on loopback (#34): finding the installation (install),
reading what servers wrote (disk), a proxy on every server-to-server link (proxy), launching and
watching the servers (ensemble) and writing to them through kazoo (client); on top of them,
fault schedules and their translation from zk traces (schedule), Byteman hook points (hooks),
running a schedule with conformance checks (runner), the properties judged on the servers'
data (verdict) and seeded random schedules (campaign).

Nothing here prints: results are return values, exceptions and an optional event callback.
kazoo is imported only when a client first connects.
"""

from zabmc.real.client import Client, Write
from zabmc.real.disk import Snapshot, Txn, zxid_hex, zxid_str
from zabmc.real.ensemble import Ensemble, node_of, server_id
from zabmc.real.errors import RealError, RealTimeout, ServerFailed
from zabmc.real.install import ZooKeeperDist, find_byteman, find_java, find_zookeeper
from zabmc.real.proxy import LinkProxy

__all__ = ["Client", "Write", "Snapshot", "Txn", "zxid_hex", "zxid_str", "Ensemble", "node_of",
           "server_id", "RealError", "RealTimeout", "ServerFailed", "ZooKeeperDist",
           "find_byteman", "find_java", "find_zookeeper", "LinkProxy"]
