"""Shell completion is installable and completes commands."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

DSE = Path(sys.executable).with_name("dse")


def test_the_completion_script_for_bash_is_printed() -> None:
    # `dse --show-completion` finds the shell among its parent processes, which a test
    # worker may not have; the variable names the shell itself (what the script sources)
    env = dict(os.environ, _DSE_COMPLETE="source_bash")
    out = subprocess.run([str(DSE)], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0 and "_dse_completion" in out.stdout and "complete_bash" in out.stdout


def test_completion_completes_a_command_name() -> None:
    env = dict(os.environ, _DSE_COMPLETE="complete_bash", COMP_WORDS="dse comp", COMP_CWORD="1")
    out = subprocess.run([str(DSE)], capture_output=True, text=True, env=env, timeout=60)
    assert set(out.stdout.split()) == {"compare"}
