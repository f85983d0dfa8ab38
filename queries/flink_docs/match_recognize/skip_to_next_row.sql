-- match_recognize.md: skip to next row
-- modes: streaming batch
CREATE TABLE Ticker (symbol STRING, rowtime TIMESTAMP(3), price BIGINT, tax BIGINT, WATERMARK FOR rowtime AS rowtime - INTERVAL '2' SECOND) WITH ('connector' = 'filesystem', 'path' = 'queries/flink_docs/data/ticker_xyz_skip.csv', 'format' = 'csv');

SELECT * FROM Ticker MATCH_RECOGNIZE (
    PARTITION BY symbol ORDER BY rowtime
    MEASURES SUM(A.price) AS sumPrice, FIRST(rowtime) AS startTime, LAST(rowtime) AS endTime
    ONE ROW PER MATCH AFTER MATCH SKIP TO NEXT ROW
    PATTERN (A+ C)
    DEFINE A AS SUM(A.price) < 30);
