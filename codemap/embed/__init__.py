"""Embed: find a model, run it (PyTorch or ONNX Runtime), and index a vocabulary's names with FAISS."""
