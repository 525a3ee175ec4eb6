"""pinb.kit."""
