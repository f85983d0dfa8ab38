-- match_recognize.md: greedy
-- modes: streaming batch
CREATE TABLE Ticker (symbol STRING, rowtime TIMESTAMP(3), price BIGINT, tax BIGINT, WATERMARK FOR rowtime AS rowtime - INTERVAL '2' SECOND) WITH ('connector' = 'filesystem', 'path' = 'queries/flink_docs/data/ticker_xyz_greedy.csv', 'format' = 'csv');

SELECT * FROM Ticker MATCH_RECOGNIZE (
        PARTITION BY symbol ORDER BY rowtime
        MEASURES C.price AS lastPrice
        ONE ROW PER MATCH AFTER MATCH SKIP PAST LAST ROW
        PATTERN (A B* C)
        DEFINE A AS A.price > 10, B AS B.price < 15, C AS C.price > 12);
