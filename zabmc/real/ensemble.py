"""A real ZooKeeper ensemble on loopback, started and watched from Python.

`Ensemble(n)` prepares n servers (ids 1..n; model node i is server `server_id(i)` = i + 1) in a
work directory: a data directory, a zoo.cfg and a logging config each, free ports, and a
`LinkProxy` route for every ordered pair of servers and each of the quorum and election ports.
Server i's zoo.cfg names its own real ports and, for each peer j, the proxy route (i, j), so
every server-to-server byte passes the proxy and `cut`/`heal` act on it. Client ports are
direct.

Each server's stdout, stderr and log (log4j or logback to the console, with the time and thread)
go to `server-i/server.log`; a line "==== zabmc: ..." marks each start. Roles are read from the
log lines "Peer state changed: <state>" that QuorumPeer.setPeerState/setZabState/setSyncMode
write (ZooKeeper 3.8.0, QuorumPeer.java: getDetailedPeerState gives e.g. "looking",
"following - synchronization - diff", "leading - broadcast").

Every process started is killed by its pid on every exit path: `close()`/`__exit__`, atexit,
SIGINT/SIGTERM (handlers that kill the servers, then do what the previous handler did), and
the kernel itself (PR_SET_PDEATHSIG: a server gets SIGKILL when the Python process dies,
even by SIGKILL). Nothing here prints; `on_event(kind, info)` is told of starts, kills, exits,
cuts and port retries.
"""

from __future__ import annotations

import atexit
import ctypes
import ctypes.util
import os
import queue
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from zabmc.core.errors import UsageError
from zabmc.real import disk
from zabmc.real.errors import RealError, RealTimeout, ServerFailed
from zabmc.real.install import ZooKeeperDist, find_java, find_zookeeper
from zabmc.real.proxy import LinkProxy, listening_ports, established_connections

__all__ = ["Ensemble", "ServerView", "server_id", "node_of", "ServerFailed", "RealTimeout", "RealError",
           "PEER_STATE_RE", "ROLES"]

ROLES = ("down", "looking", "following", "leading", "observing")
PEER_STATE_RE = re.compile(r"Peer state changed: (.+?)\s*$")
# QuorumPeer.run logs "LOOKING" on entering its LOOKING case; the first time it does so the
# state was LOOKING from the start and no "Peer state changed" line is written for it
LOOKING_RE = re.compile(r"\bQuorumPeer(?::\d+)? - LOOKING\s*$")
_BIND_FAILURE = "Address already in use"
DEFAULT_JVM_ARGS = ("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                    "-Dzookeeper.preAllocSize=1024",  # KB (FilePadding: value * 1024 bytes)
                    "-Dzookeeper.admin.enableServer=false")


def server_id(node: int) -> int:
    """The server id of model node `node` (0-based): node i is server i + 1."""
    return node + 1


def node_of(server: int) -> int:
    """The model node of server id `server`."""
    return server - 1


# ------------------------------------------------------------------------- process launching

_PR_SET_PDEATHSIG = 1
try:
    _LIBC = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
except OSError:  # not Linux: no parent-death signal
    _LIBC = None


def _child_setup(parent: int):
    # runs in the child between fork and exec: die with the forking thread, even on SIGKILL
    if _LIBC is not None:
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


class _Launcher:
    """Forks every server from one long-lived daemon thread: PR_SET_PDEATHSIG fires when the
    *thread* that forked exits, so forking from a short-lived worker thread would kill the JVM."""

    def __init__(self):
        self._q: queue.Queue = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def popen(self, argv, **kw) -> subprocess.Popen:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="zabmc-real-launcher",
                                                daemon=True)
                self._thread.start()
        fut: Future = Future()
        self._q.put((argv, kw, fut))
        return fut.result()

    def _run(self):
        while True:
            argv, kw, fut = self._q.get()
            try:
                parent = os.getpid()
                fut.set_result(subprocess.Popen(argv, preexec_fn=lambda: _child_setup(parent), **kw))
            except BaseException as e:  # handed to the caller
                fut.set_exception(e)


_LAUNCHER = _Launcher()


# ------------------------------------------------------------------------- cleanup registry

_LIVE: set = set()
_LIVE_LOCK = threading.RLock()
_PREV_HANDLERS: dict = {}
_ATEXIT_DONE = [False]


