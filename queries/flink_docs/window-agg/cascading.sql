-- window-agg.md: cascading window aggregation
-- modes: streaming
CREATE TABLE Bid (bidtime TIMESTAMP(3), price DECIMAL(10, 2), item STRING, supplier_id STRING,
    WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'queries/flink_docs/data/bid.csv', 'format' = 'csv');

CREATE VIEW window1 AS
SELECT window_start, window_end, window_time AS rowtime, SUM(price) AS partial_price
  FROM TABLE(TUMBLE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES))
  GROUP BY supplier_id, window_start, window_end, window_time;

SELECT window_start, window_end, SUM(partial_price) AS total_price
  FROM TABLE(TUMBLE(TABLE window1, DESCRIPTOR(rowtime), INTERVAL '10' MINUTES))
  GROUP BY window_start, window_end;
