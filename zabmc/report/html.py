"""A counterexample as one self-contained HTML page: a message sequence chart in inline SVG.

One lane per node, one row per event. Each message is an arrow from the row that sent it to the
row that delivered it (a cross where it was dropped or lost at a crash; a dashed stub down to the
end when it is still in flight). A down node's lane is a grey bar; role and epoch changes are
written on the lanes; the violating row is highlighted with the property's statement, message
and witnesses; below each lane, the node's delivered transactions. Hovering a row shows the whole
state after it in the side panel (an inline script; every byte is in the file, nothing is
fetched). The headline names the model with its release and says a lost write as one; under it,
the known issues whose windows the run passes through, or that none matches (zabmc.report.words).

`LAYOUT` holds the geometry; tests read it to find lanes and rows in a screenshot.
"""

from __future__ import annotations

import html
import json
from collections import Counter

from zabmc.core.events import DOWN
from zabmc.invariants import PROPERTIES

from .simtrace import ROLE, _zx
from .words import headline_words, issue_lines, model_line

#: geometry (pixels): lanes start at LANE_X0 and are LANE_W apart; row k (0 = initial state) is
#: centred at TOP + k * ROW_H + ROW_H / 2
LAYOUT = {"LANE_X0": 90, "LANE_W": 150, "TOP": 70, "ROW_H": 24, "TEXT_W": 560}
ARROW = "#1f6feb"
LOST = "#d1242f"
DOWN_BAR = "#8c959f"
HILITE = "#ffd8d3"
LOOP = "#fff1e5"  # the rows of a lasso's loop


def _lane_x(i: int) -> int:
    return LAYOUT["LANE_X0"] + i * LAYOUT["LANE_W"]


def _row_y(k: int) -> float:
    return LAYOUT["TOP"] + k * LAYOUT["ROW_H"] + LAYOUT["ROW_H"] / 2


