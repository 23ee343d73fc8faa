"""Vocabulary: the target concepts and their names (built in, table files, the store), and their
is-a hierarchy."""
from .hierarchy import Hierarchy
from .store import StoredVocabulary, VocabStore, default_store_dir
from .store.importers import ImportOptions
from .target import load_target
from .vocabulary import (BUILTIN_VOCABULARIES, SYNONYM_SEPARATOR, Vocabulary, builtin_loinc,
                         load_vocab_file)

__all__ = ["BUILTIN_VOCABULARIES", "Hierarchy", "ImportOptions", "SYNONYM_SEPARATOR",
           "StoredVocabulary", "VocabStore", "Vocabulary", "builtin_loinc", "default_store_dir",
           "load_target", "load_vocab_file"]
