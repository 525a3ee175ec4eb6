"""pinb.app."""
