//go:build cuda

package cuda

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/plumbml/plumb/ops"
	"github.com/plumbml/plumb/parity"
	"github.com/plumbml/plumb/tensor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// parityDir holds the TensorFlow goldens (parity/testdata).
const parityDir = "../../parity/testdata"

// TestParityGoldens runs the float32 goldens of every op with a registered
// CUDA kernel (or host fallback) on the device, with no code per op: each case's op is built
// by ops.Build from the case's name and attributes (as the parity harness
// and the gradient checks build it), its inputs move to the device with
// To, and ops.Dispatch picks the op's kernel from the registry. The
// goldens' own bounds are for the CPU kernels; the GPU is held to 1e-4
// relative, 1e-5 absolute, as float32 sums run in another order than
// TensorFlow's. A case in a form the kernel does not implement (a
// broadcast beyond trailing dims) is skipped with the kernel's reason.
func TestParityGoldens(t *testing.T) {
	cases, err := parity.LoadCases(os.DirFS(parityDir))
	require.NoError(t, err)
	ran := map[string]int{}
	for _, c := range cases {
		if !onCUDA(c.Op) || c.DType != "float32" || c.Kind != "op" {
			continue
		}
		t.Run(c.ID(), func(t *testing.T) {
			a := c.Attrs.Attrs
			a.Seed = uint64(c.Seed) // dropout's mask comes from Plumb's generator, as in the parity harness
			cpu, err := ops.Build(c.Op, a)
			require.NoError(t, err)
			load := func(name string) *tensor.Tensor { return loadGolden(t, c, name) }
			ref := cpuReference(t, c, a)
			in := make([]*tensor.Tensor, c.Inputs)
			for i := range in {
				in[i] = onDevice(t, load(fmt.Sprintf("in%d", i)))
			}
			k, err := ops.Dispatch(cpu, in)
			require.NoError(t, err)
			kd, ok := k.(interface{ Device() tensor.Device })
			require.True(t, ok && kd.Device() == tensor.Device(dev), "ops.Dispatch ran %s somewhere else than its CUDA kernel", c.Op)
			out, err := k.Forward(in)
			if errors.Is(err, errUnsupported) {
				t.Skip(err)
			}
			require.NoError(t, err)
			if f, ok := k.(ops.Freer); ok {
				t.Cleanup(f.Free)
			}
			tl := tol{rtol: 1e-4, atol: 1e-5}
			requireCloseHost(t, ref.want(load("out"), "out", tl), toHost(t, out), tl, "out")
			if len(c.Grads) > 0 {
				need := make([]bool, len(in))
				for _, i := range c.Grads {
					need[i] = true
				}
				grads, err := k.Backward(in, out, onDevice(t, load("gout")), need)
				require.NoError(t, err)
				for _, i := range c.Grads {
					name := fmt.Sprintf("grad%d", i)
					requireCloseHost(t, ref.want(load(name), name, tl), toHost(t, grads[i]), tl, name)
				}
			}
			for _, i := range c.After { // state updated in place (batch norm's moving statistics)
				name := fmt.Sprintf("after%d", i)
				requireCloseHost(t, ref.want(load(name), name, tl), toHost(t, in[i]), tl, name)
			}
			ran[c.Op]++
		})
	}
	require.NotEmpty(t, ran, "no golden case ran on the GPU")
	n := 0
	for _, c := range ran {
		n += c
	}
	t.Logf("%d float32 golden cases of %d ops ran on the GPU", n, len(ran))
}

// reference is the CPU op's results on a golden case's inputs, by the
// golden's array names (out, grad0, after3, ...).
type reference map[string]*tensor.Tensor

// cpuReference runs the case's op on the CPU, built from a.
func cpuReference(t *testing.T, c *parity.Case, a ops.Attrs) reference {
	cpu, err := ops.Build(c.Op, a)
	require.NoError(t, err)
	in := make([]*tensor.Tensor, c.Inputs)
	for i := range in {
		in[i] = loadGolden(t, c, fmt.Sprintf("in%d", i))
	}
	out, err := cpu.Forward(in)
	require.NoError(t, err)
	r := reference{"out": out}
	if len(c.Grads) > 0 {
		need := make([]bool, len(in))
		for _, i := range c.Grads {
			need[i] = true
		}
		grads, err := cpu.Backward(in, out, loadGolden(t, c, "gout"), need)
		require.NoError(t, err)
		for _, i := range c.Grads {
			r[fmt.Sprintf("grad%d", i)] = grads[i]
		}
	}
	for _, i := range c.After {
		r[fmt.Sprintf("after%d", i)] = in[i]
	}
	return r
}

// want returns the golden, which the device must match; or, where the CPU
// op itself does not match the golden within tl (dropout, whose mask is
// Plumb's, not TensorFlow's; the parity harness compares it on the
// elements both keep), the CPU op's result.
func (r reference) want(golden *tensor.Tensor, name string, tl tol) *tensor.Tensor {
	cpu := r[name]
	if cpu == nil || !cpu.Shape().Equal(golden.Shape()) {
		return golden
	}
	for i := 0; i < golden.Size(); i++ {
		w, g := golden.At(i), cpu.At(i)
		if math.IsNaN(w) && math.IsNaN(g) || w == g {
			continue
		}
		if !(math.Abs(g-w) <= tl.atol+tl.rtol*math.Abs(w)) {
			return cpu
		}
	}
	return golden
}

