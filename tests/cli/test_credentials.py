"""Credentials never reach a line, a result file or the cache, whatever shape they were given in
(review rev-secrets): a base URL typed without its ``http://`` (``bob:KEY@host/v1``), a user name
holding an ``@``, a password with a space, the key of a plug-in provider from its own variable."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pageindex.cli import app

PASSWORD = "pwSECRET4711"


def _everything(out, folder: Path) -> str:
    """The command's output and every file it wrote under ``folder``."""
    files = [p for p in folder.rglob("*") if p.is_file()] if folder.exists() else []
    return out.output + "".join(p.read_text(errors="replace") for p in files)


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (f"bob:{PASSWORD}@127.0.0.1:9/v1", "***@127.0.0.1:9/v1"),
        (f"http:/bob:{PASSWORD}@127.0.0.1:9/v1", "http:/***@127.0.0.1:9/v1"),
        (f"http//bob:{PASSWORD}@127.0.0.1:9/v1?api-key=QKEY12345", "***@127.0.0.1:9/v1?api-key=***"),
    ],
)
def test_a_base_url_without_its_scheme_is_refused_with_its_credentials_masked(
    url, shown, tmp_path, quiet_env
):
    """``--base-url bob:KEY@host/v1`` (the ``http://`` forgotten) was refused naming the URL in clear:
    ``error: base URL bob:pwSECRET4711@127.0.0.1:9/v1 of openai/x is not usable``; urlsplit reads
    the user name as a scheme there, so no host part held the credentials to mask."""
    out = CliRunner().invoke(
        app, ["bench", "run", "-r", "iterative", "-m", "openai/x", "--base-url", url, "-q",
              "--out", str(tmp_path / "run")],
    )  # fmt: skip
    assert out.exit_code == 2, out.output
    assert f"error: base URL {shown} of openai/x is not usable: " in out.output
    assert PASSWORD not in out.output and "QKEY12345" not in out.output
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(
    "userinfo",
    [f"bob@{PASSWORD}", f"bob:pw {PASSWORD}"],
    ids=["user-with-at", "password-with-space"],
)
def test_the_stored_command_masks_credentials_of_any_shape(userinfo, tmp_path, quiet_env, monkeypatch):
    """run.json's ``command`` masked URL user-info by its shape only, up to the first ``@`` and the
    first space: ``http://bob@pw@host`` was stored as ``http://***@pwSECRET4711@host`` and
    ``http://bob:pw pwSECRET4711@host`` in clear, while the request went out with them all."""
    from bench.faults import FaultServer

    with FaultServer(rate=0.0) as srv:
        url = srv.base_url.replace("://", f"://{userinfo}@")
        args = ["bench", "run", "-r", "iterative", "-m", "openai/x", f"--base-url={url}", "--judge", "rules",
                "--limit", "1", "-q", "--out", str(tmp_path / "run")]  # fmt: skip
        monkeypatch.setattr("sys.argv", ["pageindex", *args])  # the command run.json stores
        out = CliRunner().invoke(app, args)
    assert out.exit_code == 0, out.output
    assert PASSWORD not in _everything(out, tmp_path / "run")
    masked = srv.base_url.replace("://", "://***@")
    assert f"--base-url={masked}" in json.loads((tmp_path / "run" / "run.json").read_text())["command"]
