"""Transformer model shapes and a table of public models.

:class:`ModelShape` carries what the performance model needs: layers, hidden size, FFN
size, attention heads, KV heads (``kv_heads == heads`` is multi-head attention, ``1`` is
multi-query, anything between is grouped-query), head dimension, vocabulary and the
default sequence length.  ``encoder_layers`` > 0 marks an encoder-decoder model (T5/FiD),
approximated in :mod:`models.blocks.llm.inference` as encoder layers that only run on the
prompt plus ``layers`` decoder layers with cross-attention.

Sources: Calculon's ``models/*.json`` (calculon-ai/calculon) for the Megatron/GPT-3/
Turing rows and the DockerSSD study's models (same values as Calculon's files, see
``research/dockerssd.md`` section 3); model cards / papers for the others, cited per row.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from numbers import Integral
from typing import Any

from dse.errors import DseError, did_you_mean


@dataclass(frozen=True)
class ModelShape:
    """Shape of a (decoder-only unless ``encoder_layers``) transformer."""

    name: str
    layers: int
    hidden: int
    ffn: int
    heads: int
    kv_heads: int
    head_dim: int
    vocab: int
    seq: int
    gated_mlp: bool = False
    encoder_layers: int = 0
    source: str = ""

    def __post_init__(self) -> None:
        for f in ("layers", "hidden", "ffn", "heads", "kv_heads", "head_dim", "vocab", "seq"):
            v = getattr(self, f)
            if not isinstance(v, Integral) or isinstance(v, bool) or v <= 0:
                raise DseError(f"model {self.name}: {f} must be a positive integer, got {v!r}")
            object.__setattr__(self, f, int(v))
        if self.heads % self.kv_heads:
            raise DseError(f"model {self.name}: heads={self.heads} must be a multiple of kv_heads={self.kv_heads}")

    # ----------------------------------------------------------------- derived
    @property
    def attention(self) -> str:
        if self.kv_heads == self.heads:
            return "multihead"
        return "multiquery" if self.kv_heads == 1 else "grouped"

    @property
    def mlp_matrices(self) -> int:
        return 3 if self.gated_mlp else 2

    def block_params(self, cross_attention: bool = False) -> int:
        """Weights of one transformer block (matrices, biases and the two norms)."""
        q = self.hidden * self.heads * self.head_dim
        kv = 2 * self.hidden * self.kv_heads * self.head_dim
        o = self.heads * self.head_dim * self.hidden
        mlp = self.mlp_matrices * self.hidden * self.ffn
        p = q + kv + o + mlp + 4 * self.hidden
        if cross_attention:
            p += 2 * q + kv  # Q, O and K/V of the cross-attention
        return p

    @property
    def params(self) -> int:
        """All weights: blocks, token embedding and an untied LM head (tied for T5)."""
        p = self.layers * self.block_params(cross_attention=self.encoder_layers > 0)
        p += self.encoder_layers * self.block_params()
        p += self.vocab * self.hidden * (1 if self.encoder_layers else 2)
        return p

    def kv_bytes_per_token(self, bytes_per_element: float) -> float:
        """KV-cache bytes one token adds across all decoder layers (K and V)."""
        return 2.0 * self.layers * self.kv_heads * self.head_dim * bytes_per_element

    def calculon_dict(self) -> dict[str, int]:
        """The six keys of a Calculon model JSON."""
        return {"hidden": self.hidden, "feedforward": self.ffn, "seq_size": self.seq,
                "attn_heads": self.heads, "attn_size": self.head_dim, "num_blocks": self.layers}

    def with_(self, **changes: Any) -> ModelShape:
        return replace(self, **changes)


_CAL = "Calculon models/{}.json (calculon-ai/calculon, unchanged copy in results/reference/calculon/inputs/models)"
_DSSD = "Calculon models/{}.json, values listed in research/dockerssd.md section 3"


def _m(name: str, layers: int, hidden: int, ffn: int, heads: int, head_dim: int, *, kv: int | None = None,
       vocab: int = 51200, seq: int = 2048, gated: bool = False, enc: int = 0, source: str) -> ModelShape:
    return ModelShape(name, layers, hidden, ffn, heads, kv or heads, head_dim, vocab, seq, gated, enc, source)


MODELS: dict[str, ModelShape] = {m.name: m for m in (
    # Calculon's own inputs (the reference runs use these)
    _m("megatron-5B", 24, 4096, 16384, 32, 128, source=_CAL.format("megatron-5B")),
    _m("gpt3-13B", 40, 5140, 20560, 40, 128, source=_CAL.format("gpt3-13B") + "; hidden=5140 as in the file"),
    _m("megatron-22B", 48, 6144, 24576, 64, 96, source=_CAL.format("megatron-22B")),
    _m("gpt3-175B", 96, 12288, 49152, 96, 128, source=_CAL.format("gpt3-175B") + "; Brown et al. 2020 Table 2.1"),
    _m("turing-530B", 105, 20480, 81920, 128, 160, source=_CAL.format("turing-530B") + "; Smith et al. 2022 (MT-NLG)"),
    _m("megatron-1T", 128, 25600, 102400, 160, 160, source=_CAL.format("megatron-1T") + "; Narayanan et al. SC'21 Table 1"),
    # DockerSSD's LLM pool (MHA, seq 2048 as in Calculon's files)
    _m("lamda-137B", 64, 8192, 65536, 128, 128, vocab=32000,
       source=_DSSD.format("lamda") + "; Thoppilan et al. 2022 (LaMDA) Table 27"),
    _m("jurassic-178B", 76, 13824, 55296, 96, 144, vocab=256000,
       source="AI21 J1 white paper (2021), as listed in research/dockerssd.md section 3"),
    _m("pangu-200B", 64, 16384, 65536, 128, 128, vocab=40000,
       source="PanGu-alpha report arXiv 2104.12369 Table 1, as listed in research/dockerssd.md section 3"),
    _m("gopher-280B", 80, 16384, 65536, 128, 128, vocab=32000,
       source=_DSSD.format("gopher-280B") + "; Rae et al. 2021 Table 1"),
    _m("palm-540B", 118, 18432, 73728, 48, 256, vocab=256000,
       source=_DSSD.format("palm-540B") + "; Chowdhery et al. 2022 Table 1 (real PaLM uses MQA: kv_heads=1)"),
    # IKS RAG generators
    _m("llama-3-8B", 32, 4096, 14336, 32, 128, kv=8, vocab=128256, seq=8192, gated=True,
       source="meta-llama/Meta-Llama-3-8B config.json (SwiGLU, GQA 8 KV heads)"),
    _m("llama-3-70B", 80, 8192, 28672, 64, 128, kv=8, vocab=128256, seq=8192, gated=True,
       source="meta-llama/Meta-Llama-3-70B config.json (SwiGLU, GQA 8 KV heads)"),
    _m("fid-t5-base", 12, 768, 3072, 12, 64, vocab=32128, seq=512, enc=12,
       source="t5-base config (Raffel et al. 2020) used by FiD (Izacard & Grave 2021); encoder-decoder approximated"),
    _m("fid-t5-large", 24, 1024, 4096, 16, 64, vocab=32128, seq=512, enc=24,
       source="t5-large config (Raffel et al. 2020) used by FiD (Izacard & Grave 2021); encoder-decoder approximated"),
)}

_ALIASES = {"lamda": "lamda-137B", "gpt3": "gpt3-175B", "turing": "turing-530B", "megatron": "megatron-1T",
            "llama3-8b": "llama-3-8B", "llama3-70b": "llama-3-70B", "fid-t5": "fid-t5-base", "t5-base": "fid-t5-base",
            "t5-large": "fid-t5-large"}


def get_model(name: str) -> ModelShape:
    """A model from the table by name (case-insensitive; a few aliases)."""
    low = {k.lower(): k for k in MODELS}
    key = _ALIASES.get(name.lower(), name)
    key = low.get(key.lower(), key)
    if key not in MODELS:
        raise DseError(f"unknown model {name!r}{did_you_mean(name, MODELS)}; known: {', '.join(MODELS)}")
    return MODELS[key]
