//go:build cuda

package cuda

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"gorgonia.org/cu"
)

//go:embed kernels/*.ptx
var ptxFiles embed.FS

// entryRE finds the kernels a PTX module defines.
var entryRE = regexp.MustCompile(`(?m)^\.visible \.entry (\w+)\(`)

// errClosed is returned by every method of a closed Device.
var errClosed = errors.New("cuda: device is closed")

// Device is one GPU with its primary context, one stream on which all its
// work runs, the embedded kernels loaded, and a caching allocator. Its
// methods are safe for concurrent use; they run one at a time, each on an
// OS thread with the context current, and each returns only once its
// copies and kernels have finished.
type Device struct {
	ordinal int
	name    string
	dev     cu.Device
	ctx     cu.CUContext
	stream  cu.Stream
	mods    []cu.Module
	fns     map[string]cu.Function
	mem     *Allocator

	mu       sync.Mutex
	tf32     bool // GEMMs use the TF32 tensor-core kernel (SetTF32)
	closed   bool
	launched []string // kernels launched by the current call, for errors
}

// Open opens GPU ordinal: it retains the device's primary context (which
// other CUDA libraries in the process share), makes a non-blocking stream
// and loads the embedded PTX, which the driver JIT-compiles for the GPU.
func Open(ordinal int) (*Device, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	n, err := cu.NumDevices()
	if err != nil {
		return nil, &Error{Call: "cuDeviceGetCount", Err: err}
	}
	if ordinal < 0 || ordinal >= n {
		return nil, fmt.Errorf("cuda: device %d does not exist; %d devices found", ordinal, n)
	}
	d := &Device{ordinal: ordinal, fns: map[string]cu.Function{}, mem: newAllocator(driverMemory{})}
	if d.dev, err = cu.GetDevice(ordinal); err != nil {
		return nil, &Error{Call: "cuDeviceGet", Detail: fmt.Sprint("device ", ordinal), Err: err}
	}
	if d.name, err = d.dev.Name(); err != nil {
		return nil, &Error{Call: "cuDeviceGetName", Err: err}
	}
	if d.ctx, err = d.dev.RetainPrimaryCtx(); err != nil {
		return nil, &Error{Call: "cuDevicePrimaryCtxRetain", Err: err}
	}
	if err := d.init(); err != nil {
		return nil, errors.Join(err, d.teardown())
	}
	return d, nil
}

// init makes the stream and loads the kernels; the OS thread is locked.
func (d *Device) init() error {
	if err := cu.SetCurrentContext(d.ctx); err != nil {
		return &Error{Call: "cuCtxSetCurrent", Err: err}
	}
	var err error
	if d.stream, err = cu.MakeStream(cu.NonBlocking); err != nil {
		return &Error{Call: "cuStreamCreate", Err: err}
	}
	files, err := fs.Glob(ptxFiles, "kernels/*.ptx")
	if err != nil {
		return err
	}
	major, _, err := d.dev.ComputeCapability()
	if err != nil {
		return &Error{Call: "cuDeviceGetAttribute", Detail: "compute capability", Err: err}
	}
	for _, f := range files {
		// *_sm80.ptx (the TF32 tensor-core GEMM) is compiled for compute_80
		// and fails to load on older GPUs; their GEMM keeps the plain kernel.
		if strings.HasSuffix(f, "_sm80.ptx") && major < 8 {
			continue
		}
		src, err := ptxFiles.ReadFile(f)
		if err != nil {
			return err
		}
		mod, err := cu.LoadData(string(src))
		if err != nil {
			return &Error{Call: "cuModuleLoadData", Detail: f, Err: err}
		}
		d.mods = append(d.mods, mod)
		for _, m := range entryRE.FindAllStringSubmatch(string(src), -1) {
			fn, err := mod.Function(m[1])
			if err != nil {
				return &Error{Call: "cuModuleGetFunction", Kernel: m[1], Detail: f, Err: err}
			}
			d.fns[m[1]] = fn
		}
	}
	return nil
}

