"""What a real ensemble shows after tests/corpus/zk/truncate-keeps-uncommitted.schedule.json, on
any release that has the TRUNC finding (docs/real-zookeeper.md; reports/zookeeper.md, "The TRUNC
finding on 3.9.5"): tests/test_real_run.py checks it on Debian's 3.8.0, tests/test_real_releases.py
on the newest release from Maven Central."""

from __future__ import annotations


def assert_the_uncommitted_write_is_kept(out: dict) -> None:
    """`zabmc real --json`'s result: /w-1, never acknowledged, is kept by server 3 alone beside
    /w-2 (0x300000001), which all three have; agreement, prefix and acknowledged-durable break."""
    w1, w2 = out["writes"]
    assert (w1["path"], w2["path"]) == ("/w-1", "/w-2") and w1["outcome"] != "acknowledged"
    assert (w2["outcome"], w2["zxid"]) == ("acknowledged", "0x300000001")
    assert out["servers"]["3"]["effective_history"] == ["0x100000001 /w-1", "0x300000001 /w-2"]
    for s in "12":
        assert out["servers"][s]["effective_history"] == ["0x300000001 /w-2"]
    assert {v["property"] for v in out["violations"]} == {"agreement", "prefix",
                                                           "acknowledged-durable"}
