-- clean: /tmp/sqlengine-flink-features
-- A Flink SQL file as a Flink user writes it: nested types and UNNEST, JSON functions, a CDC
-- source (debezium-json) joined with a stream, and a statement set writing two tables.
CREATE TABLE shop_orders (
  order_id INT,
  customer STRING,
  items ARRAY<ROW<sku STRING, qty INT, price DOUBLE>>,
  meta STRING
) WITH ('connector' = 'filesystem', 'path' = 'queries/data/shop_orders.json', 'format' = 'json');

CREATE TABLE shop_products (
  sku STRING,
  name STRING,
  category STRING,
  PRIMARY KEY (sku) NOT ENFORCED
) WITH ('connector' = 'filesystem', 'path' = 'queries/data/shop_products.debezium.json',
        'format' = 'debezium-json');

SELECT order_id, customer, CARDINALITY(items) AS n_items, items[1].sku AS first_sku,
       JSON_VALUE(meta, '$.channel') AS channel, JSON_EXISTS(meta, '$.coupon') AS has_coupon,
       meta IS JSON AS valid_meta
FROM shop_orders;

SELECT o.customer, i.sku, SUM(CAST(i.qty * i.price AS DECIMAL(10, 2))) AS spent
FROM shop_orders AS o CROSS JOIN UNNEST(o.items) AS i (sku, qty, price)
GROUP BY o.customer, i.sku;

SELECT order_id, JSON_QUERY(meta, '$.tags') AS tags,
       JSON_OBJECT('id' VALUE order_id, 'who' VALUE customer) AS doc
FROM shop_orders;

SELECT i.sku, p.name, p.category, SUM(i.qty) AS qty
FROM shop_orders AS o
CROSS JOIN UNNEST(o.items) AS i (sku, qty, price)
JOIN shop_products AS p ON i.sku = p.sku
GROUP BY i.sku, p.name, p.category;

CREATE TABLE order_lines (order_id INT, sku STRING, qty INT) WITH (
  'connector' = 'filesystem', 'path' = '/tmp/sqlengine-flink-features/lines', 'format' = 'csv');
CREATE TABLE web_orders (order_id INT, coupon STRING) WITH (
  'connector' = 'filesystem', 'path' = '/tmp/sqlengine-flink-features/web', 'format' = 'csv');

EXECUTE STATEMENT SET BEGIN
INSERT INTO order_lines
  SELECT o.order_id, i.sku, i.qty FROM shop_orders AS o CROSS JOIN UNNEST(o.items) AS i (sku, qty, price);
INSERT INTO web_orders
  SELECT order_id, COALESCE(JSON_VALUE(meta, '$.coupon'), 'none') FROM shop_orders
  WHERE JSON_VALUE(meta, '$.channel') = 'web';
END;

SELECT * FROM order_lines;
SELECT * FROM web_orders;
