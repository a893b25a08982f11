"""Client writes and reads on a real ensemble, through kazoo, each to ONE server.

A write goes to the server it names and to no other (the connect string has that server alone,
so kazoo cannot fail over), as a create (opcode create2, so the reply's stat carries the zxid).
Each is recorded as a `Write`: "acknowledged" (the server replied success; zxid is the new
node's czxid), "failed" (the request was never sent, or the server answered with an error: it
is definitely not applied), or "unknown" (sent, then no answer: a timeout or a lost
connection; it may or may not be committed). Every kazoo client is stopped and closed on every
path. kazoo's own logging goes to the "zabmc.real.kazoo" logger, which prints nothing unless
the caller configures logging.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass

from zabmc.core.errors import UsageError
from zabmc.real.errors import RealError

_LOG = logging.getLogger("zabmc.real.kazoo")
_LOG.addHandler(logging.NullHandler())

ACKNOWLEDGED, FAILED, UNKNOWN = "acknowledged", "failed", "unknown"


def _kazoo():
    try:
        from kazoo import exceptions
        from kazoo.client import KazooClient
        from kazoo.handlers.threading import KazooTimeoutError
    except ImportError:
        raise UsageError("kazoo not installed: pip install 'zabmc[real]' (or pip install kazoo)") from None
    return KazooClient, exceptions, KazooTimeoutError


@dataclass(frozen=True)
class Write:
    path: str
    server: int
    outcome: str  # "acknowledged", "failed" or "unknown"
    zxid: int | None
    error: str
    t_start: float  # time.time() when the write began
    t_end: float

    @property
    def acknowledged(self) -> bool:
        return self.outcome == ACKNOWLEDGED


class Client:
    """Writes and reads on `ensemble`'s servers, one kazoo session per request."""

    def __init__(self, ensemble, *, connect_timeout: float = 5.0, session_timeout: float = 10.0):
        self.ensemble = ensemble
        self.connect_timeout = connect_timeout
        self.session_timeout = session_timeout
        self.writes: list[Write] = []  # every finished write, in the order they finished
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []

    def _client(self, i: int):
        KazooClient, _, _ = _kazoo()
        return KazooClient(hosts=self.ensemble.connect_string(i), timeout=self.session_timeout,
                           randomize_hosts=False, connection_retry=None, command_retry=None,
                           logger=_LOG)

    @staticmethod
    def _close(zk):
        for step in (zk.stop, zk.close):
            try:
                step()
            except Exception:  # closing must not mask the outcome
                pass

    def write(self, i: int, path: str, data: bytes = b"", timeout: float = 10.0) -> Write:
        """Create `path` with `data` on server i alone; returns how it ended, never raises for
        an outcome (only for bad input)."""
        if not path.startswith("/"):
            raise UsageError(f"a znode path starts with '/': {path!r}")
        _, exc, KazooTimeoutError = _kazoo()
        t0 = time.time()
        deadline = time.monotonic() + timeout
        zk = self._client(i)
        outcome, zxid, error = FAILED, None, ""
        try:
            try:
                zk.start(timeout=max(0.1, min(self.connect_timeout, deadline - time.monotonic())))
            except (KazooTimeoutError, exc.KazooException, OSError) as e:
                error = f"could not connect to server {i}: {type(e).__name__}: {e}".rstrip(": ")
                return self._record(Write(path, i, FAILED, None, error, t0, time.time()))
            try:
                res = zk.create_async(path, data, include_data=True).get(
                    timeout=max(0.1, deadline - time.monotonic()))
                stat = res[1] if isinstance(res, tuple) else None
                outcome = ACKNOWLEDGED
                if stat is not None:
                    zxid = stat.czxid
                else:
                    st = zk.exists(path)
                    zxid = st.czxid if st is not None else None
            except (exc.ConnectionLoss, exc.SessionExpiredError, exc.OperationTimeoutError,
                    KazooTimeoutError) as e:
                outcome, error = UNKNOWN, f"{type(e).__name__}: {e}".rstrip(": ")
            except exc.ZookeeperError as e:
                outcome, error = FAILED, f"{type(e).__name__}: {e}".rstrip(": ")
            except Exception as e:  # a sent request that ended oddly: not known either way
                outcome, error = UNKNOWN, f"{type(e).__name__}: {e}".rstrip(": ")
            return self._record(Write(path, i, outcome, zxid, error, t0, time.time()))
        finally:
            self._close(zk)

    def _record(self, w: Write) -> Write:
        with self._lock:
            self.writes.append(w)
        return w

    def write_async(self, i: int, path: str, data: bytes = b"", timeout: float = 10.0) -> Future:
        """Start `write` in a thread; the handle's result(timeout) is its Write."""
        fut: Future = Future()

        def run():
            try:
                fut.set_result(self.write(i, path, data, timeout))
            except BaseException as e:
                fut.set_exception(e)
        t = threading.Thread(target=run, name=f"zabmc-write-{i}{path}", daemon=True)
        with self._lock:
            self._threads = [x for x in self._threads if x.is_alive()] + [t]
        t.start()
        return fut

    def read(self, i: int, path: str, timeout: float = 10.0) -> int | None:
        """On server i alone: sync, then the node's mzxid (its czxid if never changed), or None
        when it does not exist there. RealError when the server cannot answer."""
        _, exc, KazooTimeoutError = _kazoo()
        zk = self._client(i)
        try:
            zk.start(timeout=min(self.connect_timeout, timeout))
            zk.sync_async(path).get(timeout=timeout)
            st = zk.exists_async(path).get(timeout=timeout)
            return None if st is None else st.mzxid
        except (KazooTimeoutError, exc.KazooException, OSError) as e:
            raise RealError(f"read of {path} on server {i} failed: {type(e).__name__}: {e}") from None
        finally:
            self._close(zk)

    def close(self, timeout: float = 30.0) -> None:
        """Wait for the writes still running (each ends within its own timeout)."""
        end = time.monotonic() + timeout
        with self._lock:
            threads = list(self._threads)
        for t in threads:
            t.join(max(0.0, end - time.monotonic()))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False
