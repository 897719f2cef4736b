// A fake libcuda.so.1: the driver calls ops/cuda makes, on host memory,
// with the kernels run by the host emulation (emu.h).
#include "emu.h"
#include "reg.h"
#include <cstdio>
#include <cstdlib>
#include <string>
#include <regex>
std::map<std::string, Invoker>& registry() { static std::map<std::string, Invoker> r; return r; }
struct Fn { std::string name; Invoker* inv; };
extern "C" {
int cuInit(unsigned) { return 0; }
int cuDriverGetVersion(int* v) { *v = 12000; return 0; }
int cuDeviceGetCount(int* n) { *n = 1; return 0; }
int cuDeviceGet(int* d, int o) { *d = o; return 0; }
int cuDeviceGetName(char* s, int n, int) { snprintf(s, n, "Emulated GPU (host threads)"); return 0; }
int cuDeviceGetAttribute(int* v, int attr, int) {
    switch (attr) { case 75: *v = 8; break; case 76: *v = 0; break; case 16: *v = 4; break; default: *v = 1024; }
    return 0;
}
int cuDevicePrimaryCtxRetain(void** c, int) { *c = (void*)0x1; return 0; }
int cuDevicePrimaryCtxRelease_v2(int) { return 0; }
int cuCtxSetCurrent(void*) { return 0; }
int cuCtxGetCurrent(void** c) { *c = (void*)0x1; return 0; }
int cuCtxSynchronize() { return 0; }
int cuStreamCreate(void** s, unsigned) { *s = (void*)0x2; return 0; }
int cuStreamDestroy_v2(void*) { return 0; }
int cuStreamSynchronize(void*) { return 0; }
int cuModuleLoadData(void** m, const void* img) { *m = new std::string((const char*)img); return 0; }
int cuModuleUnload(void* m) { delete (std::string*)m; return 0; }
int cuModuleGetFunction(void** f, void*, const char* name) {
    auto it = registry().find(name);
    *f = new Fn{name, it == registry().end() ? nullptr : &it->second};
    return 0;
}
int cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz, unsigned shmem,
                   void*, void** params, void**) {
    Fn* fn = (Fn*)f;
    if (!fn->inv) { fprintf(stderr, "fakecuda: kernel %s is not emulated\n", fn->name.c_str()); return 500; }
    if (getenv("FAKECUDA_TRACE")) fprintf(stderr, "launch %s grid %u,%u,%u block %u,%u,%u\n", fn->name.c_str(), gx, gy, gz, bx, by, bz);
    Invoker inv = *fn->inv;
    launch(dim3e{gx, gy, gz}, dim3e{bx, by, bz}, [&] { inv(params); });
    return 0;
}
int cuMemAlloc_v2(unsigned long long* p, size_t n) { *p = (unsigned long long)aligned_alloc(256, (n + 255) / 256 * 256); return *p ? 0 : 2; }
int cuMemFree_v2(unsigned long long p) { free((void*)p); return 0; }
int cuMemcpyHtoDAsync_v2(unsigned long long d, const void* s, size_t n, void*) { memcpy((void*)d, s, n); return 0; }
int cuMemcpyDtoHAsync_v2(void* d, unsigned long long s, size_t n, void*) { memcpy(d, (void*)s, n); return 0; }
int cuMemcpyHtoD_v2(unsigned long long d, const void* s, size_t n) { memcpy((void*)d, s, n); return 0; }
int cuMemcpyDtoH_v2(void* d, unsigned long long s, size_t n) { memcpy(d, (void*)s, n); return 0; }
int cuMemcpyDtoDAsync_v2(unsigned long long d, unsigned long long s, size_t n, void*) { memcpy((void*)d, (void*)s, n); return 0; }
int cuMemsetD32Async(unsigned long long d, unsigned v, size_t n, void*) { unsigned* p = (unsigned*)d; for (size_t i = 0; i < n; i++) p[i] = v; return 0; }
int cuMemsetD8Async(unsigned long long d, unsigned char v, size_t n, void*) { memset((void*)d, v, n); return 0; }
}
