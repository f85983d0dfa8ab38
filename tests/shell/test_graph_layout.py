"""``sqlengine explain --format svg``: the drawing's geometry (no edge runs through a vertex
box other than its own two ends') and one well-formed SVG document per run, for a file of
several queries too."""

from __future__ import annotations

import itertools
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from sqlengine.shell.cli import main

ROOT = Path(__file__).resolve().parents[2]
NEXMARK = ROOT / "queries" / "nexmark"
SVG = "{http://www.w3.org/2000/svg}"

Rect = tuple[float, float, float, float]  # x0, y0, x1, y1
Segment = tuple[tuple[float, float], tuple[float, float]]

TWO_QUERIES = """
SET 'parallelism.default' = '3';
CREATE TABLE o (k INT, v BIGINT, s STRING) WITH ('connector' = 'datagen',
  'number-of-rows' = '10');
CREATE TABLE p (k INT, w BIGINT) WITH ('connector' = 'datagen', 'number-of-rows' = '10');
SELECT o.k, SUM(v) AS total, MAX(w) AS top FROM o JOIN p ON o.k = p.k GROUP BY o.k;
SELECT s, COUNT(*) AS n FROM (SELECT s FROM o UNION ALL SELECT CAST(k AS STRING) FROM p)
  GROUP BY s;
"""


def nexmark_script(name: str) -> str:
    ddl = (NEXMARK / "ddl.sql").read_text().replace("NEXMARK_EVENTS", "1000")
    return ddl + "\n" + (NEXMARK / f"{name}.sql").read_text()


def explain_svg(tmp_path: Path, script: str, *defines: str) -> str:
    path = tmp_path / "q.sql"
    path.write_text(script)
    args = ["explain", "--format", "svg"]
    for d in defines:
        args += ["-D", d]
    result = CliRunner().invoke(main, [*args, str(path)])
    assert result.exit_code == 0, result.output
    return result.stdout


def path_points(d: str) -> list[tuple[float, float]]:
    """The vertices of an SVG path made of M / L commands (absolute), as the drawing writes
    them; anything else (curves, relative moves) is refused, so the check cannot miss a
    stretch it does not understand."""
    tokens = re.findall(r"[A-Za-z]|-?[\d.]+(?:e-?\d+)?", d)
    points: list[tuple[float, float]] = []
    i = 0
    while i < len(tokens):
        cmd = tokens[i]
        assert cmd in ("M", "L"), f"unexpected path command {cmd!r} in {d!r}"
        i += 1
        while i + 1 < len(tokens) and not tokens[i].isalpha():
            points.append((float(tokens[i]), float(tokens[i + 1])))
            i += 2
    return points


def edge_points(el: ET.Element) -> list[tuple[float, float]]:
    """The corners of an edge drawn as a <line>, <polyline> or <path>."""
    if el.tag == f"{SVG}line":
        return [(float(el.get("x1", 0)), float(el.get("y1", 0))),
                (float(el.get("x2", 0)), float(el.get("y2", 0)))]
    if el.tag == f"{SVG}path":
        return path_points(el.get("d", ""))
    nums = [float(n) for n in re.findall(r"-?[\d.]+", el.get("points", ""))]
    return list(zip(nums[::2], nums[1::2]))


def geometry(svg: ET.Element) -> tuple[dict[str, Rect], list[ET.Element], list[str]]:
    """Every vertex box (by id), every edge (an element with an arrowhead), and the texts of
    one drawing."""
    rects: dict[str, Rect] = {}
    for k, r in enumerate(svg.iter(f"{SVG}rect")):
        x, y = float(r.get("x", 0)), float(r.get("y", 0))
        w, h = float(r.get("width", 0)), float(r.get("height", 0))
        rects[r.get("id") or f"rect{k}"] = (x, y, x + w, y + h)
    edges = [el for el in svg.iter() if el.get("marker-end") is not None
             and el.tag in (f"{SVG}line", f"{SVG}path", f"{SVG}polyline")]
    texts = ["".join(t.itertext()) for t in svg.iter(f"{SVG}text")]
    return rects, edges, texts


def crosses(seg: Segment, rect: Rect, inset: float = 1.0) -> bool:
    """Whether the segment passes through the rectangle shrunk by ``inset`` on every side
    (Liang-Barsky clipping: touching the border does not count)."""
    (x1, y1), (x2, y2) = seg
    x0, y0, x3, y3 = rect[0] + inset, rect[1] + inset, rect[2] - inset, rect[3] - inset
    if x0 >= x3 or y0 >= y3:
        return False
    dx, dy = x2 - x1, y2 - y1
    lo, hi = 0.0, 1.0
    for p, q in ((-dx, x1 - x0), (dx, x3 - x1), (-dy, y1 - y0), (dy, y3 - y1)):
        if p == 0:
            if q < 0:
                return False
            continue
        t = q / p
        if p < 0:
            lo = max(lo, t)
        else:
            hi = min(hi, t)
        if lo > hi:
            return False
    return True


def test_the_crossing_check_itself() -> None:
    box = (10.0, 10.0, 50.0, 30.0)
    assert crosses(((0, 0), (60, 40)), box)          # a diagonal through it
    assert crosses(((30, 0), (30, 20)), box)         # ends inside it
    assert not crosses(((0, 0), (60, 5)), box)       # passes above
    assert not crosses(((30, 0), (30, 10)), box)     # stops on its border
    assert not crosses(((55, 0), (55, 40)), box)     # beside it


