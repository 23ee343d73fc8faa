"""codemap.train: the CODER trainer (dual contrastive loss on a knowledge graph).

Run it as `python -m codemap.train --config smoke` or `codemap train ...`; see README "Training".
The `codemap` library never imports this package: torch-for-training stays optional.
"""
