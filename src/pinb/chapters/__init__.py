"""pinb.chapters."""
