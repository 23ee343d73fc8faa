"""Plug-in point for a local LLM selector: off by default, never required.

For each source whose top confidence is below a threshold, the top candidates are put to an
OpenAI-compatible chat endpoint the user runs (llama.cpp server, vLLM, Ollama's /v1…) with the
question which one means the same as the source term, or none. The answer goes to the `llm`
column ("chosen" on the picked row, "none fits" on every row of a source it rejects); it never
changes the ranking or a decision, so the reviewer sees it as one more opinion. Every prompt and
response is logged, one JSON line each, to the run folder (OUTPUT.llm.jsonl).
"""
from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..errors import CodemapError

SYSTEM = ("You map local clinical terms onto standard vocabulary concepts. Answer with the number "
          "of the candidate that means the same as the source term, or 0 if none does. Answer "
          "with the number only.")


@dataclass(frozen=True)
class LLMConfig:
    """Where the selector is and which sources it is asked about."""

    url: str  # OpenAI-compatible base URL, e.g. http://localhost:8080/v1
    log: Path | None = None  # JSON lines of every prompt and response (map: beside the output)
    model: str = "local"
    below: float = 0.9  # ask about sources whose top confidence is below this (all without one)
    top_n: int = 5
    timeout: float = 60.0


def select_with_llm(candidates: pd.DataFrame, config: LLMConfig) -> pd.DataFrame:
    """Add the `llm` column to one block's candidates; the log is appended to (a streamed run
    asks block by block, a resumed one goes on after its finished blocks).

    Raises CodemapError when the endpoint cannot be reached or answers something unreadable.
    """
    out = candidates.copy()
    out["llm"] = ""
    ranked = out[out["rank"].notna()]
    config.log.parent.mkdir(parents=True, exist_ok=True)
    # A log, written as it goes (not atomically): after a failure it shows what was asked.
    with open(config.log, "a", encoding="utf-8") as log:
        for _, group in ranked.groupby("source_row", sort=False):
            group = group.sort_values("rank").iloc[:config.top_n]
            top = group["confidence"].iloc[0] if "confidence" in group else float("nan")
            if not pd.isna(top) and top >= config.below:
                continue
            prompt = _prompt(group)
            answer = _ask(config, prompt)
            choice = _choice(answer, len(group))
            log.write(json.dumps({"source_row": int(group["source_row"].iloc[0]), "prompt": prompt,
                                  "response": answer, "choice": choice}, ensure_ascii=False) + "\n")
            if choice == 0:
                out.loc[out["source_row"] == group["source_row"].iloc[0], "llm"] = "none fits"
            elif choice is not None:
                out.loc[group.index[choice - 1], "llm"] = "chosen"
    return out


def _prompt(group: pd.DataFrame) -> str:
    lines = [f"Source term: {group['source_text'].iloc[0]}", "Candidates:"]
    lines += [f"{i}. {code} {name}" for i, (code, name) in
              enumerate(zip(group["target_code"], group["target_name"]), start=1)]
    return "\n".join(lines)


def _ask(config: LLMConfig, prompt: str) -> str:
    body = json.dumps({"model": config.model, "temperature": 0,
                       "messages": [{"role": "system", "content": SYSTEM},
                                    {"role": "user", "content": prompt}]}).encode("utf-8")
    request = urllib.request.Request(config.url.rstrip("/") + "/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=config.timeout) as response:
            data = json.loads(response.read().decode("utf-8"))
        return str(data["choices"][0]["message"]["content"])
    except (urllib.error.URLError, OSError) as exc:
        raise CodemapError(f"--llm-url {config.url}: cannot reach the endpoint ({exc}); start "
                           f"the server or leave out --llm-url") from None
    except (ValueError, KeyError, IndexError, TypeError):
        raise CodemapError(f"--llm-url {config.url}: the answer is not an OpenAI-style chat "
                           f"completion; check that the URL ends in /v1") from None


def _choice(answer: str, n: int) -> int | None:
    """The candidate number in the answer (0: none fits); None when there is no usable number."""
    found = re.search(r"\d+", answer)
    if found is None or int(found.group()) > n:
        return None
    return int(found.group())
