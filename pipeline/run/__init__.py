"""A run: the nightly (load, build, publish) and the reprocessing of chosen files."""
