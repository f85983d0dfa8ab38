-- q0: pass-through. Measures the cost of reading and writing bids.
SELECT auction, bidder, price, dateTime, extra FROM bid;
