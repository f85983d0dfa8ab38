"""The connector registry and the Connector base: names, capabilities, option validation."""

from __future__ import annotations

import pytest

from sqlengine import connectors
from sqlengine.catalog import TableDef
from sqlengine.connectors.base import Connector, OptionSpec, ReadStats, SourceRead
from sqlengine.errors import ConnectorError, NotSupportedError
from sqlengine.plan.nodes import Field, Schema, SourceSpec
from sqlengine.types import BIGINT, STRING

SCHEMA = Schema((Field("a", BIGINT), Field("s", STRING)))


def test_every_connector_is_registered_once_by_name() -> None:
    assert connectors.names() == ["blackhole", "datagen", "filesystem", "jdbc", "mqtt", "nats",
                                  "nexmark", "print", "socket"]
    assert "memory" in connectors.names(listed_only=False)
    for name in connectors.names(listed_only=False):
        assert connectors.get(name).name == name
        assert connectors.find(name) is connectors.get(name)


def test_the_static_module_table_names_every_connector() -> None:
    """connectors.MODULES (a lookup imports one module) is what importing every module of the
    package finds."""
    found = connectors._discover()
    modules = {name: type(c).__module__.rsplit(".", 1)[1] for name, c in found.items()}
    assert modules == connectors.MODULES


def test_a_lookup_imports_its_connector_only() -> None:
    import subprocess
    import sys

    code = ("import sys; import sqlengine.connectors as c; c.get('filesystem'); "
            "c.is_sink_connector('blackhole'); "
            "print(sorted(m for m in sys.modules if m.startswith('sqlengine.connectors.') and "
            "m.split('.')[2] in c.MODULES))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "['sqlengine.connectors.blackhole', 'sqlengine.connectors.filesystem']"


def test_unknown_names() -> None:
    assert connectors.find("collect") is None
    with pytest.raises(ConnectorError, match="unknown connector 'kafka'"):
        connectors.get("kafka")


@pytest.mark.parametrize(("name", "source", "sink"), [
    ("filesystem", True, True), ("datagen", True, False), ("nexmark", True, False),
    ("memory", True, False), ("socket", True, False), ("print", False, True),
    ("blackhole", False, True)])
def test_sources_and_sinks(name: str, source: bool, sink: bool) -> None:
    c = connectors.get(name)
    assert (c.is_source, c.is_sink) == (source, sink)
    assert connectors.is_source_connector(name) == source
    assert connectors.is_sink_connector(name) == sink


def test_capabilities() -> None:
    assert not connectors.get("socket").parallel_source
    assert connectors.get("datagen").parallel_source
    assert not connectors.get("filesystem").sink_accepts_updates
    assert connectors.get("print").sink_accepts_updates
    assert connectors.get("filesystem").supports_overwrite
    assert not connectors.get("blackhole").supports_overwrite


def _table(**options: str) -> TableDef:
    return TableDef("t", SCHEMA, options=tuple(options.items()))


def test_boundedness() -> None:
    assert connectors.is_bounded(_table(connector="filesystem"))
    assert not connectors.is_bounded(_table(connector="datagen"))
    assert connectors.is_bounded(_table(connector="datagen", **{"number-of-rows": "5"}))
    assert connectors.is_bounded(_table(connector="datagen", **{"fields.a.kind": "sequence"}))
    assert connectors.is_bounded(_table(connector="nexmark", **{"nexmark.events": "5"}))
    assert not connectors.is_bounded(_table(connector="nexmark"))
    assert not connectors.is_bounded(_table(connector="socket"))
    assert not connectors.is_bounded(_table(connector="nope"))


def _error(options: dict[str, str]) -> str:
    with pytest.raises(ConnectorError) as e:
        connectors.validate("t", options, SCHEMA)
    return e.value.message


def test_validation_messages() -> None:
    assert _error({}) == ("table 't': option 'connector' is missing (one of: blackhole, "
                          "datagen, filesystem, jdbc, mqtt, nats, nexmark, print, socket)")
    assert "unknown connector 'x' in option 'connector'" in _error({"connector": "x"})
    assert _error({"connector": "datagen", "bad": "1"}) == (
        "table 't': unsupported option 'bad' for connector 'datagen' (supported: "
        "number-of-rows, rows-per-second, scan.parallelism, scan.watermark.idle-timeout, seed)")
    assert "supported: none" in _error({"connector": "blackhole", "x": "1"})
    assert _error({"connector": "filesystem", "path": "p"}) == (
        "table 't': connector 'filesystem' needs option 'format'")
    monitor = _error({"connector": "filesystem", "path": "p", "format": "csv",
                      "source.monitor-interval": "1s"})
    assert "is not implemented yet (continuous directory monitoring)" in monitor
    # (not among the supported options a misspelt one lists)
    assert "source.monitor-interval" not in _error({"connector": "filesystem", "path": "p",
                                                    "format": "csv", "bad": "1"})
    assert "names unknown column 'zz'" in _error({"connector": "datagen",
                                                  "fields.zz.kind": "random"})
    assert "must be 'random' or 'sequence'" in _error({"connector": "datagen",
                                                        "fields.a.kind": "x"})
    assert "must be an integer, got 'x'" in _error({"connector": "datagen", "fields.a.min": "x"})
    connectors.validate("t", {"connector": "datagen", "fields.a.min": "1"}, SCHEMA)


@pytest.mark.parametrize(("spec", "value", "expected"), [
    (OptionSpec("n", "int"), "-1", "must be a non-negative integer, got '-1'"),
    (OptionSpec("n", "int"), "x", "must be an integer, got 'x'"),
    (OptionSpec("n", "bool"), "yes", "must be 'true' or 'false', got 'yes'"),
    (OptionSpec("n", "char"), "ab", "must be a single character, got 'ab'"),
    (OptionSpec("n", "enum", ("a", "b")), "c", "must be one of 'a', 'b', got 'c'"),
])
def test_option_kinds(spec: OptionSpec, value: str, expected: str) -> None:
    def fail(key: str, msg: str) -> ConnectorError:
        return ConnectorError(f"{key}: {msg}")

    with pytest.raises(ConnectorError, match=expected):
        spec.check(value, fail)
    spec.check({"int": "3", "bool": "TRUE", "char": "\\t", "enum": "a"}[spec.kind], fail)


def test_base_connector_defaults() -> None:
    class Bare(Connector):
        name = "bare"

    bare = Bare()
    assert bare.option_specs() == {}
    assert not bare.bounded(_table(connector="bare"))
    with pytest.raises(NotSupportedError, match="connector 'bare' cannot be written"):
        bare.open_sink("t", {}, SCHEMA.to_arrow(), False)
    source = SourceSpec("t", "bare", (), False)
    assert bare.statistics(source, SCHEMA, None) is None
    assert bare.spark_read(object(), source, "") is None
    read = SourceRead("t", {}, SCHEMA.to_arrow(), ReadStats())
    with pytest.raises(ConnectorError, match="table 't': connector 'bare' cannot be read"):
        bare.open_source(read)


def test_unknown_connectors_keep_their_old_errors() -> None:
    from sqlengine.runtime.operators.source import SourceOperator

    src = SourceSpec("t", "nope", (("connector", "nope"),), True)
    reader = SourceOperator(src, SCHEMA.to_arrow(), None, (), None, event_time=False)
    with pytest.raises(ConnectorError, match="table 't': connector 'nope' cannot be read"):
        next(iter(reader.batches()))
