"""The interactive session of the real ``pageindex ask FILE.pdf`` driven in a pseudo-terminal."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pexpect

from tests.analyst.conftest import POLICIES
from tests.analyst.policies import CAPEX_Q, FOLLOWUP_Q, MISSING_Q

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
PROMPT = "3M_2018_10K> "


def screen(child: pexpect.spawn) -> str:
    return ANSI.sub("", child.before or "")


def test_interactive_session_in_a_pty(fb_pdf, analyst_tree, tmp_path):
    analyst_tree("3M_2018_10K")  # tree in the shared cache
    argv = [sys.executable, "-m", "pageindex.cli"]  # the interpreter under test, never PATH
    args = [str(fb_pdf("3M_2018_10K")), "-m", "scripted", "--scripted-policy", f"{POLICIES}:analyst_policy"]
    env = dict(os.environ, COLUMNS="160", TERM="xterm")
    child = pexpect.spawn(
        argv[0],
        [*argv[1:], "ask", *args, "--session", "pty"],
        env=env,
        encoding="utf-8",
        timeout=60,
        dimensions=(50, 160),
    )
    try:
        child.expect_exact(PROMPT)
        assert "/sources" in screen(child) and "/page N" in screen(child) and "/tables N" in screen(child)

        child.sendline(CAPEX_Q)
        child.expect_exact(PROMPT)
        out = screen(child)
        assert "iteration 1 of 4" in out  # live progress
        assert "reading item_8/cash_flows Consolidated Statement of Cash Flows (page 60)" in out
        assert "confidence 0.90" in out
        assert (
            "[1] item_8/cash_flows Consolidated Statement of Cash Flows · PDF page 60, printed 60 · "
            '"(1,577)" · verified' in out
        )

        child.sendline(FOLLOWUP_Q)
        child.expect_exact(PROMPT)
        out = screen(child)
        assert "answer (session, session_answer_v1)" in out
        assert re.search(r"From the session: 3 cache hits .* ≈[\d,]+ tokens saved", out)

        child.sendline(MISSING_Q)
        child.expect_exact(PROMPT)
        out = screen(child)
        assert "Not found in this filing." in out and "item_1a" in out

        child.sendline("/page 60")
        child.expect_exact(PROMPT)
        assert "Purchases of property, plant and equipment (PP&E) (1,577) (1,373) (1,420)" in screen(child)

        child.sendline("/tables 60")
        child.expect_exact(PROMPT)
        out = screen(child)
        assert "page 60 (printed 60) · table 1 of 1 · pymupdf" in out
        assert re.search(r"\(PP&E\) +\(1,577\) +\(1,373\) +\(1,420\)", out)
        assert "Purchases of property, plant and equipment (PP&E)" in out
        assert re.search(r"Net income including noncontrolling interest +\$5,363 +\$4,869 +\$5,058", out)

        child.sendline("/tables 5")
        child.expect_exact(PROMPT)
        assert "no tables found on page 5" in screen(child)

        child.sendline("/trace")
        child.expect_exact(PROMPT)
        assert "fetch_section" in screen(child)

        child.sendline("/history")
        child.expect_exact(PROMPT)
        assert f"2. [answer] {FOLLOWUP_Q}" in screen(child)

        child.sendline("/quit")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 0
    saved = Path(os.environ["PAGEINDEX_CACHE_DIR"]) / "sessions" / "pty.json"
    assert len(json.loads(saved.read_text())["turns"]) == 3