// teardown frees what Open made, with the OS thread locked and the
// context current, and returns the first error.
func (d *Device) teardown() error {
	var errs []error
	if err := cu.SetCurrentContext(d.ctx); err != nil {
		errs = append(errs, &Error{Call: "cuCtxSetCurrent", Err: err})
	}
	if err := d.mem.Release(); err != nil {
		errs = append(errs, err)
	}
	for _, m := range d.mods {
		if err := m.Unload(); err != nil {
			errs = append(errs, &Error{Call: "cuModuleUnload", Err: err})
		}
	}
	if d.stream != (cu.Stream{}) {
		if err := d.stream.Destroy(); err != nil {
			errs = append(errs, &Error{Call: "cuStreamDestroy", Err: err})
		}
	}
	if err := d.dev.ReleasePrimaryCtx(); err != nil {
		errs = append(errs, &Error{Call: "cuDevicePrimaryCtxRelease", Err: err})
	}
	return errors.Join(errs...)
}

// Close frees the device's cached memory, stream and modules and releases
// its context. Buffers of the device must not be used afterwards.
func (d *Device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil
	}
	d.closed = true
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := d.stream.Synchronize(); err != nil {
		return errors.Join(&Error{Call: "cuStreamSynchronize", Err: err}, d.teardown())
	}
	return d.teardown()
}

// Name returns the GPU's name and ordinal, such as "NVIDIA H100 (0)".
func (d *Device) Name() string { return fmt.Sprintf("%s (%d)", d.name, d.ordinal) }

// MemStats returns the caching allocator's counters.
func (d *Device) MemStats() Stats { return d.mem.Stats() }

// ReleaseCache returns the allocator's cached blocks to the driver, for
// other processes or libraries on the same GPU.
func (d *Device) ReleaseCache() error { return d.do(d.mem.Release) }

// do runs f with the device's context current on a locked OS thread, one
// call at a time, then waits for the stream. A failure of the wait, which
// is where a kernel's own faults surface, names the kernels f launched.
func (d *Device) do(f func() error) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return errClosed
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cu.SetCurrentContext(d.ctx); err != nil {
		return &Error{Call: "cuCtxSetCurrent", Err: err}
	}
	d.launched = d.launched[:0]
	err := f()
	if serr := d.stream.Synchronize(); serr != nil {
		e := &Error{Call: "cuStreamSynchronize", Err: serr}
		if len(d.launched) > 0 {
			e.Detail = "after kernels " + strings.Join(d.launched, ", ")
		}
		return errors.Join(err, e)
	}
	return err
}

// launch runs kernel name on the stream. Every parameter is 8 bytes, as
// gorgonia.org/cu's Launch copies them: pass device pointers with ptr,
// integers with i64 and scalars with f64. Called inside do.
func (d *Device) launch(name string, grid, block [3]int, args ...uint64) error {
	fn, ok := d.fns[name]
	if !ok {
		return &Error{Call: "cuModuleGetFunction", Kernel: name, Grid: grid, Block: block,
			Err: errors.New("no such kernel in the embedded PTX")}
	}
	params := make([]unsafe.Pointer, len(args))
	for i := range args {
		params[i] = unsafe.Pointer(&args[i])
	}
	d.launched = append(d.launched, name)
	if err := fn.Launch(grid[0], grid[1], grid[2], block[0], block[1], block[2], 0, d.stream, params); err != nil {
		return &Error{Call: "cuLaunchKernel", Kernel: name, Grid: grid, Block: block, Err: err}
	}
	return nil
}

// driverMemory is the Allocator's backend on a GPU; it runs inside do.
type driverMemory struct{}

func (driverMemory) alloc(n int) (uintptr, error) {
	p, err := cu.MemAlloc(int64(n))
	if err != nil {
		return 0, &Error{Call: "cuMemAlloc", Detail: fmt.Sprintf("%d bytes", n), Err: err}
	}
	return uintptr(p), nil
}

func (driverMemory) free(p uintptr) error {
	if err := cu.MemFree(cu.DevicePtr(p)); err != nil {
		return &Error{Call: "cuMemFree", Detail: fmt.Sprintf("0x%x", p), Err: err}
	}
	return nil
}
