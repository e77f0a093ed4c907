"""One object GET and one object PUT in MinIO and MinRdIO: latency, CPU and bytes.

Layout (nvmeof-objstore.md §1-§2): ``nodes`` compute nodes with ``vols`` NVMe-oF volumes
each, all on one storage node; an object is erasure-coded into ``k`` data + ``r``
parity shards, one per volume (``k + r = nodes x vols``), in erasure blocks of 1 MiB.
A compute node (the gateway) receives the client's request; the share of shards on
other nodes (their owners) is ``f_rem = 1 - 1 / nodes``.  Everything here is per request;
``model.py`` spreads it over the nodes.

Every request takes MinIO's distributed namespace lock (a lock and an unlock call to each
other live node), in both systems.  GET (M2): read every volume's xl.meta, then per erasure
block the ``k`` data shards in parallel, merge, return over HTTP.  MinIO reaches a remote
shard through a storage-REST call to its owner, which reads it over NVMe-oF and sends it
back over TCP (two transfers, M1); MinRdIO reads it straight from the volume with the
block map from its FileMap cache (a miss costs a block-map call per remote file, M7);
"optimal" mounts the remote volumes locally.  PUT (M3): hash the body, encode, write the
``k + r`` shards, write xl.meta through MinIO's call on every volume, commit.  MinRdIO
gets the block map by a call overlapped with encoding and adds a remote fdatasync before
the commit.  Deferred parity (M9) takes the parity off the PUT's path; the share of its
work done while the requests run is ``parity_in_window`` (``put`` can also return the
rest).  A failed compute node (M8): MinIO rebuilds the data shards it held from parity;
MinRdIO reads them directly when the FileMap cache holds their map.  A call's latency is
its CPU at both ends plus a wait; the S3 handler's CPU is on the request's path.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from dse.units import KIB, MIB
from models.rdio import paths

#: MinIO's erasure block: 1 MiB (blockSizeV2 in MinIO's source; the article names the
#: 2022 release it modified, L728).
ERASURE_BLOCK_B = float(MIB)
#: Bitrot checksum (HighwayHash-256) stored with each shard block, bytes.
BITROT_B = 32.0
#: xl.meta size: "a few hundred bytes" (nvmeof-objstore.md §3, L734-736); 512 B assumed.
META_B = 512.0
#: Request/response headers of an internode RPC or an S3 request, bytes.  Assumption:
#: an HTTP/1.1 request line + headers (MinIO storage REST and S3 both use HTTP).
HDR_B = 512.0
#: fiemap answer: path + a few extents, bytes.  Assumption (one extent per shard file).
MAP_B = 256.0
#: MinIO's distributed namespace lock (dsync, in the 2022 release the article modified, L728):
#: a lock and an unlock call to every other live node's locker per GET or PUT.
LOCK_CALLS_PER_NODE = 2.0
#: A call's software time counts its CPU at both ends (caller and callee).
CALL_ENDS = 2.0
#: Their TCP wire sizes (one segment each).
HDR_WIRE_B = float(paths.tcp_wire_b(HDR_B))
META_WIRE_B = float(paths.tcp_wire_b(META_B))
MAP_WIRE_B = float(paths.tcp_wire_b(MAP_B))


@dataclass
class Ctx:
    """Per-point inputs (numpy arrays broadcast to the batch)."""

    object_b: np.ndarray
    k: np.ndarray
    r: np.ndarray
    nodes: np.ndarray
    vols: np.ndarray
    link_gbit_s: np.ndarray
    transport: np.ndarray
    minio: np.ndarray  # RPC data path (vanilla MinIO)
    fmc: np.ndarray  # MinRdIO without FileMap cache
    optimal: np.ndarray  # remote volumes mounted locally (reads only)
    hit: np.ndarray  # FileMap hit rate (MinRdIO); 0 for MinRdIO-FMC
    failed: np.ndarray  # failed compute nodes (0 or 1; never the gateway)
    deferred: np.ndarray  # deferred parity
    parity_in_window: np.ndarray  # share of deferred parity work done while requests run
    rpc_wait_us: np.ndarray
    map_rpc_wait_us: np.ndarray
    http_sw_us: np.ndarray
    req_cpu_us: np.ndarray
    rpc_cpu_us: np.ndarray
    map_rpc_cpu_us: np.ndarray
    io_cpu_us: np.ndarray
    tcp_cpu_per_kib_us: np.ndarray
    hash_cpu_per_kib_us: np.ndarray
    ec_cpu_per_kib_us: np.ndarray
    put_hash_cpu_per_kib_us: np.ndarray
    fs_meta_us: np.ndarray
    fs_create_us: np.ndarray
    tcp_base_us: np.ndarray  # paths.tcp_base_us of the link
    tcp_us_per_b: np.ndarray  # paths.tcp_us_per_wire_b of the link

    @cached_property
    def nvmf_read(self) -> tuple[np.ndarray, np.ndarray]:
        return paths.nvmeof_affine_ns(False, self.transport, self.link_gbit_s)

    @cached_property
    def nvmf_write(self) -> tuple[np.ndarray, np.ndarray]:
        return paths.nvmeof_affine_ns(True, self.transport, self.link_gbit_s)

    @cached_property
    def shard_wire_b(self) -> np.ndarray:
        """TCP wire bytes of one shard block."""
        return paths.tcp_wire_b(self.shard_b)

    @cached_property
    def object_wire_b(self) -> np.ndarray:
        """TCP wire bytes of the whole object (client transfer)."""
        return paths.tcp_wire_b(self.object_b)

    @cached_property
    def rpc_sw_us(self) -> np.ndarray:
        """Software time of one MinIO storage-REST call: its CPU at both ends + waits."""
        return CALL_ENDS * self.rpc_cpu_us + self.rpc_wait_us

    @cached_property
    def map_rpc_sw_us(self) -> np.ndarray:
        """Software time of one RdIO metadata-plane call: its CPU at both ends + waits."""
        return CALL_ENDS * self.map_rpc_cpu_us + self.map_rpc_wait_us

    @cached_property
    def lock_rpcs(self) -> np.ndarray:
        """MinIO's distributed namespace lock (dsync) per request, both systems: a lock and
        an unlock call to every other live node's locker."""
        return LOCK_CALLS_PER_NODE * (self.nodes - 1.0 - self.failed)

    @cached_property
    def volumes(self) -> np.ndarray:
        return self.nodes * self.vols

    @cached_property
    def f_rem(self) -> np.ndarray:
        return 1.0 - 1.0 / self.nodes

    @cached_property
    def blocks(self) -> np.ndarray:
        return np.maximum(self.object_b / ERASURE_BLOCK_B, 1.0)

    @cached_property
    def shard_b(self) -> np.ndarray:
        """Shard bytes per erasure block (with its bitrot checksum)."""
        return np.minimum(self.object_b, ERASURE_BLOCK_B) / self.k + BITROT_B

    @cached_property
    def wire_b_per_us(self) -> np.ndarray:
        return paths.gbit_s_to_b_per_us(self.link_gbit_s)


