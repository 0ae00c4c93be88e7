"""Use cases: planning, the run lifecycle and its finalisation, recovery, reconciliation,
work on stored runs, reports from the store. No pytest, no argparse."""
