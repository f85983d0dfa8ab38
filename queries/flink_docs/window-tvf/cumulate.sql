-- window-tvf.md: CUMULATE
-- modes: streaming batch
CREATE TABLE Bid (bidtime TIMESTAMP(3), price DECIMAL(10, 2), item STRING, supplier_id STRING,
    WATERMARK FOR bidtime AS bidtime - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'queries/flink_docs/data/bid.csv', 'format' = 'csv');

SELECT * FROM CUMULATE(TABLE Bid, DESCRIPTOR(bidtime), INTERVAL '2' MINUTES, INTERVAL '10' MINUTES);
