"""Decide: calibrated confidence, review triage and the optional LLM selector."""
from .calibrate import CalibrateConfig, calibrate
from .confidence import Calibrator, choose_calibrator, shipped_calibrators
from .llm_select import LLMConfig, select_with_llm
from .triage import AUTO_ACCEPT_BY, NO_CANDIDATES, SUGGESTIONS, review_order, suggest, tally

__all__ = ["AUTO_ACCEPT_BY", "CalibrateConfig", "Calibrator", "LLMConfig", "NO_CANDIDATES",
           "SUGGESTIONS", "calibrate", "choose_calibrator", "review_order", "select_with_llm",
           "shipped_calibrators", "suggest", "tally"]
