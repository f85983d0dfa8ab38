-- set-ops.md: IN
-- modes: streaming batch
CREATE VIEW t1(s) AS VALUES ('c'), ('a'), ('b'), ('b'), ('c');
CREATE VIEW t2(s) AS VALUES ('d'), ('e'), ('a'), ('b'), ('b');

SELECT s FROM t1 WHERE s IN (SELECT s FROM t2);
