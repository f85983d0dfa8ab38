-- JSON lines: one object per line; missing fields are NULL, unknown ones ignored.
CREATE TABLE events (`user` STRING, action STRING, ms INT, ts TIMESTAMP(3))
WITH ('connector' = 'filesystem', 'path' = 'queries/data/events.json', 'format' = 'json');

SELECT `user`,
       UPPER(action) AS action,
       CASE WHEN ms IS NULL THEN 'unknown' WHEN ms > 500 THEN 'slow' ELSE 'fast' END AS speed,
       ms / 100 AS tenths,
       CAST(ts AS STRING) AS at
FROM events
WHERE LOWER(action) IN ('click', 'view', 'purchase')
ORDER BY `user`, at;

-- Distinct users that clicked, with their total time.
WITH clicks AS (SELECT `user`, ms FROM events WHERE LOWER(action) = 'click')
SELECT `user`, COUNT(*) AS clicks, SUM(ms) AS total_ms FROM clicks GROUP BY `user`;
