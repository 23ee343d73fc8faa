"""Learn international ↔ US nonproprietary drug names from DrugCentral for the ingredients of
the shipped drug target (codemap.domains.drug.names), e.g. paracetamol ↔ acetaminophen.

DrugCentral (CC BY-SA 4.0; obo-db-ingest export) lists, per active ingredient, its preferred name
(the 2021 .obo `name:`; the `name` column of the .tsv exports is shifted against the ids, and so
are the synonym file's `rdfs:label` rows) and its synonyms (the synonym file's
`hasRelatedSynonym` rows, keyed by id, are right). Synonyms mix nonproprietary names with brand
names and misspellings; a synonym is kept as a nonproprietary name only where DrugCentral itself
treats it as one: the preferred name, a name that also appears with a salt ("albuterol sulfate")
or with a stereo prefix ("(-)-adrenaline", "dl-Salbutamol"). Salt words are learned too: the last
words that follow many different names in the synonym file. Only ingredients some name of which
occurs in the drug target are written.

    python recipes/build_drug_synonyms.py ../shared/data/drugcentral \
        --target codemap/data/drugs/drug_targets.tsv --out codemap/data/drugs/inn_synonyms.tsv
"""
from __future__ import annotations

import argparse
import csv
import re
from collections import Counter, defaultdict
from pathlib import Path

from codemap.domains.drug.names import ingredient_words

STEREO = re.compile(r"^(?:\([+\-±/RSrsDLdl,0-9 ]+\)-|dl-|d-|l-|DL-)", re.IGNORECASE)
PLAIN = re.compile(r"[a-z]+(?: [a-z]+)?")  # one or two lower-case words: a substance name
MIN_SALT_BASES = 20  # a last word following this many different names is a salt or ester word


def preferred_names(obo: Path) -> dict[str, str]:
    names, current = {}, None
    for line in obo.read_text(encoding="utf-8").splitlines():
        if line.startswith("id: "):
            current = line[4:].strip()
        elif line.startswith("name: ") and current:
            names[current] = line[6:].strip()
            current = None
    return names


def synonyms(path: Path) -> dict[str, list[str]]:
    found = defaultdict(list)
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            if row["predicate"] == "oboInOwl:hasRelatedSynonym":
                found[row["curie"]].append(" ".join(row["text"].split()))
    return found


def salt_words(groups: dict[str, list[str]]) -> set[str]:
    bases = defaultdict(set)
    for names in groups.values():
        for name in names:
            words = name.lower().split()
            if len(words) >= 2:
                bases[words[-1]].add(" ".join(words[:-1]))
    return {w for w, b in bases.items() if len(b) >= MIN_SALT_BASES}


def nonproprietary(preferred: str, names: list[str], salts: set[str], taken: set[str]) -> list[str]:
    """The group's names DrugCentral treats as nonproprietary (see module docstring): the
    preferred name, a synonym that also appears with a salt word, and a name written with a
    stereo prefix, taken without it, unless that is another ingredient's preferred name (an
    enantiomer: "(S)-ketamine" is esketamine, not ketamine). `taken` holds those names."""
    plain = {n.lower() for n in names}
    kept = {preferred.lower()}
    for lowered in plain:
        words = lowered.split()
        if len(words) >= 2 and words[-1] in salts and " ".join(words[:-1]) in plain:
            kept.add(" ".join(words[:-1]))
        stripped = STEREO.sub("", lowered)
        if stripped != lowered and stripped not in taken:
            kept.add(stripped)
    return sorted(n for n in kept if PLAIN.fullmatch(n) and n.split()[-1] not in salts)


def other_name_pairs(preferred: dict, groups: dict, salts: set, in_target) -> list[tuple]:
    """(ingredient, name the target uses, other nonproprietary name) for the target's ingredients.
    A name the target uses may be any synonym ("acetaminophen" beside preferred "paracetamol");
    the other name must be nonproprietary, not a salt form of the used one, and not a name of
    another ingredient."""
    taken = {n.lower() for n in preferred.values()}
    owners = defaultdict(set)
    for curie, names in groups.items():
        for name in names + [preferred.get(curie, "")]:
            owners[name.lower()].add(curie)
    rows = []
    for curie, name in preferred.items():
        group = {n.lower() for n in groups.get(curie, [])} | {name.lower()}
        others = nonproprietary(name, groups.get(curie, []), salts, taken - {name.lower()})
        for used in sorted(n for n in group if in_target[n] and PLAIN.fullmatch(n)):
            rows += [(curie, used, other) for other in others
                     if other != used and used not in other and other not in used
                     and owners[other] <= {curie}]
    return sorted(set(rows))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("drugcentral", type=Path, help="folder with drugcentral.synonyms.tsv and the .obo")
    parser.add_argument("--target", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    preferred = preferred_names(args.drugcentral / "drugcentral_2021_09_01.obo")
    groups = synonyms(args.drugcentral / "drugcentral.synonyms.tsv")
    salts = salt_words(groups)
    with args.target.open(encoding="utf-8", newline="") as handle:
        target_names = [row["concept_name"] for row in csv.DictReader(handle, delimiter="\t")]
    # Brand names stand in brackets in RxNorm names ("… Oral Tablet [Arava]"): a brand is not a
    # nonproprietary name to pair, so bracketed parts are left out of what the target "uses".
    in_target = Counter(w for name in target_names
                        for w in ingredient_words(re.sub(r"\[[^\]]*\]", " ", name)))
    rows = other_name_pairs(preferred, groups, salts, in_target)
    with args.out.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", lineterminator="\n")
        writer.writerow(["drugcentral_id", "name", "other_name"])
        writer.writerows(rows)
    print(f"{len(salts)} salt words; {len(rows)} name pairs for "
          f"{len({r[0] for r in rows})} ingredients of {args.target} → {args.out}")


if __name__ == "__main__":
    main()
