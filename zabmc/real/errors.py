"""What going wrong with a real ensemble raises. None of these is the user's fault (that is
`UsageError`): the CLI reports them with their details, as internal failures of the run."""

from __future__ import annotations

from zabmc.core.errors import ZabmcError


class RealError(ZabmcError):
    """A real ensemble did not do what it was asked."""


class ServerFailed(RealError):
    """A server exited on its own (or never came up) while starting; `tail` is its log's end."""

    def __init__(self, server: int, reason: str, tail: list[str]):
        self.server = server
        self.reason = reason
        self.tail = list(tail)
        lines = "\n".join("  " + t for t in self.tail)
        super().__init__(f"server {server} failed to start: {reason}\n"
                         f"last {len(self.tail)} lines of its log:\n{lines}")


class RealTimeout(RealError):
    """A condition awaited on the ensemble did not hold in time; `details` describes each server."""

    def __init__(self, what: str, details: str):
        self.what = what
        self.details = details
        super().__init__(f"timed out waiting for {what}\n{details}")
