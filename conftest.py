"""Repository root: enables pytester for our own tests (no plugin logic lives here)."""
