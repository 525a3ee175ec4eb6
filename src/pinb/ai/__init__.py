"""pinb.ai."""
