"""The one writer and the one reader of every file zabmc writes or reads.

Writing (`write`): a regular file (or a name that does not exist yet) is written atomically
beside itself: a temporary file in the same directory, fsynced, renamed over it, the directory
fsynced; a device or a FIFO is written in place (a rename would replace the node by a regular
file); `-` is standard output; a symbolic link's target is written, the link itself is never
replaced. A write that fails (ENOSPC, EIO) is a `WriteError`, one line: the callers that have a
verdict print it and keep the verdict's exit code, the others exit 2.

Overwriting (`may_replace`, `check_replace`): an existing file that zabmc did not write in the
same run is replaced only where it is of the kind being written (a trace by a trace, a picture by
a picture); any other file is refused in one line naming --force.

Reading (`read_bytes`, `read_text`, `open_input`): inputs must be regular files (or `-` for
standard input where a command says so), read with a size bound: never a FIFO (which may never
end) or a device (/dev/zero never ends), never more than the stated maximum. Each refusal is one
`UsageError` line (exit 2).

This module is part of the core layer: it imports nothing else of zabmc but `core.errors`.
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
import sys

from .errors import UsageError

#: the largest trace, schedule, partition script or manifest zabmc reads: 256 MiB
MAX_INPUT_BYTES = 256 << 20


class WriteError(UsageError):
    """Writing an output failed (a full disk, an I/O error): the message names the file and why."""


# --- reading -------------------------------------------------------------------------------
def _input_stat(path: str, what: str):
    try:
        return os.stat(path)
    except FileNotFoundError:
        raise UsageError(f"{what} {path} does not exist") from None
    except NotADirectoryError:
        raise UsageError(f"{what} {path} does not exist (a part of its path is no "
                         "directory)") from None
    except OSError as e:
        raise UsageError(f"cannot read {what} {path}: {e.strerror}") from None


def _check_regular(st, path: str, what: str) -> None:
    mode = st.st_mode
    if stat.S_ISDIR(mode):
        raise UsageError(f"{what} {path} is a directory")
    if not stat.S_ISREG(mode):
        kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a device" if
                stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
                else "not a regular file")
        raise UsageError(f"{what} {path} is {kind}: zabmc reads only regular files")


def open_input(path: str, what: str, limit: int | None = MAX_INPUT_BYTES, size: int | None = None):
    """`path` opened for reading in binary, after checking that it is a regular file of at most
    `limit` bytes (None: no bound) and, when `size` is given, of exactly that size (a checkpoint
    part: the size its manifest names). The file is opened without blocking (a FIFO swapped in
    between the check and the open does not hang) and checked again once open."""
    st = _input_stat(path, what)
    _check_regular(st, path, what)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise UsageError(f"cannot read {what} {path}: {e.strerror}") from None
    try:
        st = os.fstat(fd)
        _check_regular(st, path, what)
        if size is not None and st.st_size != size:
            raise UsageError(f"{what} {path} has {st.st_size:,} bytes, {size:,} were expected "
                             "(truncated or altered?)")
        if limit is not None and st.st_size > limit:
            raise UsageError(f"{what} {path} has {st.st_size:,} bytes, more than the "
                             f"{limit:,} zabmc reads")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: str, what: str, limit: int | None = MAX_INPUT_BYTES,
               size: int | None = None, stdin_ok: bool = False) -> bytes:
    """The bytes of the regular file `path` (see `open_input`); at most `limit` bytes even if the
    file grows while it is read. With `stdin_ok`, `-` is standard input (up to `limit` bytes)."""
    if stdin_ok and path == "-":
        f = sys.stdin.buffer
        data = f.read(limit + 1) if limit is not None else f.read()
        if limit is not None and len(data) > limit:
            raise UsageError(f"{what} on standard input has more than the {limit:,} bytes zabmc "
                             "reads")
        return data
    with open_input(path, what, limit, size) as f:
        want = size if size is not None else limit
        try:
            data = f.read(want + 1) if want is not None else f.read()
        except OSError as e:
            raise UsageError(f"cannot read {what} {path}: {e.strerror}") from None
    if want is not None and len(data) > want:
        raise UsageError(f"{what} {path} grew while it was read (more than {want:,} bytes)")
    if size is not None and len(data) != size:
        raise UsageError(f"{what} {path} has {len(data):,} bytes, {size:,} were expected "
                         "(truncated or altered?)")
    return data


def read_text(path: str, what: str, limit: int | None = MAX_INPUT_BYTES,
              stdin_ok: bool = False) -> str:
    """The UTF-8 text of the file the user named as `what` ("trace file", "partition script"),
    or a `UsageError` naming what is wrong with it; a file that is not UTF-8 raises
    UnicodeDecodeError, for the caller to name in its own terms."""
    return read_bytes(path, what, limit, stdin_ok=stdin_ok).decode("utf-8")


def parse_json(text: str, what: str):
    """The JSON value of `text`, from the user's `what` ("trace file T"). Two failures of Python's
    reader that are not `json.JSONDecodeError` become a one-line `UsageError` here: a number of
    more digits than Python converts (4,300 by default), and nesting deeper than its recursion
    limit. A JSONDecodeError propagates, for the caller to place in its own terms (line, column)."""
    try:
        # a byte order mark, which some Windows editors write, is no part of the document (as in
        # partition scripts)
        return json.loads(text.removeprefix("\ufeff"))
    except json.JSONDecodeError:
        raise
    except ValueError as e:  # int("9" * 5000): Python refuses integers that long
        if "digits" not in str(e):
            raise UsageError(f"{what} is not valid JSON: {str(e).splitlines()[0][:120]}") from None
        raise UsageError(f"{what} is not usable JSON: a number has more than "
                         f"{sys.get_int_max_str_digits()} digits") from None
    except RecursionError:
        raise UsageError(f"{what} is not usable JSON: it nests arrays or objects too "
                         "deeply") from None


# --- what an existing file is ----------------------------------------------------------------
#: kind -> a pattern that the first bytes of a file zabmc wrote of that kind match
KINDS = {
    "trace": re.compile(rb'\A\s*\{\s*"format"\s*:\s*"zabmc-trace"'),
    "picture": re.compile(rb"\A<!DOCTYPE html>\s*<html[^>]*><head><meta charset=\"utf-8\">\s*"
                          rb"<title>zabmc: "),
    "partition script": re.compile(rb"\A# zabmc partition script"),
    "partition events": re.compile(rb'\A\s*\{[^{]*"format"\s*:\s*"zabmc-partition-events"'),
    "schedule": re.compile(rb'\A\s*\{[^{]*"format"\s*:\s*"zabmc-zookeeper-schedule"'),
    "dump": re.compile(rb"\ADSEZAB"),
    "graph": re.compile(rb'\A\s*(<\?xml[^>]*>\s*)?(<graphml|<gexf)|\A\s*(strict\s+)?'
                        rb'(di)?graph\b|\A\s*\{\s*"directed"\s*:', re.S),
}
_HEAD = 4096

#: the files this process has written: each may be written again in the same run
_WRITTEN: set = set()


def new_run() -> None:
    """A command begins (`zabmc.cli.main`): no file is its own yet (a program that runs several
    commands in one process, as the tests do, starts each afresh)."""
    _WRITTEN.clear()


def is_of_kind(path: str, kind: str) -> bool:
    """Whether the regular file `path` is empty or begins as a file of `kind` that zabmc writes."""
    try:
        with open_input(path, "file", limit=None) as f:
            head = f.read(_HEAD)
    except UsageError:
        return False
    return not head.strip() or bool(KINDS[kind].search(head))


def may_replace(path: str, kind: str, force: bool = False) -> str | None:
    """Why `path` must not be replaced by a file of `kind` (None: it may be): it exists, zabmc did
    not write it in this run, it is a regular file (through any symbolic link), and not one of
    that kind."""
    if force or path == "-" or os.path.realpath(path) in _WRITTEN:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or is_of_kind(path, kind):
        return None
    return f"it exists and is no {kind} zabmc wrote"


def check_replace(path: str | None, kind: str, flag: str, force: bool = False) -> None:
    """A one-line `UsageError` when writing a `kind` to `path` (the value of `flag`) would replace
    a file that is not one (see `may_replace`)."""
    if path is None or path == "-":
        return
    why = may_replace(path, kind, force)
    if why is not None:
        raise UsageError(f"{flag} {path}: {why}; give --force to replace it")


# --- writing ---------------------------------------------------------------------------------
def _fsync_dir(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _write_stdout(data: bytes, what: str) -> None:
    out = sys.stdout
    try:
        if isinstance(out, io.TextIOBase) and hasattr(out, "buffer"):
            out.flush()
            out.buffer.write(data)
            out.buffer.flush()
        else:  # the CLI's stdout wrapper: it notes a full or closed stdout, and goes on
            out.write(data.decode("utf-8", "replace"))
            out.flush()
            if getattr(out, "failed", None) is not None:
                out.reported = True  # this one line says it
                raise WriteError(f"cannot write the {what} to standard output: {out.failed}")
    except OSError as e:
        raise WriteError(f"cannot write the {what} to standard output: {e.strerror}") from None


def write(path: str, data: str | bytes, what: str, *, kind: str | None = None,
          flag: str | None = None, force: bool = False) -> str:
    """Write `data` (text is UTF-8) as the file `path`, the user's `what` ("trace file"): see the
    module's docstring. With `kind`, an existing file of another kind is refused unless `force`
    (`check_replace`; `flag` names the option in the refusal). The path written."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    if path == "-":
        _write_stdout(data, what)
        return path
    if kind is not None:
        check_replace(path, kind, flag or what, force)
    what = f"{what} {path}"
    real = os.path.realpath(path)  # a symbolic link: its target is written, the link stays
    try:
        st = os.stat(real)
    except FileNotFoundError:
        st = None
    except OSError as e:
        raise WriteError(f"cannot write {what}: {e.strerror}") from None
    if st is not None and stat.S_ISDIR(st.st_mode):
        raise UsageError(f"{what} is a directory")
    if st is not None and not stat.S_ISREG(st.st_mode):
        _write_in_place(real, data, what)
    else:
        _write_atomically(real, data, what, st)
    _WRITTEN.add(real)
    return path


