-- q20: bids expanded with their auction, for auctions in category 10.
SELECT auction, bidder, price, channel, url, B.dateTime AS bid_time, B.extra AS bid_extra,
       itemName, description, initialBid, reserve, A.dateTime AS auction_time, expires, seller,
       category, A.extra AS auction_extra
FROM bid AS B INNER JOIN auction AS A ON B.auction = A.id
WHERE A.category = 10;
