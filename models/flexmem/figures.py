"""flexmem against the article's figures (shared/research/vm-image-cache.md): Fig. 7 (per-VM
memory breakdown), Fig. 8 (VMs per 1 TB host), Fig. 9 (start-up against existing VMs) and every
claim as model over paper."""

from __future__ import annotations

from typing import Any

import numpy as np

EXISTING = [64, 128, 256, 512, 1024]
#: Fig. 7 totals (KB, L2139-L2142 column sums).
PAPER_MEM = [{"vm_type": "virtio_blk", "mib": 96129 / 1024, "source": "paper"}, {"vm_type": "flexmem", "mib": 62205 / 1024, "source": "paper"}]


def _model() -> Any:
    from dse import registry

    return registry.get("flexmem")


def _claim_rows() -> list[dict[str, Any]]:
    from dse import registry
    from dse.claims import evaluate_claims

    return [{"claim": r.id, "kind": "headline" if r.headline else "other", "model_over_paper": r.value / float(r.expected)}
            for r in evaluate_claims(registry.model_dir("flexmem") / "claims.yaml") if not isinstance(r.expected, tuple) and r.expected]


def figures() -> list[tuple[str, Any]]:
    import altair as alt

    from models.flexmem.model import per_vm_memory_mib

    m = _model()
    rows = []
    for t, flex in (("virtio_blk", False), ("flexmem", True)):
        d = m.defaults()
        parts = per_vm_memory_mib(np.asarray(flex), d["image_mib"], d["touched_image_mib"], d["guest_base_mib"], d["resident_vms"])
        rows += [{"vm_type": t, "component": "guest page cache", "mib": float(parts["page_cache"])},
                 {"vm_type": t, "component": "PMem struct pages", "mib": float(parts["pmem"])},
                 {"vm_type": t, "component": "shared image copy", "mib": float(parts["shared"])},
                 {"vm_type": t, "component": "QEMU, host metadata, guest kernel+anon",
                  "mib": float(parts["private"] - parts["page_cache"] - parts["pmem"])}]
    fig7 = alt.Chart(alt.Data(values=rows)).mark_bar().encode(
        x=alt.X("vm_type:N", title=None), y=alt.Y("sum(mib):Q", title="memory per VM (MiB)"), color="component:N")
    paper7 = alt.Chart(alt.Data(values=PAPER_MEM)).mark_tick(color="black", thickness=3, size=40).encode(x="vm_type:N", y="mib:Q")

    dens = [{"vm_type": t, "vms": m.point(vm_type=t)["max_vms_per_host"]} for t in ("virtio_blk", "flexmem")]
    fig8 = alt.Chart(alt.Data(values=dens)).mark_bar().encode(x=alt.X("vm_type:N", title=None), y=alt.Y("vms:Q", title="VMs per 1 TB host"))

    st = []
    for t in ("virtio_blk", "flexmem"):
        out = m.run({"vm_type": t, "existing_vms": np.asarray(EXISTING)})
        st += [{"existing_vms": e, "vm_type": t, "startup_s": float(s)} for e, s in zip(EXISTING, out["startup_s"])]
    fig9 = alt.Chart(alt.Data(values=st)).mark_line(point=True).encode(
        x=alt.X("existing_vms:Q", scale=alt.Scale(type="log", base=2)), y=alt.Y("startup_s:Q", title="start-up of 64 parallel VMs (s)"),
        color="vm_type:N")
    claims = alt.Chart(alt.Data(values=_claim_rows())).mark_bar().encode(
        y=alt.Y("claim:N", sort=None, title=None), x=alt.X("model_over_paper:Q", title="model / paper"), color="kind:N")
    return [
        ("Fig. 7: memory per VM by component (bars: model; ticks: the article's column totals)", fig7 + paper7),
        ("Fig. 8: VMs per 1 TB host (model; the article: ~48 % more FlexMem VMs)", fig8),
        ("Fig. 9: start-up time against existing VMs (model; the article: ~37.4 % faster on average)", fig9),
        ("Every claim: model over paper", claims),
    ]
