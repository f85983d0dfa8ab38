"""The JobGraph drawn: Graphviz DOT, Mermaid, or a self-contained SVG (laid out here, so no
system binary is needed). Vertices show their chains and parallelism; edges their ship
strategy (and BLOCKING exchanges)."""

from __future__ import annotations

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
    """Each vertex on the row after its deepest input (sources on row 0)."""
    layer: dict[str, int] = {}
    for v in job.vertices:  # topological order
        ins = [layer[e.source] for e in job.in_edges(v.id) if e.source in layer]
        layer[v.id] = max(ins, default=-1) + 1
    return layer


def to_svg(job: JobGraph) -> str:
    char_w, line_h, pad, gap_x, gap_y = 7.2, 16, 10, 40, 70
    layer = _layers(job)
    rows: dict[int, list[JobVertex]] = {}
    for v in job.vertices:
        rows.setdefault(layer[v.id], []).append(v)
    size = {v.id: (max(len(s) for s in _lines(v)) * char_w + 2 * pad,
                   len(_lines(v)) * line_h + 2 * pad) for v in job.vertices}
    pos: dict[str, tuple[float, float]] = {}
    y = 20.0
    width = 0.0
    for r in sorted(rows):
        x = 20.0
        for v in rows[r]:
            pos[v.id] = (x, y)
            x += size[v.id][0] + gap_x
        width = max(width, x)
        y += max(size[v.id][1] for v in rows[r]) + gap_y
    height = y
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" '
             f'height="{height:.0f}" font-family="monospace" font-size="12">',
             '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" '
             'markerWidth="8" markerHeight="8" orient="auto-start-reverse">'
             '<path d="M 0 0 L 10 5 L 0 10 z"/></marker></defs>']
    for e in job.edges:
        (sx, sy), (sw, sh) = pos[e.source], size[e.source]
        (tx, ty), (tw, _) = pos[e.target], size[e.target]
        x1, y1, x2, y2 = sx + sw / 2, sy + sh, tx + tw / 2, ty
        parts.append(f'<line x1="{x1:.0f}" y1="{y1:.0f}" x2="{x2:.0f}" y2="{y2:.0f}" '
                     'stroke="#555" marker-end="url(#arrow)"/>')
        parts.append(f'<text x="{(x1 + x2) / 2 + 4:.0f}" y="{(y1 + y2) / 2:.0f}" '
                     f'fill="#a33">{escape(e.label())}</text>')
    for v in job.vertices:
        (x, y0), (w, h) = pos[v.id], size[v.id]
        parts.append(f'<rect x="{x:.0f}" y="{y0:.0f}" width="{w:.0f}" height="{h:.0f}" '
                     'rx="6" fill="#eef3fb" stroke="#335"/>')
        for i, s in enumerate(_lines(v)):
            weight = ' font-weight="bold"' if i == 0 else ""
            parts.append(f'<text x="{x + pad:.0f}" y="{y0 + pad + (i + 0.8) * line_h:.0f}"'
                         f'{weight}>{escape(s)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)


FORMATS = {"dot": to_dot, "mermaid": to_mermaid, "svg": to_svg}
