"""The visited set of the breadth-first searches (`SortedRunSet`) against a Python set.

Fingerprints are drawn from a few 8-byte prefixes, so that many share a prefix, within a run and
across runs, and the exact fallbacks of the prefix search and of the merge run too.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from zabmc.explore.seen import FP_DTYPE, SortedRunSet, join64, split64

PREFIXES = [b"\x00" * 8, b"\x00" * 7 + b"\x01", b"\x7f" * 8, b"\x80" + b"\x00" * 7, b"\xff" * 8]
fingerprints = st.builds(lambda p, s: p + s, st.sampled_from(PREFIXES),
                         st.binary(min_size=8, max_size=8)
                         | st.sampled_from([b"\x00" * 8, b"\x01" * 8, b"\xff" * 8]))
distinct_prefix = st.binary(min_size=16, max_size=16)


def arr(fps) -> np.ndarray:
    return np.frombuffer(b"".join(fps), FP_DTYPE) if fps else np.empty(0, FP_DTYPE)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(fingerprints | distinct_prefix, max_size=40), max_size=12),
       st.lists(fingerprints, max_size=30), st.booleans())
def test_add_and_contains_are_a_sets(batches, probe, as_run):
    """Each batch's mask is "not in the set yet, and first in the batch"; membership, size and
    the sorted array are the set's. Batches given as sorted runs (`_push`, as a resumed search
    loads its visited set) count as inserted."""
    s, ref = SortedRunSet(), set()
    for batch in batches:
        if as_run:
            fresh = sorted(set(batch) - ref)
            s._push(arr(fresh))
            ref |= set(fresh)
            continue
        want, seen_here = [], set()
        for fp in batch:
            want.append(fp not in ref and fp not in seen_here)
            seen_here.add(fp)
        assert s.add_batch(batch).tolist() == want
        ref |= seen_here
    assert s.contains_batch(probe).tolist() == [fp in ref for fp in probe]
    assert [fp in s for fp in probe[:3]] == [fp in ref for fp in probe[:3]]
    assert len(s) == len(ref)
    assert s.to_array().tobytes() == b"".join(sorted(ref))
    assert s.nbytes == 16 * len(ref)


def test_a_prefix_shared_inside_a_run_and_across_runs():
    """Three fingerprints with one prefix, two in one run and the third in a later batch, then
    merged: the prefix search alone would find only the first of each run."""
    a, b, c = (b"\x05" * 8 + bytes([i]) * 8 for i in (1, 3, 2))
    s = SortedRunSet()
    assert s.add_batch([b, a]).tolist() == [True, True]
    assert s.contains_batch([a, b, c]).tolist() == [True, True, False]
    assert s.add_batch([c, a]).tolist() == [True, False]  # merged with the first run
    assert len(s.runs) == 1
    assert s.contains_batch([c, b, a]).tolist() == [True, True, True]
    assert s.to_array().tobytes() == a + c + b


def test_split_and_join_keep_the_byte_order():
    fps = sorted([b"\x80" + b"\x00" * 15, b"\x7f" + b"\xff" * 15, b"\x00" * 15 + b"\x80"])
    hi, lo = split64(arr(fps))
    assert hi.dtype == np.uint64 and list(zip(hi, lo)) == sorted(zip(hi, lo))
    assert join64(hi, lo).tobytes() == b"".join(fps)


def test_the_seen_bench_times_two_sets_that_answer_alike(capsys, monkeypatch):
    """benchmarks/seen_bench.py fills the reference commit's set and this tree's with the same
    fingerprints and refuses to time two that answer a lookup differently."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchmarks import seen_bench

    assert seen_bench.main(["--size", "3000", "--repeat", "1", "--lookups", "1",
                            "--no-write"]) == 0
    text = capsys.readouterr().out
    assert "| look up 1,000 candidates |" in text and "| look up 20,000 candidates |" in text
    assert "| fill with 3,000, 20,000 at a time |" in text

    from zabmc.explore import seen

    class Wrong(seen.SortedRunSet):  # forgets the last fingerprint of every lookup
        def contains_batch(self, fps):
            got = super().contains_batch(fps)
            got[-1] = not got[-1]
            return got

    broken = type("broken", (), {"SortedRunSet": Wrong})
    monkeypatch.setattr(seen_bench, "load_seen", lambda ref: broken if ref else seen)
    try:
        seen_bench.main(["--size", "3000", "--repeat", "1", "--lookups", "1", "--no-write"])
    except SystemExit as e:
        assert "disagree" in str(e)
    else:
        raise AssertionError("the bench timed two sets that disagree")


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(fingerprints | distinct_prefix, max_size=40), max_size=12))
def test_add_unseen_answers_as_add_batch_on_fingerprints_not_in_the_set(batches):
    """`add_unseen` (the parallel merge's: no fingerprint of the batch is in the set) gives
    `add_batch`'s mask, and leaves the same set, also when fingerprints of a batch share a prefix
    or repeat."""
    a, b = SortedRunSet(), SortedRunSet()
    ref: set = set()
    for batch in batches:
        batch = [fp for fp in batch if fp not in ref]
        assert a.add_unseen(batch).tolist() == b.add_batch(batch).tolist()
        ref |= set(batch)
        assert len(a) == len(b) == len(ref)
        assert a.to_array().tobytes() == b"".join(sorted(ref))
    for run in a.runs:  # every run sorted by all 16 bytes, its shared prefixes flagged
        fps = sorted(zip(run.hi.tolist(), run.lo.tolist()))
        assert list(zip(run.hi.tolist(), run.lo.tolist())) == fps
        assert run.dup == (len(set(run.hi.tolist())) < len(run))
    probe = [fp for batch in batches for fp in batch][:20] + [b"\x42" * 16]
    assert a.contains_batch(probe).tolist() == [fp in ref for fp in probe]


def test_add_unseen_keeps_the_first_of_repeats_and_sorts_by_the_whole_fingerprint():
    """Repeats sharing nothing with others keep their first occurrence; then two values with one
    prefix send the batch to the 16-byte order."""
    x, y, z = (bytes([i]) * 16 for i in (9, 3, 6))
    s = SortedRunSet()
    assert s.add_unseen([x, y, x, z, y]).tolist() == [True, True, False, True, False]
    assert s.to_array().tobytes() == y + z + x
    p, q = b"\x05" * 8 + b"\x02" * 8, b"\x05" * 8 + b"\x01" * 8
    assert s.add_unseen([p, q, p]).tolist() == [True, True, False]
    assert s.contains_batch([p, q, x]).tolist() == [True, True, True]
    assert s.to_array().tobytes() == y + q + p + z + x
