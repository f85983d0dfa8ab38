"""EXPLAIN goldens: chains that merge, chains a shuffle breaks, chaining switched off."""

from __future__ import annotations

from pathlib import Path

import pytest

import sqlengine

GOLDEN = Path(__file__).parent / "golden" / "explain"

DDL = """
CREATE TABLE orders (order_id BIGINT, customer INT, amount DECIMAL(10, 2), status STRING)
WITH ('connector' = 'filesystem', 'path' = 'queries/data/orders.csv', 'format' = 'csv');
CREATE TABLE customers (id INT, name STRING, city STRING)
WITH ('connector' = 'filesystem', 'path' = 'queries/data/customers.csv', 'format' = 'csv');
CREATE TABLE out_print (status STRING, n BIGINT) WITH ('connector' = 'print');
"""

CASES = {
    "chain_filter_project": ("", "SELECT order_id, amount * 2 AS doubled FROM orders "
                                 "WHERE status = 'shipped'"),
    "shuffle_breaks_chain": ("", "SELECT status, COUNT(*) AS n FROM orders WHERE amount > 10 "
                                 "GROUP BY status"),
    "chaining_disabled": ("SET 'pipeline.operator-chaining' = 'false';",
                          "SELECT order_id, amount * 2 AS doubled FROM orders "
                          "WHERE status = 'shipped'"),
    "join_two_inputs": ("", "SELECT c.name, o.amount FROM orders AS o JOIN customers AS c "
                            "ON o.customer = c.id"),
    "insert_into_print": ("", "INSERT INTO out_print SELECT status, COUNT(*) FROM orders "
                              "GROUP BY status"),
    "order_by_limit": ("", "SELECT customer, SUM(amount) AS total FROM orders GROUP BY customer "
                           "ORDER BY total DESC LIMIT 3"),
    "batch_mode": ("SET 'execution.runtime-mode' = 'batch';",
                   "SELECT status, COUNT(*) AS n FROM orders GROUP BY status"),
    # WITH RECURSIVE at parallelism 2: the iteration partitioned by the step's join key
    # (head and tail in each subtask, the static side co-located), batch and streaming...
    "recursive_partitioned_batch": (
        "SET 'execution.runtime-mode' = 'batch'; SET 'parallelism.default' = '2';",
        "WITH RECURSIVE chain(customer, n) AS (SELECT customer, 1 FROM orders WHERE status = "
        "'shipped' UNION SELECT o.customer, c.n + 1 FROM chain AS c JOIN orders AS o ON "
        "o.customer = c.customer WHERE c.n < 3) SELECT customer, MAX(n) AS n FROM chain "
        "GROUP BY customer"),
    "recursive_partitioned_streaming": (
        "SET 'parallelism.default' = '2';",
        "WITH RECURSIVE chain(customer, n) AS (SELECT customer, 1 FROM orders WHERE status = "
        "'shipped' UNION ALL SELECT o.customer, c.n + 1 FROM chain AS c JOIN orders AS o ON "
        "o.customer = c.customer WHERE c.n < 3) SELECT customer, n FROM chain"),
    # ... and in one task when no join key co-locates the step (said so)
    "recursive_in_one_task": (
        "SET 'execution.runtime-mode' = 'batch'; SET 'parallelism.default' = '2';",
        "WITH RECURSIVE t(n) AS (VALUES (1) UNION ALL SELECT n + 1 FROM t WHERE n < 10) "
        "SELECT n FROM t"),
}


@pytest.mark.golden
@pytest.mark.parametrize("name", sorted(CASES))
def test_explain(name: str, update_golden: bool) -> None:
    setup, query = CASES[name]
    s = sqlengine.connect()
    s.execute(DDL + setup)
    text = s.execute(f"EXPLAIN {query}")[0].message + "\n"
    path = GOLDEN / f"{name}.txt"
    if update_golden:
        path.write_text(text)
    assert path.exists(), f"{path.name} is missing: run pytest --update-golden and check it"
    assert text == path.read_text()


def test_chains_merge_and_break() -> None:
    s = sqlengine.connect()
    s.execute(DDL)
    merged = s.execute("EXPLAIN " + CASES["chain_filter_project"][1])[0].message
    assert "v1 [parallelism=1]: Source(orders) -> Project(order_id, doubled)" in merged
    assert "v2" not in merged.split("== Job Graph ==")[1]
    shuffled = s.execute("EXPLAIN " + CASES["shuffle_breaks_chain"][1])[0].message
    graph = shuffled.split("== Job Graph ==")[1]
    assert "--HASH(status)--> v2" in graph
    s.execute("SET 'pipeline.operator-chaining' = 'false'")
    unchained = s.execute("EXPLAIN " + CASES["chain_filter_project"][1])[0].message
    graph = unchained.split("== Job Graph ==")[1]
    assert "v1 [parallelism=1]: Source(orders)\n  --FORWARD--> v2" in graph
    assert "v2 [parallelism=1]: Project(order_id, doubled)" in graph


ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted((ROOT / "queries").glob("*.sql"))


@pytest.mark.golden
@pytest.mark.parametrize("path", SCRIPTS, ids=[p.stem for p in SCRIPTS])
def test_explain_of_every_queries_script(path: Path, update_golden: bool,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """``sqlengine explain`` of each scenario in queries/ (plans, or the error it reports)."""
    from click.testing import CliRunner

    from sqlengine.shell.cli import main

    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(main, ["explain", f"queries/{path.name}"])
    text = result.output
    golden = GOLDEN / "queries" / f"{path.stem}.txt"
    if update_golden:
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(text)
    assert golden.exists(), f"{golden.name} is missing: run pytest --update-golden"
    assert text == golden.read_text()
