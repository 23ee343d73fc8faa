"""Review: apply a reviewed workbook, and the mapping memory of past decisions."""
