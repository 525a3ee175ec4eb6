"""Chapter 01, "The Loop You Are Writing For": its ledger (`ledger.yaml`), experiments, probes, package facts,
the book's program taken from the chapter text, and what its notebook shows."""
