"""Option parsing shared by several commands: node lists, partitions, seeds."""

from __future__ import annotations

from zabmc.errors import UsageError


def parse_partition(text: str | None) -> frozenset:
    """`s,d[,s,d...]` -> a set of directed links (C11). Ids are range-checked by the config."""
    if not text:
        return frozenset()
    parts = [p.strip() for p in text.split(",")]
    try:
        ids = [int(p) for p in parts]
    except ValueError:
        raise UsageError(f"--partition takes comma-separated node ids, got {text!r}") from None
    if len(ids) % 2:
        raise UsageError(f"--partition needs pairs src,dst; got an odd number of ids ({len(ids)})")
    if any(i < 0 for i in ids):
        raise UsageError(f"--partition ids must not be negative, got {text!r}")
    return frozenset(zip(ids[0::2], ids[1::2]))
