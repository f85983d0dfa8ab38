-- window-join.md: LEFT window join
-- modes: streaming batch
CREATE TABLE LeftTable (row_time TIMESTAMP(3), num INT, id STRING,
    WATERMARK FOR row_time AS row_time - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'queries/flink_docs/data/left.csv', 'format' = 'csv');
CREATE TABLE RightTable (row_time TIMESTAMP(3), num INT, id STRING,
    WATERMARK FOR row_time AS row_time - INTERVAL '1' SECOND)
WITH ('connector' = 'filesystem', 'path' = 'queries/flink_docs/data/right.csv', 'format' = 'csv');

SELECT L.num AS L_Num, L.id AS L_Id, R.num AS R_Num, R.id AS R_Id, L.window_start, L.window_end
  FROM (SELECT * FROM TABLE(TUMBLE(TABLE LeftTable, DESCRIPTOR(row_time), INTERVAL '5' MINUTES))) L
  LEFT JOIN (SELECT * FROM TABLE(TUMBLE(TABLE RightTable, DESCRIPTOR(row_time), INTERVAL '5' MINUTES))) R
  ON L.num = R.num AND L.window_start = R.window_start AND L.window_end = R.window_end;
