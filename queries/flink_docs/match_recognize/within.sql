-- match_recognize.md: within
-- modes: streaming batch
CREATE TABLE Ticker (symbol STRING, rowtime TIMESTAMP(3), price BIGINT, tax BIGINT, WATERMARK FOR rowtime AS rowtime - INTERVAL '2' SECOND) WITH ('connector' = 'filesystem', 'path' = 'queries/flink_docs/data/ticker_acme_within.csv', 'format' = 'csv');

SELECT * FROM Ticker MATCH_RECOGNIZE (
        PARTITION BY symbol ORDER BY rowtime
        MEASURES C.rowtime AS dropTime, A.price - C.price AS dropDiff
        ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
        PATTERN (A B* C) WITHIN INTERVAL '1' HOUR
        DEFINE B AS B.price > A.price - 10, C AS C.price < A.price - 10);
