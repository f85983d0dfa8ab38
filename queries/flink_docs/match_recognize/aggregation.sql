-- match_recognize.md: aggregation
-- modes: streaming batch
CREATE TABLE Ticker (symbol STRING, rowtime TIMESTAMP(3), price BIGINT, tax BIGINT, WATERMARK FOR rowtime AS rowtime - INTERVAL '2' SECOND) WITH ('connector' = 'filesystem', 'path' = 'queries/flink_docs/data/ticker_acme_avg.csv', 'format' = 'csv');

SELECT * FROM Ticker MATCH_RECOGNIZE (
        PARTITION BY symbol ORDER BY rowtime
        MEASURES FIRST(A.rowtime) AS start_tstamp, LAST(A.rowtime) AS end_tstamp,
            AVG(A.price) AS avgPrice
        ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
        PATTERN (A+ B)
        DEFINE A AS AVG(A.price) < 15) MR;
