"""The safety properties of ZAB (docs/semantics.md, "Properties"), evaluated in one place.

The simulator (`--check`), every explorer strategy and the Spark engine call the same `Checker`.
Properties are named data (`PROPERTIES`, the `always` ones of `zabmc.core.properties`); the checker keeps only the ghost state the enabled
properties read (E6: none at all when no property is enabled), and evaluates them incrementally after
each kernel step, over the node the step changed and the step's effects.

The ghost is an immutable tuple `(logs, broadcast, established, prospective)`, each part `None` when
no enabled property reads it:
- logs: per node, the delivery log (every txn ever delivered, in first-delivery order);
- broadcast: every proposed txn in proposal order, as `(txn, proposer)`;
- established / prospective: sorted `(epoch, node)` pairs.
Transactions are plain tuples `(zxid, payload)`, zxid an `(epoch, counter)` tuple, payload bytes; nodes
any values with `.id`, `.history`, `.last_committed` and `.role` (`zabmc.core.model.ROLE_NAMES`).
"""

from __future__ import annotations

import difflib
import struct
from typing import NamedTuple, Sequence

from zabmc.core.errors import UsageError
from zabmc.core.model import (FAILED, LEADING, PROPOSED, ROLE_NAMES, SYNCED, TIMER, txn_json,
                          txn_str)
from zabmc.core.properties import ALWAYS, Property, load_all, of_kind


#: the safety properties: the `always` ones of the one registry (`zabmc.core.properties`)
PROPERTIES: dict[str, Property] = of_kind(ALWAYS)

#: `Node.role` of a leader, in every model (zabmc.core.model.ROLE_NAMES)
_LEADING_ROLE = ROLE_NAMES.index("Leading")

DEFAULT_PROPERTIES = tuple(p.name for p in PROPERTIES.values() if p.default)


class Violation(NamedTuple):
    """A property that failed, with the nodes and transactions that witness it."""

    property: str
    message: str
    nodes: tuple
    txns: tuple
    also: tuple = ()  # other properties violated by the same step

    def all(self) -> tuple:
        """This violation and every other one the same step caused."""
        return (self._replace(also=()),) + self.also

    def to_json(self) -> dict:
        return {
            "property": self.property,
            "message": self.message,
            "nodes": list(self.nodes),
            "txns": [txn_json(t) for t in self.txns],
        }




def delivered(node) -> tuple:
    """The longest prefix of `history` whose zxids are all <= last_committed."""
    h = node.history
    lc = node.last_committed
    k = 0
    for t in h:
        if t[0] > lc:
            break
        k += 1
    return h if k == len(h) else h[:k]


def resolve(names: Sequence[str] | None, no_invariants: bool = False) -> tuple[str, ...]:
    """The enabled property names: the defaults, the given ones, or none."""
    if no_invariants:
        return ()
    load_all()  # the models' own properties too
    if not names:
        return DEFAULT_PROPERTIES
    out = []
    for name in names:
        if name not in PROPERTIES:
            close = difflib.get_close_matches(name, PROPERTIES, n=3)
            hint = f"did you mean {' or '.join(close)}? " if close else ""
            raise UsageError(f"unknown property {name!r}; {hint}`zabmc invariants` lists all "
                             f"{len(PROPERTIES)}")
        if name not in out:
            out.append(name)
    return tuple(out)


_U32 = struct.Struct("<I")
_TXN = struct.Struct("<III")


def _enc_txns(txns) -> bytes:
    parts = [_U32.pack(len(txns))]
    for t in txns:
        parts.append(_TXN.pack(t[0][0], t[0][1], len(t[1])))
        parts.append(t[1])
    return b"".join(parts)


def _enc_broadcast(bc) -> bytes:
    return _enc_txns([t for t, _ in bc]) + bytes(p for _, p in bc)


def _enc_pairs(pairs) -> bytes:
    return _U32.pack(len(pairs)) + b"".join(struct.pack("<II", e, i) for e, i in pairs)


