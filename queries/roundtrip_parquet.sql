-- INSERT INTO a parquet sink, then read it back: filesystem tables are sources and sinks.
CREATE TABLE numbers (id BIGINT, bucket INT, label STRING) WITH (
    'connector' = 'datagen',
    'number-of-rows' = '1000',
    'rows-per-second' = '1000000',
    'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '1000',
    'fields.bucket.min' = '0', 'fields.bucket.max' = '0',
    'fields.label.length' = '3'
);

CREATE TABLE store (id BIGINT, parity STRING, square BIGINT) WITH (
    'connector' = 'filesystem', 'path' = 'out/roundtrip', 'format' = 'parquet'
);

INSERT OVERWRITE store
SELECT id, CASE WHEN MOD(id, 2) = 0 THEN 'even' ELSE 'odd' END, id * id FROM numbers;

SELECT parity, COUNT(*) AS n, SUM(square) AS sum_sq, MIN(id) AS first_id, MAX(id) AS last_id
FROM store GROUP BY parity ORDER BY parity;