def _tcp_us(c: Ctx, out_wire_b: np.ndarray | float, back_wire_b: np.ndarray | float) -> np.ndarray:
    """A kernel TCP exchange (:func:`paths.tcp_exchange_us`) given both messages' wire bytes."""
    return c.tcp_base_us + (out_wire_b + back_wire_b - 2.0 * paths.TCP_EMPTY_WIRE_B) * c.tcp_us_per_b


def _rpc_us(c: Ctx, out_wire_b: np.ndarray | float, back_wire_b: np.ndarray | float) -> np.ndarray:
    return _tcp_us(c, out_wire_b, back_wire_b) + c.rpc_sw_us


def _kib(x: np.ndarray) -> np.ndarray:
    return x / KIB


def _front_us(c: Ctx) -> np.ndarray:
    """The S3 front end beyond moving the body: the handler's own work (parse, authenticate,
    decode xl.meta) runs in the request's goroutine, the namespace lock costs one round of
    lock calls (the unlock is not waited for), plus the handler's other waits."""
    return c.req_cpu_us + _rpc_us(c, HDR_WIRE_B, HDR_WIRE_B) + c.http_sw_us


def remote_block_read_us(c: Ctx) -> tuple[np.ndarray, np.ndarray]:
    """One remote shard block read (digest M1, the "double transfer" of L644), unloaded:
    (MinIO's storage-REST path, RdIO's direct path), us.  MinIO asks the owner node, which
    reads its volume over NVMe-oF and streams the block back over TCP (call CPU at both ends,
    TCP CPU per byte at both ends); RdIO reads the owner's volume over NVMe-oF itself."""
    io_b = paths.direct_io_b(c.shard_b)
    direct = paths.volume_io_us(io_b, False, c.transport, c.link_gbit_s, c.nvmf_read)
    via_rpc = (_tcp_us(c, HDR_WIRE_B, c.shard_wire_b) + c.rpc_sw_us + direct
               + 2.0 * _kib(c.shard_b) * c.tcp_cpu_per_kib_us)
    return via_rpc, direct


