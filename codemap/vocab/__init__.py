"""Vocabulary: the target concepts and their names (built in, table files, the store), and their is-a hierarchy."""
