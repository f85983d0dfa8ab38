-- match_recognize.md: price drop
-- modes: streaming batch
CREATE TABLE Ticker (symbol STRING, rowtime TIMESTAMP(3), price BIGINT, tax BIGINT, WATERMARK FOR rowtime AS rowtime - INTERVAL '2' SECOND) WITH ('connector' = 'filesystem', 'path' = 'queries/flink_docs/data/ticker_acme_drop.csv', 'format' = 'csv');

SELECT * FROM Ticker MATCH_RECOGNIZE (
        PARTITION BY symbol ORDER BY rowtime
        MEASURES START_ROW.rowtime AS start_tstamp, LAST(PRICE_DOWN.rowtime) AS bottom_tstamp,
            LAST(PRICE_UP.rowtime) AS end_tstamp
        ONE ROW PER MATCH
        AFTER MATCH SKIP TO LAST PRICE_UP
        PATTERN (START_ROW PRICE_DOWN+ PRICE_UP)
        DEFINE
            PRICE_DOWN AS (LAST(PRICE_DOWN.price, 1) IS NULL AND PRICE_DOWN.price <
                START_ROW.price) OR PRICE_DOWN.price < LAST(PRICE_DOWN.price, 1),
            PRICE_UP AS PRICE_UP.price > LAST(PRICE_DOWN.price, 1)) MR;
