"""The seeded simulator (seed document "Simulator loop", C3 and C6 to C11) and the canonical dump
(C27): PRNG reference values, the timing formulas, the proposal schedule, an observer that checks
every step of a run against C6 to C10 from the outside, pinned golden digests, determinism across
runs and processes, and the dump round trip.
"""

from __future__ import annotations

import hashlib
import os
import struct
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import need_console_script

from models.db19 import MODEL
from models.db19.codec import dump, parse_dump
from models.db19.handlers import can_propose
from models.db19.state import LEADING, Txn, fresh_node, last_zxid
from zabmc.core.errors import UsageError
from zabmc.core.model import EFF_TIMER
from zabmc.sim import SimConfig, Simulator, proposal_schedule, simulate, splitmix64
from zabmc.sim.rng import delivery_delay, election_deadline
from zabmc.core.model import payload
from zabmc.sim.simulator import SimObserver

# --- splitmix64 (C3) ----------------------------------------------------------------------------


def _splitmix64_by_hand(x: int, mul1: int = 0xBF58476D1CE4E7B5) -> int:
    """C3 written out again, independently of zabmc.sim.rng, with explicit `% 2**64`."""
    m = 2**64
    z = (x + 0x9E3779B97F4A7C15) % m
    z = ((z ^ (z >> 30)) * mul1) % m
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) % m
    return z ^ (z >> 31)


def test_by_hand_formula_is_the_published_splitmix64_with_the_published_constant():
    # Anchors the hand-written formula: with the published multiplier ...E5B9, the first output
    # for state 0 is the well-known 0xE220A8397B1DCDAF (Vigna's splitmix64.c).
    assert _splitmix64_by_hand(0, 0xBF58476D1CE4E5B9) == 0xE220A8397B1DCDAF


@pytest.mark.parametrize(
    "x, want",
    [
        (0, 10040734672810337860),  # 0x8B57DAFCA0CEE644
        (1, 9203517570313482438),
        (2, 9928750198146888126),
        (42, 2941916143125918143),
        (2**64 - 1, 1084580898517893998),  # x + gamma wraps around 2^64
        (0x9E3779B97F4A7C15, 14023197269852311047),
    ],
)
def test_splitmix64_reference_values(x, want):
    assert _splitmix64_by_hand(x) == want
    assert splitmix64(x) == want


def test_splitmix64_uses_the_documents_constant_not_the_published_one():
    assert splitmix64(0) != 0xE220A8397B1DCDAF


@settings(deadline=None)  # wall time varies on a shared machine: no per-example deadline
@given(st.integers(0, 2**64 - 1))
def test_splitmix64_matches_the_hand_formula_on_any_u64(x):
    v = splitmix64(x)
    assert v == _splitmix64_by_hand(x)
    assert 0 <= v < 2**64


# --- timing formulas (C8, C9) -------------------------------------------------------------------


def test_election_deadline_and_delivery_delay_values():
    assert [election_deadline(0, i, 0) for i in range(5)] == [160, 288, 276, 253, 172]
    assert election_deadline(42, 1, 100) == 381
    assert [delivery_delay(0, 0, 1, t) for t in range(10)] == [1, 2, 2, 1, 3, 2, 1, 2, 1, 2]


@settings(deadline=None)  # wall time varies on a shared machine: no per-example deadline
@given(st.integers(0, 2**64 - 1), st.integers(0, 8), st.integers(0, 8), st.integers(0, 10**6))
def test_timing_formulas(seed, a, b, t):
    assert election_deadline(seed, a, t) == t + 150 + _splitmix64_by_hand(seed ^ a ^ t) % 150
    assert t + 150 <= election_deadline(seed, a, t) < t + 300
    assert delivery_delay(seed, a, b, t) == 1 + _splitmix64_by_hand(seed ^ a ^ b ^ t) % 3
    assert delivery_delay(seed, a, b, t) == delivery_delay(seed, b, a, t)  # xor is symmetric


# --- proposal schedule and payloads (C7, C20) ---------------------------------------------------


