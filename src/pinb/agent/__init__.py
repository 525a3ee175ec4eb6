"""pinb.agent."""
