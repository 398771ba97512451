#!/usr/bin/env bash
# Runs tessel's GPU checks on a machine with one NVIDIA GPU and writes every raw output to OUT:
#   gpu.txt                    the device (nvidia-smi) and the libraries the binaries resolve
#   test_kernels_cuda.txt      every CUDA kernel test (Gpu* run on the device, Emulated* on the host)
#   test_executor_device.txt   the device communicator's tests
#   bench_cuda_kernels.{txt,json}  kernel speed against the datasheet peaks
#   calibrate.txt, cluster.json, calibrate-raw.json   tessel calibrate --backend cuda (one rank)
#   <layout>.{simulated,measured,compare}.{txt,json}  simulate on that calibration, run for real, compare
#   mpi2-<layout>.measured.txt two ranks sharing the GPU (collectives staged through the host)
#   torch-*.txt                PyTorch training steps of Llama 3.2 1B and 3B (tools/gpu/torch_train_step.py)
#   allocator-headroom/        the same step with GPU memory held aside (--ballast-GiB)
#   torch-gpt*.txt             GPT-layout steps at the Megatron-Core table's 1.7B and 7.1B shapes
#   gemm-duty-cycle.txt        a GEMM's speed back to back and between bandwidth-bound copies
#   attention-speed.txt        PyTorch SDPA attention at head dim 128 (tools/gpu/attention_speed.py)
#   fsdp-headroom/             an FSDP step of MPT-30b-shaped blocks with the allocator capped near its peak
#   racecheck-*.txt, memcheck-*.txt  compute-sanitizer on the kernels
# Every step has its own time limit and a failing step does not stop the others; steps.txt lists
# each step's exit code and seconds.
# Usage: scripts/measure-gpu.sh [BUILD_DIR]   (default build; a CUDA-enabled build)
# PARTS (default "tessel torch gpt fsdp attention sanitizers") picks which groups of steps run.
set -uo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${1:-build}"
OUT="${OUT:-reports/gpu}"
STEPS="${STEPS:-20}"
PARTS="${PARTS:-tessel torch gpt fsdp attention sanitizers}"
part() { [[ " $PARTS " == *" $1 "* ]]; }
mkdir -p "$OUT"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# A library the build machine had but this one lacks may travel in BUILD_DIR/lib.
if [ -d "$BUILD_DIR/lib" ]; then export LD_LIBRARY_PATH="$BUILD_DIR/lib:${LD_LIBRARY_PATH:-}"; fi
TESSEL="$BUILD_DIR/cli/tessel"
: > "$OUT/steps.txt"

# step NAME SECONDS CMD...: runs CMD with stdout+stderr to OUT/NAME.txt and logs its exit code.
step() {
  local name="$1" limit="$2"; shift 2
  local t0=$SECONDS
  timeout "$limit" "$@" > "$OUT/$name.txt" 2>&1
  local rc=$?
  printf '%-32s rc=%-4s %4ds\n' "$name" "$rc" "$((SECONDS - t0))" | tee -a "$OUT/steps.txt"
  return 0
}

{
  nvidia-smi
  nvidia-smi --query-gpu=name,memory.total,power.limit,clocks.max.sm,clocks.max.mem,driver_version --format=csv
  echo
  for b in cli/tessel tests/kernels_cuda/test_kernels_cuda bench/bench_cuda_kernels; do
    echo "== ldd $b"; ldd "$BUILD_DIR/$b" | grep -E "not found|cuda|nccl|cublas|mpi|openblas|fmt|benchmark"
  done
} > "$OUT/gpu.txt" 2>&1

