"""Blueprint models and the hardware catalogue."""
