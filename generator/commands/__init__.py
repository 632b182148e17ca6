"""One module per `blueprint` sub-command; each defines register(subparsers)."""
