#!/usr/bin/env bash
# scripts/gpu_check.sh — the one script to run on a GPU machine (the `device` tool), which has
# nvcc and a compiler but no network, Lua, busted, OpenBLAS or SLEEF. It unpacks the Debian
# packages `make gpu-deps` fetched into .gpu-deps/ (carry it) into a prefix and points the build
# and Lua at it; builds with -j; runs the CUDA parity spec, the conformance suite (its cuda target)
# and the CUDA benchmark, then the parity spec under compute-sanitizer. A lease is short and
# seldom repeated, so a failing step stops the run only where later steps need it (the unpack,
# the build, a GPU seen at all); the others go on, each under a time limit, and the script
# exits with the first failure's status. Every log goes under $OUT (or ./gpu_out).
# Without .gpu-deps/ it uses what the system has (a machine set up with `make deps`).
set -uo pipefail
out=${OUT:-gpu_out}
mkdir -p "$out"
: > "$out/summary.txt"
say() { echo "$*" | tee -a "$out/summary.txt"; }

# step [-f] LIMIT NAME CMD...: runs CMD for at most LIMIT seconds (and no later than
# GPU_CHECK_SECONDS after the start, when set) with its output in $OUT/NAME.txt; on failure
# shows its tail, and stops the script when -f (fatal) is given.
first_rc=0
step() {
  local fatal=0
  if [ "$1" = -f ]; then fatal=1; shift; fi
  local limit=$1 name=$2 t0=$SECONDS
  shift 2
  if [ -n "${GPU_CHECK_SECONDS:-}" ] && [ $((GPU_CHECK_SECONDS - SECONDS)) -lt "$limit" ]; then
    limit=$((GPU_CHECK_SECONDS - SECONDS))
  fi
  if [ "$limit" -lt 5 ]; then say "$name: not run (GPU_CHECK_SECONDS spent)"; [ $first_rc = 0 ] && first_rc=124; return; fi
  if declare -F "$1" > /dev/null; then "$@" > "$out/$name.txt" 2>&1  # a function of this script
  else timeout -k 10 "$limit" "$@" > "$out/$name.txt" 2>&1; fi
  local rc=$?
  say "$name: $([ $rc = 0 ] && echo ok || echo "FAILED (exit $rc$([ $rc = 124 ] && echo ", past ${limit} s"))") in $((SECONDS - t0)) s"
  if [ $rc != 0 ]; then
    tail -n 40 "$out/$name.txt"
    [ $first_rc = 0 ] && first_rc=$rc
    [ $fatal = 1 ] && exit $rc
  fi
}

prefix=/tmp/sk-gpu-deps
unpack() {
  rm -rf "$prefix" && mkdir -p "$prefix" || return 1
  for deb in .gpu-deps/*.deb; do
    if command -v dpkg > /dev/null; then dpkg -x "$deb" "$prefix" || return 1
    else (ar p "$deb" data.tar.xz | tar -xJ -C "$prefix") || return 1; fi
  done
}
if compgen -G ".gpu-deps/*.deb" > /dev/null; then
  step -f 120 unpack unpack
  p=$prefix/usr lib=$prefix/usr/lib/x86_64-linux-gnu
  export PATH="$p/bin:$PATH"
  export LD_LIBRARY_PATH="$lib/openblas-pthread:$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export CPPFLAGS="-I$p/include -I$p/include/x86_64-linux-gnu -I$p/include/x86_64-linux-gnu/openblas-pthread" LDFLAGS="-L$lib/openblas-pthread -L$lib"
  export LUA_INC="$p/include/lua5.4"
  # every lua5.4 started from here on (make's codegen, busted, the specs' own subprocesses) finds the
  # unpacked Lua modules first (sk's own are in lua/ and build/, which the prefix does not hold)
  cat > "$prefix/paths.lua" <<LUA
package.path = "$p/share/lua/5.4/?.lua;$p/share/lua/5.4/?/init.lua;" .. package.path
package.cpath = "$lib/lua/5.4/?.so;" .. package.cpath
LUA
  export LUA_INIT_5_4="@$prefix/paths.lua"
fi
busted=$(command -v busted)
export LUA_PATH="lua/?.lua;lua/?/init.lua;bench/?.lua;;" LUA_CPATH="build/?.so;;"

step 30 machine sh -c 'nvidia-smi; uname -a; nproc; command -v gcc make nvcc lua5.4'
step -f 400 build make -j"$(nproc)" all build/blas_direct.so build/cublas_direct
step -f 60 cuda_available lua5.4 -e 'local sk = require "sk"; local ok, why = sk.cuda.is_available(); assert(ok, why)'
step 180 cuda_spec lua5.4 "$busted" -o TAP spec/cuda_spec.lua
step 120 cuda_large_spec lua5.4 "$busted" -o TAP spec/cuda_large_spec.lua
step 300 conformance lua5.4 "$busted" -o TAP spec/conformance_spec.lua
step 180 bench_cuda lua5.4 bench/bench_cuda.lua
tail -n 30 "$out/bench_cuda.txt"
# last, so a runtime where it cannot run (gVisor: "Device not supported") costs no other step
if command -v compute-sanitizer > /dev/null; then
  step 300 sanitizer compute-sanitizer --tool memcheck --error-exitcode 1 lua5.4 "$busted" spec/cuda_spec.lua
fi
exit $first_rc
