"""Published area figures of AHASD to compare ours with (28 nm, mm²).

* ``PAPER``: the AHASD paper's area table: EDC 0.05, TVC 0.03, queues 0.01, AAU 1.25 mm² at
  28 nm, in all 2.68 % of the DRAM die.
* ``AUTHORS_DOCS``: the authors' repository documentation: EDC + TVC 0.0004 mm², AAU 0.45 mm²,
  2.51 % of an 18 mm² LPDDR5 die (their script multiplies bit counts by a cell area).
"""

__all__ = ["PAPER", "PAPER_DIE_PERCENT", "AUTHORS_DOCS", "AUTHORS_DIE_PERCENT", "anchor_rows"]

PAPER = {"edc": 0.05, "tvc": 0.03, "queues": 0.01, "aau": 1.25}
PAPER_DIE_PERCENT = 2.68
AUTHORS_DOCS = {"edc+tvc": 0.0004, "aau": 0.45}
AUTHORS_DIE_PERCENT = 2.51


def anchor_rows(mm2, die_mm2):
    """Rows ``(item, ours, paper, ours/paper, docs, ours/docs)`` from ``mm2`` = {block: our
    mm²} (needs edc, tvc, queues, aau); the last row is the share of the die in percent."""
    ours = dict(mm2)
    ours["edc+tvc"] = ours["edc"] + ours["tvc"]
    rows = []
    for item in ("edc", "tvc", "edc+tvc", "queues", "aau"):
        paper = PAPER.get(item) if item != "edc+tvc" else PAPER["edc"] + PAPER["tvc"]
        docs = AUTHORS_DOCS.get(item)
        rows.append((item, ours[item], paper, ours[item] / paper, docs,
                     ours[item] / docs if docs else None))
    total = sum(ours[b] for b in ("edc", "tvc", "queues", "aau"))
    percent = 100 * total / die_mm2
    rows.append(("% of die", percent, PAPER_DIE_PERCENT, percent / PAPER_DIE_PERCENT,
                 AUTHORS_DIE_PERCENT, percent / AUTHORS_DIE_PERCENT))
    return rows
