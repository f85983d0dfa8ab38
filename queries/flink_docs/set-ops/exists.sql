-- set-ops.md: EXISTS
-- modes: streaming batch
-- expected-by-hand: Flink 2.3 fails on this page's example (TableException: unexpected
-- correlate variable $cor0 in the plan); the rows are the page's.
CREATE VIEW t1(s) AS VALUES ('c'), ('a'), ('b'), ('b'), ('c');
CREATE VIEW t2(s) AS VALUES ('d'), ('e'), ('a'), ('b'), ('b');

SELECT s FROM t1 WHERE EXISTS (SELECT s FROM t2 WHERE t2.s = t1.s);
