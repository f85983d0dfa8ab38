"""Our Spark runtime against the same queries written by hand in PySpark, on the same
generated Nexmark bids (written once to parquet). Prints seconds per query and the ratio.

    python -m bench.spark [--events 2000000] [--repeat 3]
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
    args = parser.parse_args()
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


if __name__ == "__main__":
    main()