if part tessel; then
  step test_kernels_cuda 240 "$BUILD_DIR/tests/kernels_cuda/test_kernels_cuda"
  step test_executor_device 120 "$BUILD_DIR/tests/executor/test_executor" --gtest_filter='DeviceCommunicator.*'
  step bench_cuda_kernels 300 "$BUILD_DIR/bench/bench_cuda_kernels" \
    --benchmark_out="$OUT/bench_cuda_kernels.json" --benchmark_out_format=json

  step calibrate 300 "$TESSEL" calibrate --backend cuda --name gpu --out "$OUT/cluster.json" \
    --raw "$OUT/calibrate-raw.json"

  # gpt2-124m at sequence 1024 on one GPU, fp32 (the Backend interface's type); MFU against the
  # calibrated peak where the calibration succeeded.
  BATCH=(--microbatch-size 8 --global-batch-size 8 --seq 1024 --precision fp32)
  CLUSTER=()
  if [ -s "$OUT/cluster.json" ]; then CLUSTER=(--cluster "$OUT/cluster.json"); fi
  for model in gpt2-124m; do
    name="1gpu-$model"
    if [ -s "$OUT/cluster.json" ]; then
      step "$name.simulated" 60 "$TESSEL" simulate --model "$model" --cluster "$OUT/cluster.json" --gpus 1 \
        "${BATCH[@]}" --json "$OUT/$name.simulated.json"
    fi
    step "$name.measured" 300 "$TESSEL" run --backend cuda --model "$model" "${BATCH[@]}" --steps "$STEPS" \
      "${CLUSTER[@]}" --out "$OUT/$name.measured.json" --kernel-times
    if [ -s "$OUT/$name.simulated.json" ] && [ -s "$OUT/$name.measured.json" ]; then
      step "$name.compare" 30 "$TESSEL" compare --simulated "$OUT/$name.simulated.json" \
        --measured "$OUT/$name.measured.json"
    fi
  done

  # Two ranks on one GPU: NCCL refuses that, so --comm auto stages the collectives through MPI.
  # tiny-llama (RoPE, SwiGLU, RMSNorm, GQA; its vocabulary divides by 2, as TP needs) from the same
  # seed: each layout's losses should follow the one-rank run's.
  SMALL=(--model tiny-llama --microbatch-size 4 --global-batch-size 8 --seq 128 --precision fp32 --steps 5)
  step mpi1-reference.measured 180 "$TESSEL" run --backend cuda "${SMALL[@]}" --out "$OUT/mpi1-reference.measured.json"
  for layout in "tp 2" "pp 2" "dp 2"; do
    read -r k v <<< "$layout"
    step "mpi2-$k$v.measured" 180 mpirun --oversubscribe -np 2 "$TESSEL" run --backend cuda "${SMALL[@]}" \
      "--$k" "$v" --out "$OUT/mpi2-$k$v.measured.json"
  done
  step nccl1.measured 180 "$TESSEL" run --backend cuda --comm nccl "${SMALL[@]}" --out "$OUT/nccl1.measured.json"
fi

# PyTorch beside tessel: a Llama 3.2 1B training step (eager, then torch.compile) on this GPU.
# tools/gpu/compare_torch.py simulates the same steps and prints the comparison.
HAVE_TORCH=0
if python3 -c "import torch; assert torch.cuda.is_available()" 2> /dev/null; then HAVE_TORCH=1; fi
if [ "$HAVE_TORCH" = 1 ] && part torch; then
  TORCH=(python3 tools/gpu/torch_train_step.py tools/gpu/llama-3.2-1b.json --profile)
  step torch-llama1b-b4-t2048-eager 240 "${TORCH[@]}" --batch 4 --seq 2048
  step torch-llama1b-b1-t8192-eager 240 "${TORCH[@]}" --batch 1 --seq 8192
  step torch-llama1b-b4-t2048-compile 300 "${TORCH[@]}" --batch 4 --seq 2048 --compile
  step torch-llama1b-b4-t2048-eager-recompute 240 "${TORCH[@]}" --batch 4 --seq 2048 --recompute-full
  TORCH3B=(python3 tools/gpu/torch_train_step.py tools/gpu/llama-3.2-3b.json --profile)
  step torch-llama3b-b2-t4096-eager-recompute 240 "${TORCH3B[@]}" --batch 2 --seq 4096 --recompute-full
  step torch-llama3b-b1-t4096-compile 300 "${TORCH3B[@]}" --batch 1 --seq 4096 --compile
  # The same step with less free memory: does it slow down near the limit? (On an 80 GB H100 its
  # 41 GiB peak comes within 1.5 GiB of the limit at 36 GiB held aside, and fails at 37.)
  mkdir -p "$OUT/allocator-headroom"
  for b in 0 34 36 37 37.5 38; do
    step "allocator-headroom/torch-ballast-$b" 120 python3 tools/gpu/torch_train_step.py tools/gpu/llama-3.2-1b.json \
      --batch 4 --seq 2048 --ballast-GiB "$b"
  done
