# GoogleCloudPlatform/cluster-toolkit examples/machine-learning/a3-megagpu-8g/nccl-tests/run-nccl-tests.sh
# (commit 2452d0dc718a82ec3e76da57d0c007fefeebc119), "These parameters should not be modified".
NCCL_FASTRAK_CTRL_DEV=enp0s12
NCCL_FASTRAK_IFNAME=enp6s0,enp7s0,enp13s0,enp14s0,enp134s0,enp135s0,enp141s0,enp142s0
NCCL_SOCKET_IFNAME=enp0s12
NCCL_FASTRAK_LLCM_DEVICE_DIRECTORY=/dev/aperture_devices
