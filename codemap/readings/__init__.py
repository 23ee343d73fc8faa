"""How a source text is read besides as typed: abbreviations with their sense in the target's
domain (senses), cut words completed from the target's words (word_completion), a Chinese
list's words glossed in English (glosses). General: each reads the target, none names a domain;
a domain adds its own readings and taught senses through codemap.domains."""
