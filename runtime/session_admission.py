"""How a batch of rows enters SESSION windows when the watermark moves inside the batch.

Flink merges a row's window [t, t + gap) into its key's open sessions as the row arrives, and
fires a session as soon as the watermark reaches its end - 1; a later row of the same key then
starts a session of its own, even where it would have touched the fired one. The session
operators here buffer rows and compute sessions when a watermark arrives, which is the same
answer unless a session of a key closes between two rows of one batch. ``admit`` finds the
keys where that can happen (a cheap vectorised bound: some row's watermark reaches the end of
an open session of its key, or an earlier row's own window, in this batch), replays only
those keys row by row, and says which rows were in sessions that closed inside the batch (with
each session's start and end) and which rows are late (behind the watermark, touching no open
session). Every other key takes the vectorised path (``late_rows_kept``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from sqlengine.runtime.elements import millis
from sqlengine.runtime.operators.rank import dense_ids
from sqlengine.runtime.windows import sessions

_NONE = np.zeros(0, dtype=np.int64)


@dataclass(frozen=True)
class Admission:
    """``keep``: the batch's rows that are not late (None: all). ``closed_buffered`` and
    ``closed_batch``: rows (indexes into the buffered rows, as concatenated, and into the
    batch) of sessions that closed inside the batch, with their session's start and end."""

    keep: np.ndarray | None
    closed_buffered: np.ndarray = field(default_factory=lambda: _NONE)
    buffered_start: np.ndarray = field(default_factory=lambda: _NONE)
    buffered_end: np.ndarray = field(default_factory=lambda: _NONE)
    closed_batch: np.ndarray = field(default_factory=lambda: _NONE)
    batch_start: np.ndarray = field(default_factory=lambda: _NONE)
    batch_end: np.ndarray = field(default_factory=lambda: _NONE)


def admit(buffered: pa.Table | None, table: pa.Table, keys: list[str], time_col: str,
          gap: int, row_wm: np.ndarray | None) -> Admission:
    """``buffered`` and ``table`` hold the key columns and ``time_col`` (each row's own time)
    of the rows waiting in open sessions and of the new batch (in arrival order)."""
    pool = [buffered] if buffered is not None and buffered.num_rows else []
    keep = late_rows_kept(pool, table, keys, time_col, gap, row_wm)
    if row_wm is None or table.num_rows == 0:
        return Admission(keep)
    nb = buffered.num_rows if pool else 0
    both = pa.concat_tables([*(p.select([*keys, time_col]) for p in pool),
                             table.select([*keys, time_col])])
    ids = dense_ids([both[k].combine_chunks() for k in keys], both.num_rows) if keys \
        else np.zeros(both.num_rows, dtype=np.int64)
    times = millis(both[time_col].combine_chunks()).astype(np.int64)
    b_ids, r_ids = ids[:nb], ids[nb:]
    bt, rt = times[:nb], times[nb:]
    w = np.asarray(row_wm, dtype=np.int64)
    n_ids = int(ids.max()) + 1
    # The earliest end of an open (buffered) session per key: first bounded below by the
    # key's earliest buffered time + gap (no sort), then computed where that bound is reached.
    big = np.iinfo(np.int64).max
    min_end = np.full(n_ids, big, dtype=np.int64)
    if nb:
        np.minimum.at(min_end, b_ids, bt + gap)
        near = np.zeros(n_ids, dtype=bool)
        near[r_ids[w >= min_end[r_ids] - 1]] = True
        if near.any():
            sel = np.flatnonzero(near[b_ids])
            sb_ids, sbt = b_ids[sel], bt[sel]
            order = np.lexsort((sbt, sb_ids))
            change = np.zeros(len(sel), dtype=bool)
            change[1:] = sb_ids[order][1:] != sb_ids[order][:-1]
            sid, _starts, ends = sessions(change, sbt[order], gap)
            first = np.r_[0, np.flatnonzero(np.diff(sid)) + 1]
            exact = np.full(n_ids, big, dtype=np.int64)
            np.minimum.at(exact, sb_ids[order][first], ends)
            min_end = np.where(near, exact, min_end)
    # The earliest time among the batch's earlier rows of the same key (exclusive prefix).
    order = np.argsort(r_ids, kind="stable")
    seg = r_ids[order]
    prefix = _prefix_min(rt[order], seg)
    earlier = np.full(len(rt), np.iinfo(np.int64).max, dtype=np.int64)
    same = np.zeros(len(order), dtype=bool)
    same[1:] = seg[1:] == seg[:-1]
    earlier[order[1:][same[1:]]] = prefix[:-1][same[1:]]
    reach = np.minimum(min_end[r_ids], np.where(earlier == np.iinfo(np.int64).max, earlier,
                                                earlier + gap))
    risky = w >= reach - 1
    if not risky.any():
        return Admission(keep)
    keep = np.ones(len(rt), dtype=bool) if keep is None else keep.copy()
    return _replay(np.unique(r_ids[risky]), b_ids, bt, r_ids, rt, w, gap, keep)


