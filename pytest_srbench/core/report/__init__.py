"""Pure: the full-denominator report and the metrics it is built from."""
