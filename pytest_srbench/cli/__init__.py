"""The ``srbench`` console script: one module per group of sub-commands."""
