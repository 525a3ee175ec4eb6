"""Chapter 16, "Events and the Extension Lifecycle": its ledger (`ledger.yaml`), experiments, probes, the review
guard's patterns and evasion corpus, the guard tester, and what its notebook shows."""
