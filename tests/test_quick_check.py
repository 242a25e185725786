"""Every command that reads a sequence checks every file's size and CRC-32 first: one flipped
byte that still decodes (a depth value), or a cut file the command would not even read, is
refused in one line before anything is written (before, `export`, `noise` and the others
exited 0 and wrote the damaged data on; the fault sweep found 52 such cases)."""

from __future__ import annotations

import shutil

import pytest
from typer.testing import CliRunner

from twinsim.cli import app
from twinsim.config import load_config
from twinsim.sim import run


@pytest.fixture(scope="module")
def sequence(tmp_path_factory, gl_backend):
    return run(load_config("tiny", duration_s=0.5), tmp_path_factory.mktemp("quick") / "seq")


def _flip_last_byte(path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01  # a float32 depth still decodes, one value a little off
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "args",
    [
        ["export", "--format", "tum", "--out"],
        ["noise", "--profile", "rotors-default", "--out"],
        ["replay", "--out"],
    ],
    ids=["export", "noise", "replay"],
)
def test_a_flipped_byte_is_refused_by_every_reader(sequence, tmp_path, args):
    damaged = shutil.copytree(sequence, tmp_path / "seq")
    _flip_last_byte(damaged / "cam0" / "depth" / "000003.npy")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, [args[0], str(damaged), *args[1:], str(out)])
    assert result.exit_code == 2, result.output
    assert "cam0/depth/000003.npy: content changed" in " ".join(result.output.split())
    assert not out.exists()


def test_a_cut_file_the_command_does_not_read_is_refused_too(sequence, tmp_path):
    damaged = shutil.copytree(sequence, tmp_path / "seq")
    contacts = damaged / "contacts" / "contacts.npy"
    contacts.write_bytes(contacts.read_bytes()[:-8])
    out = tmp_path / "tum"
    result = CliRunner().invoke(app, ["export", str(damaged), "-f", "tum", "--out", str(out)])
    assert result.exit_code == 2 and "contacts/contacts.npy" in result.output
    assert not out.exists()
