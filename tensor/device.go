package tensor

import (
	"errors"
	"fmt"
)

// Device is where a tensor's storage lives when it is not host memory: a
// GPU of a device package such as ops/cuda, which implements this
// interface so that this package needs nothing of it. A nil Device is
// host memory, the default. See ARCHITECTURE.md, "Devices".
type Device interface {
	// String names the device for errors, such as "cuda:0".
	String() string
	// Kind is the device's kind, such as "cuda": the key under which its
	// kernels are registered with ops.
	Kind() string
	// Alloc returns uninitialised storage for a tensor of dt and shape.
	Alloc(dt DType, shape Shape) (DeviceStorage, error)
}

// DeviceStorage is the memory of a tensor on a Device. A tensor on a
// device has no host slice: Data, Float32s and friends return nil for it,
// so no CPU kernel can read device memory as if it were host memory, and
// data moves only through To, CopyFrom and the methods below.
type DeviceStorage interface {
	Device() Device
	// Span is the storage's address range [lo, hi), by which a Recycler
	// finds the tensors that share it (views made by Reshape). Device
	// addresses do not collide with host ones (CUDA's unified virtual
	// addressing gives both one address space).
	Span() (lo, hi uintptr)
	// Upload copies the host tensor src, of the storage's dtype and size,
	// into the storage; Download copies the storage into the host dst.
	Upload(src *Tensor) error
	Download(dst *Tensor) error
	// CopyFrom copies src, storage of the same device, dtype and size.
	CopyFrom(src DeviceStorage) error
	// Fill sets every element to v.
	Fill(v float64) error
	// Clone returns a copy in new storage on the same device.
	Clone() (DeviceStorage, error)
	// Free returns the memory to the device's allocator; the storage must
	// not be used afterwards. A Recycler calls it for a tensor of a
	// released step that nothing kept.
	Free()
}

// OnDevice wraps s, storage a device package allocated for a tensor of dt
// and shape, as a tensor that owns it: a Recycler may Free it.
func OnDevice(dt DType, shape Shape, s DeviceStorage) *Tensor {
	return &Tensor{dtype: dt, shape: shape.Clone(), dev: s, owned: true}
}

// Device returns the device t's storage is on, nil for host memory.
func (t *Tensor) Device() Device {
	if t.dev == nil {
		return nil
	}
	return t.dev.Device()
}

// Storage returns t's device storage, nil for a host tensor.
func (t *Tensor) Storage() DeviceStorage { return t.dev }

// DeviceName names the device of t for errors: "cpu" for host memory.
func DeviceName(d Device) string {
	if d == nil {
		return "cpu"
	}
	return d.String()
}

// To returns t on dev (nil: host memory): t itself when it is there
// already, else a copy moved through the device's interface. Moving is
// always explicit; no op moves its inputs.
func (t *Tensor) To(dev Device) (*Tensor, error) {
	if t == nil {
		return nil, errors.New("tensor: To of a nil tensor")
	}
	from := t.Device()
	if from == dev {
		return t, nil
	}
	host := t
	if from != nil {
		host = alloc(t.dtype, t.shape, false)
		if err := t.dev.Download(host); err != nil {
			return nil, fmt.Errorf("tensor: %v%v from %v: %w", t.dtype, t.shape, from, err)
		}
		if dev == nil {
			return host, nil
		}
	}
	s, err := dev.Alloc(t.dtype, t.shape)
	if err != nil {
		return nil, fmt.Errorf("tensor: %v%v to %v: %w", t.dtype, t.shape, dev, err)
	}
	if err := s.Upload(host); err != nil {
		s.Free()
		return nil, fmt.Errorf("tensor: %v%v to %v: %w", t.dtype, t.shape, dev, err)
	}
	return OnDevice(t.dtype, t.shape, s), nil
}

// onDevice is the error of a host-only method called on a device tensor.
func (t *Tensor) onDevice(what string) error {
	return fmt.Errorf("tensor: %s of a %v%v tensor on %v; move it to the host with To(nil) first", what, t.dtype, t.shape, t.Device())
}