fi
if [ "$HAVE_TORCH" = 1 ] && part gpt; then
  # The GPT layout Megatron-LM trains (LayerNorm, GeLU, biases, dropout 0.1) at the shapes of the
  # Megatron-Core weak-scaling table's two smallest models: 4 microbatches of one 4096-token
  # sequence per step, as each of their 48 data-parallel ranks ran. Blocks compiled (fused
  # elementwise kernels), the loss eager fp32, as Megatron-LM runs them.
  GPT=(python3 tools/gpu/torch_train_step.py --batch 1 --seq 4096 --accumulate 4 --compile-blocks)
  G17=tools/gpu/gpt-1.7b-megatron-core.json
  step torch-gpt1.7b-a4-t4096-blocks-dropout 300 "${GPT[@]}" "$G17" --dropout 0.1 --profile
  step torch-gpt1.7b-a4-t4096-blocks 300 "${GPT[@]}" "$G17"
  step torch-gpt1.7b-a4-t4096-eager-dropout 240 python3 tools/gpu/torch_train_step.py "$G17" --batch 1 --seq 4096 \
    --accumulate 4 --dropout 0.1
  step torch-gpt7.1b8l-a4-t4096-blocks-dropout 300 "${GPT[@]}" tools/gpu/gpt-7.1b-megatron-core-8layers.json \
    --dropout 0.1 --profile
  # The steps' GEMMs run faster than the same shapes back to back: is it the power they leave?
  step gemm-duty-cycle 180 python3 tools/gpu/gemm_duty_cycle.py
fi
if [ "$HAVE_TORCH" = 1 ] && part fsdp; then
  # FSDP allocates each block's gathered weights and reduced gradients afresh, on side streams:
  # does that step slow down (allocator retries) as the cap closes in on its peak? Default and
  # expandable segments (which let the allocator grow a segment instead of freeing its cache).
  mkdir -p "$OUT/fsdp-headroom"
  step fsdp-headroom/default 200 python3 tools/gpu/fsdp_headroom.py
  step fsdp-headroom/expandable-segments 200 env PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True \
    python3 tools/gpu/fsdp_headroom.py
fi
if [ "$HAVE_TORCH" = 1 ] && part attention; then
  # SDPA's attention kernels at head dim 128: the FlashAttention-2 README's grid (the source of the
  # presets' flash efficiencies), long causal sequences, and a context-parallel rank's ring steps.
  step attention-speed 300 python3 tools/gpu/attention_speed.py
fi
if [ "$HAVE_TORCH" = 0 ]; then echo "PyTorch with CUDA not found: no side-by-side step" >> "$OUT/steps.txt"; fi

if ! part sanitizers; then
  :
elif command -v compute-sanitizer > /dev/null; then
  step racecheck-attention 240 compute-sanitizer --tool racecheck \
    "$BUILD_DIR/tests/kernels_cuda/test_kernels_cuda" --gtest_filter='CudaAttention.Gpu*:CudaLayerNorm.Gpu*:CudaRmsNorm.Gpu*'
  # NCCL's own start-up probes its kernel images (cudaFuncGetAttributes), which memcheck reports
  # as errors inside libnccl; its tests are left out here.
  step memcheck-kernels 240 compute-sanitizer --tool memcheck \
    "$BUILD_DIR/tests/kernels_cuda/test_kernels_cuda" --gtest_filter='*.Gpu*-NcclCommunicator.*'
else
  echo "compute-sanitizer not found" >> "$OUT/steps.txt"
fi
