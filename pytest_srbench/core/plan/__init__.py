"""Pure: freezing a plan (cases, targets, budget, selection, sr-bench's constants)."""
