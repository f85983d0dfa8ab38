"""The JobGraph drawn: Graphviz DOT, Mermaid, or a self-contained SVG (laid out here, so no
system binary is needed). Vertices show their chains and parallelism; edges their ship
strategy (and BLOCKING exchanges)."""

from __future__ import annotations

import itertools
from html import escape

from sqlengine.optimizer.jobgraph import JobGraph, JobVertex


def _lines(v: JobVertex) -> list[str]:
    return [f"{v.id}  (parallelism {v.parallelism})", *(op.label() for op in v.chain)]


def to_dot(job: JobGraph) -> str:
    out = ["digraph JobGraph {", "  rankdir=TB;", '  node [shape=box, fontname="monospace"];']
    for v in job.vertices:
        label = "\\l".join(s.replace('"', '\\"') for s in _lines(v)) + "\\l"
        out.append(f'  {v.id} [label="{label}"];')
    for e in job.edges:
        out.append(f'  {e.source} -> {e.target} [label="{e.label()}"];')
    out.append("}")
    return "\n".join(out)


def to_mermaid(job: JobGraph) -> str:
    out = ["flowchart TD"]
    for v in job.vertices:
        text = "<br/>".join(escape(s).replace('"', "&quot;") for s in _lines(v))
        out.append(f'  {v.id}["{text}"]')
    for e in job.edges:
        out.append(f'  {e.source} -->|"{escape(e.label())}"| {e.target}')
    return "\n".join(out)


def _layers(job: JobGraph) -> dict[str, int]:
    """Each vertex on the row after its deepest input (sources on row 0); an edge from a
    vertex not yet placed (an iteration's feedback) does not count."""
    layer: dict[str, int] = {}
    for v in job.vertices:  # topological order
        ins = [layer[e.source] for e in job.in_edges(v.id) if e.source in layer]
        layer[v.id] = max(ins, default=-1) + 1
    return layer


class _Layout:
    """A layered (Sugiyama-style) drawing: vertices on rows by depth, an edge spanning rows
    through a thin placeholder on every row between, rows ordered by barycenters to cut
    crossings. Every edge is a polyline that only runs vertically inside its own column of a
    row, diagonally in the gaps between rows and, for feedback edges, in a lane right of
    every box: so no edge crosses a box."""

    CHAR_W, LINE_H, PAD, GAP_X, GAP_Y, DUMMY_W, MARGIN = 7.2, 16, 10, 40, 70, 12, 20

    def __init__(self, job: JobGraph) -> None:
        self.job = job
        layer = _layers(job)
        self.size: dict[str, tuple[float, float]] = {}
        for v in job.vertices:
            lines = _lines(v)
            self.size[v.id] = (max(len(s) for s in lines) * self.CHAR_W + 2 * self.PAD,
                               len(lines) * self.LINE_H + 2 * self.PAD)
        nrows = max(layer.values(), default=-1) + 1
        self.rows: list[list[str]] = [[] for _ in range(nrows)]
        for v in job.vertices:
            self.rows[layer[v.id]].append(v.id)
        # forward edges as chains of nodes, one per row (placeholders on the rows between)
        self.chains: list[list[str]] = []
        self.back: list[int] = []  # indices of edges drawn through the right-hand lane
        for i, e in enumerate(job.edges):
            a, b = layer[e.source], layer[e.target]
            if b <= a:
                self.back.append(i)
                self.chains.append([e.source, e.target])
                continue
            chain = [e.source]
            for r in range(a + 1, b):
                d = f"\0{i}.{r}"
                self.size[d] = (self.DUMMY_W, 0.0)
                self.rows[r].append(d)
                chain.append(d)
            chain.append(e.target)
            self.chains.append(chain)
        self.up: dict[str, list[str]] = {n: [] for n in self.size}
        self.down: dict[str, list[str]] = {n: [] for n in self.size}
        for i, chain in enumerate(self.chains):
            if i in self.back:
                continue
            for s, t in itertools.pairwise(chain):
                self.down[s].append(t)
                self.up[t].append(s)
        self._order()
        self._place()

    def _order(self) -> None:
        def sweep(rows: range, links: dict[str, list[str]], ref: int) -> None:
            for r in rows:
                index = {n: k for k, n in enumerate(self.rows[r + ref])}
                def key(n: str, k: int, index: dict[str, int] = index) -> float:
                    near = [index[m] for m in links[n] if m in index]
                    return sum(near) / len(near) if near else float(k)
                self.rows[r] = [n for _, n in sorted(
                    ((key(n, k), n) for k, n in enumerate(self.rows[r])),
                    key=lambda p: p[0])]

        for _ in range(4):
            sweep(range(1, len(self.rows)), self.up, -1)
            sweep(range(len(self.rows) - 2, -1, -1), self.down, 1)

    def _place(self) -> None:
        self.x: dict[str, float] = {}
        self.y: list[float] = []  # top of each row
        self.row_h: list[float] = []
        y = float(self.MARGIN)
        for r, row in enumerate(self.rows):
            h = max((self.size[n][1] for n in row), default=0.0)
            self.y.append(y)
            self.row_h.append(h)
            y += h + self.GAP_Y
            # each node centred over its inputs when there is room, never overlapping
            left = float(self.MARGIN)
            for n in row:
                w = self.size[n][0]
                want = left
                if r > 0 and self.up[n]:
                    centre = sum(self.x[m] + self.size[m][0] / 2 for m in self.up[n]) \
                        / len(self.up[n])
                    want = max(left, centre - w / 2)
                self.x[n] = want
                left = want + w + (self.GAP_X if not n.startswith("\0") else self.GAP_X / 2)
        self.right = max((self.x[n] + self.size[n][0] for n in self.x), default=0.0)
        self.bottom = y - self.GAP_Y + self.MARGIN

    def node_row(self, n: str) -> int:
        return next(r for r, row in enumerate(self.rows) if n in row)

    def route(self, i: int) -> list[tuple[float, float]]:
        """The polyline of edge ``i``, from its source's bottom to its target's top."""
        e = self.job.edges[i]
        chain = self.chains[i]
        outs = [k for k, c in enumerate(self.chains) if c[0] == e.source]
        ins = [k for k, c in enumerate(self.chains) if c[-1] == e.target]

        def port(n: str, k: int, among: list[int]) -> float:
            w = self.size[n][0]
            return self.x[n] + w * (among.index(k) + 1) / (len(among) + 1)

        sx, tx = port(e.source, i, outs), port(e.target, i, ins)
        sr, tr = self.node_row(e.source), self.node_row(e.target)
        start = (sx, self.y[sr] + self.size[e.source][1])
        below = (sx, self.y[sr] + self.row_h[sr])
        if i in self.back:
            k = self.back.index(i)
            lane = self.right + self.GAP_X / 2 + 12 * k
            gap_below = self.y[sr] + self.row_h[sr] + self.GAP_Y * (0.3 + 0.1 * k)
            gap_above = self.y[tr] - self.GAP_Y * (0.3 + 0.1 * k)
            return [start, below, (sx, gap_below), (lane, gap_below), (lane, gap_above),
                    (tx, gap_above), (tx, self.y[tr])]
        points = [start, below] if below != start else [start]
        for d in chain[1:-1]:
            r = self.node_row(d)
            cx = self.x[d] + self.DUMMY_W / 2
            points += [(cx, self.y[r]), (cx, self.y[r] + self.row_h[r])]
        points.append((tx, self.y[tr]))
        return points


