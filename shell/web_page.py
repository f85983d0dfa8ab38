"""The live web view's page (shell/web.py serves it): one HTML document, its script renders the
snapshot embedded at load and every snapshot the server sends after (server-sent events)."""

from __future__ import annotations

PAGE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>sqlengine: running jobs</title>
<style>
  body { font-family: system-ui, sans-serif; margin: 0; color: #223; background: #f6f7f9; }
  header { background: #1f2d3d; color: #fff; padding: 10px 18px; display: flex;
           align-items: center; gap: 16px; }
  header h1 { font-size: 17px; margin: 0; font-weight: 600; }
  #server { font-size: 13px; opacity: .85; }
  #server.ended { color: #ffcf70; }
  main { padding: 14px 18px; }
  #tabs button { border: 1px solid #c5ccd6; background: #fff; border-radius: 5px;
                 padding: 4px 10px; margin: 0 6px 6px 0; cursor: pointer; font-size: 13px; }
  #tabs button.on { background: #1f6fd1; color: #fff; border-color: #1f6fd1; }
  #summary { display: flex; flex-wrap: wrap; gap: 10px; margin: 6px 0 12px; }
  .card { background: #fff; border: 1px solid #dde2e8; border-radius: 6px; padding: 6px 12px;
          min-width: 90px; }
  .card b { display: block; font-size: 11px; color: #667; font-weight: 500;
            text-transform: uppercase; letter-spacing: .03em; }
  .card span { font-size: 16px; font-variant-numeric: tabular-nums; }
  #graph { background: #fff; border: 1px solid #dde2e8; border-radius: 6px; padding: 8px;
           overflow: auto; }
  #legend { font-size: 12px; color: #556; margin: 6px 0 12px; }
  #legend i { display: inline-block; width: 60px; height: 10px; vertical-align: middle;
              border: 1px solid #99a; margin: 0 4px; }
  table { border-collapse: collapse; background: #fff; font-size: 13px; width: 100%; }
  th, td { border: 1px solid #dde2e8; padding: 4px 8px; text-align: right;
           font-variant-numeric: tabular-nums; }
  th { background: #eef1f5; font-weight: 600; }
  td { white-space: nowrap; }
  th:nth-child(2) { text-align: left; }
  td.name { text-align: left; font-family: monospace; font-size: 12px; max-width: 480px;
            white-space: normal; }
  td.id { text-align: left; font-weight: 600; }
  .status-RUNNING { color: #1b8a3a; } .status-FAILED { color: #c0392b; }
  .status-FINISHED, .status-CANCELED { color: #555; }
  #note { font-size: 12px; color: #775; margin-top: 8px; }
  .metric { font-size: 10px; fill: #223; }
</style>
</head>
<body>
<header><h1>sqlengine &middot; running jobs</h1><span id="server">connecting&hellip;</span>
</header>
<main>
<div id="tabs"></div>
<div id="summary"></div>
<div id="graph"></div>
<div id="legend"></div>
<table id="vertices"><thead><tr><th>vertex</th><th>operators</th><th>parallelism</th>
<th>records in</th><th>in/s</th><th>records out</th><th>out/s</th><th>watermark</th><th>lag</th>
<th>late rows</th><th>backpressure</th></tr></thead><tbody></tbody></table>
<div id="note"></div>
</main>
<script>
"use strict";
const INITIAL = __INITIAL__;
const svgs = INITIAL.svgs || {};
let chosen = null;  // the job number picked in the tabs (null: the newest)
let snapshot = INITIAL.snapshot;
let events = 0;

const fmt = n => n === null || n === undefined ? "-" : Math.round(n).toLocaleString("en-US");
const short = n => {
  if (n === null || n === undefined) return "-";
  const a = Math.abs(n);
  if (a >= 1e9) return (n / 1e9).toFixed(1) + "G";
  if (a >= 1e6) return (n / 1e6).toFixed(1) + "M";
  if (a >= 1e4) return (n / 1e3).toFixed(1) + "k";
  return Math.round(n).toString();
};
const secs = ms => ms === null || ms === undefined ? "-" : (ms / 1000).toFixed(1) + " s";
const pct = r => r === null || r === undefined ? "n/a" : Math.round(r * 100) + "%";

// records/s through a vertex: what it reads (a source: what it produces)
const rate = v => Math.max(0, v.in_per_s || 0, v.out_per_s || 0);
const clock = v => v.watermark_text.length > 12 ? v.watermark_text.slice(11, 19)
                                                 : v.watermark_text;

function colour(job, v, top) {
  if (job.status !== "RUNNING") return "#e4ebe4";
  if (v.idle) return "#eeeeee";
  if (job.measures_backpressure) {
    const b = v.backpressure || 0;           // 0: free (blue) .. 1: always blocked (red)
    return `hsl(${210 - 210 * b}, 75%, ${88 - 28 * b}%)`;
  }
  const s = top > 0 ? rate(v) / top : 0;  // share of the busiest
  return `hsl(${210 - 180 * s}, 80%, ${92 - 30 * s}%)`;
}

function current() {
  const jobs = snapshot.jobs;
  if (!jobs.length) return null;
  return jobs.find(j => j.number === chosen) || jobs[jobs.length - 1];
}

async function graphOf(job) {
  if (!(job.number in svgs)) {
    const r = await fetch(`/api/jobs/${job.number}/graph.svg`);
    svgs[job.number] = r.ok ? await r.text() : "";
  }
  return svgs[job.number];
}

function tabs() {
  const el = document.getElementById("tabs");
  el.innerHTML = "";
  const job = current();
  for (const j of snapshot.jobs) {
    const b = document.createElement("button");
    b.textContent = `#${j.number} ${j.status} \u00b7 ${j.name.slice(0, 60)}`;
    b.className = job && j.number === job.number ? "on" : "";
    b.onclick = () => { chosen = j.number; render(); };
    el.appendChild(b);
  }
}

function summary(job) {
  const last = job.vertices.filter(v => !job.edges.some(e => e.source === v.id));
  const sinkWm = last.length ? last[0] : null;
  const cp = job.checkpoints;
  const cards = [
    ["status", `<span class="status-${job.status}">${job.status}</span>`],
    ["elapsed", secs(job.elapsed_s * 1000)],
    ["rows read", fmt(job.rows_read)],
    ["watermark (end)", sinkWm ? sinkWm.watermark_text : "-"],
    ["lag (end)", sinkWm ? secs(sinkWm.lag_ms) : "-"],
    ["late rows", fmt(job.vertices.reduce((a, v) => a + (v.late_records_dropped || 0), 0))],
    ["checkpoints", cp ? `${cp.completed}` : "off"],
  ];
  const skipped = job.vertices.reduce((a, v) => a + (v.udf_rows_skipped || 0), 0);
  if (skipped) cards.push(["rows skipped (UDF errors)", fmt(skipped)]);
  if (cp) cards.push(["last checkpoint", cp.last_duration_ms === null ? "-" :
                      `${cp.last_duration_ms} ms`]);
  document.getElementById("summary").innerHTML = cards.map(
    ([k, v]) => `<div class="card"><b>${k}</b><span>${v}</span></div>`).join("");
}

function paint(job) {
  const holder = document.getElementById("graph");
  const svg = holder.querySelector("svg");
  if (!svg) return;
  if (!svg.dataset.grown) {  // room under each box for its counters
    svg.setAttribute("height", parseFloat(svg.getAttribute("height")) + 30);
    for (const label of svg.querySelectorAll("path.edge + text")) {  // (edge labels)
      label.setAttribute("y", parseFloat(label.getAttribute("y")) + 10);
    }
    svg.dataset.grown = "1";
  }
  const top = Math.max(0, ...job.vertices.map(rate));
  for (const v of job.vertices) {
    const rect = svg.querySelector(`rect[id="${v.id}"]`);
    if (!rect) continue;
    if (!rect.dataset.h) {
      rect.dataset.h = rect.getAttribute("height");
      rect.setAttribute("height", parseFloat(rect.dataset.h) + 26);
      for (const k of [0, 1]) {
        const t = document.createElementNS("http://www.w3.org/2000/svg", "text");
        t.setAttribute("x", parseFloat(rect.getAttribute("x")) + 10);
        t.setAttribute("y", parseFloat(rect.getAttribute("y")) + parseFloat(rect.dataset.h)
                       + 10 + 12 * k);
        t.setAttribute("class", "metric");
        t.id = `m${k}-${v.id}`;
        rect.parentNode.appendChild(t);
      }
    }
    rect.setAttribute("fill", colour(job, v, top));
    rect.setAttribute("stroke-dasharray", v.idle ? "4 3" : "");
    const per_s = job.status === "RUNNING" ? ` \u00b7 ${short(rate(v))} rec/s` : "";
    const source = !job.edges.some(e => e.target === v.id);
    const inn = source || v.records_in === null || v.records_in === undefined ? ""
      : `in ${short(v.records_in)} \u00b7 `;
    document.getElementById(`m0-${v.id}`).textContent =
      `${inn}out ${short(v.records_out)}${per_s}`;
    const bp = v.backpressure === undefined ? "" : ` \u00b7 bp ${pct(v.backpressure)}`;
    const late = (v.late_records_dropped ? ` \u00b7 late ${short(v.late_records_dropped)}` : "")
      + (v.udf_rows_skipped ? ` \u00b7 udf-skipped ${short(v.udf_rows_skipped)}` : "");
    const lag = v.lag_ms === null ? "" : ` \u00b7 lag ${secs(v.lag_ms)}`;
    document.getElementById(`m1-${v.id}`).textContent = `wm ${clock(v)}${lag}${late}${bp}`;
    const wide = Math.max(...[0, 1].map(
      k => document.getElementById(`m${k}-${v.id}`).getComputedTextLength() + 20));
    if (wide > parseFloat(rect.getAttribute("width"))) rect.setAttribute("width", wide);
  }
}

function table(job) {
  document.querySelector("#vertices tbody").innerHTML = job.vertices.map(v => `<tr>
    <td class="id">${v.id}</td><td class="name"></td><td>${v.parallelism}</td>
    <td>${fmt(v.records_in)}</td><td>${v.in_per_s === undefined ? "-" : fmt(v.in_per_s)}</td>
    <td>${fmt(v.records_out)}${v.partial ? "*" : ""}</td>
    <td>${v.out_per_s === undefined ? "-" : fmt(v.out_per_s)}</td>
    <td>${v.watermark_text}</td><td>${secs(v.lag_ms)}</td>
    <td>${fmt(v.late_records_dropped)}</td><td>${pct(v.backpressure)}</td></tr>`).join("");
  const names = document.querySelectorAll("#vertices td.name");
  job.vertices.forEach((v, i) => { names[i].textContent = v.name; });
}

function legend(job) {
  const el = document.getElementById("legend");
  if (job.status !== "RUNNING") {
    el.textContent = "The job has ended: the counters are its final ones.";
  } else if (job.measures_backpressure) {
    el.innerHTML = 'Colour: backpressure (time blocked on a full output) ' +
      '<i style="background:linear-gradient(90deg,hsl(210,75%,88%),hsl(0,75%,60%))"></i>' +
      ' 0% &rarr; 100%; dashed: idle.';
  } else {
    el.innerHTML = 'Colour: records/s through each vertex, as a share of the busiest ' +
      '<i style="background:linear-gradient(90deg,hsl(210,80%,92%),hsl(30,80%,62%))"></i>' +
      ' (this executor runs every vertex in one thread, pushing each batch through: no ' +
      'vertex waits on another, so there is no backpressure to show); dashed: idle.';
  }
  const notes = [job.note];
  if (job.vertices.some(v => v.partial)) notes.push("* worker processes post only their " +
    "first operator's records out and their watermark while they run ('process' task mode)");
  if (job.error) notes.push("failed: " + job.error);
  document.getElementById("note").textContent = notes.filter(Boolean).join("; ");
}

let shown = null;
async function render() {
  tabs();
  const job = current();
  document.body.dataset.events = events;
  if (!job) {
    document.getElementById("summary").innerHTML =
      '<div class="card"><b>jobs</b><span>none yet</span></div>';
    return;
  }
  document.body.dataset.job = job.number;
  document.body.dataset.rows = job.rows_read;
  summary(job);
  table(job);
  legend(job);
  if (shown !== job.number) {
    const text = await graphOf(job);
    if (current() && current().number !== job.number) return;
    document.getElementById("graph").innerHTML = text;
    shown = job.number;
  }
  paint(job);
}

render();
document.getElementById("server").textContent = `live \u00b7 ${snapshot.time || ""}`;
if (window.EventSource) {
  const source = new EventSource("/events");
  source.addEventListener("snapshot", e => {
    snapshot = JSON.parse(e.data);
    events += 1;
    document.getElementById("server").textContent = `live \u00b7 ${snapshot.time}`;
    render();
  });
  source.addEventListener("end", () => {
    source.close();
    const s = document.getElementById("server");
    s.textContent = `the jobs have ended and the server has stopped (${snapshot.time})`;
    s.className = "ended";
  });
  source.onerror = () => {
    if (source.readyState === EventSource.CLOSED) return;
    document.getElementById("server").textContent = "reconnecting\u2026";
  };
}
</script>
</body>
</html>
"""
