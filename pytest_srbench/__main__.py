"""``python -m pytest_srbench`` runs the ``srbench`` command line."""

from pytest_srbench.cli.main import main

raise SystemExit(main())
