# GoogleCloudPlatform/cluster-toolkit examples/machine-learning/a3-ultragpu-8g/nccl-tests/run-nccl-tests.sh
# (commit c9ec0265044729f675562f19ed2845d08fca7251), "These parameters should not be modified"
# (after `source /usr/local/gib/scripts/set_nccl_env.sh`).
NCCL_NET=gIB
NCCL_SOCKET_IFNAME=enp0s19,enp192s20