class Checker:
    """Keeps the ghost state of the enabled properties and checks them after every step."""

    def __init__(self, names: Sequence[str] = DEFAULT_PROPERTIES):
        self.names = tuple(names)
        if any(name not in PROPERTIES for name in self.names):
            load_all()  # a model's own property, named before any model was looked up
        need = set()
        for name in self.names:
            need |= PROPERTIES[name].needs
        self.need_logs = "logs" in need
        self.need_broadcast = "broadcast" in need
        self.need_established = "established" in need
        self.need_prospective = "prospective" in need
        self.enabled = frozenset(self.names)
        self.active = bool(self.names)
        # the enabled properties given as a check of one node (`always(..., check=...)`)
        self.node_checks = tuple((name, PROPERTIES[name].check) for name in self.names
                                 if PROPERTIES[name].check is not None)

    # --- ghost ---------------------------------------------------------------------------------------
    def initial_ghost(self, n: int) -> tuple:
        return (
            ((),) * n if self.need_logs else None,
            () if self.need_broadcast else None,
            () if self.need_established else None,
            () if self.need_prospective else None,
        )

    @staticmethod
    def ghost_size(ghost: tuple) -> int:
        """How much the ghost holds: the delivery logs' transactions, the broadcast order and the
        leaders per epoch, each of which only grows (the reduced search's progress measure,
        zabmc/explore/progress.py)."""
        logs, bc, est, pro = ghost
        return ((sum(map(len, logs)) if logs is not None else 0) + len(bc or ()) + len(est or ())
                + len(pro or ()))

    def encode_ghost(self, ghost: tuple, memo=None) -> bytes:
        """Canonical bytes of the ghost. `memo(obj, encode)` may cache part encodings."""
        if memo is None:
            def memo(obj, encode):
                return encode(obj)
        logs, bc, est, pro = ghost
        parts = []
        if logs is not None:
            parts.extend(memo(log, _enc_txns) for log in logs)
        if bc is not None:
            parts.append(memo(bc, _enc_broadcast))
        for pairs in (est, pro):
            if pairs is not None:
                parts.append(memo(pairs, _enc_pairs))
        return b"".join(parts)

    def ghost_json(self, ghost: tuple) -> dict:
        logs, bc, est, pro = ghost
        out = {}
        if logs is not None:
            out["delivery_logs"] = [[txn_json(t) for t in log] for log in logs]
        if bc is not None:
            out["broadcast"] = [{"txn": txn_json(t), "by": p} for t, p in bc]
        if est is not None:
            out["established"] = [list(x) for x in est]
        if pro is not None:
            out["prospective"] = [list(x) for x in pro]
        return out

    # --- the step ------------------------------------------------------------------------------------
    def step(self, ghost: tuple, i: int, node, effects: tuple, nodes: Sequence,
             prev=None) -> tuple:
        """Fold one kernel step on node `i` (now `node`, with `effects`) into the ghost and check.

        `nodes` is the whole cluster after the step; `prev`, when given, is node `i` before it.
        Returns `(ghost, violation or None)`. The result is a function of the ghost, `i`, `node`,
        `effects` and `prev` alone: the explorer memoises it so (`Env._check`), so a check that
        reads another node of `nodes` must change that memo's key.
        """
        if not self.active:
            return ghost, None
        if node is prev:
            # Nothing a property reads changed unless the step reports a proposal or a leader.
            for eff in effects:
                if eff[0] != TIMER:
                    break
            else:
                return ghost, None
        logs, bc, est, pro = ghost
        en = self.enabled
        found = []
        if effects:
            bc, est, pro = self._fold_effects(i, effects, bc, est, pro, found)
        log_changed = False
        dseq = None
        # History and commit point are all the log and history checks read.
        touched = (prev is None or node.history is not prev.history
                   or node.last_committed != prev.last_committed)
        if logs is not None and touched:
            log = logs[i]
            dseq = delivered(node)
            if dseq != log:
                k = len(log)
                if dseq[:k] == log:
                    new_log = dseq
                else:
                    seen = set(log)
                    new_log = log + tuple(t for t in dseq if t not in seen)
                if new_log != log:
                    logs = logs[:i] + (new_log,) + logs[i + 1 :]
                    log_changed = True
        if logs is not ghost[0] or bc is not ghost[1] or est is not ghost[2] or pro is not ghost[3]:
            ghost = (logs, bc, est, pro)  # (unchanged, it stays the same object)

        if "sane-history" in en and touched:
            found.append(_sane_history(node))
        if logs is not None and touched:
            if "prefix" in en and dseq != logs[i]:
                found.append(_prefix(i, dseq, logs[i]))
            # Other nodes' logs did not change in this step and were checked when they did.
            if log_changed:
                found.extend(self._check_logs(i, logs, bc))
        if "primary-integrity" in en:
            for eff in effects:
                if eff[0] == PROPOSED:
                    found.append(_primary_integrity(i, node, eff[1], logs))
        if self.node_checks and node is not prev:
            for name, check in self.node_checks:
                what = check(node)
                if what is not None:
                    found.append(Violation(name, what, (i,), ()))
        if ("leader-log-completeness" in en and prev is not None
                and node.role == _LEADING_ROLE and prev.role != _LEADING_ROLE):
            found.append(_leader_log_completeness(i, node, logs))
        if "leadership" in en:
            found.append(_one_per_epoch("leadership", "established leaders", effects, SYNCED, est))
        if "single-prospective-leader" in en:
            found.append(_one_per_epoch(
                "single-prospective-leader", "prospective leaders", effects, LEADING, pro))
        return ghost, _combine(found)

    def _fold_effects(self, i, effects, bc, est, pro, found):
        """The ghost's broadcast order and leaders after node i's `effects`; a FAILED effect of
        an enabled property goes to `found`."""
        en = self.enabled
        for eff in effects:
            tag = eff[0]
            if tag == PROPOSED:
                if bc is not None:
                    bc = bc + ((eff[1], i),)
            elif tag == SYNCED and est is not None:
                entry = (eff[1], i)
                if entry not in est:
                    est = tuple(sorted(est + (entry,)))
            elif tag == LEADING and pro is not None:
                entry = (eff[1], i)
                if entry not in pro:
                    pro = tuple(sorted(pro + (entry,)))
            elif tag == FAILED and eff[1] in en:  # rare: last, off the common tags' path
                found.append(Violation(eff[1], eff[2], (i,), ()))
        return bc, est, pro

    def _check_logs(self, i, logs, bc):
        """Every log property violated by node i's changed log (at most one per property)."""
        en = self.enabled
        log = logs[i]
        out = []
        if "integrity" in en and bc is not None:
            proposed = {t for t, _ in bc}
            for t in log:
                if t not in proposed:
                    out.append(Violation("integrity", f"node {i} delivered {txn_str(t)}, which "
                                         "no primary ever broadcast", (i,), (t,)))
                    break
        if "global-primary-order" in en:
            for a, b in zip(log, log[1:]):
                if b[0][0] < a[0][0]:
                    out.append(Violation("global-primary-order", f"node {i} delivered "
                                         f"{txn_str(b)} after {txn_str(a)} of a later epoch",
                                         (i,), (a, b)))
                    break
        if "local-primary-order" in en:
            out.append(_local_primary_order(i, log, bc))
        agreement = total = None
        for j, other in enumerate(logs):
            if j == i or not other:
                continue
            if agreement is None and "agreement" in en:
                short, long_ = (log, other) if len(log) <= len(other) else (other, log)
                if long_[: len(short)] != short:
                    k = next(x for x in range(len(short)) if short[x] != long_[x])
                    agreement = Violation("agreement", f"nodes {i} and {j} delivered different "
                                          f"transactions at position {k + 1}: {txn_str(log[k])} "
                                          f"vs {txn_str(other[k])}", (i, j), (log[k], other[k]))
            if total is None and "total-order" in en:
                total = _total_order(i, log, j, other) or _total_order(j, other, i, log)
        out.extend((agreement, total))
        return out