def late_rows_kept(buffered: list[pa.Table], table: pa.Table, keys: list[str], time_col: str,
                   gap: int, row_wm: np.ndarray | None) -> np.ndarray | None:
    """Session lateness as Flink's merging windows judge it: a row whose own window [t, t + gap)
    has passed the watermark (before it) is kept when that window touches an open session of
    its key (one whose end - 1 is still ahead of that watermark): the merged session has not
    fired. None when no row is behind."""
    if row_wm is None or table.num_rows == 0:
        return None
    ts = millis(table[time_col].combine_chunks()).astype(np.int64)
    behind = ts + gap - 1 <= row_wm
    if not behind.any():
        return None
    on_time = table.filter(pa.array(~behind))
    pool = pa.concat_tables([*(b.select([*keys, time_col]) for b in buffered),
                             on_time.select([*keys, time_col])]) \
        if buffered or on_time.num_rows else None
    keep = ~behind
    if pool is None or pool.num_rows == 0:
        return keep
    both = pa.concat_tables([pool, table.select([*keys, time_col])])
    ids = dense_ids([both[k].combine_chunks() for k in keys], both.num_rows) if keys \
        else np.zeros(both.num_rows, dtype=np.int64)
    pool_ids, row_ids = ids[:pool.num_rows], ids[pool.num_rows:]
    pts = millis(pool[time_col].combine_chunks()).astype(np.int64)
    order = np.lexsort((pts, pool_ids))
    change = np.zeros(len(order), dtype=bool)
    change[1:] = pool_ids[order][1:] != pool_ids[order][:-1]
    sid, starts, ends = sessions(change, pts[order], gap)
    first_of_session = np.r_[0, np.flatnonzero(np.diff(sid)) + 1] if len(sid) else \
        np.zeros(0, np.int64)
    session_key = pool_ids[order][first_of_session]
    # One step per row behind the watermark (rare), over its key's open sessions.
    for r in np.flatnonzero(behind).tolist():
        mine = session_key == row_ids[r]
        t, wm = int(ts[r]), int(row_wm[r])
        if np.any(mine & (starts <= t + gap) & (ends >= t) & (ends - 1 > wm)):
            keep[r] = True
    return keep


def _replay(risky_keys: np.ndarray, b_ids: np.ndarray, bt: np.ndarray, r_ids: np.ndarray,
            rt: np.ndarray, w: np.ndarray, gap: int, keep: np.ndarray) -> Admission:
    """Flink's merging, row by row, for the keys where a session may close mid-batch."""
    closed: list[tuple[list[int], list[int], int, int]] = []  # (buffered, batch, start, end)
    b_of = _rows_by_key(b_ids, risky_keys)
    r_of = _rows_by_key(r_ids, risky_keys)
    for k in risky_keys.tolist():
        # open sessions: [start, end, buffered rows, batch rows]
        open_: list[list] = []
        for i in sorted(b_of.get(k, []), key=lambda i: bt[i]):
            t = int(bt[i])
            if open_ and t <= open_[-1][1]:
                open_[-1][1] = max(open_[-1][1], t + gap)
                open_[-1][2].append(i)
            else:
                open_.append([t, t + gap, [i], []])
        for j in r_of.get(k, []):
            t, wm = int(rt[j]), int(w[j])
            still = []
            for s in open_:
                if s[1] - 1 <= wm:
                    closed.append((s[2], s[3], s[0], s[1]))
                else:
                    still.append(s)
            touching = [s for s in still if s[0] <= t + gap and s[1] >= t]
            if not touching and t + gap - 1 <= wm:
                keep[j] = False  # late: its own window has passed and it merges into none
                open_ = still
                continue
            keep[j] = True
            merged = [min([t, *(s[0] for s in touching)]), max([t + gap,
                      *(s[1] for s in touching)]),
                      [i for s in touching for i in s[2]], [*(i for s in touching for i in s[3]),
                                                            j]]
            open_ = [s for s in still if not any(s is x for x in touching)] + [merged]
    buf = [(i, s, e) for bs, _, s, e in closed for i in bs]
    bat = [(j, s, e) for _, rs, s, e in closed for j in rs]
    return Admission(keep, *_columns(buf), *_columns(bat))


def _prefix_min(values: np.ndarray, seg: np.ndarray) -> np.ndarray:
    """The running minimum of ``values`` within each run of equal ``seg`` (sorted ascending)."""
    base = int(values.min())
    span = int(values.max()) - base + 1
    if span * (int(seg.max()) + 2) < 2 ** 62:
        # Later segments shifted below earlier ones: one global running minimum.
        shifted = (values - base) - seg * span
        return np.minimum.accumulate(shifted) + seg * span + base
    out = np.empty_like(values)
    bounds = np.r_[0, np.flatnonzero(np.diff(seg)) + 1, len(seg)]
    for a, b in zip(bounds[:-1].tolist(), bounds[1:].tolist()):
        out[a:b] = np.minimum.accumulate(values[a:b])
    return out


def _rows_by_key(ids: np.ndarray, wanted: np.ndarray) -> dict[int, list[int]]:
    """Row indexes (in order) of each wanted key."""
    rows = np.flatnonzero(np.isin(ids, wanted))
    out: dict[int, list[int]] = {}
    for r, k in zip(rows.tolist(), ids[rows].tolist()):
        out.setdefault(k, []).append(r)
    return out


def _columns(items: list[tuple[int, int, int]]
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if not items:
        return _NONE, _NONE, _NONE
    a = np.array(items, dtype=np.int64)
    return a[:, 0], a[:, 1], a[:, 2]
