"""What every layer may use: errors and exit codes, text, settings, what a model file is, named queries."""