def _kill_everything(remove: bool = False):
    """Kill every live ensemble's servers; with remove, also delete the work dirs not kept."""
    with _LIVE_LOCK:
        live = list(_LIVE)
    for ens in live:
        ens._kill_processes()
        if remove:
            ens._remove_workdir()


def _at_exit():
    _kill_everything(remove=True)


def _on_signal(signum, frame):
    prev = _PREV_HANDLERS.get(signum, signal.SIG_DFL)
    if callable(prev):
        # e.g. Python's SIGINT handler: KeyboardInterrupt, which the program may catch and then
        # read the logs, so the work dirs stay until close()
        _kill_everything()
        return prev(signum, frame)
    if prev == signal.SIG_IGN:
        return None
    _kill_everything(remove=True)
    signal.signal(signum, signal.SIG_DFL)  # die of the signal, with the usual exit status
    os.kill(os.getpid(), signum)
    return None


def _register(ens):
    with _LIVE_LOCK:
        if not _ATEXIT_DONE[0]:
            atexit.register(_at_exit)
            _ATEXIT_DONE[0] = True
        if not _LIVE and threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                if signal.getsignal(sig) == signal.SIG_IGN:
                    continue  # the process chose to ignore it: so do we
                try:
                    _PREV_HANDLERS[sig] = signal.signal(sig, _on_signal)
                except (ValueError, OSError):
                    pass
        _LIVE.add(ens)


def _unregister(ens):
    with _LIVE_LOCK:
        _LIVE.discard(ens)
        if not _LIVE and _PREV_HANDLERS and threading.current_thread() is threading.main_thread():
            for sig, prev in list(_PREV_HANDLERS.items()):
                try:
                    if signal.getsignal(sig) is _on_signal:
                        signal.signal(sig, prev)
                except (ValueError, OSError):
                    pass
            _PREV_HANDLERS.clear()


# ------------------------------------------------------------------------- the ensemble

def _free_port(avoid: set) -> int:
    while True:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port not in avoid:
            avoid.add(port)
            return port


@dataclass(eq=False)
class _Server:
    sid: int
    dir: Path
    client_port: int
    quorum_port: int
    election_port: int
    proc: subprocess.Popen | None = None
    starts: int = 0
    killed: bool = False
    lines: list = field(default_factory=list)  # every line of server.log read so far
    read_pos: int = 0
    partial: bytes = b""
    start_line: int = 0  # index in `lines` where the current incarnation's output begins

    # the server's files, all below its own directory
    data_dir = property(lambda self: self.dir / "data")
    conf_dir = property(lambda self: self.dir / "conf")
    cfg = property(lambda self: self.dir / "zoo.cfg")
    log = property(lambda self: self.dir / "server.log")


_LOG4J = """\
log4j.rootLogger=INFO, CONSOLE
log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender
log4j.appender.CONSOLE.Threshold=INFO
log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout
log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} [myid:%X{myid}] [%t] %-5p %c{1}:%L - %m%n
"""

_LOGBACK = """\
<configuration>
  <appender name="CONSOLE" class="ch.qos.logback.core.ConsoleAppender">
    <encoder>
      <pattern>%d{ISO8601} [myid:%X{myid}] [%thread] %-5level %logger{0}:%line - %msg%n</pattern>
    </encoder>
  </appender>
  <root level="INFO"><appender-ref ref="CONSOLE"/></root>
</configuration>
"""


@dataclass(frozen=True)
class ServerView:
    """What one server shows at a moment: what conformance compares with a model's node."""

    server: int
    running: bool
    peer_state: str  # "down", "starting", or as logged ("following - broadcast", ...)
    role: str  # "down", "looking", "following", "leading" ("observing")
    accepted_epoch: int | None
    current_epoch: int | None
    last_logged_zxid: int  # ZooKeeper's: log or snapshot, e.g. 0x200000000 after NEWLEADER
    last_txn_zxid: int  # the last transaction's (effective history)


