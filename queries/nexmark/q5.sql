-- q5: hot items: the auctions with the most bids in each 10 s window, sliding every 2 s.
SELECT AuctionBids.auction, AuctionBids.num
FROM (
    SELECT auction, COUNT(*) AS num, window_start AS starttime, window_end AS endtime
    FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
    GROUP BY auction, window_start, window_end
) AS AuctionBids
JOIN (
    SELECT MAX(CountBids.num) AS maxn, CountBids.starttime, CountBids.endtime
    FROM (
        SELECT COUNT(*) AS num, window_start AS starttime, window_end AS endtime
        FROM TABLE(HOP(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '2' SECOND, INTERVAL '10' SECOND))
        GROUP BY auction, window_start, window_end
    ) AS CountBids
    GROUP BY CountBids.starttime, CountBids.endtime
) AS MaxBids
ON AuctionBids.starttime = MaxBids.starttime
   AND AuctionBids.endtime = MaxBids.endtime
   AND AuctionBids.num >= MaxBids.maxn;