def request_handling_cpu_us(c: Ctx) -> np.ndarray:
    """Gateway CPU of one S3 request that does not scale with its size: the handler's own
    work (``req_cpu_us``: parse, authenticate, xl.meta decode, bookkeeping) and its share of
    the namespace-lock calls (the same in both systems, L808's CPU runs)."""
    return c.req_cpu_us + c.rpc_cpu_us * c.lock_rpcs


def get(c: Ctx) -> dict[str, np.ndarray]:
    """Latency, CPU and bytes of one GET."""
    O, k, blocks, b = c.object_b, c.k, c.blocks, c.shard_b
    minio, rdio = c.minio, ~c.minio
    io_b = paths.direct_io_b(b)
    meta_io_b = paths.direct_io_b(META_B)
    t_meta_io = paths.volume_io_us(meta_io_b, False, c.transport, c.link_gbit_s, c.nvmf_read)
    t_shard_io = paths.volume_io_us(io_b, False, c.transport, c.link_gbit_s, c.nvmf_read)
    # RdIO's metadata-plane RPC: fiemap on the owner, from its inode cache
    map_rpc = _tcp_us(c, HDR_WIRE_B, MAP_WIRE_B) + c.map_rpc_sw_us + c.fs_meta_us
    # MinIO cannot reach the failed node's volumes (its process is gone); MinRdIO reads them
    # over NVMe-oF when it has their block maps
    n_meta = c.volumes - np.where(minio, c.failed * c.vols, 0.0)
    meta_rem = n_meta - c.vols
    shards = blocks * k
    shards_rem = shards * c.f_rem
    files_rem = k * c.f_rem
    # FileMap misses (M7): MinRdIO-FMC always, MinRdIO at 1 - hit; one fiemap RPC per remote
    # file (xl.meta and part file), each set in parallel
    miss = np.where(c.fmc, 1.0, np.where(rdio & ~c.optimal, 1.0 - c.hit, 0.0))
    # failure (M8): the data shards on the failed node are rebuilt from parity -- always in
    # MinIO, on a FileMap miss in MinRdIO (no owner to ask for the map).  Each of its
    # ``vols`` shards is a data shard with probability k / (k + r): on average vols / (k + r)
    # of the object is reconstructed
    decode_b = c.failed * O * c.vols / (k + c.r) * np.where(minio, 1.0, miss)

    # --- latency (M2): front end, ReadMeta, ReadParts, merge.  MinIO streams each remote
    # shard file through one RPC; every block crosses the owner's and the gateway's TCP
    # stacks.  The request's own CPU work (verify, merge, client socket) is on its path.
    wire_us_per_b = 1.0 / c.wire_b_per_us
    fan_in_us = (k - 1.0) * c.shard_wire_b * wire_us_per_b
    read_meta = np.where(minio, _rpc_us(c, HDR_WIRE_B, META_WIRE_B) + t_meta_io, t_meta_io + miss * map_rpc)
    block_us = np.where(
        minio, _tcp_us(c, paths.TCP_EMPTY_WIRE_B, c.shard_wire_b) + t_shard_io + 2.0 * _kib(b) * c.tcp_cpu_per_kib_us, t_shard_io
    ) + fan_in_us
    read_parts = np.where(minio, c.rpc_sw_us, miss * map_rpc) + blocks * block_us
    critical_cpu = _kib(O) * (c.tcp_cpu_per_kib_us + c.hash_cpu_per_kib_us) + _kib(decode_b) * c.ec_cpu_per_kib_us
    front = _tcp_us(c, HDR_WIRE_B, c.object_wire_b) + _front_us(c)
    latency = front + read_meta + read_parts + critical_cpu

    # --- operations and bytes (M4): NVMe-oF at the gateway / at the owners, TCP between them
    rpcs = np.where(minio, meta_rem + files_rem, miss * (meta_rem + files_rem))
    nv_meta, nv_shard = paths.nvmf_wire_b(meta_io_b), paths.nvmf_wire_b(io_b)
    gw_ios = np.where(minio, c.vols + shards - shards_rem, n_meta + shards)
    own_ios = np.where(minio, meta_rem + shards_rem, 0.0)
    gw_nvmf = np.where(minio, c.vols * nv_meta + (shards - shards_rem) * nv_shard, n_meta * nv_meta + shards * nv_shard)
    own_nvmf = np.where(minio, meta_rem * nv_meta + shards_rem * nv_shard, 0.0)
    payload_b = np.where(minio, meta_rem * META_WIRE_B + shards_rem * c.shard_wire_b, rpcs * MAP_WIRE_B)
    requests_b = (rpcs + c.lock_rpcs) * HDR_WIRE_B

    # --- CPU (M5)
    rpc_cpu = np.where(minio, c.rpc_cpu_us, c.map_rpc_cpu_us)  # MinIO's storage REST or RdIO's block-map RPC
    cpu_gw = (
        c.req_cpu_us + c.rpc_cpu_us * c.lock_rpcs + critical_cpu + c.io_cpu_us * gw_ios + rpc_cpu * rpcs
        + _kib(payload_b) * c.tcp_cpu_per_kib_us
    )
    cpu_own = c.rpc_cpu_us * c.lock_rpcs + rpc_cpu * rpcs + _kib(payload_b) * c.tcp_cpu_per_kib_us + c.io_cpu_us * own_ios + np.where(
        rdio, rpcs * c.fs_meta_us, 0.0)
    return {
        "latency_us": latency,
        "storage_phase_us": read_meta + read_parts,
        "cpu_gw_us": cpu_gw,
        "cpu_own_us": cpu_own,
        "storage_b": gw_nvmf + own_nvmf,
        "compute_b": payload_b + requests_b + c.lock_rpcs * HDR_WIRE_B,
        "gw_rx_b": gw_nvmf + payload_b + HDR_WIRE_B + c.lock_rpcs * HDR_WIRE_B,
        "gw_tx_b": c.object_wire_b + requests_b,
        "own_rx_b": own_nvmf + requests_b,
        "own_tx_b": payload_b + c.lock_rpcs * HDR_WIRE_B,
        "gw_nvmf_b": gw_nvmf,
        "own_nvmf_b": own_nvmf,
        "storage_tx_b": gw_nvmf + own_nvmf,
        "storage_rx_b": np.zeros_like(gw_nvmf),
        "ssd_ios": gw_ios + own_ios,
        "ssd_io_b": io_b,
    }


