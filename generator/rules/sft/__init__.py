"""Software compatibility rules: GPU architecture, CUDA and driver branch (data/software.yaml)."""
