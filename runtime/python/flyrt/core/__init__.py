"""What every layer of flyrt shares and none owns: the settings, what is the
user's code, errors that point at it, scalar types and FP8 formats, host
arrays, specialization specs, fingerprints and tables. Imports nothing of
flyrt above it."""
