"""Lookup joins (``JOIN dim FOR SYSTEM_TIME AS OF o.proc_time``) against a real PostgreSQL
dimension table through the jdbc connector, with and without Flink's partial cache: the same
rows as the join DuckDB computes over the same data; a changed dimension row is seen by rows
processed later unless the cache still holds the key; and what is refused."""

from __future__ import annotations

import uuid

import duckdb
import pyarrow as pa
import pytest

import sqlengine
from sqlengine.errors import SqlEngineError
from tests.connectors.test_jdbc_postgres import URL, _sql, pg  # noqa: F401  (the fixture)

ORDERS = pa.table({"id": pa.array(range(1, 2001), pa.int64()),
                   "customer": pa.array([i % 37 if i % 11 else None for i in range(1, 2001)],
                                        pa.int32()),
                   "amount": pa.array([float(i % 100) for i in range(1, 2001)])})


@pytest.fixture
def dim(pg):  # type: ignore[no-untyped-def]  # noqa: F811
    name = f"customers_{uuid.uuid4().hex[:8]}"
    rows = ", ".join(f"({c}, 'name{c}', {'NULL' if c % 7 == 0 else c * 10})"
                     for c in range(30))  # (customers 30..36 are missing)
    _sql(pg, f"CREATE TABLE {name} (cid INT PRIMARY KEY, cname TEXT, credit INT)",
         f"INSERT INTO {name} VALUES {rows}")
    yield name
    _sql(pg, f"DROP TABLE IF EXISTS {name}")


def _session(dim: str, cache: str = "", parallelism: int = 1,
             batches: bool = False) -> sqlengine.Session:
    s = sqlengine.connect({"execution.runtime-mode": "streaming",
                           "parallelism.default": str(parallelism)})
    s.register("orders_data", iter(ORDERS.to_batches(max_chunksize=200)) if batches
               else ORDERS)
    s.execute("CREATE VIEW orders AS SELECT id, customer, amount, PROCTIME() AS proc_time "
              "FROM orders_data")
    s.execute(f"CREATE TABLE customers (cid INT, cname STRING, credit INT) WITH ("
              f"'connector' = 'jdbc', 'url' = '{URL}', 'table-name' = '{dim}', "
              f"'username' = 'root'{cache})")
    return s


def _duck(pg, dim: str, sql: str) -> list[tuple]:  # type: ignore[no-untyped-def]  # noqa: F811
    customers = _sql(pg, f"SELECT cid, cname, credit FROM {dim}")
    con = duckdb.connect()
    con.register("orders", ORDERS)
    con.register("customers", pa.table({
        "cid": pa.array([r[0] for r in customers], pa.int32()),
        "cname": [r[1] for r in customers], "credit": pa.array([r[2] for r in customers],
                                                                pa.int32())}))
    return sorted(con.sql(sql).fetchall(), key=repr)


CACHES = {"none": "", "partial": ", 'lookup.cache' = 'PARTIAL', "
                                 "'lookup.partial-cache.max-rows' = '10'"}


@pytest.mark.parametrize("parallelism", [1, 2])
@pytest.mark.parametrize("cache", sorted(CACHES))
@pytest.mark.parametrize("kind", ["JOIN", "LEFT JOIN"])
def test_matches_a_join_over_the_same_rows(pg, dim, kind: str, cache: str,  # noqa: F811
                                           parallelism: int) -> None:
    ours = ("SELECT o.id, o.amount, c.cname, c.credit FROM orders AS o "
            f"{kind} customers FOR SYSTEM_TIME AS OF o.proc_time AS c ON o.customer = c.cid "
            "AND c.credit > 50")
    theirs = ("SELECT o.id, o.amount, c.cname, c.credit FROM orders AS o "
              f"{kind} customers AS c ON o.customer = c.cid AND c.credit > 50")
    q = _session(dim, CACHES[cache], parallelism).sql(ours)
    got = sorted((tuple(r.values()) for r in q.collect().to_pylist()), key=repr)
    assert got == _duck(pg, dim, theirs)
    assert len(got) > 100


def test_the_cache_answers_repeated_keys(pg, dim) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    s = _session(dim, ", 'lookup.cache' = 'PARTIAL', 'lookup.partial-cache.max-rows' = '100'",
                 batches=True)
    q = s.sql("SELECT o.id, c.cname FROM orders AS o JOIN customers FOR SYSTEM_TIME AS OF "
              "o.proc_time AS c ON o.customer = c.cid")
    q.collect()
    m = next(v for k, v in q.metrics().items() if k.endswith("LookupJoin"))
    assert m["lookups"] == 37  # each customer key asked once (missing keys cached too)
    assert m["cache_hits"] == 10 * 37 - 37  # (10 batches of 200 orders, every key in each)


