package train

import (
	"fmt"

	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/tensor"
)

// Movable is a batch type the trainer can move to Config.Device:
// MapTensors returns the batch with each named tensor replaced by f's
// result (data.Batch has it).
type Movable[B any] interface {
	MapTensors(f func(name string, x *tensor.Tensor) (*tensor.Tensor, error)) (B, error)
}

// MoveBatch returns b with its tensors on dev for the step of tape t
// (graph.Tape.Move: copies that the tape's Release frees), except the
// fields named in host, which a model reads on the host (a batch's ids
// that it reorders, say). With dev nil (host memory) it returns b. B must
// be Movable.
func MoveBatch[B any](t *graph.Tape, dev tensor.Device, b B, host ...string) (B, error) {
	if dev == nil {
		return b, nil
	}
	m, ok := any(b).(Movable[B])
	if !ok {
		return b, fmt.Errorf("train: a batch of type %T cannot move to a device (it has no MapTensors method)", b)
	}
	return m.MapTensors(func(name string, x *tensor.Tensor) (*tensor.Tensor, error) {
		for _, h := range host {
			if h == name {
				return x, nil
			}
		}
		return t.Move(x, dev)
	})
}

// checkMovable reports whether B can move to a device, for Config.check.
func checkMovable[B any]() error {
	var zero B
	if _, ok := any(zero).(Movable[B]); !ok {
		return fmt.Errorf("Device is set but the batch type %T has no MapTensors method to move it there", zero)
	}
	return nil
}

// EvaluateOn is Evaluate with each batch moved to dev first (MoveBatch,
// fields named in host left there): the evaluation of a model whose
// parameters are on dev (graph.DeviceOf).
func EvaluateOn[B any](dev tensor.Device, src Source[B], eval BatchEval[B], report func(done, total int), host ...string) (Metrics, error) {
	if eval == nil {
		return Evaluate(src, eval, report)
	}
	return Evaluate(src, func(t *graph.Tape, b B) (Metrics, int, error) {
		moved, err := MoveBatch(t, dev, b, host...)
		if err != nil {
			return nil, 0, err
		}
		return eval(t, moved)
	}, report)
}

// OnDevice returns loss with each batch moved to dev first (MoveBatch,
// the fields named in host left there), as the trainer moves it with
// Config.Device: for calling a model's loss outside the trainer.
func OnDevice[B any](dev tensor.Device, loss LossFunc[B], host ...string) LossFunc[B] {
	return func(t *graph.Tape, b B) (*graph.Value, int) {
		moved, err := MoveBatch(t, dev, b, host...)
		if err != nil {
			return t.Fail(err), 0
		}
		return loss(t, moved)
	}
}

// MeanLossOn is MeanLoss with each batch moved to dev first (MoveBatch).
func MeanLossOn[B any](dev tensor.Device, src Source[B], loss LossFunc[B], report func(done, total int), host ...string) (float64, error) {
	if loss == nil {
		return MeanLoss(src, loss, report)
	}
	return MeanLoss(src, OnDevice(dev, loss, host...), report)
}