def _write_in_place(real: str, data: bytes, what: str) -> None:
    """A device, a FIFO: opened and written as it is (never created, never truncated away)."""
    try:
        fd = os.open(real, os.O_WRONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise WriteError(f"cannot write {what}: {e.strerror}") from None
    try:
        _write_all(fd, data)
    except OSError as e:
        raise WriteError(f"cannot write {what}: {e.strerror}") from None
    finally:
        os.close(fd)


def _write_atomically(real: str, data: bytes, what: str, st) -> None:
    directory = os.path.dirname(real) or "."
    tmp = os.path.join(directory, f".{os.path.basename(real)}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                     0o666 if st is None else stat.S_IMODE(st.st_mode))
    except OSError as e:
        raise WriteError(f"cannot write {what}: {e.strerror}") from None
    try:
        try:
            if st is not None:
                os.fchmod(fd, stat.S_IMODE(st.st_mode))  # the umask does not narrow it
            _write_all(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, real)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise WriteError(f"cannot write {what}: {e.strerror}") from None
    _fsync_dir(directory)


def check_outputs(outputs: dict, inputs: dict | None = None, kinds: dict | None = None,
                  force: bool = False) -> None:
    """Before a command works: each file it will write (`outputs`: flag -> path, None for an
    output not asked for, `-` for standard output) can be written, in a directory that exists,
    and is not a directory; no two outputs are the same file (but /dev/null), no output is one of
    the files it reads (`inputs`: what -> path), and no output would replace a file of another
    kind than it writes (`kinds`: flag -> kind; see `check_replace`) unless `force`. A one-line
    `UsageError` names the first that is wrong."""
    seen: dict = {}  # real path -> flag
    for flag, path in outputs.items():
        if path is None or path == "-":
            continue
        real = os.path.realpath(path)
        where = os.path.dirname(path) or "."
        if os.path.isdir(real):
            raise UsageError(f"{flag} {path} is a directory")
        if not os.path.isdir(os.path.dirname(real)):
            there = "is not a directory" if os.path.exists(os.path.dirname(real)) else \
                "does not exist"
            raise UsageError(f"{flag} {path}: the directory {where} {there}")
        special = os.path.exists(real) and not os.path.isfile(real)  # a device, a FIFO
        if not special and not os.access(os.path.dirname(real), os.W_OK | os.X_OK):
            raise UsageError(f"{flag} {path}: the directory {where} is not writable")
        if os.path.exists(real) and not os.access(real, os.W_OK):
            raise UsageError(f"{flag} {path} is not writable")
        if real in seen and real != os.devnull:  # several outputs may all be thrown away
            raise UsageError(f"{seen[real][0]} and {flag} name the same file {path}: give each "
                             "its own")
        seen[real] = (flag, path)
    for what, path in (inputs or {}).items():
        if path is None or path == "-" or not os.path.exists(path):
            continue
        for real, (flag, out) in seen.items():
            if os.path.exists(real) and os.path.samefile(real, path):
                same = "" if out == path else f" ({path})"
                raise UsageError(f"{flag} {out} is the {what}{same} this command reads: it would "
                                 "be overwritten; choose another file")
    for flag, kind in (kinds or {}).items():  # last: naming the input is the clearer refusal
        check_replace(outputs.get(flag), kind, flag, force)
