"""Driving a real ZooKeeper ensemble on loopback (#34): finding the installation (install),
reading what servers wrote (disk), a proxy on every server-to-server link (proxy), launching and
watching the servers (ensemble) and writing to them through kazoo (client).

Nothing here prints: results are return values, exceptions and an optional event callback.
"""
