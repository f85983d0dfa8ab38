-- q2: selection of bids on a few auctions.
SELECT auction, price FROM bid WHERE MOD(auction, 123) = 0;
