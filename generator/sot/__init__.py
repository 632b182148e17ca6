"""The plan in a site's source of truth: push a build's NetBox files to NetBox or Nautobot over REST.

``build`` reads the NetBox CSVs a build wrote (what to have), ``backends`` speaks each product's REST
API (what is there), ``changes`` computes the change set between the two, and ``push`` applies it kind
by kind in NetBox's import order, in batches.
"""
