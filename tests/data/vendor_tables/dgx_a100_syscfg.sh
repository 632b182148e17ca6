# NVIDIA/deepops, workloads/burn-in/syscfg-dgxa100-80gb.sh (commit 254dc8e24cb21b327b5c0bc8f69b46b763c97414),
# https://github.com/NVIDIA/deepops/blob/254dc8e24cb21b327b5c0bc8f69b46b763c97414/workloads/burn-in/syscfg-dgxa100-80gb.sh
# NVIDIA's HPL burn-in configuration for DGX A100: rank k runs on GPU_AFFINITY[k] and uses the RDMA device
# UCX_AFFINITY[k] (colon-separated lists). The affinity lines, copied verbatim; kept as independent test data.
CPU_AFFINITY="32-47:48-63:0-15:16-31:96-111:112-127:64-79:80-95"
GPU_AFFINITY="0:1:2:3:4:5:6:7"
MEM_AFFINITY="2:3:0:1:6:7:4:5"
UCX_AFFINITY="mlx5_0:mlx5_1:mlx5_2:mlx5_3:mlx5_6:mlx5_7:mlx5_8:mlx5_9"
