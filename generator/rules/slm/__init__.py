"""SLM rules: the Slurm configuration the build writes."""
