"""Where the service's bearer token comes from: this environment variable only (never a flag,
never printed, never handed to a worker). A module of its own so that the CLI names it
without importing the web stack."""

TOKEN_ENV = "SRBENCH_SERVICE_TOKEN"
