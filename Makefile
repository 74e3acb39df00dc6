# sk — build, test, install. `make demo` and `make test` are the README's two commands.
LUA      ?= lua5.4
CC       ?= gcc
PREFIX   ?= /usr/local
LUA_INC  ?= /usr/include/lua5.4
LUA_LDIR ?= $(PREFIX)/share/lua/5.4
LUA_CDIR ?= $(PREFIX)/lib/lua/5.4
INCDIR   ?= $(PREFIX)/include/sk
OPT      ?= -O2
BUILD    ?= build
# The call path (core, dispatcher, structured runtime, op library, binding, generated wrappers)
# at -O3: it is most of a small op's cost (a Lua structured op: 3 % fewer instructions, a + b 4 %).
# The CPU kernels keep OPT: -O3 makes amax over the last dim 1.6x slower. A command-line OPT
# (the sanitizer build's) overrides both.
OPT_CALLS ?= -O3
$(BUILD)/obj/src/%.o $(BUILD)/obj/gen/%.o: OPT = $(OPT_CALLS)
# OPT_GEN, when set, comes last for the generated files (its -O wins): the sanitizer build's -O0.
$(BUILD)/obj/gen/%.o: CFLAGS += $(OPT_GEN)
WARN     = -Wall -Wextra -Wshadow -Wmissing-prototypes -Wstrict-prototypes -Wundef -Wwrite-strings
# -fno-plt: calls into liblua and libc through the GOT, with no PLT stub (a Lua call from the
# binding makes a hundred or more of them)
CFLAGS   += -std=gnu11 $(OPT) -fvect-cost-model=cheap -g -fPIC -fopenmp -fno-semantic-interposition -fno-plt $(WARN)
CPPFLAGS += -MMD -MP
# {==== Layers ====
# Each folder is a layer and sees only its own headers and those of the layers below, so a
# file that includes a higher layer's header does not compile:
#   core (src/core) < dispatcher (src/dispatch) < structured runtime (src/structured)
#   < op library (src/ops, kernels/cpu, kernels/cuda, the generated $(BUILD)/gen)
#   < autograd (src/autograd, the generated sk_autograd_gen.c) < binding (src/binding).
INC_core       = -Isrc/core
INC_dispatch   = $(INC_core) -Isrc/dispatch
INC_structured = $(INC_dispatch) -Isrc/structured
INC_ops        = $(INC_structured) -Isrc/ops -Ikernels/cpu -I$(BUILD)/gen
INC_autograd   = $(INC_ops) -Isrc/autograd
INC_binding    = $(INC_autograd) -Isrc/binding -I$(LUA_INC)
# The layer of a source file: its folder's; generated files are the op library's, but for the
# binding's table of Lua variants.
layer_of = $(strip $(if $(filter src/core/%,$1),core,$(if $(filter src/dispatch/%,$1),dispatch,$(if \
  $(filter src/structured/%,$1),structured,$(if $(filter src/autograd/% %/sk_autograd_gen.c,$1),autograd,$(if \
  $(filter src/binding/% %/lsk_ops_table.c,$1),binding,ops))))))
# The include flags of a layer, for the spec that checks the layers (`make -s print-inc-core`).
print-inc-%:
	@echo $(INC_$*)
# }====
LDLIBS   = -ldnnl -llapacke -lopenblas -lsleef -lzip -lm -fopenmp
DEBS     = g++ lua5.4 liblua5.4-dev lua-busted lua-yaml libopenblas-dev libsleef-dev libdnnl-dev liblapacke-dev lua-cjson \
           libdlpack-dev libzip-dev valgrind
# What scripts/gpu_check.sh unpacks on a GPU machine with no network (`make gpu-deps` fetches
# them here into .gpu-deps/, which travels with the work tree): DEBS without valgrind, as the
# packages that hold the files, and the libraries they need beyond a base system.
GPU_DEBS = lua5.4 liblua5.4-0 liblua5.4-dev libreadline8 lua-busted lua-cliargs lua-dkjson lua-filesystem \
           lua-luassert lua-mediator lua-penlight lua-say lua-system lua-term lua-yaml libyaml-0-2 \
           libopenblas0-pthread libopenblas-pthread-dev libgfortran5 libsleef3 libsleef-dev \
           libdnnl2 libdnnl-dev ocl-icd-libopencl1 liblapacke liblapacke-dev liblapack3 libtmglib3 lua-cjson \
           libdlpack-dev libzip4 libzip-dev libbz2-1.0 libssl3

