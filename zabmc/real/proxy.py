"""A userspace TCP proxy that stands on every link between two servers, so links can be cut
and healed without root.

Each *route* is a listening socket on 127.0.0.1 tagged with a link (src, dst) and a kind ("quorum",
"election"): server src's config names it as dst's address, and it forwards to dst's real port. A
connection accepted there is *opened by src towards dst*; its bytes flow both ways. On an election
route the proxy rewrites the address in the connection's first message (QuorumCnxManager's
InitialMessage: protocol version, sid, then the sender's own election address, its bind address) to
the proxy's route from dst back to src: ZooKeeper 3.8.0's `QuorumCnxManager.handleConnection`
closes a connection from a smaller sid and connects back to the address that message names
(`connectOne(sid, electionAddr)`), which would go straight to src's real port, past the proxy, and
a later cut of the link would not stall it. Links are unordered for cutting: `cut(a, b)` stalls
every connection of routes (a, b) and (b, a) in both directions (the proxy stops reading and
writing them, so the kernel's buffers fill and TCP's flow control holds the senders, as in a
partition; nothing is dropped) and parks new connections unconnected; `heal(a, b)` resumes
forwarding, parked connections connect on, and what the kernels buffered flows again. `close(a, b)`
resets the link's connections (RST) instead. On an open link a route listens only while its target
does (asked of the kernel's sock_diag, or read off /proc/net/tcp, every 20 ms, and at once when a
connection to it is refused), so a server that connects to one that is down or not yet listening is
refused, as it would be without the proxy: accepted and then reset, a follower's
`Learner.connectToLeader` took the reset for a failed leader and went back to its election, where
it retries a refused connection. One thread runs a selector over every socket; the public methods
hand their work to it and return once it is done, so after `cut()` returns no further byte crosses
the link.
"""

from __future__ import annotations

import errno
import selectors
import socket
import struct
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field

_CHUNK = 65536
_LIMIT = 65536  # bytes held per direction before the proxy stops reading that side
_MIRROR_S = 0.02  # how often routes are matched to whether their targets listen
#: QuorumCnxManager's InitialMessage: a negative protocol version (V1 -65536: one address;
#: V2 -65535: addresses joined by "|"), the sender's sid, then the address string's length and
#: bytes; a non-negative first long is an old server's bare sid, with no address
_INITIAL_VERSIONS = (-65536, -65535)
_INITIAL_HEAD = struct.Struct(">qqi")
_INITIAL_PREFIXES = tuple(struct.pack(">q", v) for v in _INITIAL_VERSIONS)
_INITIAL_MAX = 4096  # an address string longer than this is passed on untouched


def listening_ports() -> set | None:
    """The TCP ports something listens on (IPv4 and IPv6), or None where neither the kernel's
    sock_diag nor /proc/net/tcp is there to say."""
    ports = _diag_listening_ports() if _DIAG["usable"] else None
    return ports if ports is not None else _proc_listening_ports()


#: sock_diag over netlink (linux/sock_diag.h, linux/inet_diag.h): what `ss -lt` asks
_NETLINK_SOCK_DIAG, _SOCK_DIAG_BY_FAMILY = 4, 20
_NLM_F_REQUEST_DUMP = 0x1 | 0x300
_NLMSG_ERROR, _NLMSG_DONE = 2, 3
_TCP_LISTEN = 10  # linux/tcp_states.h
_LISTEN = f"{_TCP_LISTEN:02X}"  # the same in /proc/net/tcp's st column
#: whether sock_diag may be asked: a kernel without netlink or without inet_diag says so once,
#: and the proxy then reads /proc only (a failed read for any other reason is not remembered)
_DIAG = {"usable": True}
_NLMSG = struct.Struct("=IHHII")  # nlmsghdr: length, type, flags, sequence, port id
_DIAG_REQ = struct.Struct("=BBBxI48x")  # inet_diag_req_v2: family, protocol, ext, states; no id