// TestEveryCUDAKernelIsTested fails for a kernel of this package that ops
// refused to register, for an op with a registered CUDA kernel but no
// float32 golden for TestParityGoldens to run it on, or no builder, for an
// op with neither a kernel nor a listed fallback, for a launcher (a
// method of Device that makes or runs an op) that no kernel registration
// uses, and for a kernel in kernels/*.ptx that no launcher launches.
func TestEveryCUDAKernelIsTested(t *testing.T) {
	require.Empty(t, registerErrs, "kernels that ops refused")
	cases, err := parity.LoadCases(os.DirFS(parityDir))
	require.NoError(t, err)
	goldens := map[string]bool{}
	for _, c := range cases {
		if c.DType == "float32" && c.Kind == "op" {
			goldens[c.Op] = true
		}
	}
	registered := 0
	for _, s := range ops.Registered() {
		if !ops.HasKernel(s.Name, "cuda", tensor.Float32) {
			continue
		}
		registered++
		assert.Truef(t, goldens[s.Name], "op %s has a CUDA kernel but no float32 golden for its device test to run", s.Name)
		_, err := ops.Build(s.Name, ops.Attrs{})
		assert.NoErrorf(t, err, "op %s has a CUDA kernel but no builder", s.Name)
	}
	require.Equal(t, len(kernels)+len(layoutOps), registered, "every kernel of this package is registered")
	for _, name := range ops.Buildable() {
		assert.Truef(t, onCUDA(name), "op %s has neither a CUDA kernel nor a listed fallback (kernels.go): a model using it cannot run on the GPU", name)
	}
	for _, name := range fallbacks {
		assert.Falsef(t, ops.HasKernel(name, "cuda", tensor.Float32), "op %s is both a kernel and a fallback", name)
	}
	src, err := os.ReadFile("kernels.go")
	require.NoError(t, err)
	registrationUses := map[string]bool{}
	for _, m := range useRE.FindAllSubmatch(src, -1) {
		registrationUses[string(m[1])] = true
	}
	var gosrc []byte
	for _, f := range sourceFiles(t) {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		gosrc = append(gosrc, b...)
	}
	ptxs, err := filepath.Glob("kernels/*.ptx")
	require.NoError(t, err)
	for _, ptx := range ptxs {
		b, err := os.ReadFile(ptx)
		require.NoError(t, err)
		for _, m := range entryRE.FindAllSubmatch(b, -1) {
			// A name with a numeric suffix (attn_fwd_64) may be built from
			// its stem and a tile size.
			stem := tileRE.ReplaceAllString(string(m[1]), "_")
			used := bytes.Contains(gosrc, []byte(`"`+string(m[1])+`"`)) || stem != string(m[1]) && bytes.Contains(gosrc, []byte(`"`+stem))
			assert.Truef(t, used, "kernel %s of %s is launched by no launcher: remove it or register its op", m[1], ptx)
		}
	}
	for _, m := range launchers(t) {
		assert.Truef(t, registrationUses[m], "Device.%s makes or runs an op but no kernel registration (kernels.go) uses it: register the op or remove the launcher", m)
	}
}

// launchers returns the methods of *Device declared in this package's
// non-test files that make an op's launcher (…Op) or run one (…Fwd).
func launchers(t *testing.T) []string {
	var names []string
	for _, f := range sourceFiles(t) {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, m := range launcherRE.FindAllSubmatch(src, -1) {
			names = append(names, string(m[1]))
		}
	}
	require.NotEmpty(t, names)
	return names
}

var (
	launcherRE = regexp.MustCompile(`(?m)^func \(d \*Device\) (\w+(?:Op|Fwd))\(`)
	tileRE     = regexp.MustCompile(`_\d+$`)
	useRE      = regexp.MustCompile(`\bd\.(\w+)\b`)
)

// sourceFiles returns this package's non-test Go files.
func sourceFiles(t *testing.T) []string {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	return slices.DeleteFunc(files, func(f string) bool { return strings.HasSuffix(f, "_test.go") })
}

// onCUDA reports whether op runs on the device: a kernel, or a fallback.
func onCUDA(op string) bool {
	for _, k := range ops.Kernels(op) {
		if k.Device == "cuda" && k.DType == tensor.Float32 {
			return true
		}
	}
	return false
}

// onDevice moves x to the test device; it is freed at cleanup.
func onDevice(t *testing.T, x *tensor.Tensor) *tensor.Tensor {
	t.Helper()
	d, err := x.To(dev)
	require.NoError(t, err)
	t.Cleanup(d.Storage().Free)
	return d
}

// toHost copies the device tensor x to the host.
func toHost(t *testing.T, x *tensor.Tensor) *tensor.Tensor {
	t.Helper()
	require.NotNil(t, x)
	require.Equal(t, tensor.Device(dev), x.Device())
	h, err := x.To(nil)
	require.NoError(t, err)
	return h
}

// loadGolden reads the array name (in0, out, gout, ...) of golden case c.
func loadGolden(t *testing.T, c *parity.Case, name string) *tensor.Tensor {
	t.Helper()
	f, err := os.Open(filepath.Join(parityDir, c.Op, c.Name, name+".npy"))
	require.NoError(t, err)
	defer f.Close()
	x, err := parity.ReadNpy(f)
	require.NoError(t, err)
	return x
}
