"""Write: candidates to the review workbook or CSV/TSV/Parquet, reviewed mappings to OMOP, SSSOM,
Usagi or CSV, and the resumable folder of Parquet parts."""
from .parts import PartsFolder, read_parts
from .writers import (check_output, default_output, write_candidate_parts, write_candidates,
                      write_mappings, write_review_parts)

__all__ = ["PartsFolder", "check_output", "default_output", "read_parts", "write_candidate_parts",
           "write_candidates", "write_mappings", "write_review_parts"]
