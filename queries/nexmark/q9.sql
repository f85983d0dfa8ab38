-- q9: winning bids: the highest bid on each auction while it is open (ties go to the earlier
-- bid, then the lower bidder id, so the answer is unique).
SELECT id, itemName, description, initialBid, reserve, dateTime, expires, seller, category,
       extra, auction, bidder, price, bid_dateTime, bid_extra
FROM (
    SELECT A.*, B.auction, B.bidder, B.price, B.dateTime AS bid_dateTime, B.extra AS bid_extra,
           ROW_NUMBER() OVER (PARTITION BY A.id
                              ORDER BY B.price DESC, B.dateTime ASC, B.bidder ASC, B.extra ASC)
               AS rownum
    FROM auction AS A JOIN bid AS B ON A.id = B.auction
    WHERE B.dateTime BETWEEN A.dateTime AND A.expires
)
WHERE rownum <= 1;
