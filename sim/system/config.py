"""Platform and model configuration: TOML shipped with the package -> frozen, validated dataclasses.

``configs/platform.toml`` holds the hardware (one section per device, units in every key name,
each figure's source in a comment); ``configs/models.toml`` the model shapes and the named pairs.
:func:`load_config` reads both, applies ``SECTION.KEY=VALUE`` overrides (``--set``) and validates
every field (type; numbers finite and > 0, utilisations and efficiencies in (0, 1]); any error is
a :class:`ConfigError` naming the key and the value.
"""

import dataclasses
import math
import tomllib
from dataclasses import dataclass, fields
from importlib import resources

__all__ = ["ConfigError", "Npu", "Pim", "Interconnect", "Controller", "Gpu", "PhoneGpu", "HbmPim",
           "Storage", "Run", "ModelShape", "Platform", "load_config", "parse_override"]


class ConfigError(ValueError):
    """A bad configuration file, key or value (the message names it)."""


@dataclass(frozen=True)
class Npu:
    int8_tops: float
    vector_tops: float
    chips: int
    freq_mhz: float
    scratchpad_mb: float
    scratchpad_bw_gbps: float
    compute_util: float
    bw_util: float
    pj_per_mac: float
    pj_per_vector_op: float
    background_mw: float


@dataclass(frozen=True)
class Pim:
    ranks: int
    rank_gb: float
    banks_per_rank: int
    freq_mhz: float
    int8_gops: float
    internal_bw_gbps: float
    offchip_bw_gbps: float
    compute_util: float
    gemv_efficiency: float
    t_rp: int
    t_rcd: int
    t_ras: int
    t_rrd_l: int
    t_wr: int
    t_ccd_s: int
    t_ccd_l: int
    t_refi: int
    t_faw: int
    t_rfc: int
    pj_per_mac: float
    cell_pj_per_bit: float
    read_pj_per_bit: float
    column_pj_per_bit: float
    global_io_pj_per_bit: float
    offchip_io_pj_per_bit: float
    background_mw: float
    aau_lanes: int
    aau_pj_gelu: float
    aau_pj_softmax: float
    aau_pj_layernorm: float

    @property
    def mem_gb(self):
        return self.ranks * self.rank_gb

    @property
    def bank_pj_per_bit(self):
        """In-bank access (what the PIM's GEMV reads): activation + cell read."""
        return self.cell_pj_per_bit + self.read_pj_per_bit

    @property
    def offchip_pj_per_bit(self):
        """A read leaving the die: the whole path plus the off-chip interface."""
        return (self.bank_pj_per_bit + self.column_pj_per_bit + self.global_io_pj_per_bit
                + self.offchip_io_pj_per_bit)


@dataclass(frozen=True)
class Interconnect:
    kind: str
    freq_mhz: float
    width_bits: int
    latency_cycles: int
    pj_per_bit: float


@dataclass(frozen=True)
class Controller:
    edc_cycles: int
    tvc_cycles: int
    gts_switch_cycles: int
    edc_pj: float
    tvc_pj: float
    gts_switch_pj: float
    descriptor_bytes: int
    draft_queue_depth: int
    feedback_queue_depth: int
    preverify_queue_depth: int
    max_lookahead_batches: int
    tvc_ratio_bits: int
    tvc_prescale_bits: int


@dataclass(frozen=True)
class Gpu:
    name: str
    mem_gb: float
    mem_bw_gbps: float
    int8_tops: float
    compute_util: float
    bw_util: float
    pj_per_mac: float
    dram_pj_per_bit: float
    background_mw: float
    host_link: str
    host_link_gbps: float
    host_link_pj_per_bit: float


@dataclass(frozen=True)
class PhoneGpu:
    name: str
    int8_tops: float
    compute_util: float
    bw_util: float
    pj_per_mac: float
    background_mw: float


@dataclass(frozen=True)
class HbmPim:
    name: str
    internal_bw_gbps: float
    int8_gops: float
    mem_gb: float
    compute_util: float
    pj_per_mac: float
    bank_pj_per_bit: float
    background_mw: float
    op_sync_ns: float


@dataclass(frozen=True)
class Storage:
    host_link: str
    host_link_gbps: float
    host_link_pj_per_bit: float


@dataclass(frozen=True)
class Run:
    tokens: int
    batch: int
    kv_bytes_per_elem: int
    seed: int


@dataclass(frozen=True)
class ModelShape:
    """A decoder-only transformer's shape (INT8: one byte per parameter)."""
    name: str
    d_model: int
    layers: int
    heads: int
    kv_heads: int
    ffn: int
    ffn_matrices: int
    vocab: int
    tied_embeddings: bool
    head_dim: int = 0            #: 0: d_model // heads

    @property
    def hd(self):
        return self.head_dim or self.d_model // self.heads

    @property
    def layer_params(self):
        """Weights of one layer: Q and O (heads x head_dim), K and V (kv_heads), the MLP."""
        q = self.d_model * self.heads * self.hd
        kv = self.d_model * self.kv_heads * self.hd
        return 2 * q + 2 * kv + self.ffn_matrices * self.d_model * self.ffn

    @property
    def head_params(self):
        """The LM head (vocab x d), read by every pass."""
        return self.vocab * self.d_model

    @property
    def params(self):
        """All parameters (the input embedding counted once more unless tied)."""
        extra = 0 if self.tied_embeddings else self.vocab * self.d_model
        return self.layers * self.layer_params + self.head_params + extra

    def kv_bytes_per_token(self, elem_bytes):
        return 2 * self.layers * self.kv_heads * self.hd * elem_bytes


