"""FlexMem constants derived from the article's Fig. 7 table and Fig. 2 (``memory_table.csv``),
and the one start-up constant fitted to a secondary claim.

Derived (vm-image-cache.md §2.1, our arithmetic):

* the image's touched pages a virtio-blk guest caches: 44 % of the 93 MB an idle
  virtio-blk VM uses (Fig. 2, L2043) = 40.9 MiB;
* the guest kernel + anonymous memory both VM types keep: the virtio-blk total of Fig. 7
  less its QEMU, stack/heap, host-metadata rows and the page cache above;
* the PMem window is the image (64 B struct page per 4 KB page = 1.5625 %, L2161);
* FlexMem's host-kernel metadata beyond virtio-blk's: the PMem window's 4 B PTEs per 4 KB
  page plus a reverse-map entry per shared touched page, whose size is the rest of the
  Fig. 7 row (fitted to that row);
* FlexMem's QEMU heap is smaller by the Fig. 7 difference (no virtio-blk request buffers
  and qcow2 caches in QEMU; assumption on the cause);
* the host's copy of the image pages: the Fig. 7 per-VM image share times the VMs per host
  of that run (1000 VMs on the two VM hosts, L2157, L2161).

Fitted: the registry download bandwidth, to the warm-vs-cold start-up gain (up to 48.5 %,
L2171), a secondary claim; the headline start-up gain (37.4 %) is not used.
"""

from __future__ import annotations

import csv
from pathlib import Path

from dse.units import KIB, MIB

TABLE = Path(__file__).resolve().parent / "memory_table.csv"


def _table() -> dict[str, dict[str, str]]:
    with TABLE.open(newline="", encoding="utf-8") as f:
        return {r["row"]: r for r in csv.DictReader(line for line in f if not line.startswith("#"))}


_T = _table()
KIB_PER_MIB = MIB / KIB
PAGE_B = 4096.0
STRUCT_PAGE_B = 64.0  # guest struct page per 4 KB PMem page (L2161)
HOST_PTE_B = 4.0  # host PTE per 4 KB PMem page (L2161)
IMAGE_MIB = 500.0  # WordPress image, ~500 MB (L2157)
VMS_IN_BREAKDOWN_PER_HOST = 1000 / 2  # 1000 VMs (L2161) on two VM hosts (L2157)


def _kib(row: str, col: str) -> float:
    return float(_T[row][col])


QEMU_KIB = _kib("qemu", "virtio_blk_kib")
QEMU_HEAP_KIB = _kib("qemu_stack_heap", "virtio_blk_kib")
FLEXMEM_HEAP_SAVING_KIB = QEMU_HEAP_KIB - _kib("qemu_stack_heap", "flexmem_kib")
HOST_META_KIB = _kib("host_kernel_metadata", "virtio_blk_kib")
#: Image pages a virtio-blk guest holds in its page cache (Fig. 2: 44 % of 93 MB).
TOUCHED_IMAGE_MIB = float(_T["motivation_page_cache_frac"]["virtio_blk_kib"]) * float(_T["motivation_used_mib"]["virtio_blk_kib"])
#: Guest kernel + anonymous memory (both types): the virtio-blk total less its other rows.
GUEST_BASE_MIB = (
    _kib("total", "virtio_blk_kib") - QEMU_KIB - QEMU_HEAP_KIB - _kib("image_space", "virtio_blk_kib") - HOST_META_KIB
) / KIB_PER_MIB - TOUCHED_IMAGE_MIB
_PTE_KIB = IMAGE_MIB * KIB_PER_MIB * HOST_PTE_B / PAGE_B
_TOUCHED_PAGES = TOUCHED_IMAGE_MIB * MIB / PAGE_B
#: Reverse-map bytes per shared touched page (fitted to the Fig. 7 host-metadata row).
RMAP_B_PER_PAGE = (_kib("host_kernel_metadata", "flexmem_kib") - HOST_META_KIB - _PTE_KIB) * KIB / _TOUCHED_PAGES
#: Image pages resident on a FlexMem host (Fig. 7 image row x VMs per host in that run).
HOST_IMAGE_COPY_MIB = _kib("image_space", "flexmem_kib") * VMS_IN_BREAKDOWN_PER_HOST / KIB_PER_MIB

#: Warm-vs-cold start-up gain the registry bandwidth is fitted to (L2171, "up to").
WARM_VS_COLD_GAIN = 0.485


def fit_registry_gbps(warm_s: float, image_mib: float = IMAGE_MIB) -> float:
    """Registry bandwidth (GB/s) at which a cold start (download + warm start) takes
    ``warm_s / (1 - gain)``: download time = warm_s * gain / (1 - gain)."""
    download_s = warm_s * WARM_VS_COLD_GAIN / (1 - WARM_VS_COLD_GAIN)
    return image_mib * MIB / download_s / 1e9


# --- leave-one-anchor-out refit (models/flexmem/cv.py, ``dse validate flexmem --cv``)
#: The claims a constant is fitted to (claims.yaml ``kind: anchor``).
ANCHORS = ("warm_vs_cold_startup",)
#: Registry bandwidth before the fit, GB/s: the digest's default for the unstated download
#: rate, an HTTP download at the 100 Gb/s NIC rate (vm-image-cache.md §7; 12.5 GB/s).
APRIORI_REGISTRY_GBPS = 100.0 / 8.0


def fit(warm_s: float, exclude: frozenset[str] = frozenset()) -> dict[str, float]:
    """The fitted constants as flexmem parameters, without the anchors in ``exclude``: the
    registry bandwidth has one anchor; left out, it takes its a-priori value."""
    if "warm_vs_cold_startup" in exclude:
        return {"registry_gbps": APRIORI_REGISTRY_GBPS}
    return {"registry_gbps": fit_registry_gbps(warm_s)}
