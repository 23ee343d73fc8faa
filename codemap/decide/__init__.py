"""Decide: calibrated confidence, review triage and the optional LLM selector."""
