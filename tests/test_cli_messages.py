"""Error lines print their text verbatim: a file name or value with square brackets is not
read as rich markup (`no[such].yaml`, `twinsim[ray]` lost their brackets before)."""

from __future__ import annotations

from typer.testing import CliRunner

from twinsim.cli import app


def test_square_brackets_in_an_error_survive(tmp_path):
    config = tmp_path / "no[such].yaml"
    result = CliRunner().invoke(app, ["run", "--config", str(config), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "no[such].yaml" in " ".join(result.output.split())