class Ensemble:
    """n real ZooKeeper servers on 127.0.0.1 behind a link proxy. A context manager."""

    def __init__(self, n: int, *, zookeeper: ZooKeeperDist | None = None,
                 workdir: str | None = None, tick_ms: int = 200, init_limit: int = 10,
                 sync_limit: int = 5, jvm_args: dict | None = None, extra_cfg: dict | None = None,
                 on_event=None, keep: bool = False, java: str | None = None,
                 base_jvm_args: list | tuple = DEFAULT_JVM_ARGS, start_timeout: float = 60.0):
        if not isinstance(n, int) or n < 1:
            raise UsageError(f"an ensemble needs at least one server, not {n!r}")
        if tick_ms <= 0 or init_limit <= 0 or sync_limit <= 0:
            raise UsageError("tick_ms, init_limit and sync_limit must be positive")
        self.n = n
        self.java = java or find_java()
        self.zookeeper = zookeeper or find_zookeeper(java=self.java)
        self.tick_ms, self.init_limit, self.sync_limit = tick_ms, init_limit, sync_limit
        self.jvm_args = {int(k): list(v) for k, v in (jvm_args or {}).items()}
        bad = [k for k in self.jvm_args if not 1 <= k <= n]
        if bad:
            raise UsageError(f"jvm_args names server {bad[0]}, but server ids are 1..{n}")
        self.extra_cfg = dict(extra_cfg or {})
        self.base_jvm_args = list(base_jvm_args)
        self.on_event = on_event
        self.keep = keep
        self.start_timeout = start_timeout
        self.pids_started: list[int] = []
        self._closed = False
        self._lock = threading.RLock()  # starts and kills, one at a time
        self._log_lock = threading.RLock()  # the log readers' state (not held while waiting)
        self._created_workdir = workdir is None or not Path(workdir).exists()
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="zabmc-real-"))
        self.workdir.mkdir(parents=True, exist_ok=True)
        self._ports: set[int] = set()
        self.servers: dict[int, _Server] = {}
        self.proxy: LinkProxy | None = None
        self.routes: dict[tuple, tuple] = {}  # (src, dst, kind) -> proxy address
        _register(self)
        try:
            self.proxy = LinkProxy()
            for sid in self.ids:
                d = self.workdir / f"server-{sid}"
                self.servers[sid] = _Server(sid, d, _free_port(self._ports), _free_port(self._ports),
                                            _free_port(self._ports))
            for src in self.ids:
                for dst in self.ids:
                    if src != dst:
                        s = self.servers[dst]
                        for kind, port in (("quorum", s.quorum_port), ("election", s.election_port)):
                            self.routes[(src, dst, kind)] = self.proxy.add_route(
                                src, dst, kind, ("127.0.0.1", port), avoid=self._ports)
            for sid in self.ids:
                self._prepare(sid)
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ layout

    @property
    def ids(self) -> list[int]:
        return list(range(1, self.n + 1))

    def _srv(self, i: int) -> _Server:
        try:
            return self.servers[i]
        except KeyError:
            raise UsageError(f"no server {i!r}: server ids are 1..{self.n}") from None

    def _event(self, kind: str, **info):
        if self.on_event is not None:
            self.on_event(kind, info)

    def config_text(self, i: int) -> str:
        s = self._srv(i)
        cfg = {
            "tickTime": self.tick_ms, "initLimit": self.init_limit, "syncLimit": self.sync_limit,
            "dataDir": str(s.data_dir), "clientPort": s.client_port,
            "clientPortAddress": "127.0.0.1",
            "4lw.commands.whitelist": "*", "admin.enableServer": "false",
            # a client session is local to its server and creates no transaction, so the
            # model's zxids are the real ones
            "localSessionsEnabled": "true", "localSessionsUpgradingEnabled": "true",
            "preAllocSize": 1024,  # KB, becomes zookeeper.preAllocSize (QuorumPeerConfig)
            "standaloneEnabled": "false", "reconfigEnabled": "false",
        }
        cfg.update(self.extra_cfg)
        lines = [f"{k}={v}" for k, v in cfg.items()]
        for j in self.ids:
            if j == i:
                lines.append(f"server.{j}=127.0.0.1:{s.quorum_port}:{s.election_port}")
            else:
                q = self.routes[(i, j, "quorum")][1]
                e = self.routes[(i, j, "election")][1]
                lines.append(f"server.{j}=127.0.0.1:{q}:{e}")
        return "\n".join(lines) + "\n"

    def _prepare(self, i: int):
        s = self._srv(i)
        s.data_dir.mkdir(parents=True, exist_ok=True)
        s.conf_dir.mkdir(parents=True, exist_ok=True)
        (s.data_dir / "myid").write_text(f"{i}\n")
        (s.conf_dir / "log4j.properties").write_text(_LOG4J)
        (s.conf_dir / "logback.xml").write_text(_LOGBACK)
        s.cfg.write_text(self.config_text(i))

    def data_dir(self, i: int) -> str:
        return str(self._srv(i).data_dir)

    def log_path(self, i: int) -> str:
        return str(self._srv(i).log)

    def config_path(self, i: int) -> str:
        return str(self._srv(i).cfg)

    def client_address(self, i: int) -> tuple:
        return ("127.0.0.1", self._srv(i).client_port)

    def connect_string(self, i: int) -> str:
        return f"127.0.0.1:{self._srv(i).client_port}"

    # ------------------------------------------------------------------ processes

    def argv(self, i: int, jvm_args=None) -> list[str]:
        s = self._srv(i)
        extra = self.jvm_args.get(i, []) if jvm_args is None else list(jvm_args)
        cp = os.pathsep.join([str(s.conf_dir)] + list(self.zookeeper.classpath))
        return ([self.java] + self.base_jvm_args + [f"-Dzabmc.server={i}"] + extra
                + ["-cp", cp, self.zookeeper.main_class, str(s.cfg)])

    def pid(self, i: int) -> int | None:
        s = self._srv(i)
        return s.proc.pid if s.proc is not None and s.proc.poll() is None else None

    def is_running(self, i: int) -> bool:
        s = self._srv(i)
        return s.proc is not None and s.proc.poll() is None

    def exit_code(self, i: int) -> int | None:
        """The last incarnation's exit status (negative: killed by that signal); None if running."""
        s = self._srv(i)
        return None if s.proc is None else s.proc.poll()

    def _launch(self, i: int, jvm_args=None):
        s = self._srv(i)
        if self._closed:
            raise RealError("the ensemble is closed")
        if self.is_running(i):
            raise RealError(f"server {i} is already running (pid {s.proc.pid})")
        self._read_log(s)
        s.starts += 1
        s.killed = False
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
        with open(s.log, "ab") as f:
            f.write(f"==== zabmc: server {i} start {s.starts} at {stamp}Z ====\n".encode())
        with self._log_lock:
            self._read_log_locked(s)
            s.start_line = len(s.lines)
        out = open(s.log, "ab")
        try:
            s.proc = _LAUNCHER.popen(self.argv(i, jvm_args), stdin=subprocess.DEVNULL, stdout=out,
                                     stderr=subprocess.STDOUT, cwd=str(s.dir),
                                     start_new_session=True, close_fds=True)
        finally:
            out.close()
        self.pids_started.append(s.proc.pid)
        self._event("start", server=i, pid=s.proc.pid, attempt=s.starts)

    def _start_status(self, i: int) -> str:
        """"ready", "starting", "bind" (a port was taken) or "exited"."""
        s = self._srv(i)
        lines = self._current_lines(s)
        if any(_BIND_FAILURE in ln for ln in lines):
            return "bind"
        if s.proc.poll() is not None:
            return "exited"
        if any(PEER_STATE_RE.search(ln) or LOOKING_RE.search(ln) for ln in lines):
            return "ready"
        return "starting"

    def _why(self, i: int) -> str:
        """The current incarnation's first ERROR message and last "Caused by", if any."""
        lines = self._current_lines(self._srv(i))
        err = next((ln.split(" - ", 1)[-1] for ln in lines if " ERROR " in ln), None)
        cause = next((ln for ln in reversed(lines) if ln.startswith("Caused by: ")), None)
        parts = [p for p in (err, cause) if p]
        return (": " + "; ".join(parts)) if parts else ""

    def _new_ports(self, i: int):
        s = self._srv(i)
        s.client_port = _free_port(self._ports)
        s.quorum_port = _free_port(self._ports)
        s.election_port = _free_port(self._ports)
        self.proxy.retarget(i, "quorum", ("127.0.0.1", s.quorum_port))
        self.proxy.retarget(i, "election", ("127.0.0.1", s.election_port))
        s.cfg.write_text(self.config_text(i))

    def _await_started(self, pending: dict, timeout: float):
        """Wait until each server of `pending` (id -> jvm_args) enters its election (or logs
        a peer state), relaunching on other ports when one was taken."""
        deadline = time.monotonic() + timeout
        tries = {i: 0 for i in pending}
        delay = 0.02
        while pending:
            for i in list(pending):
                st = self._start_status(i)
                if st == "ready":
                    del pending[i]
                    self._event("started", server=i, pid=self.pid(i))
                elif st == "bind":
                    self._kill_one(i, reason="port taken")
                    tries[i] += 1
                    if tries[i] > 3:
                        raise ServerFailed(i, "its ports were taken on 4 tries", self.log_tail(i, 20))
                    self._new_ports(i)
                    self._event("port_retry", server=i, client_port=self._srv(i).client_port)
                    self._launch(i, pending[i])
                elif st == "exited":
                    code = self._srv(i).proc.returncode
                    raise ServerFailed(i, f"exited with status {code}{self._why(i)}",
                                       self.log_tail(i, 20))
            if not pending:
                return
            if time.monotonic() > deadline:
                i = next(iter(pending))
                tail = self.log_tail(i, 20)
                self._kill_one(i, reason="start timeout")
                raise ServerFailed(i, f"did not reach its election within {timeout:.0f} s", tail)
            time.sleep(delay)
            delay = min(delay * 1.5, 0.2)

    def start(self, i: int, *, jvm_args=None, wait: bool = True) -> int:
        """Launch server i (its own data dir, config and log); with wait, return once it has
        entered its first election ("LOOKING"). ServerFailed if it exits first. Returns its pid."""
        with self._lock:
            self._launch(i, jvm_args)
            if wait:
                try:
                    self._await_started({i: jvm_args}, self.start_timeout)
                except BaseException:
                    self._kill_one(i, reason="failed start")
                    raise
            return self.pid(i)

    def start_all(self, isolated=(), *, servers=None, wait: bool = True) -> None:
        """Launch every server (of `servers`, default all) that is not running, all at once,
        those of `isolated` with their links cut; with wait, return once each has entered its
        first election."""
        with self._lock:
            for i in isolated:
                self.isolate(i)
            ids = self.ids if servers is None else [self._srv(i).sid for i in servers]
            todo = {i: None for i in ids if not self.is_running(i)}
            for i in todo:
                self._launch(i)
            if wait:
                try:
                    self._await_started(dict(todo), self.start_timeout)
                except BaseException:
                    for i in todo:
                        self._kill_one(i, reason="failed start")
                    raise

    def kill(self, i: int) -> None:
        """SIGKILL server i and reap it (nothing when it is not running)."""
        self._kill_one(self._srv(i).sid, reason="kill")

    def restart(self, i: int, *, jvm_args=None, wait: bool = True) -> int:
        """Kill server i if it runs, then start it again on the same data dir."""
        self.kill(i)
        return self.start(i, jvm_args=jvm_args, wait=wait)

    def stop_all(self, *, graceful: bool = False, timeout: float = 10.0) -> None:
        """Stop every server: SIGKILL, or with graceful SIGTERM first (SIGKILL after timeout)."""
        if graceful:
            for s in self.servers.values():
                if s.proc is not None and s.proc.poll() is None:
                    s.killed = True
                    s.proc.terminate()
            end = time.monotonic() + timeout
            for s in self.servers.values():
                if s.proc is not None:
                    try:
                        s.proc.wait(max(0.0, end - time.monotonic()))
                    except subprocess.TimeoutExpired:
                        pass
        for i in self.ids:
            self._kill_one(i, reason="stop")

    def _kill_one(self, i: int, reason: str):
        s = self.servers.get(i)
        if s is None or s.proc is None:
            return
        if s.proc.poll() is None:
            s.killed = True
            try:
                s.proc.kill()
            except ProcessLookupError:
                pass
            try:
                s.proc.wait(30)
            except subprocess.TimeoutExpired:
                raise RealError(f"server {i} (pid {s.proc.pid}) survived SIGKILL for 30 s") from None
            self._event("kill", server=i, pid=s.proc.pid, reason=reason)
        else:
            s.proc.wait()

    def _kill_processes(self):
        """Kill every server of this ensemble by pid (the signal and atexit path)."""
        for s in list(self.servers.values()):
            p = s.proc
            if p is not None and p.poll() is None:
                try:
                    p.kill()
                    p.wait(30)
                except (OSError, subprocess.TimeoutExpired):
                    pass

    # ------------------------------------------------------------------ links

    def _pair(self, i: int, j: int):
        self._srv(i), self._srv(j)
        if i == j:
            raise UsageError(f"a link joins two servers, not server {i} and itself")

    def cut(self, i: int, j: int) -> None:
        self._pair(i, j)
        self.proxy.cut(i, j)
        self._event("cut", a=i, b=j)

    def heal(self, i: int, j: int) -> None:
        self._pair(i, j)
        self.proxy.heal(i, j)
        self._event("heal", a=i, b=j)

    def isolate(self, i: int) -> None:
        self._srv(i)
        self.proxy.isolate(i)
        self._event("isolate", server=i)

    def heal_all(self) -> None:
        self.proxy.heal_all()
        self._event("heal_all")

    def reset_link(self, i: int, j: int) -> int:
        """Reset (RST) the open connections between i and j; returns how many."""
        self._pair(i, j)
        n = self.proxy.close(i, j)
        self._event("reset", a=i, b=j, connections=n)
        return n

    # ------------------------------------------------------------------ logs and roles

    def _read_log(self, s: _Server):
        with self._log_lock:
            self._read_log_locked(s)

    def _read_log_locked(self, s: _Server):
        try:
            with open(s.log, "rb") as f:
                f.seek(s.read_pos)
                chunk = f.read()
        except FileNotFoundError:
            return
        if not chunk:
            return
        s.read_pos += len(chunk)
        data = s.partial + chunk
        parts = data.split(b"\n")
        s.partial = parts.pop()
        s.lines.extend(p.decode("utf-8", "replace") for p in parts)

    def _current_lines(self, s: _Server) -> list[str]:
        with self._log_lock:
            self._read_log_locked(s)
            return s.lines[s.start_line:]

    def bypasses(self) -> list[str]:
        """Connections to a server's quorum or election port that did not come through the link
        proxy, which no cut would stall (a tripwire: the proxy's rewrite of the election
        connections' first message keeps them out; see zabmc/real/proxy.py). Each is looked at
        twice, 0.1 s apart, so that one the proxy opens or closes meanwhile is not taken for one.

        Only a port something listens on counts, and only a peer that is not itself a listening
        port: the servers' ports were free ephemeral ports when chosen, so while a server is not
        leading, its quorum port is free again, and any process's outgoing connection (a client's
        to a server's client port, a Spark worker's) may take it as its own local port; that
        connection is not one to the server (seen in CI, 2026-11-29)."""
        def suspects() -> set:
            before = self.proxy.upstream_ports()
            conns = established_connections() or set()
            listening = listening_ports() or set()
            ours = before | self.proxy.upstream_ports()
            return {(sid, kind, remote) for sid, s in self.servers.items()
                    for kind, port in (("quorum", s.quorum_port), ("election", s.election_port))
                    if port in listening
                    for local, remote in conns
                    if local == port and remote not in ours and remote not in listening}
        first = suspects()
        if not first:
            return []
        time.sleep(0.1)
        return [f"server {sid}'s {kind} port has a connection from port {remote}, not through "
                f"the link proxy" for sid, kind, remote in sorted(first & suspects())]

    def log_lines(self, i: int, pattern: str | None = None, *, current: bool = False) -> list[str]:
        """Server i's log lines (all its starts, or with current the running one's), those
        matching the regular expression `pattern` when given."""
        s = self._srv(i)
        with self._log_lock:
            self._read_log(s)
            lines = s.lines[s.start_line:] if current else list(s.lines)
        if pattern is None:
            return lines
        rx = re.compile(pattern)
        return [ln for ln in lines if rx.search(ln)]

    def log_mark(self, i: int) -> int:
        """A position in server i's log (lines so far), for `wait_log(..., since=)` and
        `log_lines_since`: what happened after an action, however briefly it lasted."""
        s = self._srv(i)
        with self._log_lock:
            self._read_log(s)
            return len(s.lines)

    def log_lines_since(self, i: int, mark: int, pattern: str | None = None) -> list[str]:
        lines = self.log_lines(i)[mark:]
        if pattern is None:
            return lines
        rx = re.compile(pattern)
        return [ln for ln in lines if rx.search(ln)]

    def wait_log(self, i: int, pattern: str, *, since: int = 0, timeout: float = 30.0) -> str:
        """Until server i's log has a line matching `pattern` after line `since`; returns it."""
        def found():
            hits = self.log_lines_since(i, since, pattern)
            return hits[0] if hits else None
        return self.wait_for(found, timeout, f"/{pattern}/ in server {i}'s log", servers=[i])

    def peer_states_since(self, i: int, mark: int) -> list[str]:
        """Every peer state server i logged after `mark`, in order (brief ones included)."""
        out = []
        for ln in self.log_lines(i)[mark:]:
            m = PEER_STATE_RE.search(ln)
            if m:
                out.append(m.group(1))
            elif LOOKING_RE.search(ln):
                out.append("looking")
        return out

    def log_tail(self, i: int, n: int = 20) -> list[str]:
        return self.log_lines(i)[-n:]

    def peer_state(self, i: int) -> str:
        """"down", or the running server's last "Peer state changed: ..." (e.g. "looking",
        "following - broadcast"), or "looking" after QuorumPeer.run's "LOOKING" line;
        "starting" before it logs either."""
        if not self.is_running(i):
            return "down"
        s = self._srv(i)
        with self._log_lock:
            lines = self._current_lines(s)
            for ln in reversed(lines):
                m = PEER_STATE_RE.search(ln)
                if m:
                    return m.group(1)
                if LOOKING_RE.search(ln):
                    return "looking"
        return "starting"

    def role(self, i: int) -> str:
        """One of "down", "looking", "following", "leading" ("observing"), from peer_state."""
        st = self.peer_state(i)
        if st == "down":
            return "down"
        if st == "starting":
            return "looking"
        return st.split(" - ", 1)[0].strip()

    def four_letter(self, i: int, cmd: str, timeout: float = 3.0) -> str:
        """The answer to a four-letter word on server i's client port ("" when it is down)."""
        if len(cmd) != 4:
            raise UsageError(f"four-letter words have four letters, not {cmd!r}")
        try:
            with socket.create_connection(self.client_address(i), timeout=timeout) as c:
                c.sendall(cmd.encode("ascii"))
                chunks = []
                while True:
                    b = c.recv(65536)
                    if not b:
                        break
                    chunks.append(b)
        except OSError:
            return ""
        return b"".join(chunks).decode("utf-8", "replace")

    def srvr(self, i: int) -> dict:
        """`srvr` parsed: its "Key: value" lines, plus "mode" and "zxid" (int) when serving;
        {} when the server is down or not serving."""
        text = self.four_letter(i, "srvr")
        out: dict = {}
        for ln in text.splitlines():
            if ":" in ln:
                k, v = ln.split(":", 1)
                out[k.strip()] = v.strip()
        if "Mode" in out:
            out["mode"] = out["Mode"]
        if "Zxid" in out:
            try:
                out["zxid"] = int(out["Zxid"], 16)
            except ValueError:
                pass
        return out

    # ------------------------------------------------------------------ disk

    def epochs(self, i: int) -> tuple:
        return disk.read_epochs(self.data_dir(i))

    def txns(self, i: int, problems: list | None = None) -> list:
        return disk.read_txnlog(self.data_dir(i), problems)

    def effective_history(self, i: int) -> list:
        return disk.effective_history(self.data_dir(i))

    def last_logged_zxid(self, i: int) -> int:
        return disk.last_logged_zxid(self.data_dir(i))

    def last_txn_zxid(self, i: int) -> int:
        return disk.last_txn_zxid(self.data_dir(i))

    def zxid_on_disk(self, i: int, zxid: int) -> bool:
        """zxid is in server i's log, or its newest snapshot is at or past it."""
        if any(t.zxid == zxid for t in self.txns(i)):
            return True
        snap = disk.newest_snapshot(self.data_dir(i))
        return snap is not None and snap.zxid >= zxid

    def view(self, i: int) -> ServerView:
        """Server i's role, epochs and last logged zxid, read now."""
        acc, cur = self.epochs(i)
        st = self.peer_state(i)
        role = "down" if st == "down" else ("looking" if st == "starting"
                                           else st.split(" - ", 1)[0].strip())
        return ServerView(i, st != "down", st, role, acc, cur, self.last_logged_zxid(i),
                          self.last_txn_zxid(i))

    def views(self) -> dict:
        """view() of every server, by id."""
        return {i: self.view(i) for i in self.ids}

    # ------------------------------------------------------------------ waiting

    def describe(self, servers=None, lines: int = 8) -> str:
        """Each server's role, pid and epochs, and the last log lines of `servers` (all when None)."""
        out = []
        show = set(self.ids if servers is None else servers)
        for i in self.ids:
            try:
                acc, cur = self.epochs(i)
                ll = disk.zxid_hex(self.last_logged_zxid(i))
            except (OSError, ValueError):
                acc = cur = ll = "?"
            out.append(f"server {i}: {self.peer_state(i)} (pid {self.pid(i)}, acceptedEpoch {acc}, "
                       f"currentEpoch {cur}, last logged zxid {ll})")
            if i in show:
                out += ["    " + ln for ln in self.log_tail(i, lines)]
        return "\n".join(out)

    def wait_for(self, predicate, timeout: float, what: str, *, servers=None):
        """Poll `predicate` until it returns something true, and return that; RealTimeout
        (with each server's role and the last log lines of `servers`) after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        delay = 0.02
        while True:
            try:
                v = predicate()
            except (OSError, ValueError):
                v = None
            if v:
                return v
            left = deadline - time.monotonic()
            if left <= 0:
                raise RealTimeout(what, self.describe(servers))
            time.sleep(min(delay, left))
            delay = min(delay * 1.5, 0.2)

    def leaders(self, among=None) -> list[int]:
        """The running servers in "leading - broadcast" (among `among` when given)."""
        ids = self.ids if among is None else list(among)
        return [i for i in ids if self.peer_state(i).startswith("leading - broadcast")]

    def wait_leader(self, among=None, timeout: float = 30.0) -> int:
        """The id of the one server (of `among`) that leads in broadcast phase."""
        def one():
            ls = self.leaders(among)
            return ls[0] if len(ls) == 1 else None
        return self.wait_for(one, timeout, f"one leader in broadcast among {among or self.ids}")

    def wait_settled(self, among=None, timeout: float = 30.0) -> int:
        """Until one server of `among` (default: every running one) leads in broadcast and all
        the others follow in broadcast; returns the leader. A write then reaches every log."""
        def ok():
            ids = [i for i in self.ids if self.is_running(i)] if among is None else list(among)
            states = {i: self.peer_state(i) for i in ids}
            leaders = [i for i, st in states.items() if st.startswith("leading - broadcast")]
            if len(leaders) != 1:
                return None
            if all(st.startswith("following - broadcast") for i, st in states.items()
                   if i != leaders[0]):
                return leaders[0]
            return None
        return self.wait_for(ok, timeout, f"a leader and all followers in broadcast among "
                             f"{among or 'the running servers'}")

    def wait_role(self, i: int, role: str, timeout: float = 30.0) -> str:
        """Until server i's role (or its whole peer state) is `role`; returns the peer state."""
        def ok():
            st = self.peer_state(i)
            return st if (st == role or self.role(i) == role) else None
        return self.wait_for(ok, timeout, f"server {i} to be {role}", servers=[i])

    def wait_zxid_on_disk(self, i: int, zxid: int, timeout: float = 30.0) -> None:
        self.wait_for(lambda: self.zxid_on_disk(i, zxid), timeout,
                      f"zxid {disk.zxid_hex(zxid)} on server {i}'s disk", servers=[i])

    def wait_epoch(self, i: int, *, current: int | None = None, accepted: int | None = None,
                   timeout: float = 30.0) -> tuple:
        def ok():
            acc, cur = self.epochs(i)
            if accepted is not None and acc != accepted:
                return None
            if current is not None and cur != current:
                return None
            return (acc, cur)
        return self.wait_for(ok, timeout, f"server {i}'s epochs accepted={accepted} current={current}",
                             servers=[i])

    # ------------------------------------------------------------------ the end

    def close(self) -> None:
        """Kill every server, stop the proxy, remove the work dir unless keep (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            self._kill_processes()
            for i in list(self.servers):
                self._kill_one(i, reason="close")
        finally:
            if self.proxy is not None:
                self.proxy.stop()
            _unregister(self)
            self._remove_workdir()
            self._event("closed", workdir=str(self.workdir), kept=self.keep)

    def _remove_workdir(self):
        """Delete what this ensemble created under its work dir, unless keep."""
        if self.keep:
            return
        if self._created_workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)
        else:
            for s in self.servers.values():
                shutil.rmtree(s.dir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        try:
            if not self._closed:
                self._kill_processes()
        except Exception:
            pass
