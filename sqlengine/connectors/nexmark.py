"""The Nexmark generator: Person, Auction and Bid events (proportions 1:3:46 per 50 events),
modelled on the benchmark's reference generator, vectorised with numpy, deterministic by seed.

Event ``n`` has type person when ``n % 50 == 0``, auction for 1..3 and bid for 4..49, and event
time ``base + n / events-per-second`` (minus up to 'nexmark.out-of-orderness' ms). Ids follow the
generator's rules: people and auctions are numbered from 1000 in event order; sellers and
bidders are drawn from the most recent people, bids go to hot auctions half the time. Every
table sees the same event stream, so joins across person, auction and bid line up.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import pyarrow as pa

from sqlengine.connectors.base import (
    Clock,
    Connector,
    OptionSpec,
    SourceCursor,
    SourceRead,
    strided_done,
)
from sqlengine.errors import ConnectorError
from sqlengine.statistics import UNKNOWN_ROWS, ColumnStats, Estimate, schema_width

if TYPE_CHECKING:
    from sqlengine.catalog import TableDef
    from sqlengine.plan.nodes import Schema, SourceSpec

PROPORTION = 50
PERSON, AUCTIONS, BIDS = 1, 3, 46
FIRST_PERSON_ID = 1000
FIRST_AUCTION_ID = 1000
FIRST_CATEGORY_ID = 10
NUM_CATEGORIES = 5
ACTIVE_PEOPLE = 1000
PERSON_ID_LEAD = 10
IN_FLIGHT_AUCTIONS = 100
AUCTION_ID_LEAD = 10
HOT_AUCTION_RATIO = 2
HOT_SELLER_RATIO = 4
HOT_BIDDER_RATIO = 4
BASE_TIME_MS = 1_700_000_000_000  # 2023-11-14 22:13:20 UTC
CHUNK = 10_000  # events per generated chunk (the unit of determinism)

FIRST_NAMES = ["Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah",
               "Deiter", "Walter"]
LAST_NAMES = ["Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones",
              "Noris"]
US_STATES = ["AZ", "CA", "ID", "OR", "WA", "WY"]
US_CITIES = ["Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond",
             "Seattle", "Kent", "Cheyenne"]
CHANNELS = ["Google", "Facebook", "Baidu", "Apple"]

TS = pa.timestamp("ms")
SCHEMAS = {
    "person": pa.schema([("id", pa.int64()), ("name", pa.string()),
                         ("emailAddress", pa.string()), ("creditCard", pa.string()),
                         ("city", pa.string()), ("state", pa.string()), ("dateTime", TS),
                         ("extra", pa.string())]),
    "auction": pa.schema([("id", pa.int64()), ("itemName", pa.string()),
                          ("description", pa.string()), ("initialBid", pa.int64()),
                          ("reserve", pa.int64()), ("dateTime", TS), ("expires", TS),
                          ("seller", pa.int64()), ("category", pa.int64()),
                          ("extra", pa.string())]),
    "bid": pa.schema([("auction", pa.int64()), ("bidder", pa.int64()), ("price", pa.int64()),
                      ("channel", pa.string()), ("url", pa.string()), ("dateTime", TS),
                      ("extra", pa.string())]),
}
_KIND = {"person": 0, "auction": 1, "bid": 2}
_LETTERS = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)


def _strings(rng: np.random.Generator, n: int, length: int,
             alphabet: np.ndarray = _LETTERS) -> pa.Array:
    data = alphabet[rng.integers(0, len(alphabet), size=n * length)]
    offsets = np.arange(0, (n + 1) * length, length, dtype=np.int32)
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets.tobytes()),
                                       pa.py_buffer(data.tobytes()))


def _pick(rng: np.random.Generator, words: list[str], n: int) -> pa.Array:
    return pa.array(words).take(pa.array(rng.integers(0, len(words), size=n)))


def _join(*parts: pa.Array | str) -> pa.Array:
    import pyarrow.compute as pc

    return pc.binary_join_element_wise(*parts, "")


def last_person(events: np.ndarray) -> np.ndarray:
    """The base-0 id of the last person generated at or before each event number."""
    return events // PROPORTION


def last_auction(events: np.ndarray) -> np.ndarray:
    epoch, offset = events // PROPORTION, events % PROPORTION
    extra = np.clip(offset - PERSON + 1, 0, AUCTIONS) - 1
    return epoch * AUCTIONS + extra


class NexmarkGenerator:
    """Generates one table's rows for a range of event numbers."""

    def __init__(self, table: str, events: int | None, rate: int, seed: int,
                 out_of_order_ms: int) -> None:
        self.table = table
        self.events = events
        self.rate = rate
        self.seed = seed
        self.out_of_order_ms = out_of_order_ms

    def _rng(self, chunk: int, stream: int) -> np.random.Generator:
        return np.random.default_rng([self.seed, chunk, _KIND[self.table], stream])

    def chunk(self, c: int) -> pa.RecordBatch:
        start = c * CHUNK
        stop = start + CHUNK if self.events is None else min(start + CHUNK, self.events)
        ids = np.arange(start, stop, dtype=np.int64)
        offset = ids % PROPORTION
        if self.table == "person":
            mine = ids[offset < PERSON]
        elif self.table == "auction":
            mine = ids[(offset >= PERSON) & (offset < PERSON + AUCTIONS)]
        else:
            mine = ids[offset >= PERSON + AUCTIONS]
        rng = self._rng(c, 0)
        n = len(mine)
        nominal = BASE_TIME_MS + (mine * 1000) // self.rate
        jitter = rng.integers(0, self.out_of_order_ms + 1, size=n) if self.out_of_order_ms \
            else 0
        times = pa.array(nominal - jitter, TS)
        return getattr(self, f"_{self.table}")(rng, mine, times)

    def _person(self, rng: np.random.Generator, events: np.ndarray, times: pa.Array
                ) -> pa.RecordBatch:
        n = len(events)
        ids = FIRST_PERSON_ID + events // PROPORTION
        first = _pick(rng, FIRST_NAMES, n)
        last = _pick(rng, LAST_NAMES, n)
        digits = np.frombuffer(b"0123456789", dtype=np.uint8)
        card = _join(_strings(rng, n, 4, digits), " ", _strings(rng, n, 4, digits), " ",
                     _strings(rng, n, 4, digits), " ", _strings(rng, n, 4, digits))
        return pa.RecordBatch.from_arrays([
            pa.array(ids), _join(first, " ", last),
            _join(_strings(rng, n, 7), "@", _strings(rng, n, 5), ".com"), card,
            _pick(rng, US_CITIES, n), _pick(rng, US_STATES, n), times,
            _strings(rng, n, 16)], schema=SCHEMAS["person"])

    def _auction(self, rng: np.random.Generator, events: np.ndarray, times: pa.Array
                 ) -> pa.RecordBatch:
        n = len(events)
        ids = FIRST_AUCTION_ID + last_auction(events)
        initial = np.round(10.0 ** (rng.random(n) * 6.0) * 100.0).astype(np.int64)
        reserve = initial + np.round(10.0 ** (rng.random(n) * 6.0) * 100.0).astype(np.int64)
        # Sellers: a hot one (a multiple of HOT_SELLER_RATIO) most of the time, else a recent
        # person (possibly a little ahead of the people generated so far).
        people = last_person(events) + 1
        active = np.minimum(people, ACTIVE_PEOPLE)
        recent = people - active + rng.integers(0, 1 << 30, size=n) % (active + PERSON_ID_LEAD)
        hot = (people - 1) // HOT_SELLER_RATIO * HOT_SELLER_RATIO
        seller = np.where(rng.integers(0, HOT_SELLER_RATIO, size=n) > 0, hot, recent)
        expires = pa.array(times.cast(pa.int64()).to_numpy() +
                           rng.integers(2_000, 20_000, size=n), TS)
        return pa.RecordBatch.from_arrays([
            pa.array(ids), _strings(rng, n, 12), _strings(rng, n, 30), pa.array(initial),
            pa.array(reserve), times, expires, pa.array(FIRST_PERSON_ID + seller),
            pa.array(FIRST_CATEGORY_ID + rng.integers(0, NUM_CATEGORIES, size=n)),
            _strings(rng, n, 16)], schema=SCHEMAS["auction"])

    def _bid(self, rng: np.random.Generator, events: np.ndarray, times: pa.Array
             ) -> pa.RecordBatch:
        n = len(events)
        auctions = last_auction(events) + 1
        in_flight = np.minimum(auctions, IN_FLIGHT_AUCTIONS)
        recent = auctions - in_flight + rng.integers(0, 1 << 30, size=n) % (
            in_flight + AUCTION_ID_LEAD)
        hot_auction = (auctions - 1) // HOT_AUCTION_RATIO * HOT_AUCTION_RATIO
        auction = np.where(rng.integers(0, HOT_AUCTION_RATIO, size=n) > 0, hot_auction, recent)
        people = last_person(events) + 1
        active = np.minimum(people, ACTIVE_PEOPLE)
        recent_p = people - active + rng.integers(0, 1 << 30, size=n) % (active + PERSON_ID_LEAD)
        hot_p = (people - 1) // HOT_BIDDER_RATIO * HOT_BIDDER_RATIO + 1
        bidder = np.where(rng.integers(0, HOT_BIDDER_RATIO, size=n) > 0, hot_p, recent_p)
        price = np.round(10.0 ** (rng.random(n) * 6.0) * 100.0).astype(np.int64)
        which = rng.integers(0, 10_000, size=n)
        named = which < len(CHANNELS) * 500  # 20% of bids come through a named channel
        channel_id = np.where(named, which % len(CHANNELS), which)
        names = pa.array(CHANNELS).take(pa.array(channel_id % len(CHANNELS)))
        numbered = _join("channel-", pa.array(channel_id).cast(pa.string()))
        import pyarrow.compute as pc

        channel = pc.if_else(pa.array(named), names, numbered)
        base = _join("https://www.nexmark.com/", _strings(rng, n, 5), "/", _strings(rng, n, 5),
                     "/", _strings(rng, n, 5), "/item.htm?query=1")
        with_id = _join(base, "&channel_id=", pa.array(channel_id).cast(pa.string()))
        url = pc.if_else(pa.array(rng.random(n) < 0.9), with_id, base)
        return pa.RecordBatch.from_arrays([
            pa.array(FIRST_AUCTION_ID + auction), pa.array(FIRST_PERSON_ID + bidder),
            pa.array(price), channel, url, times, _strings(rng, n, 8)],
            schema=SCHEMAS["bid"])


