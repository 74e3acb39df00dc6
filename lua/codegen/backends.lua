-- codegen.backends: the compiled-in backends, one row each, in the order of
-- SK_COMPILED_BACKENDS in src/core/sk_device.h (spec/codegen_model_spec.lua checks they agree).
-- key: the YAML dispatch key and C key suffix; prefix: of its kernels' C names; module: nil
-- when its wrappers are built into the core, else the shared module whose generated file
-- (sk_ops_<module>.c, registering with sk_ops_<module>_register) holds them; device_guard:
-- its devices have a current one, so its unstructured kernels run under a device guard.
-- Adding a compiled backend: a row here, a row there, its kernels (docs/adding_backends.md).
return {
  { key = "CPU", prefix = "sk_cpu_" },
  { key = "CUDA", prefix = "sk_cuda_", module = "cuda", device_guard = true },
}
