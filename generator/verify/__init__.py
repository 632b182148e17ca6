"""Verify the fabric as built against the plan.

``ibnetdiscover`` / ``lldp``: parsers of what the fabric reports; ``identify``: discovered names →
plan devices and ports; ``diff``: per-cable comparison from both ends; ``render``: text and JSON;
``check.verify``: all of it in one call (used by ``blueprint verify-cabling``).
"""
