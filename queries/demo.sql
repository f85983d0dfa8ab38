-- A first look at sqlengine: a generated stream of orders, aggregated per customer.
-- Run it with:  sqlengine run queries/demo.sql

CREATE TABLE orders (
    order_id  BIGINT,
    customer  INT,
    amount    DECIMAL(10, 2),
    status    STRING
) WITH (
    'connector' = 'datagen',
    'number-of-rows' = '100000',
    'rows-per-second' = '1000000',
    'seed' = '42',
    'fields.order_id.kind' = 'sequence',
    'fields.order_id.start' = '1',
    'fields.order_id.end' = '100000',
    'fields.customer.min' = '1',
    'fields.customer.max' = '8',
    'fields.amount.min' = '1',
    'fields.amount.max' = '500',
    'fields.status.length' = '1'
);

-- Big orders per customer, with their share of revenue.
SELECT customer,
       COUNT(*)                         AS orders,
       SUM(amount)                      AS revenue,
       MAX(amount)                      AS biggest,
       COUNT(*) FILTER (WHERE amount > 250) AS big_orders
FROM orders
GROUP BY customer
ORDER BY customer;
