"""Pure: after-the-fact work on a stored run: reconcile, recover, rescore."""
