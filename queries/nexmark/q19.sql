-- q19: the ten highest bids of each auction, with their rank.
SELECT *
FROM (
    SELECT *, ROW_NUMBER() OVER (PARTITION BY auction
                                 ORDER BY price DESC, dateTime ASC, bidder ASC, extra ASC)
               AS rank_number
    FROM bid
)
WHERE rank_number <= 10;
