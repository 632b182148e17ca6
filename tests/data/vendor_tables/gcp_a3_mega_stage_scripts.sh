# GoogleCloudPlatform/cluster-toolkit examples/machine-learning/a3-megagpu-8g/a3mega-slurm-blueprint.yaml
# (commit 0092a791557aaf605bf63b1d73a51af4d0b0c0b0), module controller_startup, runner stage_scripts.sh:
# how Google's A3 Mega Slurm cluster stages slurm-gcp's receive-data-path-manager-mega as the a3mega
# partition's job prolog and epilog (slurm-gcp's slurm_mux, enabled by the controller's
# enable_external_prolog_epilog, runs partition-<name>-<SLURM_SCRIPT_CONTEXT>.d/*.<SLURM_SCRIPT_CONTEXT>).
# Excerpt, verbatim but for $(vars.a3mega_partition_name), which the blueprint sets to a3mega
# (vars.a3mega_partition_name: a3mega); the sudo-oslogin and gpu-test lines are left out.
# Kept as independent test data.
#!/bin/bash
SLURM_ROOT=/opt/apps/adm/slurm
mkdir -m 0755 -p "${SLURM_ROOT}/scripts"
mkdir -p "${SLURM_ROOT}/partition-a3mega-prolog_slurmd.d"
mkdir -p "${SLURM_ROOT}/partition-a3mega-epilog_slurmd.d"
curl -s -o "${SLURM_ROOT}/scripts/rxdm" \
    https://raw.githubusercontent.com/GoogleCloudPlatform/slurm-gcp/master/tools/prologs-epilogs/receive-data-path-manager-mega
chmod 0755 "${SLURM_ROOT}/scripts/rxdm"
ln -s "${SLURM_ROOT}/scripts/rxdm" "${SLURM_ROOT}/partition-a3mega-prolog_slurmd.d/rxdm.prolog_slurmd"
ln -s "${SLURM_ROOT}/scripts/rxdm" "${SLURM_ROOT}/partition-a3mega-epilog_slurmd.d/rxdm.epilog_slurmd"
