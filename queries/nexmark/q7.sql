-- q7: highest bid in each 10 s window, with the bid that made it.
SELECT B.auction, B.price, B.bidder, B.dateTime, B.extra
FROM bid AS B
JOIN (
    SELECT MAX(price) AS maxprice, window_end AS dateTime
    FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(dateTime), INTERVAL '10' SECOND))
    GROUP BY window_start, window_end
) AS B1
ON B.price = B1.maxprice
WHERE B.dateTime BETWEEN B1.dateTime - INTERVAL '10' SECOND AND B1.dateTime;
