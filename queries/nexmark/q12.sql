-- q12: processing-time windows: bids per bidder in 10 s windows of wall-clock time. The rows
-- depend on when the query runs; every bid lands in exactly one window.
CREATE TEMPORARY VIEW bid_p AS SELECT *, PROCTIME() AS p_time FROM bid;

SELECT B.bidder, COUNT(*) AS bid_count, window_start, window_end
FROM TABLE(TUMBLE(TABLE bid_p, DESCRIPTOR(p_time), INTERVAL '10' SECOND)) AS B
GROUP BY B.bidder, window_start, window_end;
