"""`zabmc show` and `--html` (issue #20 point 3): counterexamples drawn as sequence charts,
checked in a real browser (headless Chromium, Debian's `chromium`; `make test` installs it)."""

from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import subprocess

import pytest

from conftest import need
from zabmc.explore.trace import load, replay
from zabmc.report import html as H

CORPUS = pathlib.Path(__file__).parent / "corpus"
ZK4646 = CORPUS / "zk" / "zookeeper-4646.trace.json"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture
def chromium():
    if CHROMIUM is None:
        need("chromium", "headless Chromium (Debian's chromium) is not installed here; "
                         "`make install-test` installs it where apt-get can")
    return CHROMIUM


def test_show_writes_one_self_contained_page(tmp_path, cli):
    out = tmp_path / "bug.html"
    code, stdout, _ = cli(["show", str(ZK4646), "-o", str(out)])
    assert code == 0 and stdout.strip() == f"wrote {out}: 29 steps, primary-integrity at step 29"
    page = out.read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)  # nothing fetched
    assert page.count('class="row"') == 30 and page.count('class="lane"') == 3
    assert page.count('class="msg"') == 20  # every delivered message is an arrow
    assert page.count('class="lost"') == 1  # node 1's UPTODATE, cut off by node 0's crash
    assert "step 29: primary-integrity" in page and "Witnesses: node(s) 0, 1" in page
    states = json.loads(re.search(r'<script type="application/json" id="states">(.*?)</script>',
                                  page, re.S).group(1))
    assert len(states) == 30 and states[29]["nodes"][0]["role"] == "Leading"


def test_html_on_check_and_replay(tmp_path, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    args = ["check", "--nodes", "2", "--network", "bag", "--max-timeouts", "1", "--proposals",
            "2", "--depth", "11", "--all", "-q", "--html", "bug.html"]
    code, out, _ = cli(args)
    assert code == 10
    # one step breaks three properties: one picture, naming all three
    assert "picture of the local-primary-order counterexample written to bug.html" in out
    page = (tmp_path / "bug.html").read_text()
    assert "local-primary-order, agreement, total-order (11 steps" in page
    code, out, _ = cli(["replay", "-q", str(ZK4646), "--html", "r.html"])
    assert code == 10 and (tmp_path / "r.html").read_text().count('class="row"') == 30


def test_a_page_stays_readable_at_60_steps_on_5_nodes(tmp_path):
    """A 60-event trace on 5 nodes: the rows keep their height and the page its width."""
    from zabmc.explore.env import Env, ExploreConfig
    from zabmc.explore.trace import Trace
    from zabmc.invariants import Checker
    from zabmc.core.model import get_model

    env = Env(get_model("db19"), ExploreConfig(nodes=5, network="bag", max_timeouts=3,
                                               proposals=3, depth=60), Checker(()))
    import random

    rng = random.Random(3)
    s, _ = env.initial()
    states, events = [s], []
    for _ in range(60):
        ev, s, _ = rng.choice(env.successors(s))
        events.append(ev)
        states.append(s)
    page = H.render(Trace(env, events, states, None, None))
    width = int(re.search(r'<svg [^>]*width="(\d+)"', page).group(1))
    height = int(re.search(r'<svg [^>]*height="(\d+)"', page).group(1))
    assert page.count('class="row"') == 61 and page.count('class="lane"') == 5
    assert width <= 1400 and height == int(H._row_y(61) + 10 + 40 + 48)


def test_chromium_draws_lanes_and_arrows_where_the_trace_says(tmp_path, chromium):
    from PIL import Image

    trace = replay(load(str(ZK4646))).trace
    page = tmp_path / "bug.html"
    page.write_text(H.render(trace))
    png = tmp_path / "bug.png"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--force-device-scale-factor=1", "--window-size=1700,1000",
                    f"--screenshot={png}", page.as_uri()],
                   check=True, capture_output=True, timeout=120)
    img = Image.open(png).convert("RGB")
    w, h = img.size
    px = img.load()

    def near(c, want, tol=40):
        return all(abs(a - b) <= tol for a, b in zip(c, want))

    def rgb(hexcolor):
        return tuple(int(hexcolor[k:k + 2], 16) for k in (1, 3, 5))

    colours = {px[x, y] for x in range(0, w, 7) for y in range(0, h, 7)}
    assert len(colours) > 20  # not blank
    # the lanes: long vertical runs of the lane colour, three of them, LANE_W apart
    lane_cols = [x for x in range(w) if sum(near(px[x, y], (36, 41, 47), 20)
                                            for y in range(0, h, 2)) > 250]
    lanes = []
    for x in lane_cols:
        if lanes and x - lanes[-1][-1] <= 2:
            lanes[-1].append(x)
        else:
            lanes.append([x])
    centres = [sum(c) / len(c) for c in lanes]
    assert len(centres) == 3
    assert all(abs((b - a) - H.LAYOUT["LANE_W"]) <= 2 for a, b in zip(centres, centres[1:]))
    # the violating row: the highlighted band, one row high, at row 29
    x0 = int(centres[0]) - 40
    band = [y for y in range(h) if near(px[x0, y], rgb(H.HILITE), 8)]
    assert band and abs(len(band) - H.LAYOUT["ROW_H"]) <= 2
    top = band[0] - H._row_y(29) + H.LAYOUT["ROW_H"] / 2  # where the SVG's y = 0 lies
    left = centres[0] - H._lane_x(0)

    def at(x, y):
        return int(round(left + x)), int(round(top + y))

    def some(x, y, want):
        cx, cy = at(x, y)
        return any(near(px[cx + dx, cy + dy], want) for dx in (-2, -1, 0, 1, 2)
                   for dy in (-2, -1, 0, 1, 2))

    arrows = H._arrows(trace)
    delivered = [a for a in arrows if a[4] == "deliver"]
    assert len(delivered) == 20
    for src, dst, a, b, _ in delivered:  # every message's arrow runs from send to delivery
        x1, y1, x2, y2 = H._lane_x(src), H._row_y(a), H._lane_x(dst), H._row_y(b)
        for f in (0.3, 0.5, 0.7):
            assert some(x1 + f * (x2 - x1), y1 + f * (y2 - y1), rgb(H.ARROW)), (src, dst, a, b)
    (src, dst, a, b, _), = [a for a in arrows if a[4] == "lost"]
    assert some((H._lane_x(src) + H._lane_x(dst)) / 2, H._row_y(b), rgb(H.LOST))  # the cross
    assert some(H._lane_x(0), (H._row_y(20) + H._row_y(21)) / 2, rgb(H.DOWN_BAR))  # node 0 down


