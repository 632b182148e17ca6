"""Deployment knowledge shared by the DEP rules and the emitters: address plans, images, storage sizing.

It sits above resolve/plan and below rules and emit, so both read the same decisions.
"""
