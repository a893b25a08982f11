"""Which known ZooKeeper issues a run of a zk model passes through (the model contract's
`known_issues`, zabmc/core/model.py): a counterexample says what it is (issue #62, item 7).

The zk package's properties (models/zk/properties.py) are the issues' own marks, each naming its
JIRA issue in its `source`: a **window** (models/zk/windows.py, storage.py, shutdown.py: D18, S10,
H9) is the state the issue names as its cause, a **failure** the step where ZooKeeper's code
throws or gives up. A run passes through an issue when one of its properties is broken along it;
its window opens at the first such step. The explorer hands over those violations (every one of
the model's own properties, checked along the replayed run whatever the trace itself checked), so
a data loss the papers' properties find (`prefix`, `sane-history`, ...) is named by the windows it
went through before, and a run through none is said to be unmatched: a possibly new bug.

`leader-gives-up` names no issue: a leader behind an ACKEPOCH abandoning its epoch is what
ZooKeeper is designed to do (README.md, D9), not a bug.
"""

from __future__ import annotations

import re

from zabmc.core.model import KnownIssue

#: property -> the issue it marks, in the order a run meets them at one step: the start-up's
#: check (K4), the follower's NEWLEADER (its currentEpoch written, then its ACK: D18), the
#: failures of the synchronisation, the leader's committed log (S10), the shutdown's (H9).
#: `ack-from-memory` marks ZOOKEEPER-4712 or ZOOKEEPER-5094, as its message says per transaction.
ISSUES = {
    "load-exception": ("ZOOKEEPER-2354",),
    "ack-before-logging": ("ZOOKEEPER-3911",),
    "epoch-before-disk": ("ZOOKEEPER-4643",),
    "ack-before-disk": ("ZOOKEEPER-4646",),
    "sync-exception": ("ZOOKEEPER-4394",),
    "leader-unexpected-ack": ("ZOOKEEPER-4685",),
    "sync-loses-committed": ("ZOOKEEPER-4925",),
    "committed-log-hole": ("ZOOKEEPER-4925",),
    "ack-from-memory": ("ZOOKEEPER-4712", "ZOOKEEPER-5094"),
    "ack-from-applied-memory": ("ZOOKEEPER-5094",),
    "stale-log-write": ("ZOOKEEPER-4712",),
    # no JIRA issue describes it: this project's report (reports/bugs/), which a maintainer may file
    "truncate-keeps": ("TRUNC-KEEPS-UNCOMMITTED",),
}
_RANK = {name: k for k, name in enumerate(ISSUES)}
_JIRA = re.compile(r"ZOOKEEPER-\d+")


def _named(prop: str, message: str) -> tuple:
    """The issues one violation of `prop` marks: those of its entry in `ISSUES`, narrowed to the
    ones its message names when it names some of them (`ack-from-memory`: a leaked SyncThread's
    queue is 4712's, a TRUNC's memory 5094's)."""
    issues = ISSUES.get(prop, ())
    if len(issues) > 1:
        said = set(_JIRA.findall(message))
        return tuple(x for x in issues if x in said) or issues
    return issues


def known_issues(states, broken) -> tuple:
    """The known issues whose windows the run passes through, each at the first step a
    violation marks it, in the order they open (at one step, in `ISSUES`' order); `states` is not
    read: every window is one of the package's node checks, evaluated along the run with the
    rest of `broken`."""
    first: dict = {}
    for step, prop, _nodes, message in sorted(broken, key=lambda b: (b[0], _RANK.get(b[1], 99))):
        for issue in _named(prop, message):
            if issue not in first:
                first[issue] = KnownIssue(issue, step, f"{prop}: {message}")
    return tuple(first.values())
