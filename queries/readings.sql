-- A value that does not read as its column's type is NULL, its row kept, when csv.ignore-parse-errors
-- is set (as Flink: s1 counts its row with "not-a-number", whose celsius is NULL).
CREATE TABLE readings (sensor STRING, celsius DOUBLE) WITH (
    'connector' = 'filesystem',
    'path' = 'queries/data/readings.csv',
    'format' = 'csv',
    'csv.allow-comments' = 'true',
    'csv.ignore-parse-errors' = 'true'
);

SET 'execution.runtime-mode' = 'batch';

SELECT sensor, COUNT(*) AS n, MIN(celsius) AS lo, MAX(celsius) AS hi,
       ROUND(AVG(celsius) * 9 / 5 + 32, 1) AS avg_f
FROM readings
GROUP BY sensor
ORDER BY sensor;
