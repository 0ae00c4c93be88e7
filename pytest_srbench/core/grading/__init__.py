"""Pure graders: they read a model's final text and the case's answer, never the network."""
