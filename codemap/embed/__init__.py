"""Embed: find a model, run it (PyTorch or ONNX Runtime), index a vocabulary's names with FAISS."""
from .encoder import Encoder
from .index import NameIndex, load_or_build_index
from .manifest import MANIFEST, Backend, ModelInfo, Pooling, read_manifest, write_manifest
from .models import default_model_path, resolve_model
from .onnx_cache import runtime_model
from .torch_backend import pool

__all__ = ["Backend", "Encoder", "MANIFEST", "ModelInfo", "NameIndex", "Pooling",
           "default_model_path", "load_or_build_index", "pool", "read_manifest", "resolve_model",
           "runtime_model", "write_manifest"]
