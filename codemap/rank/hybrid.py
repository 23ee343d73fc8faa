"""Ranking: the top-k distinct concepts per source row, each scored by its best name (embedding
and/or lexical), then re-scored by domain evidence (lab or drug scorers)."""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..config import RankConfig
from ..embed.index import NameIndex
from ..progress import bar as progress_bar
from ..vocab.vocabulary import Vocabulary
from ..domains.evidence import extra_candidates, family_of, for_row, sibling_keys, weigh_bound
from .local_names import ScoredNames, mark_conflicts, rejected_reason

CANDIDATE_COLUMNS = ["query", "rank", "target_code", "target_name", "matched_name", "score"]

HYBRID_COLUMNS = CANDIDATE_COLUMNS + ["encoder_score", "lexical_score", "explanation"]
QUERY_CHUNK = 256  # queries scored at once: bounds the dense (queries × names) matrices
# The pooled path scores a chunk's rows against the union of their pools (~ chunk × pool
# concepts), so its dense matrices grow with the square of the chunk: smaller chunks are faster.
POOLED_CHUNK = 32
# A row's best-scoring concepts whose families (a LOINC code's analyte) join its candidates whole.
FAMILY_SEEDS = 3


def rank_hybrid(index: NameIndex, lexical, vocab: Vocabulary, queries: np.ndarray,
                rows: list[dict], scorers=(), config: RankConfig = RankConfig(),
                exclude: list | None = None, progress: bool = False, hub=None,
                local=None) -> pd.DataFrame:
    """Rank concepts by fused name scores adjusted by evidence scorers.

    `queries` are the encoder vectors of the rows' texts, `rows` each row's fields (`text`,
    `unit`, `specimen`…) for the lexical index and the scorers, `lexical` a
    `codemap.rank.lexical.LexicalIndex` (None when `config.method` is "encoder"). A concept scores
    by its best name. Returns HYBRID_COLUMNS: the CANDIDATE_COLUMNS plus the two name scores and an
    `explanation` of what moved the candidate. `exclude`, when given, holds per row an array of
    name rows that row must not see (a pseudo-query's own name, a target with concepts removed:
    codemap.rank.learned); a concept left without names is no candidate of that row.
    `progress`: a bar (rows, ETA) on a terminal. `hub`, when given, is the list's
    codemap.rank.hubness.ListHubness: each concept's encoder score is lowered by its penalty
    before fusion (the `encoder_score` column stays the plain cosine). `local`, when given, is a
    codemap.rank.local_names.LocalIndex: approved local names scored as names of their concepts,
    and known negatives (a concept rejected for a row's text, its `key`) ranked last.
    """
    scored_names = ScoredNames(index, lexical, local, len(vocab.names))
    local_codes = None if local is None else local.codes
    layout = _ConceptLayout.of(vocab, local_codes)
    attributes = _ConceptRecords(vocab.concepts)
    families = _Families.of(vocab, family_of(scorers), attributes)
    names = vocab.names["name"].to_numpy()
    if local is not None:
        names = np.concatenate([names, local.names.approved["name"].to_numpy()])
    rejected = _Rejected(local, rows)
    pooled = getattr(index, "approximate", False) and config.method != "lexical"
    frames = []
    step = POOLED_CHUNK if pooled else QUERY_CHUNK
    # Exact scoring sees every concept: their penalties once (the pooled path asks per chunk).
    penalty = (None if hub is None or pooled or config.method == "lexical" else
               hub.penalty(np.arange(len(layout.concept_codes))))
    with progress_bar(len(rows), "ranking", "row", progress, leave=False) as bar:
        for start in range(0, len(rows), step):
            chunk = slice(start, start + step)
            excluded = None if exclude is None else exclude[chunk]
            if pooled:
                frames.append(_rank_pooled(index, scored_names, layout, attributes, names,
                                           queries[chunk], rows[chunk], start, scorers, config,
                                           excluded, hub, rejected, families))
            else:
                enc, lex = _name_scores(scored_names, queries[chunk], rows[chunk], config)
                _mask(enc, lex, excluded, None)
                frames.append(_rank_chunk(enc, lex, layout, attributes.__getitem__, rows[chunk],
                                          start, scorers, config, names, penalty=penalty,
                                          local=_LocalView(scored_names, None, rejected),
                                          families=families))
            bar.update(len(rows[chunk]))
    frame = pd.DataFrame([r for f in frames for r in f], columns=HYBRID_COLUMNS)
    return frame


