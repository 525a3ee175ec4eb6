"""pinb.chapters: one folder per chapter (its ledger, experiments, notebook extras, faults) and the modules they share.

The shared modules, by job (`JOBS`; `tests/test_layering.py` keeps every module in exactly one):

- what a chapter claims: its ledger, the book's text it quotes, the registry that finds the chapters and resolves
  each claim once, the text no claim covers, the scaffold of a new chapter;
- how a claim is checked: the notebook's run (`ChapterRun`), the witnesses it draws, the backends it runs them on,
  the experiment as the notebook shows it;
- the author's toolkit, the five modules a chapter folder imports: `properties` (a claim as a property),
  `scenarios` (scenario builders), `tq` (trace queries), `common` (scenarios more than one chapter uses),
  `cells` (the pictures a notebook draws under a claim);
- pictures: what the notebooks draw (each claim's card, timelines, trees, tables, the findings map, the widgets).

A chapter folder imports the toolkit, the pictures and what a chapter claims, never how a claim is checked: the
chapter states its claims as properties, the kit checks them.
"""

#: The chapters' shared modules (`pinb.chapters.<name>`) by job.
JOBS: dict[str, tuple[str, ...]] = {
    "what a chapter claims": ("ledger", "book", "registry", "uncovered", "scaffold"),
    "how a claim is checked": ("experiments", "witnesses", "backends", "experiment_view"),
    "the author's toolkit": ("properties", "scenarios", "tq", "common", "cells"),
    "pictures": ("display", "views", "diagram", "widgets", "findings", "card"),
}
