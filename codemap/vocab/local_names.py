"""Local names: the source texts reviewers approved for a target's concepts, at any site.

An approved (source text, concept) pair is a name of that concept as a site writes it: ranking
reads it beside the concept's own names (codemap.rank.local_names), so "Kreatinin i.S." approved
at one site is found for "Kreatinin (Serum)" at the next. A rejected pair is a known negative of
that text. Both come from the mapping memory (codemap.review.memory.MappingMemory.local_names);
this module only says what they are and which of them a vocabulary release can still use.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import pandas as pd

from .vocabulary import Vocabulary, deprecated_codes

# One row per (text, concept): the text as last approved, its key (codemap.read.normalize.
# source_key), and who approved it where, on which release.
APPROVED_COLUMNS = ["key", "code", "name", "sites", "reviewers", "versions", "decided"]
REJECTED_COLUMNS = ["key", "code", "name", "sites"]


@dataclass(frozen=True)
class LocalNames:
    """Approved local names and known negatives of one target vocabulary."""

    target: str  # the vocabulary id they were decided on
    approved: pd.DataFrame  # APPROVED_COLUMNS; `sites`, `reviewers`, `versions`: sorted tuples
    rejected: pd.DataFrame  # REJECTED_COLUMNS

    @staticmethod
    def none(target: str = "") -> "LocalNames":
        return LocalNames(target, pd.DataFrame(columns=APPROVED_COLUMNS),
                          pd.DataFrame(columns=REJECTED_COLUMNS))

    def __len__(self) -> int:
        return len(self.approved)

    @property
    def sites(self) -> list[str]:
        return sorted({s for sites in self.approved["sites"] for s in sites})

    def usable(self, vocab: Vocabulary) -> tuple["LocalNames", pd.DataFrame]:
        """(the names `vocab` can use, the flagged ones with a `problem`): a name whose concept
        is gone from this release, or deprecated in it, is flagged, never silently dropped nor
        used. Names decided on another vocabulary are not this vocabulary's at all."""
        if self.target and self.target != vocab.id:
            return LocalNames.none(vocab.id), self.approved.assign(
                problem=f"decided on {self.target}, not {vocab.id}")
        known = set(vocab.concepts["code"])
        stale = deprecated_codes(vocab)
        release = f"{vocab.id} {vocab.version}".strip()
        problem = self.approved["code"].map(
            lambda code: f"no longer in {release}" if code not in known else
            f"deprecated in {release}" if code in stale else "")
        flagged = self.approved[problem != ""].assign(problem=problem[problem != ""])
        kept = self.approved[problem == ""].reset_index(drop=True)
        return LocalNames(vocab.id, kept, self.rejected), flagged.reset_index(drop=True)

    def rejected_for(self, key: str) -> dict[str, tuple]:
        """{code: sites} of the concepts reviewers rejected for a source text with this key."""
        return self._rejected_by_key.get(key, {})

    @functools.cached_property
    def _rejected_by_key(self) -> dict[str, dict[str, tuple]]:
        # Built once: ranking asks for every row of a list, and a table filter per row is
        # rows × rejections.
        by_key: dict[str, dict[str, tuple]] = {}
        for key, code, sites in zip(self.rejected["key"], self.rejected["code"], self.rejected["sites"]):
            by_key.setdefault(key, {})[code] = sites
        return by_key
