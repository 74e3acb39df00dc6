# sk — build, test, install. `make demo` and `make test` are the README's two commands.
LUA      ?= lua5.4
CC       ?= gcc
PREFIX   ?= /usr/local
LUA_INC  ?= /usr/include/lua5.4
LUA_LDIR ?= $(PREFIX)/share/lua/5.4
LUA_CDIR ?= $(PREFIX)/lib/lua/5.4
OPT      ?= -O2
WARN     = -Wall -Wextra -Wshadow -Wmissing-prototypes -Wstrict-prototypes -Wundef -Wwrite-strings
CFLAGS   += -std=gnu11 $(OPT) -fvect-cost-model=cheap -g -fPIC -fopenmp -fno-semantic-interposition $(WARN)
CPPFLAGS += -Isrc -Isrc/ops -Ikernels/cpu -Ibuild/gen -I$(LUA_INC) -MMD -MP
LDLIBS   = -lopenblas -lsleef -lm -fopenmp
DEBS     = lua5.4 liblua5.4-dev lua-busted lua-yaml libopenblas-dev libsleef-dev valgrind

GEN      = build/gen/sk_ops.c build/gen/sk_ops_cuda.c build/gen/sk_ops.h build/gen/sk_kernels.h build/gen/lsk_ops_table.c
CODEGEN  = codegen.lua native_functions.yaml $(wildcard lua/codegen/*.lua) lua/sk/schema.lua
SRC      = $(wildcard src/*.c src/ops/*.c kernels/cpu/*.c) build/gen/sk_ops.c build/gen/lsk_ops_table.c
OBJ      = $(patsubst %.c,build/obj/%.o,$(SRC:build/gen/%=gen/%))
MODULE   = build/sk/core.so
RUN      = LUA_PATH="lua/?.lua;lua/?/init.lua;bench/?.lua;;" LUA_CPATH="build/?.so;;"

# The CUDA module: built whenever nvcc is found (CUDA 13 with cuBLAS), never linked into the core.
NVCC     ?= $(shell command -v nvcc 2>/dev/null || ls /usr/local/cuda/bin/nvcc 2>/dev/null)
CUDA_HOME ?= $(patsubst %/bin/nvcc,%,$(NVCC))
CUDA_ARCH ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90
CUDA_MODULE = $(if $(NVCC),build/sk/cuda.so)
CUDA_OBJ = $(patsubst %.cu,build/obj/%.o,$(wildcard kernels/cuda/*.cu)) \
           $(patsubst %.c,build/obj/%.o,$(wildcard kernels/cuda/*.c)) build/obj/gen/sk_ops_cuda.o

.PHONY: all deps demo test spec memcheck bench compare install clean
all: $(MODULE) $(CUDA_MODULE)

deps:
	@missing=""; for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then echo "installing:$$missing"; apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; fi

build/gen/.stamp: $(CODEGEN)
	$(LUA) codegen.lua native_functions.yaml build/gen docs/ops.md
	@touch $@
$(GEN): build/gen/.stamp

build/obj/gen/%.o: build/gen/%.c build/gen/.stamp
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@
build/obj/%.o: %.c build/gen/.stamp
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

build/obj/kernels/cuda/%.o: kernels/cuda/%.cu build/gen/.stamp
	@mkdir -p $(dir $@)
	$(NVCC) -O2 -std=c++17 $(CUDA_ARCH) -Xcompiler -fPIC,-Wall -Isrc -Isrc/ops -Ibuild/gen -MMD -MP -c $< -o $@
build/obj/kernels/cuda/%.o: kernels/cuda/%.c build/gen/.stamp
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) -I$(CUDA_HOME)/include $(CFLAGS) -c $< -o $@
build/sk/cuda.so: $(CUDA_OBJ)
	$(CC) -shared -Wl,-z,nodelete -o $@ $(CUDA_OBJ) -L$(CUDA_HOME)/lib64 -Wl,-rpath,$(CUDA_HOME)/lib64 -lcudart -lcublas -lstdc++

# nodelete: libgomp worker threads outlive lua_close, so the module (and its
# libraries) must stay mapped until the process exits.
$(MODULE): $(OBJ)
	@mkdir -p $(dir $@)
	$(CC) -shared -Wl,-z,nodelete -o $@ $(OBJ) $(LDLIBS)

# The C-level spec links everything but the Lua binding: the core never needs Lua.
CORE_OBJ = $(filter-out build/obj/src/lsk_% build/obj/gen/lsk_%,$(OBJ))
build/test_dispatch: spec/c/test_dispatch.c $(CORE_OBJ)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ spec/c/test_dispatch.c $(CORE_OBJ) $(LDLIBS)

# Two lua_States in one process, each requiring sk (links Lua; loads build/sk/core.so).
build/test_two_states: spec/c/test_two_states.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 $(OPT) -g $(WARN) -I$(LUA_INC) -o $@ $< -llua5.4

# An out-of-tree backend: built against the headers only, loaded with sk.load_backend.
build/examples/sk_cbackend.so: examples/backend_c/sk_cbackend.c build/gen/.stamp
	@mkdir -p $(dir $@)
	$(CC) -shared -fPIC $(CFLAGS) $(CPPFLAGS) -o $@ $<

demo: deps all
	$(RUN) $(LUA) examples/tour.lua

spec: all
	$(RUN) busted --lua=$(LUA) spec

memcheck: all build/test_dispatch build/test_two_states build/examples/sk_cbackend.so
	valgrind -q --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=9 build/test_dispatch
	valgrind -q --leak-check=full --errors-for-leak-kinds=definite --show-possibly-lost=no --error-exitcode=9 \
	  --suppressions=spec/valgrind.supp build/test_two_states
	$(RUN) valgrind -q --leak-check=full --errors-for-leak-kinds=definite --show-possibly-lost=no --error-exitcode=9 --suppressions=spec/valgrind.supp \
	  $(LUA) /usr/bin/busted spec

test: deps all build/test_dispatch build/test_two_states build/examples/sk_cbackend.so
	build/test_dispatch
	build/test_two_states
	$(RUN) busted --lua=$(LUA) spec
	$(MAKE) --no-print-directory memcheck

build/blas_direct.so: bench/blas_direct.c
	$(CC) -shared -fPIC $(OPT) -I$(LUA_INC) -o $@ $< -lopenblas

build/bench_dispatch: bench/bench_dispatch.c $(CORE_OBJ)
	$(CC) $(CPPFLAGS) $(CFLAGS) -o $@ bench/bench_dispatch.c $(CORE_OBJ) $(LDLIBS)

bench: all build/blas_direct.so build/bench_dispatch
	$(RUN) $(LUA) bench/bench.lua
	build/bench_dispatch
	$(RUN) $(LUA) bench/bench_library.lua

build/cublas_direct: bench/cublas_direct.cu
	$(NVCC) -O2 $(CUDA_ARCH) -o $@ $< -lcublas

# sk against PyTorch and NumPy (python3-torch, python3-numpy: optional, not needed by the tests)
compare: all build/blas_direct.so
	$(RUN) $(LUA) bench/compare.lua

install: all
	install -d $(DESTDIR)$(LUA_LDIR)/sk $(DESTDIR)$(LUA_CDIR)/sk
	install -m 644 lua/sk/*.lua $(DESTDIR)$(LUA_LDIR)/sk/
	install -m 755 $(MODULE) $(DESTDIR)$(LUA_CDIR)/sk/core.so
	$(if $(CUDA_MODULE),install -m 755 $(CUDA_MODULE) $(DESTDIR)$(LUA_CDIR)/sk/cuda.so)

clean:
	rm -rf build

-include $(OBJ:.o=.d) $(CUDA_OBJ:.o=.d) build/examples/sk_cbackend.d