def put_latency(c: Ctx) -> dict[str, np.ndarray]:
    """Latency of one PUT (M3) and its stages: front end, Encode, the wait for RdIO's block map,
    WriteBlocks, xl.meta, Commit.  The body is hashed for its ETag / payload signature as it
    streams in, each shard gets its bitrot hash and the parity is computed (Encode); MinIO
    streams each remote shard file through one RPC that creates the file on the owner, MinRdIO
    writes the raw volume, its create/fallocate/fiemap RPC overlapping the encoding.  Deferred
    parity (M9): only the data shards are hashed and written on the request's path."""
    k, b = c.k, c.shard_b
    minio, rdio = c.minio, ~c.minio
    io_b = paths.direct_io_b(b)
    t_shard_io = paths.volume_io_us(io_b, True, c.transport, c.link_gbit_s, c.nvmf_write)
    t_small_io = paths.volume_io_us(paths.direct_io_b(META_B), True, c.transport, c.link_gbit_s, c.nvmf_write)
    # RdIO's metadata-plane RPC: create + fallocate + fiemap on the owner
    map_rpc = _tcp_us(c, HDR_WIRE_B, MAP_WIRE_B) + c.map_rpc_sw_us + c.fs_create_us + c.fs_meta_us
    kib_o = _kib(c.object_b)
    on_path = np.where(c.deferred, k, k + c.r)
    encode = kib_o * (c.put_hash_cpu_per_kib_us + on_path / k * c.hash_cpu_per_kib_us + (on_path - k) / k * c.ec_cpu_per_kib_us)
    wire_us_per_b = 1.0 / c.wire_b_per_us
    fan_out_us = (on_path - 1.0) * c.shard_wire_b * wire_us_per_b
    block_us = np.where(
        minio, _tcp_us(c, c.shard_wire_b, paths.TCP_EMPTY_WIRE_B) + t_shard_io + 2.0 * _kib(b) * c.tcp_cpu_per_kib_us, t_shard_io
    ) + fan_out_us
    # MinRdIO asks for the block map when the request arrives: it overlaps the body upload
    # and the encoding, and only the rest of it waits (outside WriteBlocks, as the
    # article's breakdown has it)
    upload_us = _tcp_us(c, c.object_wire_b, HDR_WIRE_B) + kib_o * c.tcp_cpu_per_kib_us
    map_wait = np.where(rdio, np.maximum(map_rpc - encode - upload_us, 0.0), 0.0)
    write_blocks = np.where(minio, c.rpc_sw_us + c.fs_create_us, 0.0) + c.blocks * block_us
    write_meta = _rpc_us(c, META_WIRE_B, HDR_WIRE_B) + t_small_io
    # MinRdIO: + a remote fdatasync of the raw-written shards, through RdIO's own call
    fsync_rpc = _tcp_us(c, HDR_WIRE_B, HDR_WIRE_B) + c.map_rpc_sw_us + t_small_io
    commit = _rpc_us(c, HDR_WIRE_B, HDR_WIRE_B) + t_small_io + np.where(rdio, fsync_rpc, 0.0)
    front = upload_us + _front_us(c)
    return {
        "latency_us": front + encode + map_wait + write_blocks + write_meta + commit,
        "storage_phase_us": write_blocks,
        "encode_us": encode,
        "commit_us": commit,
    }


