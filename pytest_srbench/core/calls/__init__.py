"""Pure: one call's evidence: SSE parsing, usage, receipts, failures, router facts."""
