"""pinb.scenario."""
