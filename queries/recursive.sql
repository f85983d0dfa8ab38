-- Recursive queries: WITH RECURSIVE runs as an iteration (the step over each round's new
-- rows until a round adds none). A route network with a cycle, and a bill of materials.
CREATE TABLE flights (src STRING, dst STRING, minutes INT)
WITH ('connector' = 'filesystem', 'path' = 'queries/data/flights.csv', 'format' = 'csv');

CREATE TABLE parts (assembly STRING, part STRING, qty INT)
WITH ('connector' = 'filesystem', 'path' = 'queries/data/parts.csv', 'format' = 'csv');

-- Where can you get from Lisbon, in how few legs? (UNION: each route once; the cycle
-- AMS -> LHR -> JFK -> SFO -> AMS ends when a round finds nothing new.)
WITH RECURSIVE reach (city, legs) AS (
    SELECT dst, 1 FROM flights WHERE src = 'LIS'
    UNION
    SELECT f.dst, r.legs + 1 FROM reach AS r JOIN flights AS f ON f.src = r.city
    WHERE r.legs < 6
)
SELECT city, MIN(legs) AS fewest_legs FROM reach GROUP BY city ORDER BY fewest_legs, city;

-- How many of each part does a bike need? (UNION ALL: quantities multiply down the tree.)
WITH RECURSIVE need (part, qty) AS (
    SELECT part, qty FROM parts WHERE assembly = 'bike'
    UNION ALL
    SELECT p.part, n.qty * p.qty FROM need AS n JOIN parts AS p ON p.assembly = n.part
)
SELECT part, SUM(qty) AS total FROM need GROUP BY part ORDER BY part;
