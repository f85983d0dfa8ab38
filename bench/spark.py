"""Our Spark runtime against the same queries written by hand in PySpark, on the same
generated Nexmark bids (written once to parquet). Prints seconds per query and the ratio.

    python -m bench.spark [--events 2000000] [--repeat 3]
    python -m bench.spark --streaming [--events 1000000] [--repeat 1] [--queries q5,q7]

``--streaming``: the windowed Nexmark queries (q5, q7, q8, q11, q12) in streaming mode on
Structured Streaming (local[2]) against the same queries written by hand with PySpark's
Structured Streaming API, both reading the same parquet files (person, auction, bid) with a
4 s watermark, each run an availableNow trigger collecting its rows through foreachBatch.
The hand-written queries read, beside the data file, a file holding one row far in the
future, so that Spark emits their last windows, as our runtime adds such a row itself; they
run with the session settings our runtime runs a streaming query with (exchange reuse off,
no filter pushed below a watermark: runtime/spark/streaming.py _STREAMING_CONF). q12
(processing-time windows) has no append-mode form by hand: complete mode over
current_timestamp(), its last micro-batch the result.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--streaming", action="store_true")
    parser.add_argument("--queries", default="")
    args = parser.parse_args()
    if args.streaming:
        streaming(args.events, args.repeat, [q for q in args.queries.split(",") if q])
        return
    sys.path.insert(0, str(ROOT))
    import pyarrow.parquet as pq
    from pyspark.sql import functions as F

    import sqlengine
    from sqlengine.runtime.spark.session import spark_session
    from tests.nexmark import tables

    tmp = Path(tempfile.mkdtemp())
    bid = tables(args.events)["bid"]
    pq.write_table(bid, tmp / "bid.parquet")
    options = {"execution.target": "spark", "execution.runtime-mode": "batch",
               "spark.master": "local[2]"}
    s = sqlengine.connect(options)
    s.execute(f"""CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT,
        channel STRING, url STRING, dateTime TIMESTAMP(3), extra STRING,
        WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND)
        WITH ('connector' = 'filesystem', 'path' = '{tmp}/bid.parquet', 'format' = 'parquet')""")
    spark = spark_session(options)

    class Bids:
        # The hand-written queries read the file inside the timed region, as ours do.
        def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
            return getattr(spark.read.parquet(str(tmp / "bid.parquet")), name)

    df = Bids()

    cases = {
        "q1 (projection)": (
            "SELECT auction, bidder, price * 908 / 1000 AS price, dateTime FROM bid",
            lambda: df.select("auction", "bidder",
                              (F.col("price") * 908).cast("long").alias("p"), "dateTime")),
        "q2 (filter)": (
            "SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0",
            lambda: df.where(F.col("auction") % 123 == 0).select("auction", "price")),
        "group by": (
            "SELECT auction, COUNT(*) AS n, MAX(price) AS top, SUM(price) AS total FROM bid "
            "GROUP BY auction",
            lambda: df.groupBy("auction").agg(F.count(F.lit(1)).alias("n"),
                                              F.max("price"), F.sum("price"))),
        "tumble 10 s": (
            "SELECT auction, window_start, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE bid, "
            "DESCRIPTOR(dateTime), INTERVAL '10' SECOND)) GROUP BY auction, window_start, "
            "window_end",
            lambda: df.groupBy("auction", F.window("dateTime", "10 seconds")).count()),
        "top 3 per auction": (
            "SELECT * FROM (SELECT auction, price, ROW_NUMBER() OVER (PARTITION BY auction "
            "ORDER BY price DESC) AS rn FROM bid) WHERE rn <= 3",
            lambda: df.select("auction", "price", F.row_number().over(
                __import__("pyspark.sql", fromlist=["Window"]).Window.partitionBy("auction")
                .orderBy(F.col("price").desc())).alias("rn")).where("rn <= 3")),
    }
    results = []
    print(f"{'query':<20}{'ours s':>9}{'by hand s':>11}{'ratio':>8}{'rows':>10}", flush=True)
    for name, (sql, hand) in cases.items():
        ours, theirs = [], []
        n = 0
        for _ in range(args.repeat):
            t = time.perf_counter()
            n = s.sql(sql).collect().num_rows
            ours.append(time.perf_counter() - t)
            t = time.perf_counter()
            m = hand().toArrow().num_rows
            theirs.append(time.perf_counter() - t)
            assert m == n, (name, m, n)
        a, b = min(ours), min(theirs)
        results.append({"query": name, "ours_s": round(a, 3), "hand_s": round(b, 3),
                        "ratio": round(a / b, 2), "rows": n})
        print(f"{name:<20}{a:>9.3f}{b:>11.3f}{a / b:>8.2f}{n:>10}", flush=True)
    print(json.dumps(results))


_SENTINEL = 253_370_764_800_000  # 9999-01-01 (ms): after any real event time


def streaming(events: int, repeat: int, names: list[str]) -> None:
    """Windowed Nexmark queries on Structured Streaming: ours vs by hand (see the note)."""
    sys.path.insert(0, str(ROOT))
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pyspark.sql import functions as F

    import sqlengine
    from sqlengine.runtime.spark.session import spark_session
    from sqlengine.runtime.spark.streaming import streaming_conf
    from tests.nexmark import queries, query, tables

    tmp = Path(tempfile.mkdtemp(prefix="sqlengine-bench-spark-"))
    data = tables(events)
    for name, table in data.items():
        folder = tmp / name
        folder.mkdir()
        pq.write_table(table, folder / "part-0.parquet")
        end = {f.name: pa.nulls(1, f.type) for f in table.schema}
        end["dateTime"] = pa.array([_SENTINEL], pa.timestamp("ms"))
        pq.write_table(pa.table(end).cast(table.schema), tmp / f"{name}-end.parquet")
    # (one JVM runs every query of both sides: at 1M events Spark's default 1 GB heap ran out
    # by the second query)
    options = {"execution.target": "spark", "spark.master": "local[2]",
               "spark.driver.memory": "4g"}
    spark = spark_session(options)
    ddl = (ROOT / "queries" / "nexmark" / "ddl.sql").read_text()

    def ours(name: str) -> int:
        s = sqlengine.connect(options)
        for t in data:
            s.execute(_ddl_as_file(ddl, t, tmp / t / "part-0.parquet"))
        return query(s, queries()[name]).collect().num_rows

    def read(table: str):  # type: ignore[no-untyped-def]
        schema = spark.read.parquet(str(tmp / table)).schema
        df = spark.readStream.schema(schema).parquet(str(tmp / table))
        return df.withColumn("dateTime", F.col("dateTime").cast("timestamp_ltz")) \
            .withWatermark("dateTime", "4 seconds")

    def q5():  # type: ignore[no-untyped-def]
        counts = read("bid").groupBy(F.window("dateTime", "10 seconds", "2 seconds")
                                     .alias("w"), "auction").agg(F.count("*").alias("num"))
        maxes = counts.groupBy("w").agg(F.max("num").alias("maxn"))
        c, m = counts.alias("c"), maxes.alias("m")
        return c.join(m, (F.col("c.w") == F.col("m.w")) &
                      (F.col("c.num") >= F.col("m.maxn"))).select("c.auction", "c.num")

    def q7():  # type: ignore[no-untyped-def]
        b = read("bid")
        m = read("bid").groupBy(F.window("dateTime", "10 seconds").alias("w")).agg(
            F.max("price").alias("maxprice")).select(F.col("w.end").alias("we"), "maxprice")
        return b.join(m, (b.price == m.maxprice) & b.dateTime.between(
            m.we - F.expr("INTERVAL 10 SECONDS"), m.we)).select(
            "auction", "price", "bidder", "dateTime", "extra")

    def q8():  # type: ignore[no-untyped-def]
        p = read("person").groupBy(F.window("dateTime", "10 seconds").alias("pw"), "id",
                                   "name").count()
        a = read("auction").groupBy(F.window("dateTime", "10 seconds").alias("aw"),
                                    "seller").count()
        return p.join(a, (p.id == a.seller) & (p.pw == a.aw)).select(
            "id", "name", F.col("pw.start"))

    def q11():  # type: ignore[no-untyped-def]
        return read("bid").groupBy(F.session_window("dateTime", "10 seconds").alias("s"),
                                   "bidder").agg(F.count("*").alias("bid_count")).select(
            "bidder", "bid_count", "s.start", "s.end")

    def q12():  # type: ignore[no-untyped-def]
        b = read("bid").withColumn("pt", F.current_timestamp())
        return b.groupBy(F.window("pt", "10 seconds").alias("w"), "bidder").agg(
            F.count("*").alias("bid_count")).select("bidder", "bid_count", "w.start", "w.end")

    hand = {"q5": q5, "q7": q7, "q8": q8, "q11": q11, "q12": q12}

    def by_hand(name: str) -> int:
        for t in data:  # (the row that closes the last windows, read beside the data)
            end = tmp / t / "end.parquet"
            if name != "q12" and not end.exists():  # (complete mode: nothing to close)
                end.hardlink_to(tmp / f"{t}-end.parquet")
        out: list[int] = []
        mode = "complete" if name == "q12" else "append"
        folder = Path(tempfile.mkdtemp(prefix="sqlengine-bench-ckpt-"))
        try:
            with streaming_conf(spark):
                q = (hand[name]().writeStream.outputMode(mode).trigger(availableNow=True)
                     .option("checkpointLocation", str(folder))
                     .foreachBatch(lambda b, _: out.append(b.toArrow().num_rows)).start())
                q.awaitTermination()
        finally:
            for t in data:
                (tmp / t / "end.parquet").unlink(missing_ok=True)
        return out[-1] if mode == "complete" else sum(out)

    results = []
    print(f"{'query':<8}{'ours s':>9}{'by hand s':>11}{'ratio':>8}{'rows':>9}{'hand rows':>11}",
          flush=True)
    for name in names or list(hand):
        a, b, n, m = [], [], 0, 0
        for _ in range(repeat):
            t = time.perf_counter()
            n = ours(name)
            a.append(time.perf_counter() - t)
            t = time.perf_counter()
            m = by_hand(name)
            b.append(time.perf_counter() - t)
        results.append({"query": name, "events": events, "ours_s": round(min(a), 2),
                        "hand_s": round(min(b), 2), "ratio": round(min(a) / min(b), 2),
                        "rows": n, "hand_rows": m})
        print(f"{name:<8}{min(a):>9.2f}{min(b):>11.2f}{min(a) / min(b):>8.2f}{n:>9}{m:>11}",
              flush=True)
    print(json.dumps(results))


def _ddl_as_file(ddl: str, table: str, path: Path) -> str:
    """The suite's CREATE TABLE of ``table``, reading ``path`` (parquet) instead."""
    start = ddl.index(f"CREATE TABLE {table} (")
    stmt = ddl[start:ddl.index(";", start)]
    head = stmt[:stmt.index(") WITH (")]
    return f"{head}) WITH ('connector' = 'filesystem', 'path' = '{path}', " \
        "'format' = 'parquet')"


if __name__ == "__main__":
    main()