# Generated files: sk_ops.c (sk_ops_init) and one translation unit per shard, numbered as
# codegen.emit's M.SHARDS says (codegen_emit_spec checks the two agree).
SHARDS   = 0 1 2 3 4 5 6 7
GEN_SRC  = $(BUILD)/gen/sk_ops.c $(SHARDS:%=$(BUILD)/gen/sk_ops_%.c) $(BUILD)/gen/lsk_ops_table.c $(BUILD)/gen/sk_autograd_gen.c
GEN      = $(GEN_SRC) $(BUILD)/gen/sk_ops_cuda.c $(BUILD)/gen/sk_ops.h $(BUILD)/gen/sk_kernels.h
CODEGEN  = codegen.lua native_functions.yaml derivatives.yaml src/autograd/sk_grad_helpers.h $(wildcard lua/codegen/*.lua) \
           lua/sk/schema.lua lua/sk/types.lua lua/sk/structured.lua
SRC      = $(wildcard src/core/*.c src/dispatch/*.c src/structured/*.c src/ops/*.c kernels/cpu/*.c src/autograd/*.c \
           src/binding/*.c) $(GEN_SRC)
OBJ      = $(patsubst %.c,$(BUILD)/obj/%.o,$(SRC:$(BUILD)/gen/%=gen/%))
MODULE   = $(BUILD)/sk/core.so
RUN      = SK_BUILD=$(BUILD) LUA_PATH="lua/?.lua;lua/?/init.lua;bench/?.lua;;" LUA_CPATH="$(BUILD)/?.so;;"

# The CUDA module: built whenever nvcc is found (CUDA 13 with cuBLAS), never linked into the core.
NVCC     ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
# SASS for sm_80 and sm_90, and PTX of compute_90 that a newer GPU JIT-compiles
CUDA_ARCH ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90
CUDA_MODULE = $(if $(NVCC),$(BUILD)/sk/cuda.so)
CUDA_OBJ = $(patsubst %.cu,$(BUILD)/obj/%.o,$(wildcard kernels/cuda/*.cu)) \
           $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard kernels/cuda/*.c)) $(BUILD)/obj/gen/sk_ops_cuda.o

.PHONY: gpu-deps all deps demo test test-c spec memcheck memcheck-c memcheck-spec sanitize sanitize-build sanitize-c \
        sanitize-spec fuzz bench compare install install-files clean cuda-emu cuda-emu-spec cuda-emu-large memcheck-cuda-emu sanitize-cuda-emu
all: $(MODULE) $(CUDA_MODULE)

deps:
	@missing=""; for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; fi

# {==== Generated files ====
# The stamp records codegen's last run; codegen rewrites only the files whose text changed.
# Objects depend on the generated files themselves (the .c, and the headers through the
# compiler's depfiles), on the stamp only order-only (the headers exist before any compile),
# so a codegen run that changes nothing recompiles nothing.
# When codegen is due (a CODEGEN input newer than the stamp, or a generated file missing),
# the generated files depend on the stamp with an empty recipe: make re-reads their mtimes
# after it ran and sees only the real changes. When it is not due they depend on nothing, so
# `make -q` holds them current (an unchanged file stays older than the stamp).
GEN_MISSING = $(filter-out $(wildcard $(GEN)),$(GEN))
GEN_DUE  := $(or $(GEN_MISSING),$(shell find $(CODEGEN) -newer $(BUILD)/gen/.stamp 2>/dev/null | head -n 1),$(if $(wildcard $(BUILD)/gen/.stamp),,nostamp))
$(BUILD)/gen/.stamp: $(CODEGEN) $(if $(GEN_MISSING),FORCE)
	$(LUA) codegen.lua native_functions.yaml $(BUILD)/gen docs/ops.md
	@touch $@
$(GEN): $(if $(GEN_DUE),$(BUILD)/gen/.stamp) ;
FORCE:
.PHONY: FORCE
# }====

$(BUILD)/obj/gen/%.o: $(BUILD)/gen/%.c | $(BUILD)/gen/.stamp
	@mkdir -p $(dir $@)
	$(CC) $(INC_$(call layer_of,$<)) $(CPPFLAGS) $(CFLAGS) -c $< -o $@
$(BUILD)/obj/%.o: %.c | $(BUILD)/gen/.stamp
	@mkdir -p $(dir $@)
	$(CC) $(INC_$(call layer_of,$<)) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BUILD)/obj/kernels/cuda/%.o: kernels/cuda/%.cu | $(BUILD)/gen/.stamp
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -std=c++17 $(CUDA_ARCH) -Xcompiler -fPIC,-Wall $(INC_ops) -MMD -MP -c $< -o $@
$(BUILD)/obj/kernels/cuda/%.o: kernels/cuda/%.c | $(BUILD)/gen/.stamp
	@mkdir -p $(dir $@)
	$(CC) $(INC_ops) $(CPPFLAGS) -I$(CUDA_HOME)/include $(CFLAGS) -c $< -o $@
$(BUILD)/sk/cuda.so: $(CUDA_OBJ)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-z,nodelete -o $@ $(CUDA_OBJ) -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart -lcublas -lstdc++

# {==== The CUDA module on the CPU ====
# `make cuda-emu`: the same sources, the .cu files as host C++, against the emulated runtime
# of kernels/cuda/emu (its cuda_runtime.h and cublas_v2.h come first on the include path),
# into $(EMU_MODULE); no GPU and no CUDA toolkit needed. The loader takes it from
# SK_CUDA_MODULE. `make cuda-emu-spec` runs the CUDA spec and the conformance suite on it.
EMU        = $(BUILD)/emu
EMU_MODULE = $(EMU)/cuda.so
EMU_INC    = -Ikernels/cuda/emu
CXX_WARN   = -Wall -Wextra -Wshadow -Wundef -Wwrite-strings
CXXFLAGS_EMU = -std=c++17 $(OPT) -g -fPIC -mtls-dialect=gnu2 $(CXX_WARN)
EMU_OBJ    = $(patsubst %.cu,$(EMU)/obj/%.o,$(wildcard kernels/cuda/*.cu)) \
             $(patsubst %.c,$(EMU)/obj/%.o,$(wildcard kernels/cuda/*.c)) \
             $(patsubst %.cpp,$(EMU)/obj/%.o,$(wildcard kernels/cuda/emu/*.cpp)) $(BUILD)/obj/gen/sk_ops_cuda.o
# The emulated kernels read threadIdx and the rest through TLS descriptors (-mtls-dialect=gnu2);
# room in glibc's static TLS for the module's 7 KiB block (its __shared__ arrays) turns each
# read from a call into an add (a pointwise kernel on the emulation: 15 % less time).
EMU_RUN    = $(RUN) GLIBC_TUNABLES=glibc.rtld.optional_static_tls=16384 SK_CUDA_MODULE=$(CURDIR)/$(EMU_MODULE)

$(EMU)/obj/kernels/cuda/%.o: kernels/cuda/%.cu | $(BUILD)/gen/.stamp
	@mkdir -p $(dir $@)
	$(CXX) -x c++ $(EMU_INC) $(INC_ops) $(CPPFLAGS) $(CXXFLAGS_EMU) -c $< -o $@
$(EMU)/obj/kernels/cuda/%.o: kernels/cuda/%.c | $(BUILD)/gen/.stamp
	@mkdir -p $(dir $@)
	$(CC) $(EMU_INC) $(INC_ops) $(CPPFLAGS) $(CFLAGS) -c $< -o $@
$(EMU)/obj/kernels/cuda/emu/%.o: kernels/cuda/emu/%.cpp
	@mkdir -p $(dir $@)
	$(CXX) $(EMU_INC) $(CPPFLAGS) $(CXXFLAGS_EMU) -c $< -o $@
$(EMU_MODULE): $(EMU_OBJ)
	@mkdir -p $(dir $@)
	$(CXX) -shared -Wl,-z,nodelete -o $@ $(EMU_OBJ)

# The emulation's own rules, each broken once, against the emulated runtime alone.
$(EMU)/test_cuda_emu: spec/c/test_cuda_emu.cpp $(EMU)/obj/kernels/cuda/emu/sk_cuda_emu.o
	@mkdir -p $(dir $@)
	$(CXX) -x c++ $(EMU_INC) -Ikernels/cuda $(CPPFLAGS) $(CXXFLAGS_EMU) -o $@ spec/c/test_cuda_emu.cpp -x none $(EMU)/obj/kernels/cuda/emu/sk_cuda_emu.o

# The caching allocator against the emulated runtime; the test is its binding (memory pressure).
$(EMU)/test_cuda_alloc: spec/c/test_cuda_alloc.c $(EMU)/obj/kernels/cuda/sk_cuda_alloc.o $(EMU)/obj/kernels/cuda/emu/sk_cuda_emu.o $(BUILD)/obj/src/core/sk_error.o
	@mkdir -p $(dir $@)
	$(CC) $(EMU_INC) $(INC_ops) -Ikernels/cuda $(CPPFLAGS) $(CFLAGS) -c spec/c/test_cuda_alloc.c -o $(EMU)/obj/test_cuda_alloc.o
	$(CXX) -o $@ $(EMU)/obj/test_cuda_alloc.o $(EMU)/obj/kernels/cuda/sk_cuda_alloc.o $(EMU)/obj/kernels/cuda/emu/sk_cuda_emu.o $(BUILD)/obj/src/core/sk_error.o

cuda-emu: $(EMU_MODULE) $(EMU)/test_cuda_emu $(EMU)/test_cuda_alloc
cuda-emu-spec: $(MODULE) cuda-emu
	$(EMU)/test_cuda_emu
	$(EMU)/test_cuda_alloc
	$(EMU_RUN) busted --lua=$(LUA) spec/cuda_spec.lua spec/conformance_spec.lua
# More than 2^31 elements (2 GiB of emulated device memory, two to three minutes): a step of its
# own, so it runs beside the others, and never under valgrind.
cuda-emu-large: $(MODULE) cuda-emu
	$(EMU_RUN) busted --lua=$(LUA) spec/cuda_large_spec.lua
# }====

# nodelete: libgomp worker threads outlive lua_close, so the module (and its
# libraries) must stay mapped until the process exits.
$(MODULE): $(OBJ)
	@mkdir -p $(dir $@)
	$(CC) -shared $(LDFLAGS) -Wl,-z,nodelete -o $@ $(OBJ) $(LDLIBS)

# The C-level spec links everything but the Lua binding: the core never needs Lua.
CORE_OBJ = $(filter-out $(BUILD)/obj/src/binding/% $(BUILD)/obj/gen/lsk_%,$(OBJ))
$(BUILD)/test_dispatch: spec/c/test_dispatch.c $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(INC_ops) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ spec/c/test_dispatch.c $(CORE_OBJ) $(LDLIBS)

# The memory planner alone: it needs only the core's error buffer.
ARENA_OBJ = $(BUILD)/obj/src/core/sk_arena.o $(BUILD)/obj/src/core/sk_error.o
$(BUILD)/test_arena: spec/c/test_arena.c $(ARENA_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(INC_core) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ spec/c/test_arena.c $(ARENA_OBJ)

# Two lua_States in one process, each requiring sk (links Lua; loads build/sk/core.so).
$(BUILD)/test_two_states: spec/c/test_two_states.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(OPT) -g $(WARN) -I$(LUA_INC) $(LDFLAGS) -o $@ $< -llua5.4

# An out-of-tree backend: built against the headers only, loaded with sk.load_backend.
$(BUILD)/examples/sk_cbackend.so: examples/backend_c/sk_cbackend.c | $(BUILD)/gen/.stamp
	@mkdir -p $(dir $@)
	$(CC) -shared -fPIC $(CFLAGS) -Isrc $(INC_ops) $(CPPFLAGS) -o $@ $<

gpu-deps:
	@mkdir -p .gpu-deps && cd .gpu-deps && rm -f *.deb && apt-get download -qq -o APT::Sandbox::User=root $(GPU_DEBS)
	@du -sh .gpu-deps

demo: deps all
	$(RUN) $(LUA) examples/tour.lua

# {==== Checks ====
# Each check is one step: spec, memcheck-c, memcheck-spec (memcheck = both), sanitize-c,
# sanitize-spec (sanitize = both), fuzz. A step builds what it runs (a no-op once built) and
# nothing else; no spec builds anything (specs tagged #build only query make: `make -q`, `-n`).
TEST_PROGS = $(BUILD)/test_dispatch $(BUILD)/test_arena $(BUILD)/test_two_states $(BUILD)/examples/sk_cbackend.so
VALGRIND = valgrind -q --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=9
VALGRIND_LUA = $(VALGRIND) --show-possibly-lost=no --suppressions=spec/valgrind.supp

spec: all $(TEST_PROGS)
	$(RUN) busted --lua=$(LUA) spec

memcheck: memcheck-c memcheck-spec memcheck-cuda-emu
memcheck-c: all $(TEST_PROGS)
	$(VALGRIND) $(BUILD)/test_dispatch
	$(VALGRIND) $(BUILD)/test_arena
	$(VALGRIND_LUA) $(BUILD)/test_two_states
# (the training examples, #train, run in `spec` and in the sanitizer build: under valgrind
# they would add minutes and reach no code the other specs do not; so would the conformance
# suite's plan target, which replays the kernels its CPU reference runs here, and whose
# recorder and replay plan_spec runs here: it runs whole in `spec` and the sanitizer build).
# SK_SPEC_SAMPLE=3 (spec/helper.lua): the conformance targets and gradcheck's rows a third each,
# the targets' thirds covering every case between them; the CPU reference runs every case.
# In three parts of about equal time under valgrind (measured per file), so that make runs them
# on both cores beside the other steps: one valgrind process is serial, and at 20 minutes or more
# it was make test's critical path. The last part takes every spec file the first two do not.
MEMCHECK_SPECS_1 = spec/conformance_spec.lua spec/memory_spec.lua spec/linalg_spec.lua spec/index_spec.lua
MEMCHECK_SPECS_2 = spec/autograd_gradcheck_spec.lua spec/codegen_emit_spec.lua spec/autograd_spec.lua \
                   spec/reduce_spec.lua spec/cuda_large_spec.lua spec/cuda_spec.lua spec/nn_spec.lua spec/conv_spec.lua
MEMCHECK_SPECS_3 = $(filter-out $(MEMCHECK_SPECS_1) $(MEMCHECK_SPECS_2),$(sort $(wildcard spec/*_spec.lua)))
MEMCHECK_PARTS = memcheck-spec-1 memcheck-spec-2 memcheck-spec-3
.PHONY: $(MEMCHECK_PARTS)
memcheck-spec: $(MEMCHECK_PARTS)
$(MEMCHECK_PARTS): memcheck-spec-%: all $(TEST_PROGS)
	SK_CONFORMANCE_SKIP=plan SK_SPEC_SAMPLE=3 $(RUN) $(VALGRIND_LUA) $(LUA) /usr/bin/busted --exclude-tags=train,heap $(MEMCHECK_SPECS_$*)
# The CUDA module's host code (allocator, launches, copies) on the emulation, under valgrind.
memcheck-cuda-emu: all cuda-emu
	$(EMU_RUN) $(VALGRIND_LUA) $(LUA) /usr/bin/busted spec/cuda_spec.lua

# `make test`: every step, $(TEST_JOBS) jobs at a time (compiles included: a step starts once
# its build is made), the longest first; --output-sync prints each step's output whole when it
# ends. make stops at the first failing step (after those running finish). The sanitizer build
# waits for the plain one (SAN_AFTER), so memcheck-spec's parts, the longest steps, run beside it.
TEST_JOBS ?= 2
TEST_STEPS = $(MEMCHECK_PARTS) cuda-emu-large fuzz sanitize-spec memcheck-cuda-emu sanitize-cuda-emu spec cuda-emu-spec test-c memcheck-c sanitize-c
test: deps
	+$(MAKE) --no-print-directory -j$(TEST_JOBS) --output-sync=target $(TEST_STEPS) \
	  FUZZ_ARGS="--calls 300000" SAN_AFTER="all $(TEST_PROGS)"

test-c: all $(TEST_PROGS)
	$(BUILD)/test_dispatch
	$(BUILD)/test_arena
	$(BUILD)/test_two_states

# {==== Sanitizers ====
# `make sanitize`: the module, test_dispatch and the C backend with AddressSanitizer + UBSan
# (every report fatal) in $(SAN)/, then test_dispatch and the busted suite against that module.
# lua5.4 is not instrumented, so the runtimes are preloaded into it. Specs tagged #build query
# make or use build/ directly (install, codegen's make rules, the backend_c example): excluded;
# so are those tagged #rss (peak memory under a memory limit, which ASan's shadow and quarantine break).
SAN      = build-san
SANFLAGS = -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
# allocator_may_return_null: a huge size fails as in a plain build (an error), not an ASan abort.
# Leaks: LeakSanitizer on, with spec/lsan.supp for the uninstrumented libraries' own allocations.
# libdnnl is preloaded so that its thread_locals are static TLS: loaded with core.so they are
# dynamic TLS, and LeakSanitizer's final scan crashed on a thread's dynamic TLS after the
# CUDA emulation's fibers ("Tracer caught signal 11"; the specs themselves passed).
SAN_RUN  = SK_BUILD=$(SAN) LUA_PATH="lua/?.lua;lua/?/init.lua;;" LUA_CPATH="$(SAN)/?.so;;" \
           LD_PRELOAD="$$($(CC) -print-file-name=libasan.so) $$($(CC) -print-file-name=libubsan.so) libdnnl.so.2" \
           ASAN_OPTIONS=halt_on_error=1:abort_on_error=0:allocator_may_return_null=1:detect_leaks=1 \
           LSAN_OPTIONS=suppressions=$(CURDIR)/spec/lsan.supp:print_suppressions=0 \
           UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# The generated files at -O0: ASan and UBSan make -O1 four times as slow to compile there (a shard:
# 82 s against 20), most of the sanitizer build, and they are call glue, not loops.
SAN_MAKE = $(MAKE) --no-print-directory BUILD=$(SAN) OPT="-O1 $(SANFLAGS)" OPT_GEN=-O0 LDFLAGS="$(SANFLAGS)" NVCC=
SAN_PROGS = $(SAN)/sk/core.so $(SAN)/test_dispatch $(SAN)/test_arena $(SAN)/test_two_states $(SAN)/examples/sk_cbackend.so $(SAN)/emu/cuda.so

# The one rule that runs the sanitizer build (two sub-makes at once would race on its files);
# the sub-make is asked first (-q), so a current build prints nothing.
sanitize-build: | $(SAN_AFTER)
	+$(SAN_MAKE) -q $(SAN_PROGS) || $(SAN_MAKE) $(SAN_PROGS)
sanitize: sanitize-c sanitize-spec sanitize-cuda-emu
sanitize-c: sanitize-build
	$(SAN_RUN) $(SAN)/test_dispatch
	$(SAN_RUN) $(SAN)/test_arena
	$(SAN_RUN) $(SAN)/test_two_states
sanitize-spec: sanitize-build
	$(SAN_RUN) busted --lua=$(LUA) --exclude-tags=build,rss,heap spec
# The CUDA module's host code on the emulation under the sanitizer (the emulation tells ASan
# of each switch between a fiber's stack and the host thread's).
sanitize-cuda-emu: sanitize-build
	$(SAN_RUN) SK_CUDA_MODULE=$(CURDIR)/$(SAN)/emu/cuda.so busted --lua=$(LUA) spec/cuda_spec.lua

# `make fuzz`: fuzz/sk_fuzz.lua under the sanitizer build (FUZZ_ARGS="--calls N --seed S").
fuzz: sanitize-build
	SK_CPU_MAX_ALLOC=4294967296 $(SAN_RUN) $(LUA) fuzz/sk_fuzz.lua $(FUZZ_ARGS)
# }====
# }====

$(BUILD)/blas_direct.so: bench/blas_direct.c
	@mkdir -p $(dir $@)
	$(CC) -shared -fPIC $(OPT) -fopenmp -I$(LUA_INC) $(CPPFLAGS) $(LDFLAGS) -o $@ $< -ldnnl -lopenblas

$(BUILD)/bench_dispatch: bench/bench_dispatch.c $(CORE_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(INC_ops) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ bench/bench_dispatch.c $(CORE_OBJ) $(LDLIBS)

bench: all $(BUILD)/blas_direct.so $(BUILD)/bench_dispatch
	$(RUN) $(LUA) bench/bench.lua
	$(BUILD)/bench_dispatch
	$(RUN) $(LUA) bench/bench_library.lua
	$(RUN) $(LUA) bench/bench_autograd.lua
	$(RUN) $(LUA) bench/bench_nn.lua
	$(RUN) $(LUA) bench/bench_io.lua
	$(RUN) $(LUA) bench/bench_linalg.lua
	$(RUN) $(LUA) bench/bench_plan.lua

$(BUILD)/cublas_direct: bench/cublas_direct.cu
	@mkdir -p $(dir $@)
	$(NVCC) -O2 $(CUDA_ARCH) -o $@ $< -lcublas

# sk against PyTorch and NumPy (python3-torch, python3-numpy: optional, not needed by the tests)
compare: all $(BUILD)/blas_direct.so
	$(RUN) $(LUA) bench/compare.lua

# `make install` builds, then installs; `make install-files` installs the build as it is
# (install_spec uses it after `make -q all`, so no spec rebuilds anything).
install: all
	+$(MAKE) --no-print-directory install-files
# The public headers: what an out-of-tree backend includes (examples/backend_c builds against
# them alone), no more: src/sk.h and the headers it reaches, and the CPU fallback's.
PUBLIC_H = src/sk.h src/core/sk_error.h src/core/sk_tensor.h src/core/sk_device.h src/core/sk_dtype.h src/core/sk_value.h \
           src/dispatch/sk_dispatch.h src/structured/sk_meta.h src/structured/sk_iter.h src/ops/sk_backend.h src/ops/sk_cpu_fallback.h \
           $(BUILD)/gen/sk_ops.h
install-files:
	install -d $(DESTDIR)$(LUA_LDIR)/sk/formats $(DESTDIR)$(LUA_CDIR)/sk $(DESTDIR)$(INCDIR)
	install -m 644 $(PUBLIC_H) $(DESTDIR)$(INCDIR)/
	install -m 644 lua/sk/*.lua $(DESTDIR)$(LUA_LDIR)/sk/
	install -m 644 lua/sk/formats/*.lua $(DESTDIR)$(LUA_LDIR)/sk/formats/
	install -m 755 $(MODULE) $(DESTDIR)$(LUA_CDIR)/sk/core.so
	$(if $(CUDA_MODULE),install -m 755 $(CUDA_MODULE) $(DESTDIR)$(LUA_CDIR)/sk/cuda.so)

clean:
	rm -rf build $(SAN)

-include $(OBJ:.o=.d) $(CUDA_OBJ:.o=.d) $(EMU_OBJ:.o=.d) $(EMU)/test_cuda_emu.d $(EMU)/obj/test_cuda_alloc.d $(BUILD)/examples/sk_cbackend.d $(BUILD)/test_dispatch.d $(BUILD)/test_arena.d $(BUILD)/bench_dispatch.d
