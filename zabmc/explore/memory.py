"""Memory figures of the running process, and memory sizes as the user writes them."""

from __future__ import annotations

import re
import resource
import sys

from zabmc.core.errors import UsageError

_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def peak_rss() -> int:
    """The process's peak resident set size in bytes (`getrusage`: KiB on Linux, bytes on macOS)."""
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r if sys.platform == "darwin" else r * 1024


def current_rss() -> int:
    """The process's resident set size now, in bytes (0 where /proc is missing)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * resource.getpagesize()
    except (OSError, ValueError, IndexError):
        return 0


def mem_available() -> int:
    """MemAvailable from /proc/meminfo in bytes (0 where unknown)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0


def parse_size(text: str, option: str = "--memory-limit") -> int:
    """"800M", "2G", "1.5g", "123456" (bytes) -> bytes; binary units (K = 1024)."""
    m = re.fullmatch(r"\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGTB]?)(?:I?B)?\s*", text.upper())
    if not m:
        raise UsageError(f"{option} must be a size such as 800M or 2G, got {text!r}")
    n = int(float(m.group(1)) * _UNITS[m.group(2)])
    if n <= 0:
        raise UsageError(f"{option} must be positive, got {text!r}")
    return n


def human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1024
    return f"{n:,.1f} GiB"  # pragma: no cover