def _diag_listening_ports() -> set | None:
    """The listening TCP ports, asked of the kernel's sock_diag: a dump filtered to the LISTEN
    state walks only the listening sockets, where reading /proc/net/tcp walks every socket
    bucket of the machine (about 10 ms of system time a read here, and the proxy matches its
    routes 50 times a second). None where netlink or its inet_diag module is not available."""
    ports = set()
    try:
        s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, _NETLINK_SOCK_DIAG)
    except (OSError, AttributeError):  # no netlink here (or not for sock_diag)
        _DIAG["usable"] = False
        return None
    try:
        with s:
            s.settimeout(1.0)
            for seq, family in enumerate((socket.AF_INET, socket.AF_INET6), 1):
                req = _DIAG_REQ.pack(family, socket.IPPROTO_TCP, 0, 1 << _TCP_LISTEN)
                s.send(_NLMSG.pack(_NLMSG.size + len(req), _SOCK_DIAG_BY_FAMILY,
                                   _NLM_F_REQUEST_DUMP, seq, 0) + req)
                done = False
                while not done:
                    data, off = s.recv(65536), 0
                    while off + _NLMSG.size <= len(data):
                        length, kind, _, _, _ = _NLMSG.unpack_from(data, off)
                        if length < _NLMSG.size:
                            return None
                        body = off + _NLMSG.size
                        if kind == _NLMSG_DONE:
                            done = True
                            break
                        if kind == _NLMSG_ERROR:  # e.g. ENOENT: no inet_diag module
                            _DIAG["usable"] = False
                            return None
                        # inet_diag_msg: family, state, timer, retransmits, then the source
                        # port in network order
                        if data[body + 1] == _TCP_LISTEN:
                            ports.add(struct.unpack_from("!H", data, body + 4)[0])
                        off += (length + 3) & ~3
    except (OSError, AttributeError, IndexError, struct.error):
        return None
    return ports


def _proc_tcp(state: str) -> list | None:
    """The (local port, remote port) of every TCP socket in `state` (/proc/net/tcp's st column),
    IPv4 and IPv6 (a JVM's sockets are IPv6 ones), or None where neither file is there."""
    out, seen = [], False
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name) as f:
                lines = f.readlines()[1:]
        except OSError:
            continue
        seen = True
        for ln in lines:
            parts = ln.split()
            if len(parts) > 3 and parts[3] == state:
                out.append((int(parts[1].rsplit(":", 1)[1], 16), int(parts[2].rsplit(":", 1)[1], 16)))
    return out if seen else None


def _proc_listening_ports() -> set | None:
    """The same read off /proc/net/tcp and tcp6, or None where they are not there."""
    rows = _proc_tcp(_LISTEN)
    return None if rows is None else {local for local, _ in rows}


_ESTABLISHED = "01"  # /proc/net/tcp's st column (linux/tcp_states.h TCP_ESTABLISHED)


def established_connections() -> set | None:
    """The established TCP connections of this machine as (local port, remote port), read off
    /proc/net/tcp and tcp6, or None where neither is there."""
    rows = _proc_tcp(_ESTABLISHED)
    return None if rows is None else set(rows)


def _link(a: int, b: int) -> frozenset:
    return frozenset((a, b))


@dataclass(eq=False)
class _Route:
    src: int
    dst: int
    kind: str
    target: tuple
    sock: socket.socket | None  # bound to addr; listening only while `listening`
    addr: tuple
    listening: bool = False


def _bound(addr) -> socket.socket:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(addr)
    s.setblocking(False)
    return s


@dataclass(eq=False)
class _Pair:
    route: _Route
    down: socket.socket  # accepted from src
    up: socket.socket | None = None  # towards dst
    connecting: bool = False
    to_up: bytearray = field(default_factory=bytearray)
    to_down: bytearray = field(default_factory=bytearray)
    down_eof: bool = False
    up_eof: bool = False
    up_shut: bool = False
    down_shut: bool = False
    #: an election connection's first bytes from src, held until its InitialMessage is whole
    head: bytearray | None = None