def put_accounting(c: Ctx, n_res: np.ndarray) -> dict[str, np.ndarray]:
    """Operations, bytes and CPU of one PUT with ``n_res`` shards per erasure block written."""
    k, minio, rdio = c.k, c.minio, ~c.minio
    io_b = paths.direct_io_b(c.shard_b)
    nv_meta, nv_shard = paths.nvmf_wire_b(paths.direct_io_b(META_B)), paths.nvmf_wire_b(io_b)
    vol_rem = c.volumes - c.vols
    remotes = c.nodes - 1.0
    kib_o = _kib(c.object_b)
    shards = c.blocks * n_res
    shards_rem = shards * c.f_rem
    files_rem = n_res * c.f_rem  # one shard file per remote volume
    # MinIO: one streaming RPC per remote shard file, one xl.meta write and one commit per
    # remote volume; MinRdIO: the same xl.meta and commit RPCs, plus one create/map and one
    # fdatasync RPC per remote node (a node's files together)
    rpcs = 2.0 * vol_rem + np.where(minio, files_rem, 0.0) + c.lock_rpcs  # MinIO storage REST calls
    map_rpcs = np.where(minio, 0.0, 2.0 * remotes)  # RdIO's create/map and fdatasync calls
    gw_shards = np.where(minio, shards - shards_rem, shards)
    gw_ios = gw_shards + 2.0 * c.vols
    own_ios = 2.0 * vol_rem + np.where(minio, shards_rem, remotes)  # + shards | a journal flush per node
    # --- bytes (M4)
    gw_nvmf = gw_shards * nv_shard + 2.0 * c.vols * nv_meta
    own_nvmf = np.where(minio, shards_rem * nv_shard, 0.0) + (own_ios - np.where(minio, shards_rem, 0.0)) * nv_meta
    payload_b = np.where(minio, shards_rem * c.shard_wire_b, 0.0) + vol_rem * META_WIRE_B
    answers_b = (rpcs + map_rpcs) * HDR_WIRE_B + np.where(rdio, remotes * paths.tcp_wire_b(files_rem / remotes * MAP_B), 0.0)
    # --- CPU (M5): body hash, bitrot hash of the shards written, parity computation
    encode_cpu = kib_o * (c.put_hash_cpu_per_kib_us + n_res / k * c.hash_cpu_per_kib_us + (n_res - k) / k * c.ec_cpu_per_kib_us)
    rpc_cpu = c.rpc_cpu_us * rpcs + c.map_rpc_cpu_us * map_rpcs
    tcp_payload = _kib(payload_b) * c.tcp_cpu_per_kib_us
    cpu_gw = c.req_cpu_us + kib_o * c.tcp_cpu_per_kib_us + encode_cpu + c.io_cpu_us * gw_ios + rpc_cpu + tcp_payload
    cpu_own = (
        rpc_cpu + tcp_payload + c.io_cpu_us * own_ios
        + files_rem * c.fs_create_us + np.where(rdio, files_rem * c.fs_meta_us, 0.0)
    )
    storage = gw_nvmf + own_nvmf
    return {
        "cpu_gw_us": cpu_gw,
        "cpu_own_us": cpu_own,
        "storage_b": storage,
        "compute_b": payload_b + answers_b,
        "gw_rx_b": c.object_wire_b + answers_b,
        "gw_tx_b": gw_nvmf + payload_b,
        "own_rx_b": payload_b,
        "own_tx_b": own_nvmf + answers_b,
        "gw_nvmf_b": gw_nvmf,
        "own_nvmf_b": own_nvmf,
        "storage_tx_b": np.zeros_like(gw_nvmf),
        "storage_rx_b": storage,
        "ssd_ios": gw_ios + own_ios,
        "ssd_io_b": io_b,
    }


def put(c: Ctx, parity_extra: bool = False) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray] | None]:
    """Latency, CPU and bytes of one PUT, with the deferred parity work done during the
    requests counted at ``c.parity_in_window``; with ``parity_extra`` also the rest of
    the deferred parity work (per request, station quantities only; else None)."""
    # deferred parity work counts at the share done while requests run
    n_fg = c.k + c.r * np.where(c.deferred, c.parity_in_window, 1.0)
    out = put_accounting(c, n_fg)
    out.update(put_latency(c))
    if not parity_extra:
        return out, None
    full = put_accounting(c, np.broadcast_to(c.k + c.r, n_fg.shape))
    return out, {key: full[key] - out[key] for key in full if key != "ssd_io_b"}