LASSO = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "reports",
                     "data", "liveness", "zab-nodes-3-proposals-1-max-drops-1-depth-80.json")


def test_chromium_draws_a_lasso_with_its_loop(tmp_path, chromium):
    """The eventually-commit lasso of reports/data/liveness (29 steps, faults stop after 26, the loop
    is steps 27-29): the loop's rows are tinted from row 27 to the end, the rows before are not,
    and the red bracket back to the loop's start runs beside them."""
    from PIL import Image

    trace = replay(load(LASSO)).trace
    assert (trace.lasso["faults_stop"], trace.lasso["loop_start"], len(trace.events)) == \
        (26, 26, 29)
    page = tmp_path / "lasso.html"
    page.write_text(H.render(trace))
    png = tmp_path / "lasso.png"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--force-device-scale-factor=1", "--window-size=1700,1200",
                    f"--screenshot={png}", page.as_uri()],
                   check=True, capture_output=True, timeout=120)
    img = Image.open(png).convert("RGB")
    w, h = img.size
    px = img.load()

    def near(c, want, tol=8):
        return all(abs(a - b) <= tol for a, b in zip(c, want))

    def rgb(hexcolor):
        return tuple(int(hexcolor[k:k + 2], 16) for k in (1, 3, 5))

    x = 60  # left of the first lane, right of the bracket: only row fills here
    tinted = [y for y in range(h) if near(px[x, y], rgb(H.LOOP))]
    assert tinted
    rows = H.LAYOUT["ROW_H"]
    # three tinted rows, contiguous: the loop
    assert abs((tinted[-1] - tinted[0] + 1) - 3 * rows) <= 3
    assert len(tinted) >= 3 * rows - 6
    # the bracket: a vertical red run left of the lanes, along the loop's rows
    red = max(([y for y in range(h) if near(px[x, y], rgb(H.LOST), 40)] for x in range(20, 80)),
              key=len)
    assert len(red) >= 2 * rows
    assert tinted[0] - rows <= red[0] <= tinted[0] + rows
    assert abs(red[-1] - tinted[-1]) <= rows


# --- `zabmc show` draws only what replay confirms (issue #37) --------------------------------------
LEADER_LASSO = pathlib.Path(LASSO).parent / "zab-1419-nodes-3-proposals-0-depth-80.json"


def _edited(tmp_path, src, edit) -> pathlib.Path:
    data = json.loads(pathlib.Path(src).read_text())
    edit(data)
    out = tmp_path / "edited.json"
    out.write_text(json.dumps(data))
    return out


