"""Physical plan: placement in racks, cable lengths and media, bill of materials."""
