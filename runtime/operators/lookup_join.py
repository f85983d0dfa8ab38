"""The lookup join (optimizer/specs_lookup.py): each batch's distinct key values are looked
up in the table through its connector (``Connector.open_lookup``) and a cache, then joined
with the batch, vectorised: a key lookup per distinct key of the batch that the cache does
not hold, one Arrow hash join per batch.

The cache follows Flink's ``lookup.*`` table options: 'lookup.cache' = 'NONE' (every batch
asks the table) or 'PARTIAL' (keys kept with their rows: 'lookup.partial-cache.max-rows'
keys at most, least recently used first out; 'expire-after-write' / 'expire-after-access'
durations; 'cache-missing-key' (true) keeps keys the table does not hold). Like Flink's, the
cache is not checkpointed: a restored job looks keys up again.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sqlengine.errors import ConnectorError, ExecutionError
from sqlengine.optimizer.specs_lookup import LookupJoinSpec
from sqlengine.options import parse_duration
from sqlengine.runtime.elements import data_part, has_rowkind, signs, with_rowkind
from sqlengine.runtime.evaluate import evaluate
from sqlengine.runtime.operators.base import Operator


class LookupCache:
    """Key tuples -> their rows (a slice of one of the looked-up tables kept here)."""

    def __init__(self, max_rows: int | None, write_ms: int | None, access_ms: int | None,
                 keep_missing: bool) -> None:
        self.max_rows = max_rows
        self.write_s = write_ms / 1000 if write_ms else None
        self.access_s = access_ms / 1000 if access_ms else None
        self.keep_missing = keep_missing
        # key -> (table index, first row, rows, written at, read at)
        self.entries: OrderedDict[object, list] = OrderedDict()
        self.tables: list[pa.Table] = []
        self.hits = self.misses = 0

    def find(self, keys: list[object], held: Held) -> list[int]:
        """Positions of ``keys`` the cache misses; those it holds are added to ``held``."""
        now = time.monotonic()
        expiring = self.write_s or self.access_s
        missing: list[int] = []
        entries = self.entries
        for i, k in enumerate(keys):
            e = entries.get(k)
            if e is not None and expiring and (
                    (self.write_s and now - e[3] > self.write_s) or
                    (self.access_s and now - e[4] > self.access_s)):
                del entries[k]
                e = None
            if e is None:
                missing.append(i)
                continue
            e[4] = now
            entries.move_to_end(k)
            held.add(e)
        self.hits += len(keys) - len(missing)
        self.misses += len(missing)
        return missing

    def put(self, keys: list[object], rows: pa.Table, starts: np.ndarray,
            counts: np.ndarray, held: Held) -> None:
        """Keep ``keys`` with their rows (``rows`` sorted by key: key i's rows start at
        ``starts[i]``, ``counts[i]`` of them), and add them to ``held``."""
        now = time.monotonic()
        self.tables.append(rows)
        t = len(self.tables) - 1
        entries = self.entries
        for k, start, n in zip(keys, starts.tolist(), counts.tolist()):
            e = [t, start, n, now, now]
            held.add(e)
            if n or self.keep_missing:
                entries[k] = e
                entries.move_to_end(k)
        while self.max_rows is not None and len(entries) > self.max_rows:
            entries.popitem(last=False)
        if len(self.tables) > 64:
            self._compact()

    def _compact(self) -> None:
        """The kept rows in one table (the looked-up tables hold rows of evicted keys too)."""
        live = list(self.entries.values())
        held = Held()
        for e in live:
            held.add(e)
        rows = gather(self.tables, held)
        pos = 0
        for e in live:
            e[0], e[1] = 0, pos
            pos += e[2]
        self.tables = [rows]


class Held:
    """The (table, first row, count) of the entries a batch reads, as three lists."""

    def __init__(self) -> None:
        self.t: list[int] = []
        self.start: list[int] = []
        self.n: list[int] = []

    def add(self, e: list) -> None:
        self.t.append(e[0])
        self.start.append(e[1])
        self.n.append(e[2])

    def __len__(self) -> int:
        return len(self.t)


def gather(tables: list[pa.Table], held: Held) -> pa.Table:
    """The rows of the ``held`` entries, in their order."""
    if not len(held):
        return tables[0].slice(0, 0) if tables else pa.table({})
    spec = np.column_stack([np.asarray(held.t, dtype=np.int64),
                            np.asarray(held.start, dtype=np.int64),
                            np.asarray(held.n, dtype=np.int64)])
    parts = []
    for t in np.unique(spec[:, 0]):
        mine = spec[spec[:, 0] == t]
        counts = mine[:, 2]
        if not counts.sum():
            continue
        offsets = np.repeat(mine[:, 1] - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts)
        idx = np.arange(int(counts.sum()), dtype=np.int64) + offsets
        parts.append(tables[int(t)].take(pa.array(idx)))
    return pa.concat_tables(parts) if parts else tables[0].slice(0, 0)


class LookupJoinOperator(Operator):
    name = "LookupJoin"
    state_fields = ()  # (the cache is not state, as Flink's lookup caches are not)

    def __init__(self, spec: LookupJoinSpec, schema: pa.Schema) -> None:
        self.spec = spec
        self.schema = schema
        self.table_schema = spec.table_schema.to_arrow()
        self.key_names = [self.table_schema.field(i).name for i in spec.key_columns]
        options = dict(spec.source.options)
        self.cache = _cache(options)
        self.function = None
        self.lookups = 0  # keys asked of the table (a metric)
        self.retries = 0  # keys asked again after a miss (a LOOKUP hint's retry; a metric)

    def open(self, ctx: object) -> None:
        super().open(ctx)  # type: ignore[arg-type]
        from sqlengine import connectors

        connector = connectors.find(self.spec.source.connector)
        assert connector is not None
        self.function = connector.open_lookup(self.spec.source, self.table_schema,
                                              self.key_names)

    def close(self) -> None:
        if self.function is not None:
            self.function.close()
            self.function = None

    def extra_metrics(self) -> dict[str, int]:
        out = {"lookups": self.lookups}
        if self.spec.retry is not None:
            out["lookup_retries"] = self.retries
        if self.cache is not None:
            out.update(cache_hits=self.cache.hits, cache_misses=self.cache.misses)
        return out

    def process_batch(self, batch: pa.RecordBatch, input_index: int = 0
                      ) -> Iterable[pa.RecordBatch]:
        data = data_part(batch)
        if data.num_rows == 0:
            return ()
        keys = [_float_key(evaluate(k, data)) for k in self.spec.left_keys]
        probe = pa.table(keys, names=self.key_names)
        valid = np.ones(data.num_rows, dtype=bool)
        for k in keys:
            if k.null_count:
                valid &= k.is_valid().to_numpy(zero_copy_only=False)
            if pa.types.is_floating(k.type):  # (NaN equals nothing, as in a regular join)
                valid &= ~pc.fill_null(pc.is_nan(k), False).to_numpy(zero_copy_only=False)
        distinct = probe.filter(pa.array(valid)).group_by(self.key_names, use_threads=False) \
            .aggregate([]) if valid.any() else probe.slice(0, 0)
        rows = self._rows_for(distinct)
        li, ri = self._pairs(probe, valid, rows)
        if self.spec.condition is not None and len(li):
            both = self._combine(data, rows, li, ri)
            keep = pc.fill_null(evaluate(self.spec.condition, both), False)
            mask = keep.to_numpy(zero_copy_only=False)
            li, ri = li[mask], ri[mask]
        kinds = None
        if has_rowkind(batch):
            kinds = batch.column(batch.num_columns - 1).to_numpy(zero_copy_only=False)
        if self.spec.join_kind == "left":
            alone = np.setdiff1d(np.arange(data.num_rows), li)
            li = np.concatenate([li, alone])
            ri = np.concatenate([ri, np.full(len(alone), -1, dtype=np.int64)])
        order = np.argsort(li, kind="stable")  # (rows leave in their input order)
        li, ri = li[order], ri[order]
        if not len(li):
            return ()
        out = self._combine(data, rows, li, ri)
        if kinds is not None:
            return (with_rowkind(out, kinds[li]),)
        if (signs(batch) < 0).any():
            raise ExecutionError("a lookup join got retractions without row kinds")
        return (out,)

    def _combine(self, data: pa.RecordBatch, rows: pa.Table, li: np.ndarray,
                 ri: np.ndarray) -> pa.RecordBatch:
        left = data.take(pa.array(li))
        missing = ri < 0
        idx = pa.array(np.where(missing, 0, ri), mask=missing) if missing.any() \
            else pa.array(ri)
        right = rows.take(idx) if rows.num_rows else \
            pa.table([pa.nulls(len(li), f.type) for f in self.table_schema],
                     schema=self.table_schema)
        cols = [*left.columns, *[c.combine_chunks() for c in right.columns]]
        return pa.RecordBatch.from_arrays(cols, schema=self.schema)

    def _pairs(self, probe: pa.Table, valid: np.ndarray, rows: pa.Table
               ) -> tuple[np.ndarray, np.ndarray]:
        """(left row, looked-up row) positions of every key match."""
        none = np.zeros(0, dtype=np.int64)
        if not rows.num_rows or not valid.any():
            return none, none
        lk = probe.append_column("$l", pa.array(np.arange(probe.num_rows))) \
            .filter(pa.array(valid))
        rk = _keys(rows, self.key_names).append_column("$r", pa.array(np.arange(rows.num_rows)))
        joined = lk.join(rk, keys=self.key_names, join_type="inner", use_threads=False)
        return (joined["$l"].to_numpy().astype(np.int64),
                joined["$r"].to_numpy().astype(np.int64))

    def _rows_for(self, distinct: pa.Table) -> pa.Table:
        """The table's rows for the batch's distinct keys (cache first, then the table)."""
        if distinct.num_rows == 0:
            return self.table_schema.empty_table()
        if self.cache is None:
            return self._ask_retrying(distinct)
        cols = [c.to_pylist() for c in distinct.columns]
        keys = cols[0] if len(cols) == 1 else list(zip(*cols))
        held = Held()
        missing = self.cache.find(keys, held)
        if missing:
            asked = distinct.take(pa.array(missing, pa.int64()))
            found = self._ask_retrying(asked)
            ordered, starts, counts = _by_key(found, asked, self.key_names)
            self.cache.put([keys[i] for i in missing], ordered, starts, counts, held)
        return gather(self.cache.tables, held) if len(held) else \
            self.table_schema.empty_table()

    def _ask_retrying(self, keys: pa.Table) -> pa.Table:
        """The table's rows for ``keys``; with a LOOKUP hint's retry, the keys it does not
        hold are asked again after the fixed delay, up to its attempts (the task waits, as
        Flink's synchronous retry does; all of a batch's missing keys at once)."""
        found = self._ask(keys)
        if self.spec.retry is None:
            return found
        delay, attempts = self.spec.retry
        for _ in range(attempts):
            held = found.select(self.key_names)
            missing = keys.join(held, keys=self.key_names, join_type="left anti",
                                use_threads=False) if found.num_rows else keys
            if not missing.num_rows:
                break
            time.sleep(delay / 1000)
            self.retries += missing.num_rows
            more = self._ask(missing)
            if more.num_rows:
                found = pa.concat_tables([found, more])
        return found

    def _ask(self, keys: pa.Table) -> pa.Table:
        assert self.function is not None
        self.lookups += keys.num_rows
        try:
            rows = self.function.lookup(keys)
        except ConnectorError:
            raise
        except Exception as e:
            msg = (f"lookup join: looking up {keys.num_rows} keys in table "
                   f"{self.spec.source.table!r} failed: {type(e).__name__}: {e}")
            raise ConnectorError(msg) from None
        return rows.cast(self.table_schema) if rows.schema != self.table_schema else rows


def _float_key(values: pa.Array) -> pa.Array:
    """A floating key with -0.0 as 0.0 (equal, as SQL compares them; Arrow's hash join and
    its distinct keys tell them apart, so a -0.0 row met no 0.0 row and a 0.0 key was asked,
    and joined, twice); other keys as they are. (NaN keys are left out by the caller: the
    server, PostgreSQL, would say NaN = NaN.)"""
    if not pa.types.is_floating(values.type):
        return values
    return pc.add(values, pa.scalar(0.0, values.type))  # (-0.0 + 0.0 is 0.0)


def _keys(rows: pa.Table, names: list[str]) -> pa.Table:
    """The looked-up rows' key columns as the probe side's are matched (_float_key)."""
    return pa.table([_float_key(c.combine_chunks()) for c in rows.select(names).columns],
                    names=names)


def _by_key(found: pa.Table, asked: pa.Table, names: list[str]
            ) -> tuple[pa.Table, np.ndarray, np.ndarray]:
    """``found`` ordered so each asked key's rows are together, with each asked key's first
    row and count (0 for a key the table does not hold)."""
    n = asked.num_rows
    if found.num_rows == 0:
        return found, np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
    ak = asked.append_column("$a", pa.array(np.arange(n)))
    fk = _keys(found, names).append_column("$f", pa.array(np.arange(found.num_rows)))
    pairs = ak.join(fk, keys=names, join_type="inner", use_threads=False)
    a = pairs["$a"].to_numpy().astype(np.int64)
    f = pairs["$f"].to_numpy().astype(np.int64)
    order = np.argsort(a, kind="stable")
    a, f = a[order], f[order]
    counts = np.bincount(a, minlength=n).astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    return found.take(pa.array(f)), starts, counts


def _cache(options: dict[str, str]) -> LookupCache | None:
    kind = options.get("lookup.cache", "NONE").upper()
    if kind == "NONE":
        return None
    rows = options.get("lookup.partial-cache.max-rows")
    write = options.get("lookup.partial-cache.expire-after-write")
    access = options.get("lookup.partial-cache.expire-after-access")
    return LookupCache(
        int(rows) if rows else None,
        parse_duration(write, "lookup.partial-cache.expire-after-write") if write else None,
        parse_duration(access, "lookup.partial-cache.expire-after-access") if access else None,
        options.get("lookup.partial-cache.cache-missing-key", "true").lower() == "true")