def test_without_a_cache_a_changed_row_is_seen(pg, dim) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    s = _session(dim)
    sql = ("SELECT c.cname FROM (SELECT 3 AS customer, PROCTIME() AS t) AS o JOIN customers "
           "FOR SYSTEM_TIME AS OF o.t AS c ON o.customer = c.cid")
    assert s.sql(sql).collect().to_pylist() == [{"cname": "name3"}]
    _sql(pg, f"UPDATE {dim} SET cname = 'renamed' WHERE cid = 3")
    assert s.sql(sql).collect().to_pylist() == [{"cname": "renamed"}]


@pytest.mark.parametrize(("option", "message"), [
    (", 'lookup.cache' = 'FULL'", "lookup.cache"),
    (", 'lookup.cache.ttl' = '10 s'", "lookup.partial-cache.expire-after-write"),
    (", 'lookup.partial-cache.expire-after-write' = 'soon'", "expire-after-write"),
])
def test_bad_lookup_options_are_refused_by_name(pg, dim, option: str,  # noqa: F811
                                                message: str) -> None:
    with pytest.raises(SqlEngineError, match=message):
        _session(dim, option)


def test_a_table_without_lookups_is_refused() -> None:
    s = sqlengine.connect({"execution.runtime-mode": "streaming"})
    s.register("orders_data", ORDERS)
    s.execute("CREATE VIEW orders AS SELECT id, customer, PROCTIME() AS proc_time "
              "FROM orders_data")
    s.execute("CREATE TABLE d (cid INT, x INT) WITH ('connector' = 'datagen', "
              "'number-of-rows' = '5')")
    with pytest.raises(SqlEngineError, match="offers no lookups"):
        s.sql("SELECT * FROM orders AS o JOIN d FOR SYSTEM_TIME AS OF o.proc_time AS c "
              "ON o.customer = c.cid").collect()


RETRY = ("'retry-predicate' = 'lookup_miss', 'retry-strategy' = 'fixed_delay', "
         "'fixed-delay' = '{delay}', 'max-attempts' = '{attempts}'")
ONE = ("SELECT /*+ LOOKUP('table' = 'customers', {options}) */ o.customer, c.cname FROM "
       "(SELECT {cid} AS customer, PROCTIME() AS t) AS o {kind} customers FOR SYSTEM_TIME AS "
       "OF o.t AS c ON o.customer = c.cid")


def test_a_lookup_hint_retries_a_missing_key_until_the_row_comes(pg, dim) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    """Flink's delayed retry for lookup joins ('retry-predicate' = 'lookup_miss'): a key the
    dimension table does not hold yet is asked again after the fixed delay; the row another
    writer inserts meanwhile is joined (without the hint the order finds nothing)."""
    import threading

    s = _session(dim)
    plain = ONE.replace("/*+ LOOKUP('table' = 'customers', {options}) */ ", "")
    assert s.sql(plain.format(cid=77, kind="JOIN")).collect().num_rows == 0
    timer = threading.Timer(0.5, _sql, (pg, f"INSERT INTO {dim} VALUES (77, 'late', 1)"))
    timer.start()
    try:
        q = s.sql(ONE.format(options=RETRY.format(delay="200 ms", attempts=100), cid=77,
                             kind="JOIN"))
        assert q.collect().to_pylist() == [{"customer": 77, "cname": "late"}]
    finally:
        timer.join()
    m = next(v for k, v in q.metrics().items() if k.endswith("LookupJoin"))
    assert 1 <= m["lookup_retries"] < 100


@pytest.mark.parametrize("cache", sorted(CACHES))
def test_a_lookup_hint_gives_up_after_its_attempts(pg, dim, cache: str) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    s = _session(dim, CACHES[cache])
    q = s.sql(ONE.format(options=RETRY.format(delay="10 ms", attempts=3), cid=99,
                         kind="LEFT JOIN"))
    assert q.collect().to_pylist() == [{"customer": 99, "cname": None}]
    m = next(v for k, v in q.metrics().items() if k.endswith("LookupJoin"))
    assert (m["lookups"], m["lookup_retries"]) == (4, 3)
    # (a key held at once is not asked again; nor is the async tuning, which the synchronous
    # lookups here take no effect from, as Flink's with a connector without async lookups)
    q = s.sql(ONE.format(options=RETRY.format(delay="10 ms", attempts=3) + ", 'async' = "
                         "'true', 'output-mode' = 'allow_unordered', 'capacity' = '10', "
                         "'timeout' = '30 s'", cid=3, kind="JOIN"))
    assert q.collect().to_pylist() == [{"customer": 3, "cname": "name3"}]
    m = next(v for k, v in q.metrics().items() if k.endswith("LookupJoin"))
    assert (m["lookups"], m["lookup_retries"]) == (1, 0)
    assert "retry=lookup_miss(fixed_delay=10 ms, max=3)" in q.explain()


