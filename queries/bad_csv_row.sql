-- fail: queries/data/readings.csv:4: cannot parse row
CREATE TABLE readings (sensor STRING, celsius DOUBLE) WITH (
    'connector' = 'filesystem', 'path' = 'queries/data/readings.csv', 'format' = 'csv',
    'csv.allow-comments' = 'true'
);

SELECT * FROM readings;