def nexmark_batches(table: str, options: dict[str, str], schema: pa.Schema,
                    clock: Clock = time, split: tuple[int, int] = (0, 1),
                    cursor: SourceCursor | None = None) -> Iterator[pa.RecordBatch]:
    """Rows of one Nexmark table, chunk by chunk (chunk c goes to subtask c mod parallelism),
    throttled to the subtask's share of 'rows-per-second' if given."""
    kind = options.get("nexmark.table", "bid")
    if kind not in SCHEMAS:
        msg = (f"table {table!r}: option 'nexmark.table' must be 'person', 'auction' or "
               f"'bid', got {kind!r}")
        raise ConnectorError(msg)
    full = SCHEMAS[kind]
    for f in schema:
        if f.name not in full.names:
            msg = (f"table {table!r}: Nexmark {kind} has no column {f.name!r} (columns: "
                   f"{', '.join(full.names)})")
            raise ConnectorError(msg)
        if full.field(f.name).type != f.type:
            msg = (f"table {table!r}: column {f.name!r} must be "
                   f"{full.field(f.name).type} for Nexmark {kind}")
            raise ConnectorError(msg)
    events = options.get("nexmark.events")
    gen = NexmarkGenerator(kind, int(events) if events is not None else None,
                           int(options.get("nexmark.events-per-second", "10000")),
                           int(options.get("nexmark.seed", "1")),
                           int(options.get("nexmark.out-of-orderness", "0")))
    index, parallelism = split
    limit = options.get("rows-per-second")
    share = int(limit) / parallelism if limit else 0.0
    # Throttled, a chunk goes out in slices of ~0.1 s of rows: a barrier or a cancel waits
    # for one slice, not for a whole chunk's share of seconds.
    piece = max(1, int(share // 10)) if share else 0
    started = clock.monotonic()
    produced = 0
    c = index
    key = f"nexmark:{index}/{parallelism}"  # (its value: the next chunk this subtask reads)
    part = f"nexmark-rows:{index}/{parallelism}"  # ((chunk, rows of it already read))
    while gen.events is None or c * CHUNK < gen.events:
        if cursor is not None and strided_done(cursor.start, "nexmark", c):
            c += parallelism  # (read before the checkpoint)
            continue
        batch = gen.chunk(c).select(schema.names)
        skip = _rows_read(cursor, c) if cursor is not None else 0
        c += parallelism
        at = skip
        while at < batch.num_rows:
            n = batch.num_rows - at if not piece else min(piece, batch.num_rows - at)
            at += n
            if cursor is not None:
                cursor.position = {k: v for k, v in cursor.position.items()
                                   if not k.startswith("nexmark")} | \
                    ({key: c} if at == batch.num_rows else
                     {key: c - parallelism, part: (c - parallelism, at)})
            produced += n
            if share:
                wait = started + produced / share - clock.monotonic()
                if wait > 0:
                    clock.sleep(wait)
            yield batch.slice(at - n, n)
        if cursor is not None and at == skip:  # (nothing left of it: an empty chunk)
            cursor.position = {k: v for k, v in cursor.position.items()
                               if not k.startswith("nexmark")} | {key: c}


def _rows_read(cursor: SourceCursor, chunk: int) -> int:
    """How many rows of ``chunk`` a restored job had read (it stopped inside the chunk)."""
    for k, v in cursor.start.items():
        if k.startswith("nexmark-rows:") and v[0] == chunk:  # type: ignore[index]
            return int(v[1])  # type: ignore[index]
    return 0


class Nexmark(Connector):
    name = "nexmark"
    options: ClassVar[tuple[OptionSpec, ...]] = (
        OptionSpec("nexmark.table", "enum", ("person", "auction", "bid"), required=True),
        OptionSpec("nexmark.events", "int"),
        OptionSpec("nexmark.events-per-second", "int"),
        OptionSpec("nexmark.seed", "int"),
        OptionSpec("nexmark.out-of-orderness", "int"),
        OptionSpec("rows-per-second", "int"),
        OptionSpec("scan.parallelism", "positive"),
        OptionSpec("scan.watermark.idle-timeout", "duration"),
    )
    is_source = True

    def bounded(self, table: TableDef) -> bool:
        return table.option("nexmark.events") is not None

    def statistics(self, source: SourceSpec, schema: Schema, data: object | None,
                   read: frozenset[str] | None = None) -> Estimate | None:
        """The table's share of 'nexmark.events' (1 : 3 : 46); bids spread over auctions."""
        events = source.option("nexmark.events")
        share = {"person": PERSON / PROPORTION, "auction": AUCTIONS / PROPORTION,
                 "bid": BIDS / PROPORTION}[source.option("nexmark.table", "bid") or "bid"]
        rows = float(events) * share if events else UNKNOWN_ROWS
        cols = tuple(ColumnStats(ndv=rows * AUCTIONS / BIDS if f.name == "auction" else None)
                     for f in schema.fields)
        return Estimate(rows, schema_width(schema), cols)

    def checkpoint_refusal(self, read: SourceRead) -> str | None:
        return None  # (chunks are generated from their number: any can be generated again)

    def open_source(self, read: SourceRead) -> Iterator[object]:
        return nexmark_batches(read.table, read.options, read.schema, split=read.split,
                               cursor=read.cursor)


CONNECTOR = Nexmark()
