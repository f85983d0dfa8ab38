-- window-agg.md: group window aggregation (deprecated syntax)
-- modes: streaming batch
CREATE TABLE Bid (bidtime TIMESTAMP(3), price DECIMAL(10, 2), item STRING, supplier_id STRING,
    WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'queries/flink_docs/data/bid.csv', 'format' = 'csv');

SELECT TUMBLE_START(bidtime, INTERVAL '10' MINUTE) AS wstart, TUMBLE_END(bidtime, INTERVAL '10' MINUTE) AS wend, SUM(price) AS price
  FROM Bid GROUP BY TUMBLE(bidtime, INTERVAL '10' MINUTE);
