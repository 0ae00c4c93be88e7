"""pytest glue: options, collection of cells into items, the per-process engine, xdist
ownership, terminal output and exit status. Inert unless an ``--srbench-*`` run option is given."""
