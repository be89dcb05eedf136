"""The command reference in docs/cli is what the commands' own help says."""

from __future__ import annotations

from pathlib import Path

from pyrego.cli import docs

DOCS = Path(__file__).resolve().parent.parent / "docs" / "cli"


def test_every_subcommand_has_a_page_with_its_help() -> None:
    commands = docs.subcommands()
    assert {"eval", "parse", "version", "bench"} <= set(commands)
    pages = docs.render()
    for name, (summary, _) in commands.items():
        text = pages[f"{name}.md"]
        assert summary, f"pyrego {name} has no one-line help"
        assert f"usage: pyrego {name}" in text
        assert "-h, --help" in text


def test_checked_in_pages_are_current() -> None:
    # Regenerate with `python -m pyrego.cli.docs` after changing a command.
    pages = docs.render()
    on_disk = {p.name: p.read_text(encoding="utf-8") for p in DOCS.glob("*.md")}
    assert sorted(on_disk) == sorted(pages)
    for name, text in pages.items():
        assert on_disk[name] == text, f"docs/cli/{name} is out of date"