SECTIONS = {"npu": Npu, "pim": Pim, "interconnect": Interconnect, "controller": Controller,
            "gpu": Gpu, "phone_gpu": PhoneGpu, "hbm_pim": HbmPim, "storage": Storage, "run": Run}
_UNIT = ("_util", "_efficiency")
_MAY_BE_ZERO = {"seed", "tvc_prescale_bits"}


@dataclass(frozen=True)
class Platform:
    """The whole resolved configuration (every figure the simulator uses)."""
    npu: Npu
    pim: Pim
    interconnect: Interconnect
    controller: Controller
    gpu: Gpu
    phone_gpu: PhoneGpu
    hbm_pim: HbmPim
    storage: Storage
    run: Run
    models: dict
    pairs: dict

    def pair(self, name):
        if name not in self.pairs:
            raise ConfigError(f"pair must be one of {', '.join(self.pairs)}, not {name!r}")
        draft, target = self.pairs[name]
        return self.models[draft], self.models[target]

    def as_dict(self):
        out = {name: dataclasses.asdict(getattr(self, name)) for name in SECTIONS}
        out["models"] = {k: dataclasses.asdict(m) for k, m in self.models.items()}
        out["pairs"] = {k: list(v) for k, v in self.pairs.items()}
        return out


def _check(section, cls, values):
    known = {f.name: f for f in fields(cls)}
    for key in values:
        if key not in known:
            raise ConfigError(f"unknown key {section}.{key} (known: {', '.join(known)})")
    out = {}
    for name, f in known.items():
        if name not in values:
            if f.default is not dataclasses.MISSING:
                continue
            raise ConfigError(f"missing key {section}.{name}")
        v = values[name]
        kind = f.type
        where = f"{section}.{name}"
        if kind is bool:
            if not isinstance(v, bool):
                raise ConfigError(f"{where} must be true or false, not {v!r}")
        elif kind is str:
            if not isinstance(v, str) or not v:
                raise ConfigError(f"{where} must be a non-empty string, not {v!r}")
        elif kind in (int, float):
            ok = isinstance(v, int) if kind is int else isinstance(v, (int, float))
            if isinstance(v, bool) or not ok or not math.isfinite(v):
                raise ConfigError(f"{where} must be {'an integer' if kind is int else 'a number'}"
                                  f", not {v!r}")
            low_ok = v >= 0 if (name in _MAY_BE_ZERO or name == "head_dim") else v > 0
            if not low_ok:
                raise ConfigError(f"{where} must be > 0, not {v!r}")
            if name.endswith(_UNIT) and v > 1:
                raise ConfigError(f"{where} must be in (0, 1], not {v!r}")
            v = kind(v)
        out[name] = v
    return cls(**out)


def parse_override(text):
    """``"SECTION.KEY=VALUE"`` -> ``(section, key, value)`` with VALUE parsed as TOML."""
    if "=" not in text or "." not in text.split("=", 1)[0]:
        raise ConfigError(f"--set needs SECTION.KEY=VALUE, not {text!r}")
    path, raw = text.split("=", 1)
    section, key = path.strip().split(".", 1)
    try:
        value = tomllib.loads(f"v = {raw.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()  # a bare word is a string
    return section, key, value


def _read_toml(name, text=None, where=None):
    try:
        if text is None:
            text = resources.files("ahasd.sim.system").joinpath("configs", name).read_text()
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"malformed TOML in {where or name}: {e}") from None


def load_config(overrides=(), *, platform_text=None, models_text=None, platform_path=None):
    """The resolved :class:`Platform`: shipped TOML (or the given texts or platform file) plus
    ``overrides``.

    ``overrides``: ``"SECTION.KEY=VALUE"`` strings or ``(section, key, value)`` tuples.
    """
    if platform_path is not None:
        try:
            with open(platform_path, encoding="utf-8") as f:
                platform_text = f.read()
        except OSError as e:
            raise ConfigError(f"cannot read {platform_path}: {e.strerror}") from None
    raw = _read_toml("platform.toml", platform_text, platform_path)
    for o in overrides:
        section, key, value = parse_override(o) if isinstance(o, str) else o
        if section not in SECTIONS:
            raise ConfigError(f"unknown section {section!r} in --set {section}.{key} "
                              f"(sections: {', '.join(SECTIONS)})")
        if key not in {f.name for f in fields(SECTIONS[section])}:
            raise ConfigError(f"unknown key {section}.{key}")
        raw.setdefault(section, {})[key] = value
    for section in raw:
        if section not in SECTIONS:
            raise ConfigError(f"unknown section [{section}] in platform.toml")
    parts = {s: _check(s, cls, raw.get(s, {})) for s, cls in SECTIONS.items()}
    m = _read_toml("models.toml", models_text)
    models = {}
    for name, values in m.get("models", {}).items():
        models[name] = _check(f"models.{name}", ModelShape, {"name": name, **values})
    pairs = {}
    for name, value in m.get("pairs", {}).items():
        if (not isinstance(value, list) or len(value) != 2
                or not all(isinstance(x, str) and x in models for x in value)):
            raise ConfigError(f"pairs.{name} must name two models of [models], not {value!r}")
        pairs[name] = tuple(value)
    return Platform(**parts, models=models, pairs=pairs)