def _combine(found: list):
    """The first violation, carrying the others found in the same step in `also`."""
    found = [v for v in found if v is not None]
    if not found:
        return None
    if len(found) == 1:
        return found[0]
    return found[0]._replace(also=tuple(found[1:]))


def _prefix(i, dseq, log):
    gone = tuple(t for t in log if t not in dseq)
    wit = gone if gone else tuple(t for t in log if t in dseq)
    what = "dropped" if gone else "reordered"
    return Violation("prefix", f"node {i}'s delivered sequence {what} "
                     f"{', '.join(txn_str(t) for t in wit)} of its delivery log", (i,), wit)


def _sane_history(node):
    h = node.history
    for a, b in zip(h, h[1:]):
        if not a[0] < b[0]:
            return Violation("sane-history", f"node {node.id}'s history has {txn_str(b)} after "
                             f"{txn_str(a)}", (node.id,), (a, b))
    lz = h[-1][0] if h else (0, 0)
    if node.last_committed > lz:
        lc = node.last_committed
        return Violation("sane-history", f"node {node.id} has last_committed {lc[0]}.{lc[1]} "
                         f"beyond its last zxid {lz[0]}.{lz[1]}", (node.id,), ())
    return None


def _total_order(i, li, j, lj):
    """If li has a before b and lj has b, lj must have a before b.

    One pass finds the first such b (something before it in li is missing from lj, or sits later
    in lj); only then is li scanned again for the first witness a. Linear in the logs' length."""
    pos_j = {t: k for k, t in enumerate(lj)}
    missing = False
    latest = -1
    for kb, b in enumerate(li):
        pb = pos_j.get(b)
        if pb is not None and (missing or latest > pb):
            for a in li[:kb]:
                pa = pos_j.get(a)
                if pa is None:
                    return Violation("total-order", f"node {i} delivered {txn_str(a)} before "
                                     f"{txn_str(b)}, but node {j} never delivered "
                                     f"{txn_str(a)}", (i, j), (a, b))
                if pa > pb:
                    return Violation("total-order", f"node {i} delivered {txn_str(a)} before "
                                     f"{txn_str(b)}, but node {j} delivered {txn_str(a)} after "
                                     f"{txn_str(b)}", (i, j), (a, b))
        if pb is None:
            missing = True
        elif pb > latest:
            latest = pb
    return None


