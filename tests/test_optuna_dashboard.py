"""optuna-dashboard reads a study the tool wrote and names its objectives."""

from __future__ import annotations

import json
import threading
import urllib.request
from pathlib import Path

import pytest

SPACE = """
model = "ginkgo"
[knobs]
scheme = ["alloy", "ginkgo"]
mc_sram_kib = { range = [16, 256] }
[objectives]
amat_ns = "min"
usd_per_gib = "min"
[sweep]
strategy = "optuna"
trials = 12
batch = 4
"""


@pytest.mark.xdist_group("optuna")
def test_optuna_dashboard_shows_named_objectives(tmp_path: Path) -> None:
    pytest.importorskip("optuna_dashboard")
    from wsgiref.simple_server import WSGIRequestHandler, make_server

    import optuna
    from optuna_dashboard import wsgi

    from dse.sweep.optuna_study import journal_path
    from dse.sweep.run import SweepOptions, run_sweep

    (tmp_path / "s.toml").write_text(SPACE)
    out = run_sweep(tmp_path / "s.toml", SweepOptions(out=tmp_path / "res", progress=False)).path
    storage = optuna.storages.JournalStorage(optuna.storages.journal.JournalFileBackend(journal_path(out)))

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = make_server("127.0.0.1", 0, wsgi(storage), handler_class=Quiet)  # loopback only
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_port}"
        studies = json.loads(urllib.request.urlopen(f"{base}/api/studies", timeout=30).read())["study_summaries"]
        assert len(studies) == 1
        detail = json.loads(urllib.request.urlopen(f"{base}/api/studies/{studies[0]['study_id']}", timeout=30).read())
        assert detail["objective_names"] == ["amat_ns", "usd_per_gib"]
        assert len(detail["trials"]) >= 12
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
