"""Does nothing: measures start-up cost."""
