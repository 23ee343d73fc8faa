"""Write: candidates to the review workbook or CSV/TSV/Parquet, and the resumable parts folder."""