def _relabel_dead_end(d):
    d["liveness"].update(kind="dead-end", loop_start=None)


def _cut_events(d):
    del d["events"][-1], d["states"][-1]


@pytest.mark.parametrize("src,edit,why", [
    (LASSO, _relabel_dead_end, "an event is enabled in the last state: not a dead end"),
    (LASSO, lambda d: d["liveness"].update(loop_start=27),
     "the last state is not the state after step 27"),
    (LASSO, _cut_events, "the last state is not the state after step 26"),
    (ZK4646, lambda d: d["violation"].update(step=28),
     "recorded violation primary-integrity at step 28, replay found primary-integrity at step 29"),
    (ZK4646, lambda d: d["violation"].update(property="agreement"),
     "recorded violation agreement at step 29, replay found none"),
])
def test_show_refuses_what_replay_does_not_confirm(tmp_path, cli, src, edit, why):
    """Each edit makes `zabmc replay` say NOT confirmed (exit 1); `show` used to draw the file's
    claim anyway and exit 0. Now: one line, exit 2, nothing written."""
    trace = _edited(tmp_path, src, edit)
    code, out, _ = cli(["replay", "-q", str(trace)])
    assert code == 1 and "NOT confirmed" in out
    page = tmp_path / "p.html"
    code, out, err = cli(["show", str(trace), "-o", str(page)])
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith(f"zabmc: error: {trace} is not confirmed "
                                                   "by replay (")
    assert why in err
    assert not page.exists()


@pytest.mark.parametrize("message", [42, None, "a message of the file's own"])
def test_a_lasso_is_drawn_with_the_kernels_message_not_the_files(tmp_path, cli, message):
    """The `message` of a lasso file is derived from the confirmed shape: a number, a missing
    one (exit 1, internal error, before) or any other text in the file changes nothing."""
    def edit(d):
        if message is None:
            del d["liveness"]["message"]
        else:
            d["liveness"]["message"] = message

    trace = _edited(tmp_path, LEADER_LASSO, edit)
    page = tmp_path / "p.html"
    code, out, err = cli(["show", str(trace), "-o", str(page)])
    assert (code, err) == (0, "")
    assert out == f"wrote {page}: 83 steps, an eventually-leader lasso (cycle)\n"
    text = page.read_text()
    assert ("eventually-leader fails: the fault-free run loops forever from step 2 without "
            "reaching the goal") in text
    assert "of the file&#x27;s own" not in text and "of the file's own" not in text
    code, out, _ = cli(["replay", "-q", str(trace)])
    assert code == 10 and "confirmed: eventually-leader fails" in out


def test_a_counterexample_ends_with_the_command_that_draws_it(tmp_path, cli, monkeypatch):
    """The output named `zabmc replay` but never `zabmc show` (#37); the hint's command works."""
    monkeypatch.chdir(tmp_path)
    code, out, _ = cli(["check", "--nodes", "2", "--network", "bag", "--max-timeouts", "1",
                        "--proposals", "2", "--depth", "11", "-q", "--trace-out", "bug.json"])
    assert code == 10
    hint = out.splitlines()[-1]
    # three properties break at step 11, each with its file: the hint names the first
    assert hint == ("draw it as a sequence chart: zabmc show bug-local-primary-order.json -o "
                    "bug-local-primary-order.html")
    code, out, _ = cli(hint.split(": ", 1)[1].split()[1:])
    assert code == 0 and out.startswith("wrote bug-local-primary-order.html: 11 steps")
    code, out, _ = cli(["check", "--liveness", "--model", "zab-1419", "--proposals", "0",
                        "--depth", "80", "-q"])
    assert code == 10 and out.splitlines()[-1] == (
        "draw it as a sequence chart: zabmc show zabmc-zab-1419-eventually-leader.lasso.json "
        "-o zabmc-zab-1419-eventually-leader.lasso.html")