def test_proposal_schedule():
    assert proposal_schedule(1000, 3) == [250, 500, 750]
    assert proposal_schedule(100, 4) == [20, 40, 60, 80]
    assert proposal_schedule(10, 2) == [3, 6]  # 10/3 = 3, 20/3 = 6
    assert proposal_schedule(1000, 0) == []
    assert proposal_schedule(0, 0) == []
    assert proposal_schedule(0, 3) == [0, 0, 0]
    assert proposal_schedule(3, 5) == [0, 1, 1, 2, 2]  # K > rounds: several per tick
    assert proposal_schedule(1, 4) == [0, 0, 0, 0]


@settings(deadline=None)  # wall time varies on a shared machine: no per-example deadline
@given(st.integers(0, 10**6), st.integers(0, 300))
def test_proposal_schedule_formula(rounds, k):
    s = proposal_schedule(rounds, k)
    assert s == [(i + 1) * rounds // (k + 1) for i in range(k)]
    assert s == sorted(s)
    assert all(0 <= x < rounds for x in s) or rounds == 0


def test_payloads_are_unpadded_decimal():
    assert [payload(i) for i in (0, 7, 10, 123)] == [b"zab-0", b"zab-7", b"zab-10", b"zab-123"]


# --- golden digests -----------------------------------------------------------------------------

# (seed, nodes, rounds, proposals, partition, sha256 of the dump). Pinned from this implementation
# after checking the simulator against C6-C11 (the SpecObserver below); tests/test_sim_reference.py
# checks every one against a second implementation, tests/reference/sim_db19.py, written from the
# protocol's description and sharing no code with zabmc.
GOLDEN = [
    (0, 1, 500, 0, "", "67aa38e18af5adb685cfd75dbe4489d0ff62e8e73326014e9441aad8b0abe620"),
    (7, 1, 1000, 25, "", "db28f08899cdd0d5230759d2e963a9721a978af5dd2d51f91eb1b7821b8fb5b0"),
    (1, 2, 1000, 0, "", "1763e21a2151fd03545521dbab906c344682cd943c49493c05f65d6965f21660"),
    (3, 2, 2000, 8, "", "79e10f29f4c8293081afc701594c4e08c4302f337fa3fd489288a31e6b115566"),
    (8, 2, 1500, 4, "1,0", "2a26658ad933094a3634645329f6d93ef9652bedf01eadd7554765f8387422d4"),
    (0, 3, 1000, 0, "", "8aef7604639fe0f2b349b38d74e10b6da8ac252b626976563bba69c722426296"),
    (42, 3, 2000, 10, "", "6cdadc421ec2a014c0f978d14602facbb3e8eef43444b6f6fce77421e1c31f01"),
    (5, 3, 3000, 20, "0,2,2,0", "a923f93197ff60bcd27cf8f09ac95d06b7342f61b94f89060ff3f4a5889fd8dd"),
    (9, 3, 2000, 5, "0,1,0,2,1,0,2,0",
     "9add92179462b418ca08593d684b02bcbf67f880d9ea81689b0d3b4e36e7cf19"),
    (0, 3, 0, 5, "", "9f92230dd14d4df4d93c508b64a078ebe277d8df3f033d3b6f4f665d1ac61044"),
    (2**64 - 1, 4, 1500, 6, "", "f2491c993a0a62b4626cabee5187d4816c50713a3df73ff4d8504e4d663ae012"),
    (1, 5, 1000, 3, "", "a4bbd82bd1031918345150f907c2f3f8db0e4f734d982e2a8105c90149568566"),
    (11, 5, 3000, 30, "", "cc2262496fd75e4fef5535468bc732da2bfbea58951bcee5a8c45211b52d55cd"),
    (13, 5, 3000, 15, "0,1,1,0,3,4",
     "c02a31bfb891b8283d99e8c567a64c1cabe7c675ef13afbf8b6bd553db6d0144"),
    (62, 5, 2000, 20, "3,4,4,3",
     "366e147e010eb937ec16994659307eec8daf98f62efba24915d4f696d1b834f1"),
    (4, 6, 1200, 7, "1,2", "ad2a0a16dd4cd77f604cd5f2542fccbdb229cfd78a59fe05da2b356c798e4c7c"),
    (2, 7, 1500, 0, "", "d0232cf3acf3e3b50eadb667ea406e061ab289e8ef78f8e6959776010190d88f"),
    (17, 7, 2500, 12, "", "4fc13b523278d30b39efaf25a233405913d38ffdd95097c3148103851043f0ea"),
    (19, 7, 2500, 12, "6,0,6,1,6,2,0,6,1,6,2,6",
     "1d01441ab08d7ad51d303eef62cac8f7307cfb6990f38d707a75b4c9f7fc0486"),
    (123456789, 9, 800, 4, "8,0",
     "8738680ea29910457cdaa0b235cf78dc51624e3a70266f8204ed74079a089b55"),
]
BENCH_GOLDEN = (0, 5, 100000, 1000, "",
                "7e35f636b6c13406ef57c35e9a9dac26f24be4cd5a3e25f623e81ffd8f4f3769")


def _partition(text: str) -> frozenset:
    ids = [int(x) for x in text.split(",")] if text else []
    return frozenset(zip(ids[0::2], ids[1::2]))


def _cfg(seed, nodes, rounds, proposals, part="") -> SimConfig:
    return SimConfig(seed, nodes, rounds, proposals, _partition(part))


def test_golden_set_covers_the_required_shapes():
    assert len(GOLDEN) >= 12
    assert {1, 2, 3, 5, 7} <= {g[1] for g in GOLDEN}
    assert any(g[4] for g in GOLDEN) and any(not g[4] for g in GOLDEN)
    assert any(g[3] == 0 for g in GOLDEN) and any(g[3] > 1 for g in GOLDEN)
    assert len({g[5] for g in GOLDEN}) == len(GOLDEN)


@pytest.mark.parametrize("seed, nodes, rounds, proposals, part, digest", GOLDEN)
def test_golden_digest(seed, nodes, rounds, proposals, part, digest):
    r = simulate(MODEL, _cfg(seed, nodes, rounds, proposals, part))
    assert r.digest == digest
    assert hashlib.sha256(r.dump).hexdigest() == digest


@pytest.mark.slow
def test_golden_digest_benchmark_configuration():
    seed, nodes, rounds, proposals, part, digest = BENCH_GOLDEN
    r = simulate(MODEL, _cfg(seed, nodes, rounds, proposals, part))
    assert r.digest == digest
    assert r.stats.proposed == 1000 and r.stats.pending_proposals == 0


def test_golden_final_states_spot_checks():
    # What the digests encode, spelled out for a few runs.
    r = simulate(MODEL, _cfg(1, 5, 1000, 3))
    assert [x.role for x in r.nodes] == [1, 1, 1, 1, 2]  # node 4 (highest id) leads
    assert all(x.current_epoch == 1 and x.last_committed == (1, 3) for x in r.nodes)
    assert r.nodes[4].history == tuple(Txn((1, i + 1), b"zab-%d" % i) for i in range(3))
    # n = 2 with 1 -> 0 cut: 0 never hears 1, nobody reaches the quorum of 2.
    r = simulate(MODEL, _cfg(8, 2, 1500, 4, "1,0"))
    assert [x.role for x in r.nodes] == [0, 0] and r.stats.pending_proposals == 4
    # seed 42: node 0 followed node 1 while node 2 led, missed zab-0, and later took zab-1 (C25)
    r = simulate(MODEL, _cfg(42, 3, 2000, 10))
    assert [t[1] for t in r.nodes[0].history] == [b"zab-%d" % i for i in range(1, 10)]
    assert r.nodes[0].last_committed == (1, 10)


# --- n = 1 ----------------------------------------------------------------------------------------


@given(st.integers(0, 2**64 - 1), st.integers(0, 400), st.integers(0, 60))
@settings(max_examples=40, deadline=None)
def test_single_node_commits_every_proposal(seed, rounds, k):
    r = simulate(MODEL, SimConfig(seed, 1, rounds, k))
    (x,) = r.nodes
    assert x.role == LEADING and x.synced and x.current_epoch == 1
    proposed = k if rounds > 0 else 0
    assert x.history == tuple(Txn((1, i + 1), b"zab-%d" % i) for i in range(proposed))
    assert x.last_committed == ((1, proposed) if proposed else (0, 0))
    assert r.stats.proposed == proposed and r.stats.pending_proposals == k - proposed
    assert r.stats.sent == r.stats.delivered == r.stats.dropped == r.stats.in_flight == 0
    # events: start-up, one per proposal, one heartbeat every 50 ticks from tick 50 on
    assert r.stats.events == 1 + proposed + (max(rounds - 1, 0) // 50)


def test_single_node_event_log_is_exact():
    seen = []

    class Rec(SimObserver):
        def on_step(self, t, kind, node, detail, before, step):
            seen.append((t, kind, node, detail))

    Simulator(MODEL, SimConfig(0, 1, 160, 3), observer=Rec()).run()
    # schedule: 40, 80, 120; heartbeats at 50, 100, 150; C7: propose (2) before on_tick (4)
    assert seen == [(0, "start", 0, None), (40, "propose", 0, b"zab-0"),
                    (50, "heartbeat", 0, None), (80, "propose", 0, b"zab-1"),
                    (100, "heartbeat", 0, None), (120, "propose", 0, b"zab-2"),
                    (150, "heartbeat", 0, None)]


# --- a run, checked step by step against C6 to C10 from the outside -----------------------------


class SpecObserver(SimObserver):
    """Checks each step the simulator reports against the seed document and C6-C10, knowing only
    the formulas in zabmc.sim.rng and the model's public functions; records every send so that
    `finish()` can rebuild the whole delivery order of C8 independently."""

    PHASE = {"start": 0, "propose": 1, "deliver": 2, "timeout": 3, "heartbeat": 3}

    def __init__(self, cfg: SimConfig):
        self.cfg = cfg
        self.sim = None
        self.n = cfg.nodes
        self.deadline = [None] * self.n
        self.last_hb = [0] * self.n
        self.hb_streak = [False] * self.n  # leading and synced without a break since last beat
        self.pos = (-1, -1, -1)  # (tick, phase, node) of the last step, for ordering
        self.sends = []  # (t, src, dst, msg) of messages actually pushed, in push order
        self.dropped = []
        self.delivered = []  # (t, src, dst, msg)
        self.proposals = []
        self.starts = []
        self.tick = -1  # the tick whose step (2) `avail_at_start` describes; start-up is "-1"
        self.avail_now = False  # some node can propose, after the last step
        self.avail_at_start = False  # ... at the start of tick `self.tick` (before step (2))

    def on_step(self, t, kind, node, detail, before, step):
        cfg, sim = self.cfg, self.sim
        if kind == "drop":
            src, dst, msg = detail
            assert (src, dst) in cfg.partition  # C8, C11: only cut links drop
            self.dropped.append((t, src, dst, msg))
            return
        phase = self.PHASE[kind]
        tick = -1 if kind == "start" else t
        if tick != self.tick:
            self.tick, self.avail_at_start = tick, self.avail_now
        # C7 (2): once a node can propose at the start of a tick, every payload scheduled up to
        # that tick has been proposed before that tick's deliveries and on_tick.
        if phase >= 2 and self.avail_at_start:
            sched = proposal_schedule(cfg.rounds, cfg.proposals)
            assert len(self.proposals) == sum(1 for x in sched if x <= t)
        # C7: tick order (1)-(4); on_tick in ascending id
        key = (t, phase, node if phase == 3 else -1)
        assert key >= self.pos, (key, self.pos)
        if phase == 3:
            assert key > self.pos
        self.pos = key
        if kind == "start":
            assert t == 0 and node == len(self.starts)  # C6: ascending id, tick 0
            self.starts.append(node)
            self.deadline[node] = election_deadline(cfg.seed, node, 0)
        elif kind == "propose":
            assert can_propose(before)
            assert all(not can_propose(sim.nodes[j]) for j in range(node))  # lowest id
            assert detail == payload(len(self.proposals))  # oldest first
            assert t >= proposal_schedule(cfg.rounds, cfg.proposals)[len(self.proposals)]
            self.proposals.append((t, node))
        elif kind == "deliver":
            src, dst, msg = detail
            assert node == dst
            self.delivered.append((t, src, dst, msg))
        elif kind == "timeout":
            assert before.role != LEADING  # C10: a leader runs no election timer
            assert t == self.deadline[node]  # fires exactly when due (see the check below)
            self.deadline[node] = election_deadline(cfg.seed, node, t)
        elif kind == "heartbeat":
            assert before.role == LEADING and before.synced
            assert t - self.last_hb[node] >= 50
            if self.hb_streak[node]:
                assert t - self.last_hb[node] == 50  # no beat was skipped
            self.last_hb[node] = t
            self.hb_streak[node] = True
            assert step.node == before
        self.avail_now = any(can_propose(x) for x in sim.nodes)
        if EFF_TIMER in step.effects:
            self.deadline[node] = election_deadline(cfg.seed, node, t)
        if step.node.role != LEADING:
            self.hb_streak[node] = False
        for dst, msg in step.outs:
            if (node, dst) not in cfg.partition:
                self.sends.append((t, node, dst, msg))
        # No non-Leading node may be overdue: it would have timed out at its deadline.
        if len(self.starts) == self.n:
            for j, x in enumerate(sim.nodes):
                if x.role != LEADING and kind != "start":
                    assert self.deadline[j] >= t, (j, self.deadline[j], t)

    def finish(self, result):
        cfg = self.cfg
        assert self.starts == list(range(self.n))
        # C8: rebuild the heap order (delivery_time, src, seq) from the recorded pushes.
        keyed = sorted(
            (t + delivery_delay(cfg.seed, src, dst, t), src, seq, dst, msg)
            for seq, (t, src, dst, msg) in enumerate(self.sends)
        )
        due = [k for k in keyed if k[0] < cfg.rounds]
        assert [(k[0], k[1], k[3], k[4]) for k in due] == self.delivered
        assert len(keyed) - len(due) == result.stats.in_flight
        for j, x in enumerate(result.nodes):
            if x.role != LEADING:
                assert self.deadline[j] >= cfg.rounds
            elif x.synced and self.hb_streak[j]:
                assert cfg.rounds - 1 - self.last_hb[j] < 50
        st_ = result.stats
        assert st_.sent == len(self.sends) + len(self.dropped)
        assert st_.dropped == len(self.dropped)
        assert st_.delivered == len(self.delivered)
        assert st_.proposed == len(self.proposals)


def run_checked(cfg: SimConfig):
    obs = SpecObserver(cfg)
    sim = Simulator(MODEL, cfg, observer=obs)
    obs.sim = sim
    result = sim.run()
    obs.finish(result)
    return result, obs


@pytest.mark.parametrize("seed, nodes, rounds, proposals, part, digest", GOLDEN)
def test_golden_runs_follow_the_tick_loop(seed, nodes, rounds, proposals, part, digest):
    result, _ = run_checked(_cfg(seed, nodes, rounds, proposals, part))
    assert result.digest == digest  # an observer does not change the run


def _partitions(n):
    links = [(a, b) for a in range(n) for b in range(n) if a != b]
    if not links:
        return st.just(frozenset())
    return st.frozensets(st.sampled_from(links), max_size=len(links))


configs = st.integers(1, 7).flatmap(
    lambda n: st.builds(
        SimConfig,
        seed=st.one_of(st.integers(0, 1000), st.integers(0, 2**64 - 1)),
        nodes=st.just(n),
        rounds=st.integers(0, 700),
        proposals=st.integers(0, 25),
        partition=_partitions(n),
    )
)


@given(configs)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_run_follows_the_tick_loop(cfg):
    run_checked(cfg)


def test_pending_proposals_wait_for_a_synced_leader():
    # seed 42, 3 nodes: node 2 becomes established at tick 12 during delivery (3), so payloads
    # scheduled at ticks 1..12 wait and are all proposed at tick 13, oldest first (C7).
    result, obs = run_checked(SimConfig(42, 3, 20, 19))
    assert proposal_schedule(20, 19) == list(range(1, 20))
    assert obs.proposals == [(13, 2)] * 13 + [(t, 2) for t in range(14, 20)]
    assert [t[1] for t in result.nodes[2].history] == [b"zab-%d" % i for i in range(19)]


def test_proposals_go_to_the_lowest_id_synced_leader():
    # seed 62, 5 nodes, 3 <-> 4 cut: nodes 3 and 4 both become established leaders of epoch 1
    # (a leadership violation); every payload goes to node 3, the lower id (C7 (2)).
    seen = []

    class Rec(SpecObserver):
        def on_step(self, t, kind, node, detail, before, step):
            if kind == "propose":
                seen.append((node, [j for j, x in enumerate(self.sim.nodes) if can_propose(x)]))
            super().on_step(t, kind, node, detail, before, step)

    cfg = _cfg(62, 5, 2000, 20, "3,4,4,3")
    obs = Rec(cfg)
    sim = Simulator(MODEL, cfg, observer=obs)
    obs.sim = sim
    r = sim.run()
    obs.finish(r)
    assert seen == [(3, [3, 4])] * 20
    assert len(r.nodes[3].history) == 20 and r.nodes[4].history == ()
    assert r.nodes[3].synced and r.nodes[4].synced


def test_proposals_scheduled_at_tick_zero_are_proposed_at_tick_zero():
    for rounds, k, ticks in ((1, 3, [0, 0, 0]), (3, 5, [0, 1, 1, 2, 2])):
        result, obs = run_checked(SimConfig(0, 1, rounds, k))
        assert [t for t, _ in obs.proposals] == ticks
        assert result.nodes[0].last_committed == (1, k)


def test_rounds_zero_runs_only_the_start_up():
    r = simulate(MODEL, SimConfig(0, 3, 0, 5))
    assert r.stats._asdict() == dict(sent=12, dropped=0, delivered=0, in_flight=12,
                                     pending_proposals=5, proposed=0, ticks=0, events=3)
    assert all(x.role == 0 and x.vote_view[x.id] == x.id for x in r.nodes)


def test_isolated_node_never_leaves_looking():
    cut = "2,0,2,1,0,2,1,2"
    r, obs = run_checked(_cfg(3, 3, 2000, 4, cut))
    assert r.nodes[2].role == 0 and r.nodes[2].current_epoch == 0 and r.nodes[2].history == ()
    assert all(src != 2 and dst != 2 for _, src, dst, _ in obs.delivered)
    assert r.stats.dropped == sum(1 for _, s, d, _ in obs.dropped if 2 in (s, d)) > 0
    assert r.nodes[1].role == LEADING and r.nodes[0].last_committed == (1, 4)


# --- statistics ---------------------------------------------------------------------------------


@given(configs)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_stats_balance(cfg):
    s = simulate(MODEL, cfg).stats
    assert s.sent == s.delivered + s.dropped + s.in_flight
    assert s.proposed + s.pending_proposals == cfg.proposals
    assert s.ticks == cfg.rounds
    assert s.events >= cfg.nodes + s.delivered + s.proposed
    if not cfg.partition:
        assert s.dropped == 0


def test_stats_of_a_partitioned_run():
    s = simulate(MODEL, _cfg(5, 3, 3000, 20, "0,2,2,0")).stats
    assert s._asdict() == dict(sent=2156, dropped=145, delivered=2010, in_flight=1,
                               pending_proposals=0, proposed=20, ticks=3000, events=2105)


# --- configuration checks -----------------------------------------------------------------------


@pytest.mark.parametrize("cfg", [
    SimConfig(0, 0, 10, 0), SimConfig(0, 10, 10, 0), SimConfig(0, 3, -1, 0),
    SimConfig(0, 3, 10, -1), SimConfig(-1, 3, 10, 0), SimConfig(2**64, 3, 10, 0),
    SimConfig(0, 3, 10, 0, frozenset({(0, 3)})), SimConfig(0, 3, 10, 0, frozenset({(-1, 0)})),
])
def test_invalid_configs_are_usage_errors(cfg):
    with pytest.raises(UsageError):
        cfg.validate()
    with pytest.raises(UsageError):
        Simulator(MODEL, cfg)


def test_extreme_valid_configs():
    for cfg in (SimConfig(0, 1, 0, 0), SimConfig(2**64 - 1, 9, 5, 0), SimConfig(0, 9, 10, 3)):
        assert cfg.validate() is cfg
        simulate(MODEL, cfg)


# --- determinism ---------------------------------------------------------------------------------


@given(configs)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_runs_are_deterministic(cfg):
    a = simulate(MODEL, cfg)
    b = simulate(MODEL, cfg)
    assert a.dump == b.dump and a.stats == b.stats and a.nodes == b.nodes


def _cli_argv(cfg: SimConfig) -> list[str]:
    argv = ["simulate", "--seed", str(cfg.seed), "--nodes", str(cfg.nodes), "--rounds",
            str(cfg.rounds), "--proposals", str(cfg.proposals)]
    if cfg.partition:
        argv += ["--partition", ",".join(f"{a},{b}" for a, b in sorted(cfg.partition))]
    return argv


@given(configs)
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_runs_are_deterministic_across_processes(cfg):
    want = simulate(MODEL, cfg).digest
    for hashseed in ("0", "12345"):  # set/dict ordering must not leak into the run
        env = dict(os.environ, PYTHONHASHSEED=hashseed)
        out = subprocess.run(
            [sys.executable, "-c", "from zabmc.cli import main; main()", *_cli_argv(cfg)],
            capture_output=True, env=env, timeout=120,
        )
        assert out.returncode == 0, out.stderr
        assert out.stdout.decode() == want


def test_console_script_prints_the_golden_digest():
    seed, nodes, rounds, proposals, part, digest = GOLDEN[13]
    out = subprocess.run([need_console_script(), *_cli_argv(_cfg(seed, nodes, rounds, proposals, part))],
                         capture_output=True, timeout=120)
    assert out.returncode == 0 and out.stdout == digest.encode() and out.stderr == b""


# --- the canonical dump (C27) -------------------------------------------------------------------


def test_dump_layout_byte_by_byte():
    a = fresh_node(1, 2)._replace(role=2, current_epoch=3, accepted_epoch=4,
                                  history=(Txn((3, 1), b"ab"), Txn((3, 2), b"")),
                                  last_committed=(3, 1))
    b = fresh_node(0, 2)
    want = (b"DSEZAB01" + struct.pack("<I", 2)
            + struct.pack("<IBIIIIIII", 0, 0, 0, 0, 0, 0, 0, 0, 0)
            + struct.pack("<IBIIIIIII", 1, 2, 3, 4, 3, 2, 3, 1, 2)
            + struct.pack("<III", 3, 1, 2) + b"ab" + struct.pack("<III", 3, 2, 0))
    assert dump([a, b]) == want  # ascending id whatever the input order
    assert MODEL.dump((b, a)) == want
    assert parse_dump(want) == [
        dict(id=0, role=0, current_epoch=0, accepted_epoch=0, last_zxid=(0, 0),
             last_committed=(0, 0), history=()),
        dict(id=1, role=2, current_epoch=3, accepted_epoch=4, last_zxid=(3, 2),
             last_committed=(3, 1), history=(Txn((3, 1), b"ab"), Txn((3, 2), b""))),
    ]


def test_parse_dump_rejects_garbage():
    good = dump([fresh_node(0, 1)])
    with pytest.raises(ValueError):
        parse_dump(b"DSEZAB02" + good[8:])
    with pytest.raises(ValueError):
        parse_dump(good + b"\0")


@given(configs)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_dump_parses_back_into_the_node_states(cfg):
    r = simulate(MODEL, cfg)
    parsed = parse_dump(r.dump)
    assert len(parsed) == cfg.nodes
    for p, x in zip(parsed, r.nodes):
        assert p == dict(id=x.id, role=x.role, current_epoch=x.current_epoch,
                         accepted_epoch=x.accepted_epoch, last_zxid=last_zxid(x),
                         last_committed=x.last_committed, history=x.history)
    assert dump(r.nodes) == r.dump
