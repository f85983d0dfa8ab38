-- q13: bounded side input join: every bid with the value of its side-input key. The
-- benchmark uses a lookup join (FOR SYSTEM_TIME AS OF); a regular join with a bounded file
-- gives the same rows.
CREATE TEMPORARY TABLE side_input (`key` BIGINT, `value` STRING)
WITH ('connector' = 'filesystem', 'path' = 'queries/nexmark/side_input.csv', 'format' = 'csv');

SELECT B.auction, B.bidder, B.price, B.dateTime, S.`value`
FROM bid AS B JOIN side_input AS S ON MOD(B.auction, 1000) = S.`key`;
