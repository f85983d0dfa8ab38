-- q10: log bids to a file system, with the day and minute they belong to (the benchmark
-- partitions the files by them; here they are columns), then read the files back.
CREATE TEMPORARY TABLE q10_sink (
    auction BIGINT, bidder BIGINT, price BIGINT, dateTime TIMESTAMP(3), extra STRING,
    dt STRING, hm STRING
) WITH ('connector' = 'filesystem', 'path' = 'out/nexmark-q10', 'format' = 'csv');

INSERT OVERWRITE q10_sink
SELECT auction, bidder, price, dateTime, extra, DATE_FORMAT(dateTime, 'yyyy-MM-dd'),
       DATE_FORMAT(dateTime, 'HH:mm')
FROM bid;

SELECT * FROM q10_sink;