def assert_no_edge_crosses_a_box(svg: ET.Element) -> None:
    rects, edges, _ = geometry(svg)
    assert rects and (edges or len(rects) == 1)  # (one vertex: a job chained whole)
    for el in edges:
        pts = edge_points(el)
        ends = {el.get("data-source"), el.get("data-target")}
        if None in ends:  # no ids on the edge: its ends are the boxes its ends lie on
            ends = {name for name, r in rects.items() for p in (pts[0], pts[-1])
                    if r[0] - 1 <= p[0] <= r[2] + 1 and r[1] - 1 <= p[1] <= r[3] + 1}
        assert ends, f"edge {pts} starts and ends on no vertex box"
        for seg in itertools.pairwise(pts):
            hit = [name for name, r in rects.items() if name not in ends and crosses(seg, r)]
            assert not hit, f"edge {sorted(map(str, ends))} stretch {seg} crosses box {hit}"
    # the boxes themselves do not overlap either
    boxes = list(rects.items())
    for i, (a, ra) in enumerate(boxes):
        for b, rb in boxes[i + 1:]:
            overlap = ra[0] < rb[2] and rb[0] < ra[2] and ra[1] < rb[3] and rb[1] < ra[3]
            assert not overlap, f"boxes {a} and {b} overlap"


def test_nexmark_q5_at_parallelism_4_has_no_edge_through_a_box(tmp_path: Path) -> None:
    out = explain_svg(tmp_path, nexmark_script("q5"), "parallelism.default=4")
    svg = ET.fromstring(out)  # one well-formed document
    assert svg.tag == f"{SVG}svg"
    rects, edges, texts = geometry(svg)
    assert len(rects) >= 6  # sources, two window aggregates, the join, the sink...
    assert any("(parallelism 4)" in t for t in texts)
    assert any(t.startswith("HASH(") for t in texts)
    assert_no_edge_crosses_a_box(svg)
    # every edge is drawn, and each one ends on its target's top border
    assert len(edges) >= len(rects) - 1
    for el in edges:
        last = edge_points(el)[-1]
        target = rects[el.get("data-target", "")]
        assert abs(last[1] - target[1]) < 0.5 and target[0] <= last[0] <= target[2]


@pytest.mark.parametrize("name", sorted((p.stem for p in NEXMARK.glob("q*.sql")),
                                        key=lambda s: int(s[1:])))
def test_every_nexmark_drawing_keeps_edges_off_other_boxes(tmp_path: Path, name: str) -> None:
    root = ET.fromstring(explain_svg(tmp_path, nexmark_script(name), "parallelism.default=4"))
    nested = [el for el in root if el.tag == f"{SVG}svg"]  # (a script of several queries)
    for drawing in nested or [root]:
        assert_no_edge_crosses_a_box(drawing)


def test_a_feedback_edge_goes_round_the_boxes() -> None:
    """An edge back to an earlier row (none of today's plans has one) takes a lane on the
    right, not a line through the rows between."""
    import dataclasses

    import sqlengine
    from sqlengine import statements as S
    from sqlengine.optimizer.drawing import to_svg
    from sqlengine.optimizer.jobgraph import JobEdge
    from sqlengine.parser import parse_statement, split_script

    s = sqlengine.connect({"parallelism.default": "2"})
    s.execute((NEXMARK / "ddl.sql").read_text().replace("NEXMARK_EVENTS", "1000"))
    script = (NEXMARK / "q5.sql").read_text()
    offset, text = split_script(script)[-1]
    job = s.statement_job_graph(S.Explain((), parse_statement(text, offset, script)), script)
    first, last = job.vertices[0].id, job.vertices[-1].id
    back = dataclasses.replace(job.edges[0], source=last, target=first)
    looped = dataclasses.replace(job, edges=(*job.edges, back, JobEdge(
        last, last, job.edges[0].partitioning)))
    svg = ET.fromstring(to_svg(looped))
    assert_no_edge_crosses_a_box(svg)


def test_a_file_of_two_queries_is_one_svg_document(tmp_path: Path) -> None:
    path = tmp_path / "two.sql"
    path.write_text(TWO_QUERIES)
    done = subprocess.run([sys.executable, "-m", "sqlengine.shell.cli", "explain", "--format",
                           "svg", str(path)], capture_output=True, text=True, timeout=300,
                          check=False)
    assert done.returncode == 0, done.stderr
    root = ET.fromstring(done.stdout)  # one document
    assert root.tag == f"{SVG}svg"
    drawings = [el for el in root if el.tag == f"{SVG}svg"]
    assert len(drawings) == 2  # one nested drawing per query, one under the other
    rects = [geometry(d)[0] for d in drawings]
    assert all(len(r) >= 3 for r in rects)
    tops = [float(d.get("y", 0)) for d in drawings]
    heights = [float(d.get("height", 0)) for d in drawings]
    assert tops[0] + heights[0] <= tops[1]  # the second drawing below the first
    for d in drawings:
        assert_no_edge_crosses_a_box(d)
    texts = geometry(root)[2]
    assert any("(parallelism 3)" in t for t in texts)
    assert any("Join" in t for t in texts) and any("Union" in t or "HASH(s)" in t
                                                   for t in texts)
