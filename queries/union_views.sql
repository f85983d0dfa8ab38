-- Views, UNION ALL, DISTINCT, subqueries and LIMIT over VALUES.
CREATE VIEW fruit (name, price) AS
VALUES ('apple', 1.20), ('banana', 0.50), ('cherry', 4.00), ('apple', 1.20);

CREATE TEMPORARY VIEW veg AS SELECT * FROM (VALUES ('leek', 2.10), ('kale', 3.00)) AS v (name, price);

SELECT DISTINCT name, price FROM fruit ORDER BY name;

SELECT kind, COUNT(*) AS items, MAX(price) AS top
FROM (SELECT 'fruit' AS kind, price FROM fruit UNION ALL SELECT 'veg' AS kind, price FROM veg) AS all_items
GROUP BY kind
ORDER BY kind;

SELECT name FROM veg ORDER BY price DESC LIMIT 1;
