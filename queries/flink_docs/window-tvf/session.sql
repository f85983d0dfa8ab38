-- window-tvf.md: SESSION partitioned by item
-- modes: streaming
CREATE TABLE Bid (bidtime TIMESTAMP(3), price DECIMAL(10, 2), item STRING, supplier_id STRING,
    WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'queries/flink_docs/data/bid.csv', 'format' = 'csv');

SELECT * FROM SESSION(TABLE Bid PARTITION BY item, DESCRIPTOR(bidtime), INTERVAL '5' MINUTES);