@pytest.mark.parametrize(("options", "message"), [
    ("'table' = 'c'", "no lookup join of this query block reads table `c`"),
    ("'table' = 'customers', 'retry' = 'yes'", "unknown option 'retry'"),
    ("'async' = 'true'", r"option 'table' \(the lookup table's name\) is required"),
    ("'table' = 'customers', 'retry-predicate' = 'lookup_miss'",
     "a retry takes all of .* 'retry-strategy', 'fixed-delay', 'max-attempts' not given"),
    ("'table' = 'customers', " + RETRY.format(delay="soon", attempts=3),
     "'fixed-delay' must be a duration"),
    ("'table' = 'customers', " + RETRY.format(delay="1 s", attempts=0),
     "'max-attempts' must be a positive integer"),
    ("'table' = 'customers', " + RETRY.format(delay="1 s", attempts=3).replace(
        "fixed_delay", "exponential"), "'retry-strategy' must be 'fixed_delay'"),
    ("'table' = 'customers', 'output-mode' = 'sorted'",
     "'output-mode' must be 'ordered' or 'allow_unordered'"),
])
def test_bad_lookup_hints_are_refused_by_name(pg, dim, options: str,  # noqa: F811
                                              message: str) -> None:
    s = _session(dim)
    sql = ONE.replace("'table' = 'customers', {options}", options)
    with pytest.raises(SqlEngineError, match=message):
        s.sql(sql.format(cid=3, kind="JOIN")).collect()


def test_lookup_hints_share_a_comment_with_state_ttl(pg, dim) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    s = _session(dim)
    sql = ("SELECT /*+ STATE_TTL('o' = '1 h'), LOOKUP('table' = 'customers', 'async' = "
           "'false') */ o.customer, c.cname FROM (SELECT 3 AS customer, PROCTIME() AS t) AS o "
           "JOIN customers FOR SYSTEM_TIME AS OF o.t AS c ON o.customer = c.cid")
    # (STATE_TTL names no join or GROUP BY input here: refused with Flink's message)
    with pytest.raises(SqlEngineError, match="`o` in `STATE_TTL`"):
        s.sql(sql).collect()
    assert s.sql(sql.replace("STATE_TTL('o' = '1 h'), ", "")).collect().to_pylist() == [
        {"customer": 3, "cname": "name3"}]
    # (a join hint is for regular joins: a lookup join's input is no name of one)
    with pytest.raises(SqlEngineError, match="cannot match the name of input tables or views: "
                                             "`o` in `BROADCAST`"):
        s.sql(sql.replace("STATE_TTL('o' = '1 h')", "BROADCAST(o)")).collect()


@pytest.mark.parametrize("cache", ["", ", 'lookup.cache' = 'PARTIAL', "
                                       "'lookup.partial-cache.max-rows' = '100'"])
@pytest.mark.parametrize("kind", ["JOIN", "LEFT JOIN"])
def test_double_keys_meet_as_a_regular_join_has_them(pg, cache: str, kind: str  # type: ignore[no-untyped-def]  # noqa: F811
                                                     ) -> None:
    """-0.0 meets 0.0 and NaN meets nothing, as in a regular join (PostgreSQL says NaN =
    NaN): a 0.0 probe row was joined twice, a -0.0 one not at all, a NaN one with NaN."""
    name = f"fdim_{uuid.uuid4().hex[:8]}"
    _sql(pg, f"CREATE TABLE {name} (f FLOAT8, name TEXT)",
         f"INSERT INTO {name} VALUES (0.0, 'zero'), ('NaN', 'nan'), (1.5, 'one'), "
         "('-0.0', 'minus zero')")
    try:
        probe = pa.table({"id": pa.array(range(6), pa.int32()),
                          "f": [0.0, -0.0, float("nan"), 1.5, None, 2.0]})
        s = sqlengine.connect({"execution.runtime-mode": "streaming"})
        s.register("p", probe)
        s.execute(f"CREATE TABLE dim (f DOUBLE, name STRING) WITH ('connector' = 'jdbc', "
                  f"'url' = '{URL}', 'table-name' = '{name}', 'username' = 'root'{cache})")
        s.execute("CREATE VIEW o AS SELECT *, PROCTIME() AS pt FROM p")
        got = s.sql(f"SELECT o.id, d.name FROM o {kind} dim FOR SYSTEM_TIME AS OF o.pt AS d "
                    "ON o.f = d.f").collect().to_pylist()
        s.register("dim_rows", s.sql("SELECT * FROM dim").collect())
        want = s.sql(f"SELECT p.id, d.name FROM p {kind} dim_rows AS d ON p.f = d.f"
                     ).collect().to_pylist()
        key = lambda r: (r["id"], r["name"] or "")  # noqa: E731
        assert sorted(got, key=key) == sorted(want, key=key)
        assert sorted((r["id"], r["name"]) for r in want if r["name"]) == [
            (0, "minus zero"), (0, "zero"), (1, "minus zero"), (1, "zero"), (3, "one")]
    finally:
        _sql(pg, f"DROP TABLE IF EXISTS {name}")