def test_a_trace_sent_to_dev_null_gets_no_replay_or_drawing_hint(tmp_path, cli, monkeypatch):
    """`--trace-out /dev/null` (the benchmarks' way to keep no file) said "it replaced the file of
    an earlier run" and offered `zabmc replay /dev/null` and `zabmc show /dev/null -o
    /dev/null.html`, none of which is so; a regular file keeps all three."""
    monkeypatch.chdir(tmp_path)
    args = ["check", "--model", "zk", "--network", "fifo", "--nodes", "3", "--proposals", "1",
            "--depth", "30", "--invariant", "sync-exception", "-q", "--trace-out"]
    code, out, _ = cli(args + [os.devnull])
    assert code == 10
    assert out.splitlines()[-1] == f"trace for sync-exception written to {os.devnull}"
    # several traces go to /dev/null too, not to new files beside it (/dev/null-prefix.json)
    code, out, _ = cli(["check", "--nodes", "2", "--network", "bag", "--max-timeouts", "1",
                        "--proposals", "2", "--depth", "11", "-q", "--trace-out", os.devnull])
    assert code == 10
    assert [line for line in out.splitlines() if "written to" in line] == [
        f"trace for {p} written to {os.devnull}"
        for p in ("local-primary-order", "agreement", "total-order")]
    for _ in range(2):
        code, out, _ = cli(args + ["t.json"])
        assert code == 10
    assert out.splitlines()[-2:] == [
        "trace for sync-exception written to t.json (it replaced the file of an earlier run) "
        "(replay: zabmc replay t.json)",
        "draw it as a sequence chart: zabmc show t.json -o t.html"]


def test_every_corpus_trace_and_lasso_has_its_picture_in_the_reports():
    """reports/pictures (benchmarks/pictures.py) draws each regression trace of tests/corpus and
    each liveness lasso of reports/data/liveness; its index lists them all. Before this test, 16
    traces and 13 lassos added since the last drawing had none."""
    import pathlib

    root = pathlib.Path(__file__).resolve().parent.parent
    want = {f"{p.parent.name}-{p.name[:-len('.trace.json')]}"
            for p in (root / "tests" / "corpus").glob("*/*.trace.json")}
    want |= {f"liveness-{p.stem}" for p in (root / "reports" / "data" / "liveness").glob("*.json")}
    pics = root / "reports" / "pictures"
    index = (pics / "README.md").read_text()
    missing = sorted(s for s in want if not (pics / f"{s}.html").exists()
                     or f"[{s}]({s}.html)" not in index)
    assert not missing, f"run python benchmarks/pictures.py: no picture of {missing}"


def test_a_zk_headline_names_its_model_release_lost_write_and_known_issues(tmp_path, cli,
                                                                           chromium):
    """Issue #62 item 7. The headline of a zk data loss named `sane-history` alone and, under it,
    its source "db-19 model"; it now names the model with its release, says the lost write in
    words, and lists the known issues whose windows the run passes through (4643's and 4646's,
    both opened by node 0's NEWLEADER at step 39: tests/test_issues_named.py), as Chromium
    renders the page."""
    from html.parser import HTMLParser

    out = tmp_path / "lost.html"
    code, _, _ = cli(["show", str(CORPUS / "zk" / "zookeeper-4643-acked.trace.json"), "-o",
                      str(out)])
    assert code == 0 and "db-19" not in out.read_text()
    dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                          out.as_uri()], check=True, capture_output=True, text=True,
                         timeout=120).stdout

    class Texts(HTMLParser):
        def __init__(self):
            super().__init__()
            self.h1, self.what, self._in = "", [], None

        def handle_starttag(self, tag, attrs):
            if tag == "h1":
                self._in = "h1"
            elif tag == "ul" and ("id", "what") in attrs:
                self._in = "what"
            elif tag == "li" and self._in == "what":
                self.what.append("")

        def handle_endtag(self, tag):
            if tag in ("h1", "ul"):
                self._in = None

        def handle_data(self, data):
            if self._in == "h1":
                self.h1 += data
            elif self._in == "what" and self.what:
                self.what[-1] += data

    p = Texts()
    p.feed(dom)
    assert p.h1 == ("zabmc: a lost write, sane-history (52 steps, model zk (ZooKeeper 3.7.0's ZAB "
                    "1.0 (FLE outcome, DIFF/TRUNC sync, asynchronous transaction log)), "
                    "network fifo)")
    assert p.what[0] == ("a lost write at step 48: node 1 delivered 1.2 as committed, and its log "
                         "no longer holds it (it ends at 1.1)")
    assert [w.split(" (")[0] for w in p.what[1:]] == [
        "known issue ZOOKEEPER-4643: the run enters its window at step 39",
        "known issue ZOOKEEPER-4646: the run enters its window at step 39"]
    # a db-19 counterexample: its own model in the headline, and no issue named or denied
    page = H.render(replay(load(str(CORPUS / "db19" / "fifo-crash-two-leaders.trace.json"))).trace)
    assert 'id="what"' not in page and "known issue" not in page
    assert re.search(r"<h1>zabmc: leadership \(38 steps, model db19 \(the db-19 lab design", page)