def to_svg(job: JobGraph) -> str:
    lay = _Layout(job)
    pad, line_h = lay.PAD, lay.LINE_H
    width = lay.right + lay.MARGIN + (lay.GAP_X / 2 + 12 * len(lay.back) if lay.back else 0)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" '
             f'height="{lay.bottom:.0f}" font-family="monospace" font-size="12">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" '
             'markerWidth="8" markerHeight="8" orient="auto-start-reverse">'
             '<path d="M 0 0 L 10 5 L 0 10 z"/></marker></defs>']
    for i, e in enumerate(job.edges):
        points = lay.route(i)
        d = " ".join(f"{'M' if k == 0 else 'L'} {x:.1f} {y:.1f}"
                     for k, (x, y) in enumerate(points))
        parts.append(f'<path class="edge" data-source="{e.source}" data-target="{e.target}" '
                     f'd="{d}" fill="none" stroke="#555" marker-end="url(#arrow)"/>')
        # the label beside the edge's first stretch across a gap
        k = next((k for k in range(1, len(points)) if points[k][0] != points[k - 1][0]
                  or k == len(points) - 1), len(points) - 1)
        (x1, y1), (x2, y2) = points[k - 1], points[k]
        parts.append(f'<text x="{(x1 + x2) / 2 + 4:.0f}" y="{(y1 + y2) / 2:.0f}" '
                     f'fill="#a33">{escape(e.label())}</text>')
    for v in job.vertices:
        x, y0 = lay.x[v.id], lay.y[lay.node_row(v.id)]
        w, h = lay.size[v.id]
        parts.append(f'<rect id="{v.id}" x="{x:.1f}" y="{y0:.1f}" width="{w:.1f}" '
                     f'height="{h:.1f}" rx="6" fill="#eef3fb" stroke="#335"/>')
        for i, s in enumerate(_lines(v)):
            weight = ' font-weight="bold"' if i == 0 else ""
            parts.append(f'<text x="{x + pad:.0f}" y="{y0 + pad + (i + 0.8) * line_h:.0f}"'
                         f'{weight}>{escape(s)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


FORMATS = {"dot": to_dot, "mermaid": to_mermaid, "svg": to_svg}


def combine_svg(documents: list[str], gap: float = 30) -> str:
    """Several drawings (``to_svg``'s, one per query of a file) as one SVG document: each a
    nested <svg> under the one before, its ids prefixed (q1-, q2-, ...) to stay unique."""
    import re

    if len(documents) == 1:
        return documents[0]
    inner, y, width = [], 0.0, 0.0
    for n, doc in enumerate(documents, 1):
        m = re.match(r'<svg [^>]*width="([\d.]+)" height="([\d.]+)"', doc)
        w, h = (float(m.group(1)), float(m.group(2))) if m else (0.0, 0.0)
        doc = re.sub(r'\b(id|data-source|data-target)="', rf'\1="q{n}-', doc)
        doc = doc.replace("url(#", f"url(#q{n}-")
        doc = re.sub(r"^<svg ", f'<svg x="0" y="{y:.0f}" ', doc, count=1)
        inner.append(doc)
        y += h + gap
        width = max(width, w)
    height = y - gap
    return "\n".join([f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" '
                      f'height="{height:.0f}">', *inner, "</svg>"])
