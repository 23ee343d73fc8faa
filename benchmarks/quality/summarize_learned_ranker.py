"""Table of benchmarks/results/learned-ranker/*.txt (outputs of run_learned_ranker.sh) as Markdown:
per set and mode, the encoder / lexical / old hybrid / learned rows' acc@1, acc@10, MRR, AUROC."""
import re
import sys
from pathlib import Path

# "learned (default)" is the learned row's label in the files written before it became
# "learned (opt-in)" (the same ranker).
ROWS = ("encoder", "lexical", "hybrid (all evidence)", "hybrid + drug evidence", "learned (opt-in)",
        "learned (default)")
folder = Path(sys.argv[1] if len(sys.argv) > 1 else "benchmarks/results/learned-ranker")
print("| set | mode | method | acc@1 | acc@10 | MRR | conf AUROC |")
print("|---|---|---|---|---|---|---|")
for path in sorted(folder.glob("*.txt")):
    name, mode = path.stem.rsplit(".", 1)
    for line in path.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in re.split(r"[│┃]", line) if c.strip() != ""]
        if len(cells) >= 6 and cells[0] in ROWS:
            auroc = cells[6] if len(cells) > 6 else ""
            print(f"| {name} | {mode} | {cells[0]} | {cells[2]} | {cells[4]} | {cells[5]} | {auroc} |")
