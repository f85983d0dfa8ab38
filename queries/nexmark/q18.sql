-- q18: the last bid of each bidder on each auction (deduplication keeping the latest row;
-- equal times are broken by price and extra so the answer is unique).
SELECT auction, bidder, price, channel, url, dateTime, extra
FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder, auction
                                 ORDER BY dateTime DESC, price DESC, extra DESC) AS rank_number
    FROM bid
)
WHERE rank_number <= 1;
