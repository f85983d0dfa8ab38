-- q11: user sessions: bids per bidder per session (a gap of 10 s closes a session).
SELECT B.bidder, COUNT(*) AS bid_count, window_start AS starttime, window_end AS endtime
FROM TABLE(SESSION(TABLE bid PARTITION BY bidder, DESCRIPTOR(dateTime), INTERVAL '10' SECOND)) AS B
GROUP BY B.bidder, window_start, window_end;
