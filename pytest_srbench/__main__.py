"""``python -m pytest_srbench`` runs the ``srbench`` command line."""

from pytest_srbench.cli import main

raise SystemExit(main())