def _local_primary_order(i, log, bc):
    by_epoch: dict[int, list] = {}
    for t in log:
        by_epoch.setdefault(t[0][0], []).append(t)
    order = {t: k for k, (t, _) in enumerate(bc)} if bc is not None else None
    for e, txns in by_epoch.items():
        for k, t in enumerate(txns, start=1):
            if t[0][1] != k:
                prev = txns[k - 2] if k > 1 else None
                return Violation("local-primary-order", f"node {i} delivered {txn_str(t)} as "
                                 f"epoch {e}'s transaction number {k}" + (
                                     f", right after {txn_str(prev)}" if prev else ""),
                                 (i,), (prev, t) if prev else (t,))
        if order is not None:
            for a, b in zip(txns, txns[1:]):
                oa, ob = order.get(a), order.get(b)
                if oa is not None and ob is not None and oa > ob:
                    return Violation("local-primary-order", f"node {i} delivered {txn_str(b)} "
                                     f"after {txn_str(a)}, which was proposed later", (i,), (a, b))
    return None


def _first_missing(node, logs, before_epoch=None):
    """The first `(j, txn)` of the delivery logs (of an epoch before `before_epoch`, when given)
    that `node`'s history lacks; None when it holds them all."""
    have = set(node.history)
    for j, log in enumerate(logs):
        for t in log:
            if (before_epoch is None or t[0][0] < before_epoch) and t not in have:
                return j, t
    return None


def _primary_integrity(i, node, txn, logs):
    e = txn[0][0]
    gap = _first_missing(node, logs, e)
    if gap is None:
        return None
    j, t = gap
    return Violation("primary-integrity", f"node {i} proposed {txn_str(txn)} as leader of epoch "
                     f"{e} without {txn_str(t)}, which node {j} delivered", (i, j), (txn, t))


def _leader_log_completeness(i, node, logs):
    gap = _first_missing(node, logs)
    if gap is None:
        return None
    j, t = gap
    return Violation("leader-log-completeness", f"node {i} became leader without {txn_str(t)}, "
                     f"which node {j} delivered", (i, j), (t,))


def _one_per_epoch(prop, what, effects, tag, pairs):
    for eff in effects:
        if eff[0] == tag:
            e = eff[1]
            who = tuple(i for ep, i in pairs if ep == e)
            if len(who) > 1:
                return Violation(prop, f"epoch {e} has {len(who)} {what}: nodes "
                                 f"{', '.join(map(str, who))}", who, ())
    return None
