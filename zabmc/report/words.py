"""What a counterexample is, in words: the model and its release, a lost write said as one, and
the known issues whose windows the run passes through (`Trace.known_issues`, which the model
names: zabmc.core.model's "Known issues"). The console (`zabmc check`, `replay`), the summary
and the picture (`zabmc show`) say the same."""

from __future__ import annotations

from zabmc.core.model import aliases

from .simtrace import _zx


def model_line(model) -> str:
    """The model, what it is (its release, for a model of an implementation) and its other names:
    `zk (ZooKeeper 3.7.0's ZAB 1.0 (...); also named zk-3.8.0)`."""
    other = sorted(a for a, name in aliases().items() if name == model.name)
    what = "; ".join(x for x in (getattr(model, "description", ""),
                                 f"also named {', '.join(other)}" if other else "") if x)
    return f"{model.name} ({what})" if what else model.name


def in_words(trace, v, step: int) -> tuple | None:
    """What violation `v` (found at `step`) is, in words, where its property's name does not say
    it: `(kind, detail)`, a lost write (a transaction a node delivered, gone from a log that
    should hold it), a reordered or divergent one; None for the others."""
    nodes = trace.states[step].nodes
    if v.property == "sane-history" and not v.txns and v.nodes:  # last_committed beyond the log
        x = nodes[v.nodes[0]]
        end = x.history[-1][0] if x.history else (0, 0)
        return LOST, (f"node {x.id} delivered {_zx(x.last_committed)} as committed, and its log "
                      f"no longer holds it (it ends at {_zx(end)})")
    if v.property == "primary-integrity" and len(v.txns) == 2 and len(v.nodes) == 2:
        return LOST, (f"{_zx(v.txns[1][0])}, which node {v.nodes[1]} delivered, is missing from "
                      f"leader {v.nodes[0]}'s history as it proposes {_zx(v.txns[0][0])}")
    if v.property == "prefix" and v.txns:
        zs = ", ".join(_zx(t[0]) for t in v.txns)
        if "dropped" in v.message:
            return LOST, f"node {v.nodes[0]} no longer delivers {zs}, which it delivered"
        return "a reordered write", (f"node {v.nodes[0]} delivers {zs} in another order than it "
                                     "did")
    if v.property == "agreement" and len(v.nodes) == 2:
        return "divergent writes", (f"nodes {v.nodes[0]} and {v.nodes[1]} delivered different "
                                    "transactions at one position")
    return None


LOST = "a lost write"


def headline_words(trace) -> tuple | None:
    """`in_words` of the first violation of `trace` (None: none, or its name says it)."""
    if trace.violation is None:
        return None
    return in_words(trace, trace.violation, trace.violation_step)


def issue_lines(trace) -> list[str]:
    """One line per known issue whose window the run passes through (where it opens, and why),
    or one line saying that none matches; none at all for a model that follows no
    implementation, or a trace whose issues were not looked for."""
    known = getattr(trace, "known_issues", None)
    if known is None:
        return []
    bad = trace.violation is not None or getattr(trace, "lasso", None) is not None
    if not known:
        return ["no known issue matches: the run passes through the window of none of the issues "
                "this model knows" + (", so this may be a new bug" if bad else "")]
    at = trace.violation_step
    return [f"known issue {x.issue}: the run enters its window at step {x.step}"
            + (" (after the violation)" if at is not None and x.step > at else "")
            + f" ({x.why})" for x in known]


def issue_names(trace) -> str | None:
    """The known issues in a few words, for a summary line: `ZOOKEEPER-4643 (step 39),
    ZOOKEEPER-4646 (step 39)`, or that none matches; None for a model that follows no
    implementation."""
    known = getattr(trace, "known_issues", None)
    if known is None:
        return None
    if not known:
        bad = trace.violation is not None or getattr(trace, "lasso", None) is not None
        return "no known issue matches" + (": possibly a new bug" if bad else "")
    return "known issue(s) " + ", ".join(f"{x.issue} (from step {x.step})" for x in known)
