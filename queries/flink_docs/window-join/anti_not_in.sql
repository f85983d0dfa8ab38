-- window-join.md: ANTI window join with NOT IN
-- modes: streaming batch
CREATE TABLE LeftTable (row_time TIMESTAMP(3), num INT, id STRING,
    WATERMARK FOR row_time AS row_time - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'queries/flink_docs/data/left.csv', 'format' = 'csv');
CREATE TABLE RightTable (row_time TIMESTAMP(3), num INT, id STRING,
    WATERMARK FOR row_time AS row_time - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'queries/flink_docs/data/right.csv', 'format' = 'csv');

SELECT *
  FROM (SELECT * FROM TABLE(TUMBLE(TABLE LeftTable, DESCRIPTOR(row_time), INTERVAL '5' MINUTES))) L
  WHERE L.num NOT IN (
    SELECT num FROM (SELECT * FROM TABLE(TUMBLE(TABLE RightTable, DESCRIPTOR(row_time), INTERVAL '5' MINUTES))) R
    WHERE L.window_start = R.window_start AND L.window_end = R.window_end);
