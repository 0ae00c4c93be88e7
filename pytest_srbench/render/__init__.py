"""Renderers: turn the report model into terminal text, JSON (and HTML); they compute nothing."""
