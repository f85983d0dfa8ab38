"""TIMESTAMPs of different precisions meet in a TIMESTAMP, whatever the session's time zone:
their common type (VALUES rows, UNION ALL, CASE, COALESCE) was a TIMESTAMP_LTZ, which moved
their wall-clock times by the zone (TIMESTAMPDIFF gave 7 in Asia/Kolkata where Flink gives 2,
a time in New York's DST gap moved an hour). Expected values: PyFlink 2.3's."""

from __future__ import annotations

import pyarrow as pa
import pytest

import sqlengine

ZONES = ["UTC", "Asia/Kolkata", "America/New_York"]


def _session(zone: str) -> sqlengine.Session:
    return sqlengine.connect({"execution.runtime-mode": "batch", "table.local-time-zone": zone})


@pytest.mark.parametrize("zone", ZONES)
def test_values_of_two_precisions(zone: str) -> None:
    got = _session(zone).sql(
        "SELECT TIMESTAMPDIFF(HOUR, ts, TIMESTAMP '2020-01-08 03:30:00') AS h, "
        "CAST(ts AS STRING) AS s FROM (VALUES (TIMESTAMP '2020-01-08 01:30:00'), "
        "(TIMESTAMP '2020-01-08 01:30:00.5')) AS v(ts)").collect()
    assert got.schema.field("h").type == pa.int32()
    assert got.column("h").to_pylist() == [2, 1]
    assert [s[:19] for s in got.column("s").to_pylist()] == ["2020-01-08 01:30:00"] * 2


@pytest.mark.parametrize("zone", ZONES)
@pytest.mark.parametrize("form", [
    "COALESCE(b, a)", "CASE WHEN b IS NOT NULL THEN b ELSE a END", "IF(b IS NULL, a, b)"])
def test_a_time_in_a_dst_gap_stays(zone: str, form: str) -> None:
    got = _session(zone).sql(
        f"SELECT HOUR({form}) AS h, CAST({form} AS STRING) AS s FROM (VALUES "
        "(TIMESTAMP '2020-03-08 01:30:00', TIMESTAMP '2020-03-08 02:30:00.123')) AS v(a, b)"
    ).collect().to_pylist()
    assert got == [{"h": 2, "s": "2020-03-08 02:30:00.123"}]


@pytest.mark.parametrize("zone", ZONES)
def test_union_all_of_two_precisions(zone: str) -> None:
    got = _session(zone).sql(
        "SELECT CAST(t AS STRING) AS s FROM (SELECT TIMESTAMP '2020-03-08 02:30:00' AS t "
        "UNION ALL SELECT TIMESTAMP '2020-03-08 02:45:00.25')").collect()
    texts = sorted(got.column("s").to_pylist())
    assert [t[:19] for t in texts] == ["2020-03-08 02:30:00", "2020-03-08 02:45:00"]
    assert texts[1].startswith("2020-03-08 02:45:00.25")
