# GoogleCloudPlatform/cluster-toolkit examples/machine-learning/a3-ultragpu-8g/nccl-tests/run-nccl-tests.sh
# (commit 2123ba50d7a0ed5d82f7fbf95a818aaf92860b67), "These parameters should not be modified".
NCCL_NET=gIB
NCCL_SOCKET_IFNAME=enp0s19,enp192s20
NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE=/var/lib/gib/configs/guest_config.txtpb
NCCL_TUNER_CONFIG_PATH=/var/lib/gib/configs/tuner_config.txtpb