class LinkProxy:
    """Routes between servers through which links are cut, healed and reset. Thread-safe."""

    def __init__(self, host: str = "127.0.0.1"):
        self.host = host
        self._sel = selectors.DefaultSelector()
        self._routes: list[_Route] = []
        self._pairs: list[_Pair] = []
        self._cut: set[frozenset] = set()
        self._bytes: dict[tuple, int] = defaultdict(int)  # (src, dst) -> bytes forwarded
        self._conns: dict[tuple, int] = defaultdict(int)  # (src, dst) -> connections accepted
        #: (src, dst) -> InitialMessages whose address was rewritten to a route back
        self._rewritten: dict[tuple, int] = defaultdict(int)
        self._mask: dict[socket.socket, int] = {}
        self._lock = threading.Lock()
        self._tasks: list = []
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._sel.register(self._wake_r, selectors.EVENT_READ, ("wake", None))
        self._stopping = False
        self._mirrored = 0.0
        self._thread = threading.Thread(target=self._loop, name="zabmc-link-proxy", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ public API

    def add_route(self, src: int, dst: int, kind: str, target: tuple,
                  avoid: frozenset | set = frozenset()) -> tuple:
        """Listen for src's connections towards dst's `kind` port at `target`; returns the
        (host, port) that src's config must name. Its port is none of `avoid`: the servers'
        ports, which were free when chosen and which a server binds only later (a quorum port
        once it leads), so the kernel may offer one of them to the route. A route on a server's
        quorum port took the servers' connections to it for ones past the proxy
        (`Ensemble.bypasses`: "server 3's quorum port has a connection from port 42832, not
        through the link proxy", at a schedule's first entry)."""
        refused = []
        lsock = _bound((self.host, 0))
        while lsock.getsockname()[1] in avoid:  # kept bound meanwhile: the next one differs
            refused.append(lsock)
            lsock = _bound((self.host, 0))
        for r in refused:
            r.close()
        route = _Route(src, dst, kind, tuple(target), lsock, lsock.getsockname())

        self._run(lambda: self._routes.append(route))
        return route.addr

    def retarget(self, dst: int, kind: str, target: tuple) -> None:
        """Point every route towards dst's `kind` port at a new real address (new connections)."""
        def task():
            for r in self._routes:
                if r.dst == dst and r.kind == kind:
                    r.target = tuple(target)
        self._run(task)

    def cut(self, a: int, b: int) -> None:
        self._run(lambda: self._cut.add(_link(a, b)))

    def heal(self, a: int, b: int) -> None:
        self._run(lambda: self._cut.discard(_link(a, b)))

    def isolate(self, a: int) -> None:
        def task():
            for r in self._routes:
                if a in (r.src, r.dst):
                    self._cut.add(_link(r.src, r.dst))
        self._run(task)

    def heal_all(self) -> None:
        self._run(self._cut.clear)

    def is_cut(self, a: int, b: int) -> bool:
        with self._lock:
            return _link(a, b) in self._cut

    def cuts(self) -> set:
        with self._lock:
            return {tuple(sorted(c)) for c in self._cut}

    def close(self, a: int, b: int) -> int:
        """Reset (RST) every open connection of link {a, b}; returns how many."""
        box = []

        def task():
            doomed = [p for p in self._pairs if _link(p.route.src, p.route.dst) == _link(a, b)]
            for p in doomed:
                self._drop(p, reset=True)
            box.append(len(doomed))
        self._run(task)
        return box[0] if box else 0

    def bytes_forwarded(self, a: int, b: int, *, directed: bool = False) -> int:
        """Bytes forwarded (both ways) on connections src a opened towards b; with
        directed=False, on those of (b, a) too."""
        with self._lock:
            n = self._bytes[(a, b)]
            return n if directed else n + self._bytes[(b, a)]

    def stats(self) -> dict:
        with self._lock:
            return {"bytes": dict(self._bytes), "connections": dict(self._conns),
                    "rewritten": dict(self._rewritten), "open": len(self._pairs),
                    "cut": {tuple(sorted(c)) for c in self._cut}}

    def upstream_ports(self) -> set:
        """The local ports of the proxy's connections towards the servers: a connection to a
        server's quorum or election port from any other port did not come through the proxy."""
        with self._lock:
            out = set()
            for p in self._pairs:
                if p.up is not None:
                    try:
                        out.add(p.up.getsockname()[1])
                    except OSError:
                        pass
            return out

    def open_connections(self) -> int:
        with self._lock:
            return len(self._pairs)

    def stop(self) -> None:
        """Close every socket and end the thread (idempotent)."""
        if self._thread.is_alive():
            try:
                self._run(self._shutdown, timeout=10)
            except RuntimeError:
                pass
            self._thread.join(10)
        for s in (self._wake_r, self._wake_w):
            try:
                s.close()
            except OSError:
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    # ------------------------------------------------------------------ the loop thread

    def _run(self, fn, timeout: float = 10.0):
        """Run fn on the loop thread and wait for it (directly when already on it)."""
        if threading.current_thread() is self._thread:
            with self._lock:
                fn()
                self._mirror(force=True)
            return
        done = threading.Event()
        err = []

        def wrapped():
            try:
                fn()
                self._mirror(force=True)  # a route listens as its link and target now say
            except BaseException as e:  # handed back to the caller
                err.append(e)
            finally:
                done.set()
        with self._lock:
            if self._stopping:
                raise RuntimeError("link proxy stopped")
            self._tasks.append(wrapped)
        try:
            self._wake_w.send(b"x")
        except OSError:
            pass
        if not done.wait(timeout):
            raise RuntimeError("link proxy did not answer")
        if err:
            raise err[0]

    def _loop(self):
        while True:
            with self._lock:
                tasks, self._tasks = self._tasks, []
                for t in tasks:
                    t()
                if self._stopping:
                    return
                self._mirror()
                self._refresh()
            events = self._sel.select(timeout=_MIRROR_S)
            with self._lock:
                for key, mask in events:
                    what, obj = key.data
                    if what == "wake":
                        try:
                            while self._wake_r.recv(4096):
                                pass
                        except OSError:
                            pass
                    elif what == "listen":
                        self._accept(obj)
                    elif obj in self._pairs:
                        self._service(obj, key.fileobj, mask)

    def _shutdown(self):
        for p in list(self._pairs):
            self._drop(p, reset=True)
        for r in self._routes:
            if r.listening:
                self._sel.unregister(r.sock)
            if r.sock is not None:
                r.sock.close()
        self._routes.clear()
        self._sel.unregister(self._wake_r)
        self._sel.close()
        self._stopping = True

    def _mirror(self, force: bool = False):
        """Each route listens while its link is cut (a connection then waits, as across a
        partition) or its target listens; otherwise it is only bound, and refuses."""
        now = time.monotonic()
        if not force and now - self._mirrored < _MIRROR_S:
            return
        self._mirrored = now
        ports = listening_ports()
        for r in self._routes:
            want = (ports is None or r.target[1] in ports
                    or _link(r.src, r.dst) in self._cut)
            if want and not r.listening:
                try:
                    if r.sock is None:
                        r.sock = _bound(r.addr)
                    r.sock.listen(16)
                except OSError:  # the port is briefly someone else's: next time
                    continue
                self._sel.register(r.sock, selectors.EVENT_READ, ("listen", r))
                r.listening = True
            elif not want and r.listening:
                self._sel.unregister(r.sock)
                r.sock.close()  # connections not yet accepted are reset, as by a closed port
                r.listening = False
                try:
                    r.sock = _bound(r.addr)
                except OSError:
                    r.sock = None

    def _set(self, sock, mask, pair=None):
        old = self._mask.get(sock, 0)
        if mask == old:
            return
        if old and mask:
            self._sel.modify(sock, mask, ("pair", pair))
        elif mask:
            self._sel.register(sock, mask, ("pair", pair))
        else:
            self._sel.unregister(sock)
        if mask:
            self._mask[sock] = mask
        else:
            self._mask.pop(sock, None)

    def _refresh(self):
        """Set each pair's interest from its state: nothing at all on a cut link."""
        for p in list(self._pairs):
            cut = _link(p.route.src, p.route.dst) in self._cut
            if cut:
                self._set(p.down, 0)
                if p.up is not None:
                    self._set(p.up, 0)
                continue
            if p.up is None:
                self._connect(p)
                if p not in self._pairs:
                    continue
            R, W = selectors.EVENT_READ, selectors.EVENT_WRITE
            if p.connecting:
                self._set(p.down, 0)
                self._set(p.up, W, p)
                continue
            dm = (R if not p.down_eof and len(p.to_up) < _LIMIT else 0) | (W if p.to_down else 0)
            um = (R if not p.up_eof and len(p.to_down) < _LIMIT else 0) | (W if p.to_up else 0)
            self._set(p.down, dm, p)
            self._set(p.up, um, p)

    def _accept(self, route: _Route):
        while True:
            try:
                s, _ = route.sock.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            s.setblocking(False)
            s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._conns[(route.src, route.dst)] += 1
            pair = _Pair(route, s, head=bytearray() if route.kind == "election" else None)
            self._pairs.append(pair)  # connected upstream by _refresh unless cut

    def _connect(self, p: _Pair):
        up = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        up.setblocking(False)
        up.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        p.up = up
        rc = up.connect_ex(p.route.target)
        if rc in (0, errno.EISCONN):
            p.connecting = False
        elif rc in (errno.EINPROGRESS, errno.EALREADY, errno.EWOULDBLOCK):
            p.connecting = True
        else:
            self._drop(p, reset=True)
            self._mirrored = 0.0

    def _service(self, p: _Pair, sock, mask):
        if p.connecting:
            err = p.up.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
            if err:
                self._drop(p, reset=True)  # dst is down: src sees its connection closed
                self._mirrored = 0.0  # and the route stops listening at once
                return
            p.connecting = False
            return
        key = (p.route.src, p.route.dst)
        try:
            if mask & selectors.EVENT_READ:
                if sock is p.down:
                    data = p.down.recv(_CHUNK)
                    if data and p.head is not None:
                        self._initial(p, data)
                    elif data:
                        p.to_up += data
                    else:
                        p.down_eof = True
                        if p.head:  # cut short: what came is passed on as it came
                            p.to_up += p.head
                        p.head = None
                else:
                    data = p.up.recv(_CHUNK)
                    if data:
                        p.to_down += data
                    else:
                        p.up_eof = True
            if mask & selectors.EVENT_WRITE:
                if sock is p.up and p.to_up:
                    n = p.up.send(p.to_up)
                    del p.to_up[:n]
                    self._bytes[key] += n
                elif sock is p.down and p.to_down:
                    n = p.down.send(p.to_down)
                    del p.to_down[:n]
                    self._bytes[key] += n
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._drop(p, reset=True)
            return
        # pass a half-close on once what preceded it is delivered
        try:
            if p.down_eof and not p.to_up and not p.up_shut:
                p.up.shutdown(socket.SHUT_WR)
                p.up_shut = True
            if p.up_eof and not p.to_down and not p.down_shut:
                p.down.shutdown(socket.SHUT_WR)
                p.down_shut = True
        except OSError:
            self._drop(p, reset=True)
            return
        if p.up_shut and p.down_shut:
            self._drop(p, reset=False)

    def _initial(self, p: _Pair, data: bytes):
        """Gather an election connection's InitialMessage; once whole, pass it on naming the
        proxy's route from dst back to src as src's election address (see the module's text)."""
        p.head += data
        buf = p.head
        if not any(v.startswith(bytes(buf[:8])) for v in _INITIAL_PREFIXES):
            # an old server's bare sid, or not ZooKeeper's at all: passed on as it is
            p.to_up += buf
            p.head = None
            return
        if len(buf) < _INITIAL_HEAD.size:
            return
        version, sid, length = _INITIAL_HEAD.unpack_from(buf)
        if not 0 < length <= _INITIAL_MAX:
            p.to_up += buf
            p.head = None
            return
        end = _INITIAL_HEAD.size + length
        if len(buf) < end:
            return
        back = next((r for r in self._routes if r.src == p.route.dst and r.dst == p.route.src
                     and r.kind == "election"), None)
        if back is None:
            p.to_up += buf
        else:
            addr = f"{back.addr[0]}:{back.addr[1]}".encode()
            p.to_up += _INITIAL_HEAD.pack(version, sid, len(addr)) + addr + buf[end:]
            self._rewritten[(p.route.src, p.route.dst)] += 1
        p.head = None

    def _drop(self, p: _Pair, reset: bool):
        if p in self._pairs:
            self._pairs.remove(p)
        for s in (p.down, p.up):
            if s is None:
                continue
            self._set(s, 0)
            if reset:
                try:
                    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                except OSError:
                    pass
            try:
                s.close()
            except OSError:
                pass
