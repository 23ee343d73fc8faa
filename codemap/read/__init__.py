"""Read: code lists and other tables into string tables, and the language a list is written in."""
from .language import LanguageGuess, detect_language, names_language, source_language
from .readers import (SOURCE_FILE_COLUMN, SourceTable, header_key, iter_code_list, read_code_list,
                      read_sheets, read_table)

__all__ = ["LanguageGuess", "SOURCE_FILE_COLUMN", "SourceTable", "detect_language", "header_key",
           "iter_code_list", "names_language", "read_code_list", "read_sheets", "read_table", "source_language"]
