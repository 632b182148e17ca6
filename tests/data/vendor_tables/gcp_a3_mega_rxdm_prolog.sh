# GoogleCloudPlatform/slurm-gcp tools/prologs-epilogs/receive-data-path-manager-mega (commit
# 01d802506dadd73b3663f81b2153ad42f80e96ac): the prolog/epilog GoogleCloudPlatform/cluster-toolkit's
# examples/machine-learning/a3-megagpu-8g/a3mega-slurm-blueprint.yaml (commit
# 0092a791557aaf605bf63b1d73a51af4d0b0c0b0, controller_startup stage_scripts.sh) downloads from
# slurm-gcp master and links as the a3mega partition's prolog_slurmd / epilog_slurmd. Excerpt, verbatim:
# the image variables and the prolog lines that install the NCCL plug-in into /var/lib/tcpxo/lib64 and
# amend its profile; the machine-type/node-count guards, the RxDM start/wait and the epilog are left out.
# Kept as independent test data.

# ensure that dmabuf-import-helper is loaded
modprobe import-helper

NCCL_PLUGIN_IMAGE=us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/nccl-plugin-gpudirecttcpx-dev:v1.0.10
RXDM_IMAGE=us-docker.pkg.dev/gce-ai-infra/gpudirect-tcpxo/tcpgpudmarxd-dev:v1.0.16
RXDM_CONTAINER=receive-datapath-manager-"${SLURM_JOB_ID}"
if [[ ${SLURM_SCRIPT_CONTEXT} == "prolog_slurmd" ]]; then
	docker container list --filter "name=receive-datapath-manager-*" --quiet | xargs --no-run-if-empty docker container stop

	export PATH=${PATH}:/usr/local/lib/google-cloud-sdk/bin/
	gcloud auth configure-docker --quiet us-docker.pkg.dev 2>&1 &>/dev/null

	rm -rf /var/lib/tcpxo/lib64

	# Install the nccl, nccl-net lib into /var/lib/tcpxo/lib64/.
	docker run --rm --name nccl-installer \
		--network=host \
		-v /var/lib:/var/lib \
		${NCCL_PLUGIN_IMAGE} \
		install --install-nccl

        # Modify NCCL env vars for Debian 12 and Ubuntu.
        # /var/lib/tcpxo/lib64/nccl-env-profile.sh is written by the nccl-installer container
        # above, and assumes interface names of eth{0..8}.
	if ( (grep -q "ID=debian" /etc/os-release && lsb_release -rs | grep -q "12") || (grep -q "ID=ubuntu" /etc/os-release) ); then
		cat >>/var/lib/tcpxo/lib64/nccl-env-profile.sh <<-EOF
			export NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY=/dev/aperture_devices
			export LD_LIBRARY_PATH=/var/lib/tcpxo/lib64:\${LD_LIBRARY_PATH}
		EOF
	fi
