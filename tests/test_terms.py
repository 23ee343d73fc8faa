"""codemap.terms counts as scikit-learn's vectorizers did: the lexical index caches they wrote
stay valid, and ranking does not move."""
import functools

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import CountVectorizer, TfidfVectorizer

from codemap.rank.lexical import NGRAMS, normalize_text
from codemap.readings.word_completion import _WORD
from codemap.terms import binary_matrix, char_wb_ngrams, smooth_idf, tfidf
from .conftest import DATA

NAMES = pd.read_csv(DATA / "loinc_long_names.tsv", sep="\t", dtype=str)["name"].tolist()[:800]
TEXTS = [normalize_text(n) for n in NAMES] + ["", "a", "k  na", "Kreatinin i.S.", "血清钾"]


def test_ngram_tfidf_is_scikit_learns():
    theirs = TfidfVectorizer(analyzer="char_wb", ngram_range=NGRAMS, binary=True, dtype=np.float32)
    expected = theirs.fit_transform(TEXTS)
    counts, vocabulary = binary_matrix(TEXTS, functools.partial(char_wb_ngrams, sizes=NGRAMS))
    assert vocabulary == theirs.vocabulary_
    assert np.allclose(smooth_idf(counts), theirs.idf_, atol=1e-6)
    assert abs(tfidf(counts, smooth_idf(counts)) - expected).max() < 1e-6
    # a fitted vocabulary: unknown n-grams are dropped, as transform drops them
    queries = ["potassium serum", "zzqx", "Glucose [Mass/volume]"]
    known, _ = binary_matrix(queries, functools.partial(char_wb_ngrams, sizes=NGRAMS), vocabulary)
    assert abs(tfidf(known, theirs.idf_) - theirs.transform(queries)).max() < 1e-6


def test_word_counts_are_scikit_learns():
    theirs = CountVectorizer(token_pattern=_WORD.pattern, lowercase=True, binary=True)
    expected = theirs.fit_transform(NAMES)
    matrix, vocabulary = binary_matrix(NAMES, lambda name: _WORD.findall(name.lower()))
    assert list(vocabulary) == theirs.get_feature_names_out().tolist()
    assert abs(matrix - expected).max() == 0
