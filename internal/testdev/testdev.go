// Package testdev is a device for tests: tensor.Device and
// tensor.DeviceStorage over host memory that kernels cannot see (a device
// tensor has no host slice), so the tests of tensor, ops and graph can
// check moves, dispatch and the recycling of device storage without a GPU.
package testdev

import (
	"fmt"
	"unsafe"

	"github.com/plumbml/plumb/tensor"
)

// Device is a test device; its storage counts allocations and frees.
type Device struct {
	Name          string
	Allocs, Frees int
}

// New returns a device named name (its kind is "testdev").
func New(name string) *Device { return &Device{Name: name} }

func (d *Device) String() string { return d.Name }

// Kind is "testdev".
func (d *Device) Kind() string { return "testdev" }

// Alloc returns zeroed storage.
func (d *Device) Alloc(dt tensor.DType, shape tensor.Shape) (tensor.DeviceStorage, error) {
	t, err := tensor.New(dt, shape...)
	if err != nil {
		return nil, err
	}
	d.Allocs++
	return &Storage{d: d, t: t}, nil
}

// Storage holds a device tensor's elements in a private host tensor.
type Storage struct {
	d    *Device
	t    *tensor.Tensor
	Gone bool
}

// Host returns the storage's elements (for kernels registered by tests).
func (s *Storage) Host() *tensor.Tensor { return s.t }

func (s *Storage) Device() tensor.Device { return s.d }

func (s *Storage) Span() (lo, hi uintptr) {
	if s.t.Size() == 0 {
		return 0, 0
	}
	var p uintptr
	switch v := s.t.Raw().(type) {
	case []float32:
		p = uintptr(unsafe.Pointer(&v[0]))
	case []float64:
		p = uintptr(unsafe.Pointer(&v[0]))
	case []int32:
		p = uintptr(unsafe.Pointer(&v[0]))
	case []int64:
		p = uintptr(unsafe.Pointer(&v[0]))
	}
	return p, p + uintptr(s.t.Size()*s.t.DType().Size())
}

func (s *Storage) check() error {
	if s.Gone {
		return fmt.Errorf("testdev: storage used after Free")
	}
	return nil
}

func (s *Storage) Upload(src *tensor.Tensor) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.t.CopyFrom(src)
}

func (s *Storage) Download(dst *tensor.Tensor) error {
	if err := s.check(); err != nil {
		return err
	}
	return dst.CopyFrom(s.t)
}

func (s *Storage) CopyFrom(src tensor.DeviceStorage) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.t.CopyFrom(src.(*Storage).t)
}

func (s *Storage) Fill(v float64) error {
	if err := s.check(); err != nil {
		return err
	}
	s.t.Fill(v)
	return nil
}

func (s *Storage) Clone() (tensor.DeviceStorage, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	s.d.Allocs++
	return &Storage{d: s.d, t: s.t.Clone()}, nil
}

func (s *Storage) Free() {
	if !s.Gone {
		s.Gone = true
		s.d.Frees++
	}
}
