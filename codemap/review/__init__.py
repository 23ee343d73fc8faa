"""Review: apply a reviewed workbook, and the mapping memory of past decisions."""
from .apply import apply_reviews, read_reviewed_workbook
from .memory import MappingMemory

__all__ = ["MappingMemory", "apply_reviews", "read_reviewed_workbook"]
