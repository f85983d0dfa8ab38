-- The Nexmark tables. NEXMARK_EVENTS is replaced by the runner (default 100000 events).
CREATE TABLE person (
    id BIGINT, name STRING, emailAddress STRING, creditCard STRING, city STRING, state STRING,
    dateTime TIMESTAMP(3), extra STRING,
    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND
) WITH ('connector' = 'nexmark', 'nexmark.table' = 'person', 'nexmark.events' = 'NEXMARK_EVENTS');

CREATE TABLE auction (
    id BIGINT, itemName STRING, description STRING, initialBid BIGINT, reserve BIGINT,
    dateTime TIMESTAMP(3), expires TIMESTAMP(3), seller BIGINT, category BIGINT, extra STRING,
    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND
) WITH ('connector' = 'nexmark', 'nexmark.table' = 'auction', 'nexmark.events' = 'NEXMARK_EVENTS');

CREATE TABLE bid (
    auction BIGINT, bidder BIGINT, price BIGINT, channel STRING, url STRING,
    dateTime TIMESTAMP(3), extra STRING,
    WATERMARK FOR dateTime AS dateTime - INTERVAL '4' SECOND
) WITH ('connector' = 'nexmark', 'nexmark.table' = 'bid', 'nexmark.events' = 'NEXMARK_EVENTS');
