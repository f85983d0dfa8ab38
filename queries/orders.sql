-- Orders and customers from CSV files (Flink's csv format: no header row).
CREATE TABLE orders (
    order_id  BIGINT,
    customer  INT,
    placed_at TIMESTAMP(3),
    amount    DECIMAL(10, 2),
    status    STRING,
    WATERMARK FOR placed_at AS placed_at - INTERVAL '5' SECOND
) WITH ('connector' = 'filesystem', 'path' = 'queries/data/orders.csv', 'format' = 'csv');

CREATE TABLE customers (id INT, name STRING, city STRING)
WITH ('connector' = 'filesystem', 'path' = 'queries/data/customers.csv', 'format' = 'csv');

-- Revenue per status (an updating GROUP BY; the final result is printed).
SELECT status, COUNT(*) AS n, SUM(amount) AS revenue, AVG(amount) AS avg_amount
FROM orders
GROUP BY status
ORDER BY status;

-- Who ordered what; customers without orders appear with NULLs (LEFT JOIN).
SELECT c.name, c.city, o.order_id, o.amount
FROM customers AS c LEFT JOIN orders AS o ON c.id = o.customer
ORDER BY c.name, o.order_id;

-- Cities by shipped revenue, biggest first.
SELECT COALESCE(c.city, 'unknown') AS city, SUM(o.amount) AS shipped
FROM orders AS o JOIN customers AS c ON o.customer = c.id
WHERE o.status = 'shipped'
GROUP BY COALESCE(c.city, 'unknown')
ORDER BY shipped DESC;
