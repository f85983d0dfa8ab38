"""Read and write fixture files: ``# name:`` + input + ``----`` + expected, blank-line separated."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class Case:
    name: str
    input: str
    expected: str


def read_cases(path: Path) -> list[Case]:
    cases = []
    for block in path.read_text().split("\n\n\n"):
        block = block.strip("\n")
        if not block:
            continue
        header, _, rest = block.partition("\n")
        name = header.removeprefix("# name:").strip()
        given, _, expected = rest.partition("\n----\n")
        cases.append(Case(name, given.strip(), expected.rstrip()))
    return cases


def write_cases(path: Path, cases: list[Case]) -> None:
    text = "\n\n\n".join(f"# name: {c.name}\n{c.input}\n----\n{c.expected}" for c in cases)
    path.write_text(text + "\n")


def update_case(path: Path, name: str, expected: str) -> None:
    """Rewrite one case's expected output in a fixture file (--update-golden)."""
    cases = read_cases(path)
    for c in cases:
        if c.name == name:
            c.expected = expected
    write_cases(path, cases)