def _mask(enc, lex, exclude, name_rows):
    """Set the excluded names' scores to -inf, per row; `name_rows` maps the matrices' columns
    to vocabulary name rows when they hold a subset (the pooled path)."""
    if exclude is None:
        return
    for q, hidden in enumerate(exclude):
        if hidden is None or len(hidden) == 0:
            continue
        columns = (np.asarray(hidden) if name_rows is None
                   else np.flatnonzero(np.isin(name_rows, hidden)))
        for matrix in (enc, lex):
            if matrix is not None:
                matrix[q, columns] = -np.inf


def _rank_pooled(index, scored_names, layout, attributes, names, queries, rows, offset, scorers,
                 config, exclude=None, hub=None, rejected=None, families=None):
    """Rank a chunk of rows among the concepts an approximate index finds for them.

    Scoring every name is names × rows; past `IndexConfig.approximate_above` names each row is
    scored only against the concepts of its nearest names (`config.pool` concepts' worth, from the IVF index) and
    its evidence candidates, with all of each such concept's names, exactly as the full scoring
    would score them. A concept that no nearest name points to (a lexical-only match) is missed.
    Local names are few and searched exactly: the concepts of those near a row join its pool.
    """
    # `pool` concepts' worth of names: a target whose concepts carry several names each (other
    # languages, expanded short names) would otherwise fill the nearest names with fewer concepts.
    per_concept = -(-len(layout.order) // max(1, len(layout.concept_codes)))
    second = _SecondReadings.of(rows)
    scores, hits = index.search(queries, config.pool * per_concept, texts=[r["text"] for r in rows])
    # Each row's nearest names (both readings'), with their scores where the index gives
    # comparable ones (a two-stage index pools without them): its families' seeds.
    near = [[(h, None if scores is None else scores[q])] for q, h in enumerate(hits)]
    local = scored_names.near_local([r["text"] for r in rows])
    own = [layout.concept_of[np.concatenate([h[h >= 0], found])] for h, found in zip(hits, local)]
    if second is not None:  # a second reading's nearest names join its row's pool
        more_scores, more = index.search(second.vectors, config.pool * per_concept,
                                         texts=second.texts)
        for i, (q, h) in enumerate(zip(second.rows, more)):
            own[q] = np.union1d(own[q], layout.concept_of[h[h >= 0]])
            near[q].append((h, None if more_scores is None else more_scores[i]))
    own = [np.union1d(o, layout.numbers(extra_candidates(scorers, r))) for o, r in zip(own, rows)]
    if families is not None:  # the families of each row's nearest concepts join its pool whole
        own = [np.union1d(o, families.members(_nearest_concepts(n, layout.concept_of, families.has)))
               for o, n in zip(own, near)]
        if hasattr(index, "analytes") and families.keys:  # and of its best analytes (two stages)
            best = index.analytes(families.keys).best(queries, [r["text"] for r in rows], second)
            own = [np.union1d(o, families.members_of([families.keys[k] for k in b]))
                   for o, b in zip(own, best)]
    keep = np.unique(np.concatenate(own))  # sorted: ties still go to the lower concept number
    starts = layout.starts_end[keep]
    sizes = layout.starts_end[keep + 1] - starts
    # Positions starts[i] .. starts[i] + sizes[i] - 1 of every kept concept, in order.
    within = np.arange(sizes.sum()) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    name_rows = layout.order[np.repeat(starts, sizes) + within]
    sub = _ConceptLayout(np.arange(len(name_rows)), np.concatenate([[0], np.cumsum(sizes)[:-1]]),
                         layout.concept_codes[keep], {c: i for i, c in enumerate(layout.concept_codes[keep])},
                         np.repeat(np.arange(len(keep)), sizes))
    vectors = scored_names.vectors(name_rows)
    enc = queries @ vectors.T
    if second is not None:
        enc = second.better(enc, lambda q: q @ vectors.T, False)
    lex = None
    if config.method != "encoder":
        matrix = scored_names.lexical_rows(name_rows)
        lex_of = lambda texts: (scored_names.lexical.embed(texts) @ matrix.T).toarray().astype(np.float32)
        lex = lex_of([r["text"] for r in rows])
        if second is not None:
            lex = second.better(lex, lex_of, True)
    scored_names.keep_near([r["text"] for r in rows], (enc, lex), name_rows)
    _mask(enc, lex, exclude, name_rows)
    allowed = np.zeros((len(rows), len(keep)), bool)
    for q, o in enumerate(own):
        allowed[q, np.searchsorted(keep, o)] = True
    penalty = None if hub is None else hub.penalty(keep)
    return _rank_chunk(enc, lex, sub, lambda c: attributes[keep[c]], rows, offset, scorers, config,
                       names[name_rows], allowed, penalty,
                       _LocalView(scored_names, name_rows, rejected),
                       None if families is None else families.within(keep))


def _nearest_concepts(searches: list, concept_of: np.ndarray, has_family: np.ndarray) -> np.ndarray:
    """The first FAMILY_SEEDS distinct concepts that have a family among a row's searches
    [(name rows, scores or None)], nearest first: by score where every search has scores, as the
    exact path seeds by the best score over both readings (ties to the lower concept number,
    scores rounded so that float noise between the index and a matrix product does not decide),
    else as found. A concept without a family (a code that is not LOINC's in a table mixing
    vocabularies) uses up no seed: at a million names such neighbours filled the first three."""
    found = np.concatenate([h[h >= 0] for h, _ in searches])
    keep = has_family[concept_of[found]]
    concepts = concept_of[found][keep]
    if not any(s is None for _, s in searches):
        scores = np.concatenate([s[h >= 0] for h, s in searches])[keep]
        concepts = concepts[np.lexsort((concepts, -np.round(scores, 5)))]
    _, first = np.unique(concepts, return_index=True)
    return concepts[np.sort(first)[:FAMILY_SEEDS]]


class _Families:
    """Each concept's family (a domain's `family`: a LOINC code's analyte) and each family's
    concept numbers, made once per vocabulary and family function."""

    _made: dict = {}

    def __init__(self, of_concept: np.ndarray):
        self.of_concept = of_concept
        self.has = np.array([found is not None for found in of_concept], bool)
        members: dict = {}
        for number, found in enumerate(of_concept):
            if found is not None:
                members.setdefault(found, []).append(number)
        self.by_key = {k: np.array(v, np.int64) for k, v in members.items()}

    @classmethod
    def of(cls, vocab: Vocabulary, family, attributes: "_ConceptRecords") -> "_Families | None":
        if family is None:
            return None
        key = (vocab.id, vocab.content_hash, len(vocab.concepts), type(family.__self__).__name__)
        if key not in cls._made:
            cls._made = {key: cls(np.array([family(attributes[c]) for c in range(len(vocab.concepts))],
                                           dtype=object))}
        return cls._made[key]

    def members(self, concepts) -> np.ndarray:
        """Every concept of the families of `concepts` (concept numbers)."""
        found = [self.by_key[k] for k in {self.of_concept[c] for c in concepts} if k is not None]
        return np.concatenate(found) if found else np.zeros(0, np.int64)

    @functools.cached_property
    def keys(self) -> list:
        """The family keys in sorted order: the analyte search's rows (codemap.rank.analytes),
        sorted once per vocabulary, not per chunk of rows."""
        return sorted(self.by_key)

    def members_of(self, keys) -> np.ndarray:
        """Every concept of the families `keys`."""
        found = [self.by_key[k] for k in keys if k in self.by_key]
        return np.concatenate(found) if found else np.zeros(0, np.int64)

    def within(self, keep: np.ndarray) -> "_Families":
        """The families of the concepts `keep` (sorted concept numbers), numbered as a pooled
        chunk numbers them (position in `keep`)."""
        return _Families(self.of_concept[keep])


class _ConceptRecords:
    """vocab.concepts rows as dicts (what evidence scorers read), made when asked for: a list of
    dicts for every concept costs hundreds of MB at a million concepts, and a row only ever
    looks at its ~50 candidates."""

    def __init__(self, concepts: pd.DataFrame):
        self.columns = {column: concepts[column].tolist() for column in concepts.columns}

    def __getitem__(self, number: int) -> dict:
        return {column: values[number] for column, values in self.columns.items()}


@dataclass(frozen=True)
class _ConceptLayout:
    """Name rows grouped by concept, so per-concept maxima are one reduceat."""

    order: np.ndarray  # name rows sorted by concept number
    starts: np.ndarray  # first position of each concept in `order`
    concept_codes: np.ndarray  # code per concept number, in vocab.concepts order
    number_of: dict  # code → concept number
    concept_of: np.ndarray  # concept number of each name row

    @property
    def starts_end(self) -> np.ndarray:
        return np.append(self.starts, len(self.order))

    @staticmethod
    def of(vocab: Vocabulary, more_names=None) -> "_ConceptLayout":
        """The layout of the vocabulary's names, and `more_names` (the codes of names after
        them: local names) when given."""
        codes = vocab.concepts["code"].to_numpy()
        number = pd.Series(np.arange(len(codes)), index=codes)
        name_codes = vocab.names["code"].to_numpy()
        if more_names is not None:
            name_codes = np.concatenate([name_codes, more_names])
        of_name = number.reindex(name_codes).to_numpy()
        if np.isnan(of_name.astype(float)).any():
            raise ValueError("vocabulary names point to codes missing from its concepts")
        of_name = of_name.astype(np.int64)
        order = np.argsort(of_name, kind="stable")
        starts = np.searchsorted(of_name[order], np.arange(len(codes)))
        return _ConceptLayout(order, starts, codes, {code: i for i, code in enumerate(codes)}, of_name)

    def numbers(self, codes) -> np.ndarray:
        """Concept numbers of the given codes (unknown codes skipped)."""
        return np.array([self.number_of[c] for c in codes if c in self.number_of], dtype=np.int64)


@dataclass(frozen=True)
class _SecondReadings:
    """The rows that carry a second reading (codemap.rank.prepare.with_readings): their
    positions in the chunk, vectors and lexical texts."""

    rows: np.ndarray
    vectors: np.ndarray
    texts: list

    @staticmethod
    def of(rows) -> "_SecondReadings | None":
        found = [(q, row["reading"]) for q, row in enumerate(rows) if "reading" in row]
        if not found:
            return None
        return _SecondReadings(np.array([q for q, _ in found]),
                               np.stack([vector for _, (_, vector) in found]),
                               [text for _, (text, _) in found])

    def better(self, first: np.ndarray, score, lexical_side: bool) -> np.ndarray:
        """`first` (rows × names) with each reading row's names at the better of its two
        readings' scores; `score` scores vectors (or texts, `lexical_side`) against the names."""
        read = score(self.texts if lexical_side else self.vectors)
        first[self.rows] = np.maximum(first[self.rows], read)
        return first


def _name_scores(scored_names: ScoredNames, queries, rows, config):
    second = _SecondReadings.of(rows)
    enc = lex = None
    if config.method != "lexical":
        enc = scored_names.encoder(queries)
        if second is not None:
            enc = second.better(enc, scored_names.encoder, False)
    if config.method != "encoder":
        lex = scored_names.lexical_scores([r["text"] for r in rows])
        if second is not None:
            lex = second.better(lex, scored_names.lexical_scores, True)
    scored_names.keep_near([r["text"] for r in rows], (enc, lex))
    return enc, lex


def _fuse(enc_c, lex_c, config: RankConfig) -> np.ndarray:
    """Per-concept fused score (queries × concepts)."""
    if lex_c is None:
        return enc_c
    if enc_c is None:
        return lex_c
    if config.fusion == "rrf":
        k = config.rrf_k
        ranks_e = np.argsort(np.argsort(-enc_c, axis=1), axis=1) + 1
        ranks_l = np.argsort(np.argsort(-lex_c, axis=1), axis=1) + 1
        # Scaled so a concept first in both lists scores 1, like a perfect cosine.
        return (1 / (k + ranks_e) + 1 / (k + ranks_l)) * (k + 1) / 2
    w = config.encoder_weight
    with np.errstate(invalid="ignore"):  # 0 × -inf: a hidden name at weight 1.0 or 0.0
        fused = w * enc_c + (1 - w) * lex_c
    return np.where(np.isnan(fused), -np.inf, fused)


def _sibling_scores(fused_row, candidates, record, key) -> dict:
    """Each candidate's name score and, when a sibling the row cannot tell apart scores higher
    (`key`: codemap.domains.evidence.sibling_keys), that sibling, whose score it takes:
    {c: (own score, sibling or None)}."""
    own = {c: (float(fused_row[c]), None) for c in candidates}
    if key is None:
        return own
    keys = {c: key(record(c)) for c in sorted(candidates)}
    # Rounded as _firsts_alone rounds: twins with one name (a mass and a moles code) tie, so
    # neither takes the other's score and the lower concept leads, in a pooled search as in the
    # full one (float noise between the two paths must not change the explanation).
    score = {c: round(float(fused_row[c]), 5) for c in keys}
    best: dict = {}
    for c, k in keys.items():
        if k is not None and (k not in best or score[c] > score[best[k]]):
            best[k] = c
    for c, k in keys.items():
        if k is not None and score[best[k]] > score[c]:
            own[c] = (float(fused_row[c]), best[k])
    return own


def _rank_chunk(enc, lex, layout, record_of, rows, offset, scorers, config, names, allowed=None,
                penalty=None, local=None, families=None):
    """`record_of(c)` is concept c's row as a dict (`_ConceptRecords`); `allowed` (rows ×
    concepts), when given, limits each row to its own pooled concepts; `penalty` (per concept)
    is subtracted from the encoder scores before fusion (the list's hubness). A row's shown
    scores are then lifted by its candidates' median penalty: the order is the same, and a
    score stays on the scale of the plain fusion (a candidate as much of a hub as the row's
    typical candidate keeps its score), so thresholds on it keep their meaning. `local` (a
    _LocalView) explains local-name matches and ranks a row's rejected concepts last."""
    reduce = lambda m: None if m is None else np.maximum.reduceat(m[:, layout.order], layout.starts, axis=1)
    share = _encoder_share(config)  # how much of the hubness penalty reaches the fused score
    enc_c, lex_c = reduce(enc), reduce(lex)
    if enc_c is None:
        penalty = None
    fused = _fuse(enc_c if penalty is None else enc_c - penalty[None, :], lex_c, config)
    if allowed is not None:
        fused = np.where(allowed, fused, -np.inf)
    bounds = layout.starts_end
    record = functools.cache(record_of)  # a concept recurs across the chunk's rows
    out = []
    pool = min(max(config.pool, config.top_k), fused.shape[1])
    for q in range(fused.shape[0]):
        top = np.argpartition(-fused[q], pool - 1)[:pool]
        top = top[np.isfinite(fused[q, top])]
        extra = layout.numbers(extra_candidates(scorers, rows[q]))
        if families is not None:  # the best-scoring concepts' families join whole
            seeded = top[families.has[top]]  # as _nearest_concepts seeds the pooled path
            seeds = seeded[np.lexsort((seeded, -np.round(fused[q, seeded], 5)))[:FAMILY_SEEDS]]
            extra = np.union1d(extra, families.members(seeds))
        bound = for_row(scorers, rows[q])  # the row's side of the evidence, once per row
        candidates = [c for c in np.union1d(top, extra) if np.isfinite(fused[q, c])]  # else every name excluded
        name_score = _sibling_scores(fused[q], candidates, record, sibling_keys(scorers, rows[q]))
        refused = {} if local is None else local.rejected.of(offset + q)
        scored = []
        for c in candidates:
            adjust, reasons, contradicted, tier = weigh_bound(bound, record(c))
            if contradicted and config.hide_contradicted:
                continue
            own, shared = name_score[c]
            name = own if shared is None else float(fused[q, shared])
            if shared is not None:  # its own name score stays visible in the explanation
                reasons = [f"name score {name:.4f} of {layout.concept_codes[shared]}, a variant "
                           f"the row does not tell apart (own {own:.4f})", *reasons]
            code = layout.concept_codes[c]
            if code in refused:  # a known negative of this text: shown, after every other
                reasons = [rejected_reason(refused[code]), *reasons]
            scored.append((code in refused, tier, name + adjust, own, c, reasons))
        # Equal scores (a variant sharing its sibling's name score, with no evidence between
        # them) go to the better own name score, then to the lower concept number, so a row's
        # candidates do not depend on float noise from the other texts of its embedding batch.
        scored.sort(key=lambda item: (item[0], -item[1], -round(item[2], 4), -round(item[3], 4),
                                      item[4]))
        typical = float(np.median(penalty[candidates])) if penalty is not None and candidates else 0.0
        lift = share * typical
        shown, best_rows = [], []
        alone = _firsts_alone(enc_c, lex_c, q, allowed)
        for rank, (_, _, score, _, c, reasons) in enumerate(scored[:config.top_k], start=1):
            name_rows = layout.order[bounds[c]:bounds[c + 1]]
            per_name = sum(m[q, name_rows] for m in (enc, lex) if m is not None)
            best = name_rows[int(np.argmax(per_name))]
            e = None if enc_c is None else round(float(enc_c[q, c]), 4)
            lx = None if lex_c is None else round(float(lex_c[q, c]), 4)
            why = [f"name: encoder {e}" if e is not None else "",
                   f"lexical {lx}" if lx is not None else "",
                   local.reason(best) if local is not None else "",
                   _hub_reason(share * (penalty[c] - typical)) if penalty is not None else "",
                   _alone_reason(c, alone), *reasons]
            shown.append([offset + q, rank, layout.concept_codes[c], record(c)["name"],
                          names[best], round(score + lift, 4), e, lx, why])
            best_rows.append((name_rows, per_name))
        if local is not None:
            local.mark_conflicts(shown, best_rows)
        out.extend((*entry[:-1], "; ".join(w for w in entry[-1] if w)) for entry in shown)
    return out


class _Rejected:
    """Per row of a ranking, the concepts reviewers rejected for its text ({code: sites})."""

    def __init__(self, local, rows: list[dict]):
        self.by_row = ([] if local is None or local.names.rejected.empty else
                       [local.names.rejected_for(row.get("key", "")) for row in rows])

    def of(self, row: int) -> dict:
        return self.by_row[row] if self.by_row else {}


@dataclass(frozen=True)
class _LocalView:
    """The local names as one chunk's matrices see them: `name_rows` maps their columns to
    ScoredNames rows (None: the same numbers)."""

    names: ScoredNames
    name_rows: np.ndarray | None
    rejected: _Rejected

    def row(self, column: int) -> int:
        return int(column if self.name_rows is None else self.name_rows[column])

    def reason(self, column: int) -> str:
        row = self.row(column)
        return self.names.reason(row) if self.names.is_local(row) else ""

    def mark_conflicts(self, shown: list[list], scored: list[tuple]) -> None:
        """`scored`: per shown candidate, its name columns and their name scores."""
        rows = [np.array([self.row(c) for c in columns]) for columns, _ in scored]
        mark_conflicts(shown, rows, [scores for _, scores in scored], self.names)


def _firsts_alone(enc_c, lex_c, q: int, allowed) -> tuple:
    """Row q's first concept by the encoder alone and by spelling alone (None where that signal
    is not computed): where they and the ranking agree, the first candidate is far likelier
    right (issue #52: 95 % of such drug rows), which the confidence reads from the explanation."""
    def first(matrix):
        if matrix is None:
            return None
        scores = matrix[q] if allowed is None else np.where(allowed[q], matrix[q], -np.inf)
        # Rounded, so that twins with one name (a mass and a moles code) tie and the lower
        # concept number is first, in a pooled search as in the full one: float noise between
        # the two paths must not move the reason, which the confidence reads.
        scores = np.round(scores, 5)
        return int(np.argmax(scores)) if np.isfinite(scores).any() else None
    return first(enc_c), first(lex_c)


def _alone_reason(c: int, alone: tuple) -> str:
    """What the explanation says when candidate c is also first by either signal alone."""
    by = [name for name, first in zip(("encoder", "spelling"), alone) if first == c]
    return f"first by {' and by '.join(by)} alone" if by else ""


def _encoder_share(config: RankConfig) -> float:
    """How much of a change of the encoder score reaches the fused score (none under RRF)."""
    if config.method == "encoder":
        return 1.0
    return config.encoder_weight if config.method == "hybrid" and config.fusion == "weighted" else 0.0


def _hub_reason(excess: float) -> str:
    """The explanation of a candidate's hubness against its row's typical candidate (`excess`:
    its penalty beyond the typical one, as it reaches the fused score)."""
    effect = -excess
    if abs(effect) < 0.005:
        return ""
    near = "more" if effect < 0 else "fewer"
    # No "(+0.02)" form: that is an evidence adjustment to the calibration's features.
    return f"hubness {effect:+.2f}: near {near} rows of the list than the row's other candidates"
