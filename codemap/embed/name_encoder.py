"""Which encoder embeds a target's names: the run's model, or for a large target its int8 export.

Embedding every name is what a large target costs: the full ICD-10-CM (72,616 names) took 517 s
with the fp32 export on a 2-core machine. The int8 export cut to NAME_TOKENS embeds the same
names in about a third of that, and a row embedded by the fp32 model finds its code among them
as well as among the fp32 names: encoder acc@1 within 1 point on German, Spanish and Chinese
ICD titles (docs/experiments/2026-11-29-cross-language-scale.md). So above
IndexConfig.int8_names_above names, on CPU with `--backend auto`, a full index's names are
embedded that way and the rows by the model itself; the full index is what a list in another
language than the names gets (codemap.rank.two_stage). The two stages' pooled names, an explicit
backend, a GPU or a smaller target keep one encoder for rows and names.
"""
from __future__ import annotations

import dataclasses
import logging
from pathlib import Path

from ..config import EncoderConfig, IndexConfig, model_cache_dir
from ..errors import CodemapError
from .encoder import Encoder
from .models import resolve_model
from .onnx_cache import export_made

log = logging.getLogger(__name__)

# Tokens a large target's names are cut to: at 24 the int8 names rank the dev rows as at 32 (the
# model's own), at 16 they lose 4-9 points of acc@1 (benchmarks/results/cross-language-scale/).
NAME_TOKENS = 24
CPU = "CPUExecutionProvider"


def name_encoder_config(model: Encoder, names: int, config: IndexConfig) -> EncoderConfig | None:
    """The settings of the encoder that embeds a target of `names` names for `model`, or None
    when `model` embeds them itself."""
    fast_already = model.variant != "onnx-fp32" or model.provider != CPU
    if names <= config.int8_names_above or model.config.backend != "auto" or fast_already:
        return None
    return dataclasses.replace(model.config, backend="int8", max_length=NAME_TOKENS)


def name_encoder(model: Encoder, names: int, config: IndexConfig, cache_dir: Path,
                 progress: bool = False, made_only: bool = False) -> Encoder:
    """The encoder that embeds a target of `names` names for `model` (itself, or its int8
    export at NAME_TOKENS; itself again, with a warning, when that export cannot be made).
    `made_only`: itself unless that export exists already. A list that takes the two stages asks
    only whether `codemap vocab embed` built a full index ahead, which needs the export: it
    should not pay for making one (once per model)."""
    wanted = name_encoder_config(model, names, config)
    if wanted is None:
        return model
    if made_only and not export_made(resolve_model(wanted.model, cache_dir), wanted.backend,
                                     model_cache_dir(cache_dir)):
        return model
    try:
        return Encoder.load(wanted, cache_dir, progress=progress)
    except CodemapError as exc:  # e.g. the int8 variant failed its parity check at export
        log.warning("the target's names are embedded by the model itself (%s)", exc)
        return model


def describe(model: Encoder, names_encoder: Encoder) -> str:
    """What embedded the target's names when not the model itself, for the run sheet and
    summary ("" when the model did)."""
    if names_encoder is model:
        return ""
    return (f"names embedded by its {names_encoder.variant.removeprefix('onnx-')} export cut to "
            f"{names_encoder.info.max_length} tokens (a large target on CPU)")
