#!/usr/bin/env bash
# scripts/gpu_check.sh — the one script to run on a machine with a GPU (the `device` tool):
# builds with nvcc, runs the CUDA parity spec, the whole suite and the CUDA benchmark,
# and saves every output under $OUT (or ./gpu_out).
set -u
out=${OUT:-gpu_out}
mkdir -p "$out"
export LUA_PATH="lua/?.lua;lua/?/init.lua;bench/?.lua;;" LUA_CPATH="build/?.so;;"
{ nvidia-smi; make deps >/dev/null 2>&1; make -j"$(nproc)" all build/blas_direct.so build/cublas_direct; } > "$out/build.txt" 2>&1
echo "build: $?" | tee -a "$out/summary.txt"
busted --lua=lua5.4 -o TAP spec/cuda_spec.lua > "$out/cuda_spec.txt" 2>&1
echo "cuda_spec: $?" | tee -a "$out/summary.txt"
busted --lua=lua5.4 spec > "$out/spec.txt" 2>&1
echo "spec: $?" | tee -a "$out/summary.txt"
lua5.4 bench/bench_cuda.lua > "$out/bench_cuda.txt" 2>&1
echo "bench_cuda: $?" | tee -a "$out/summary.txt"
tail -n 30 "$out"/*.txt
