"""Pure: paired comparison of two runs and the regression gate."""
