"""``srbench serve``: the HTTP API and the dashboard over the same store as pytest and the CLI."""
