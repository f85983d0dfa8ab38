-- fail: unknown column 'amount_usd'
CREATE TABLE orders (order_id BIGINT, amount DECIMAL(10, 2))
WITH ('connector' = 'filesystem', 'path' = 'queries/data/orders.csv', 'format' = 'csv');

SELECT order_id, amount_usd FROM orders;