def _in_flight(env, net) -> Counter:
    """The messages in flight as a multiset of (src, dst, msg)."""
    c: Counter = Counter()
    if env.fifo:
        n = env.n
        for k, q in enumerate(net):
            for m in q:
                c[(k // n, k % n, m)] += 1
    else:
        for key, cnt in net:
            c[key] += cnt
    return c


def _arrows(trace):
    """(src, dst, sent_row, end_row, how) for every message: how is 'deliver', 'drop', 'lost'
    (cut off by a crash) or 'flight' (still in flight at the end)."""
    env = trace.env
    pending: dict = {}  # (src, dst, msg) -> [sent rows], oldest first
    out = []
    prev = _in_flight(env, trace.states[0].net)
    for key, cnt in prev.items():
        pending.setdefault(key, []).extend([0] * cnt)
    for k, (ev, s) in enumerate(zip(trace.events, trace.states[1:]), 1):
        now = _in_flight(env, s.net)
        consumed = Counter()
        if ev.fate is not None:  # it takes the message off the network: its arrow ends here
            key = (ev.src, ev.dst, ev.msg)
            consumed[key] += 1
            out.append((ev.src, ev.dst, pending[key].pop(0), k, ev.kind))
        # messages gone without a delivery or drop: cut off by a crash
        for key, cnt in (prev - consumed - now).items():
            for _ in range(cnt):
                out.append((key[0], key[1], pending[key].pop(0), k, "lost"))
        for key, cnt in (now - (prev - consumed)).items():
            pending.setdefault(key, []).extend([k] * cnt)
        prev = now
    last = len(trace.events)
    for key, rows in pending.items():
        for r in rows:
            out.append((key[0], key[1], r, last + 1, "flight"))
    return out


def _delivered(node) -> str:
    lc = getattr(node, "last_committed", None)
    hist = getattr(node, "history", ())
    if lc is None:
        return ""
    return " ".join(_zx(t[0]) for t in hist if t[0] <= lc) or "(none)"


def render(trace, others=()) -> str:
    """The page for `trace` (and `others`: traces of other properties along the same events)."""
    env, model, n = trace.env, trace.env.model, trace.env.n
    L = LAYOUT
    steps = len(trace.events)
    marks: dict = {}
    for t in (trace,) + tuple(others):
        if t.violation is not None:
            marks.setdefault(t.violation_step, []).append(t.violation)
    text_x = _lane_x(n - 1) + 100
    width = text_x + L["TEXT_W"]
    footer_y = _row_y(steps + 1) + 10
    height = int(footer_y + 40 + 16 * 3)
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="12">',
           '<defs><marker id="head" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
           f'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
           f'fill="{ARROW}"/></marker></defs>',
           f'<rect x="0" y="0" width="{width}" height="{height}" fill="#ffffff"/>']
    lasso = getattr(trace, "lasso", None)
    loop_from = lasso["loop_start"] if lasso and lasso["loop_start"] is not None else None
    _rows_and_lanes(svg, trace, marks, loop_from, width)
    _downs_and_roles(svg, trace)
    _messages(svg, trace)
    _row_texts(svg, trace, marks, text_x)
    if lasso is not None:
        _lasso_marks(svg, trace, lasso, loop_from, width, text_x)
    # delivered transactions under each lane
    last = trace.states[-1]
    for i, x in enumerate(last.nodes):
        svg.append(f'<text x="{_lane_x(i)}" y="{footer_y + 14}" text-anchor="middle" '
                   f'font-size="11">delivered: {html.escape(_delivered(x))}</text>')
    svg.append("</svg>")
    notes, names = _notes(trace, marks, lasso, loop_from)
    states = [env.state_json(s) for s in trace.states]
    words = headline_words(trace)
    what = f"{words[0]}, {names}" if words else names
    title = f"zabmc: {what} ({steps} steps, model {model.name}, network {env.config.network})"
    # the headline names the model with its release; under it what the violation is in words,
    # and the known issues whose windows the run passes through
    headline = (f"zabmc: {what} ({steps} steps, model {model_line(model)}, network "
                f"{env.config.network})")
    said = ([f"{words[0]} at step {trace.violation_step}: {words[1]}"] if words else [])
    return _page(title, notes, svg, states, headline, said + issue_lines(trace))


def _rows_and_lanes(svg, trace, marks, loop_from, width) -> None:
    """Hover targets, the violating row highlighted, a lasso's loop tinted; the lanes."""
    L, n, steps = LAYOUT, trace.env.n, len(trace.events)
    # rows: hover targets, the violating one highlighted, a lasso's loop tinted
    for k in range(steps + 1):
        y = _row_y(k) - L["ROW_H"] / 2
        fill = HILITE if k in marks else ("#f6f8fa" if k % 2 else "#ffffff")
        if loop_from is not None and k > loop_from:
            fill = LOOP
        svg.append(f'<rect class="row" data-k="{k}" x="0" y="{y}" width="{width}" '
                   f'height="{L["ROW_H"]}" fill="{fill}"/>')
    # lanes and their headers
    for i in range(n):
        x = _lane_x(i)
        svg.append(f'<text x="{x}" y="{L["TOP"] - 30}" text-anchor="middle" '
                   f'font-weight="bold">node {i}</text>')
        svg.append(f'<line class="lane" x1="{x}" y1="{L["TOP"] - 20}" x2="{x}" '
                   f'y2="{_row_y(steps + 1)}" stroke="#24292f" stroke-width="2"/>')


def _downs_and_roles(svg, trace) -> None:
    """Grey bars while a node is down; role and epoch changes on the lanes."""
    n, steps = trace.env.n, len(trace.events)
    # down bars
    for i in range(n):
        start = None
        for k, s in enumerate(trace.states):
            down = s.budgets[DOWN] >> i & 1
            if down and start is None:
                start = k
            if (not down or k == steps) and start is not None:
                end = k if not down else steps + 1
                svg.append(f'<rect class="down" x="{_lane_x(i) - 6}" y="{_row_y(start)}" '
                           f'width="12" height="{_row_y(end) - _row_y(start)}" '
                           f'fill="{DOWN_BAR}"/>')
                start = None
    # role and epoch changes, on the lanes
    for k in range(steps + 1):
        for i, x in enumerate(trace.states[k].nodes):
            before = trace.states[k - 1].nodes[i] if k else None
            if before is None or (before.role, before.current_epoch) != (x.role, x.current_epoch):
                svg.append(f'<text x="{_lane_x(i) + 8}" y="{_row_y(k) - 2}" font-size="10" '
                           f'fill="#6e7781">{ROLE[x.role]} e{x.current_epoch}</text>')


def _messages(svg, trace) -> None:
    """An arrow from each message's send to its delivery (a cross where it was lost)."""
    # messages
    for src, dst, a, b, how in _arrows(trace):
        x1, y1, x2, y2 = _lane_x(src), _row_y(a), _lane_x(dst), _row_y(b)
        if how == "deliver":
            svg.append(f'<line class="msg" x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" '
                       f'stroke="{ARROW}" stroke-width="1.5" marker-end="url(#head)"/>')
        elif how == "flight":
            svg.append(f'<line class="flight" x1="{x1}" y1="{y1}" x2="{(x1 + x2) / 2}" '
                       f'y2="{y2}" stroke="{ARROW}" stroke-width="1" stroke-dasharray="4 3"/>')
        else:  # dropped or lost at a crash: the arrow stops halfway, at a cross
            mx, my = (x1 + x2) / 2, y2
            svg.append(f'<line class="{how}" x1="{x1}" y1="{y1}" x2="{mx}" y2="{my}" '
                       f'stroke="{LOST}" stroke-width="1.5" stroke-dasharray="5 2"/>')
            svg.append(f'<path class="cross" d="M{mx - 5},{my - 5} L{mx + 5},{my + 5} '
                       f'M{mx - 5},{my + 5} L{mx + 5},{my - 5}" stroke="{LOST}" '
                       f'stroke-width="2.5"/>')


def _row_texts(svg, trace, marks, text_x) -> None:
    """The actor's dot and each row's text."""
    model = trace.env.model
    # the actor's dot and the row's text
    svg.append(f'<text x="8" y="{_row_y(0) + 4}" fill="#6e7781">0</text>')
    svg.append(f'<text x="{text_x}" y="{_row_y(0) + 4}">initial state</text>')
    for k, (ev, prev, cur) in enumerate(zip(trace.events, trace.states, trace.states[1:]), 1):
        y = _row_y(k)
        actors = set() if ev.actor is None else {ev.actor}  # the node that acts, and those changed
        actors |= {i for i, (a, b) in enumerate(zip(prev.nodes, cur.nodes)) if a != b}
        for i in sorted(actors):
            svg.append(f'<circle cx="{_lane_x(i)}" cy="{y}" r="4" fill="#24292f"/>')
        d = ev.describe(model)
        short = d if len(d) <= 78 else d[:75] + "..."
        bold = ' font-weight="bold"' if k in marks else ""
        svg.append(f'<text x="8" y="{y + 4}" fill="#6e7781">{k}</text>')
        svg.append(f'<text x="{text_x}" y="{y + 4}"{bold}>{html.escape(short)}'
                   f'<title>{html.escape(d)}</title></text>')


def _lasso_marks(svg, trace, lasso, loop_from, width, text_x) -> None:
    """Where faults stop, and the loop's way back (or the dead end)."""
    L, n, steps = LAYOUT, trace.env.n, len(trace.events)
    y = _row_y(lasso["faults_stop"]) + L["ROW_H"] / 2
    svg.append(f'<line class="faults-stop" x1="0" y1="{y}" x2="{width}" y2="{y}" '
               f'stroke="{ARROW}" stroke-width="1" stroke-dasharray="8 4"/>')
    svg.append(f'<text x="{_lane_x(n - 1) + 12}" y="{y + 10}" font-size="10" '
               f'fill="{ARROW}">faults stop here</text>')
    if loop_from is not None:
        y1, y2 = _row_y(loop_from), _row_y(steps)
        svg.append(f'<path class="loop" d="M44,{y2} L36,{y2} L36,{y1} L44,{y1}" '
                   f'fill="none" stroke="{LOST}" stroke-width="2" '
                   'marker-end="url(#head)"/>')
        svg.append(f'<text x="{text_x}" y="{_row_y(steps + 1) + 4}" font-weight="bold" '
                   f'fill="{LOST}">back to the state after step {loop_from}: the loop '
                   'repeats forever</text>')
    else:
        svg.append(f'<text x="{text_x}" y="{_row_y(steps + 1) + 4}" font-weight="bold" '
                   f'fill="{LOST}">dead end: nothing can happen any more</text>')


def _notes(trace, marks, lasso, loop_from) -> tuple:
    """The list under the headline (each violation with its statement and witnesses, a lasso's
    shape) and the names the title gives."""
    notes = []
    for k in sorted(marks):
        for v in marks[k]:
            p = PROPERTIES.get(v.property)
            statement = f" ({html.escape(p.statement)}; {html.escape(p.source)})" if p else ""
            witnesses = ", ".join(str(i) for i in v.nodes)
            txns = ", ".join(f"{_zx(t[0])}:{t[1].decode('ascii', 'backslashreplace')}"
                             for t in v.txns)
            notes.append(f"<li><b>step {k}: {html.escape(v.property)}</b>{statement}: "
                         f"{html.escape(v.message)}. Witnesses: node(s) {witnesses}"
                         + (f"; transaction(s) {html.escape(txns)}" if txns else "") + "</li>")
    names = ", ".join(v.property for k in sorted(marks) for v in marks[k]) or "no violation"
    if lasso is not None:
        from zabmc.explore.liveness import PROPERTIES as LIVE

        p = LIVE[lasso["property"]]
        names = f"{lasso['property']} ({lasso['kind']})"
        notes.append(f"<li><b>{html.escape(p.name)}</b> ({html.escape(p.statement)}; "
                     f"{html.escape(p.source)}): {html.escape(lasso['message'])}. Faults stop "
                     f"after step {lasso['faults_stop']}"
                     + (f"; the tinted rows after step {loop_from} are the loop"
                        if loop_from is not None else "") + ".</li>")
    return notes, names


def _page(title, notes, svg, states, headline=None, said=()) -> str:
    """The self-contained page: headline, what it is (a lost write, the known issues), notes,
    chart, and the states the hover shows."""
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>{html.escape(title)}</title>",
        "<style>",
        "body{margin:0;font-family:sans-serif;display:flex;gap:16px}",
        "#chart{padding:8px}#side{position:sticky;top:0;align-self:flex-start;height:100vh;",
        "overflow:auto;width:420px;border-left:1px solid #d0d7de;padding:8px;font-size:11px}",
        "rect.row:hover{fill:#ddf4ff}h1{font-size:15px}ul{font-size:13px;max-width:900px}",
        "pre{white-space:pre-wrap}#what{list-style:none;padding-left:0;font-weight:bold}",
        "</style></head><body>",
        '<div id="chart">',
        f"<h1>{html.escape(headline or title)}</h1>",
        (f'<ul id="what">{"".join(f"<li>{html.escape(x)}</li>" for x in said)}</ul>'
         if said else ""),
        f"<ul>{''.join(notes)}</ul>" if notes else "",
        *svg,
        "</div>",
        '<div id="side"><b>state after the row under the pointer</b><pre id="state">'
        "(hover a row)</pre></div>",
        f'<script type="application/json" id="states">{_script_json(states)}</script>',
        "<script>",
        "const S=JSON.parse(document.getElementById('states').textContent);",
        "const P=document.getElementById('state');",
        "for(const r of document.querySelectorAll('rect.row')){r.addEventListener('mouseenter',",
        "()=>{const k=+r.dataset.k;P.textContent='after step '+k+'\\n'+",
        "JSON.stringify(S[k],null,1);});}",
        "</script>",
        "</body></html>",
    ])


def _script_json(obj) -> str:
    """JSON safe inside a <script> element."""
    return json.dumps(obj, separators=(",", ":")).replace("</", "<\\/")
