package cifar

import (
	"fmt"
	"math/rand/v2"

	"github.com/plumbml/plumb/data"
	"github.com/plumbml/plumb/graph"
	"github.com/plumbml/plumb/metrics"
	"github.com/plumbml/plumb/optim"
	"github.com/plumbml/plumb/train"
)

// Config is a training run of a CIFAR model: the book's recipe is Adam
// 1e-3 (the optimizer the caller makes), batch 128, no augmentation.
type Config struct {
	Epochs int
	Batch  int
	Seed   uint64 // the data order
	// Augment pads, crops and flips every training batch (Augment, 4
	// pixels), drawing from RNG.
	Augment bool
	// RNG is the source of the model's randomness (its dropout masks) and
	// of augmentation: the one the model was built with, so a resumed run
	// restores it.
	RNG *rand.PCG
	// BestPath, if set, receives the parameters of the best epoch by test
	// accuracy.
	BestPath string
	// StatePath and ResumeFrom save and resume the whole run (train.Config).
	StatePath, ResumeFrom string
	Progress              func(train.Progress)
	Hooks                 []train.Hooks // after each step and epoch, e.g. train.LogTo
	// Replicas, if set, trains data-parallel (train.Config.Replicas): this
	// rank reads its shard of every epoch.
	Replicas train.Replicas
}

// Train fits net on trainSet (fields "image" [N, 3, 32, 32] and "label") with opt, evaluating test accuracy and loss on testSet after
// every epoch.
func Train(net *Net, opt optim.Optimizer, trainSet, testSet *data.Dataset, cfg Config) (train.Result, error) {
	loader, err := data.NewLoader(trainSet, cfg.Batch, data.Shuffle(cfg.Seed))
	if err == nil && cfg.Replicas != nil {
		loader, err = loader.Shard(cfg.Replicas.Rank(), cfg.Replicas.Size())
	}
	if err != nil {
		return train.Result{}, fmt.Errorf("cifar: %w", err)
	}
	if cfg.Augment && cfg.RNG == nil {
		return train.Result{}, fmt.Errorf("cifar: Train: augmentation needs Config.RNG")
	}
	var augRNG *rand.Rand
	if cfg.RNG != nil {
		augRNG = rand.New(cfg.RNG)
	}
	tc := train.Config[*data.Batch]{
		Params:    net.Params(),
		Optimizer: opt,
		Train:     loader,
		Epochs:    cfg.Epochs,
		Loss:      Loss(net, cfg.Augment, augRNG),
		Device:    graph.DeviceOf(net.Params()), HostFields: HostFields(cfg.Augment),
		Evaluate: func(report func(done, total int)) (train.Metrics, error) {
			acc, loss, err := evaluate(net, testSet, cfg.Batch, report)
			return train.Metrics{"accuracy": acc, "loss": loss}, err
		},
		Monitor:    "accuracy",
		Maximize:   true,
		BestPath:   cfg.BestPath,
		StatePath:  cfg.StatePath,
		ResumeFrom: cfg.ResumeFrom,
		RNG:        cfg.RNG,
		Progress:   cfg.Progress,
		Hooks:      cfg.Hooks,
		Replicas:   cfg.Replicas,
	}
	return train.Run(tc)
}

// Loss is net's training loss on a batch (fields "image" and "label",
// which the trainer moves to net's device, train.Config.Device): the mean
// softmax cross-entropy, of images padded, cropped and flipped (Augment,
// 4 pixels, drawing from rng) when augment is set. Augmentation runs on
// the host, so the trainer leaves the images there (HostFields) and the
// augmented copy goes to the device for the step.
func Loss(net *Net, augment bool, rng *rand.Rand) train.LossFunc[*data.Batch] {
	return func(t *graph.Tape, b *data.Batch) (*graph.Value, int) {
		x := b.Tensor("image")
		if augment {
			var err error
			if x, err = Augment(x, 4, rng); err == nil {
				x, err = t.Move(x, graph.DeviceOf(net.Params()))
			}
			if err != nil {
				return t.Fail(err), b.Len()
			}
		}
		return graph.SoftmaxCrossEntropy(net.Forward(t.Const(x)), b.Tensor("label")), b.Len()
	}
}

// HostFields are the batch fields Loss reads on the host: the images,
// when it augments them.
func HostFields(augment bool) []string {
	if augment {
		return []string{"image"}
	}
	return nil
}

// Evaluate returns net's accuracy and mean cross-entropy on ds, in batches
// of the given size on an inference tape (batch norm on its moving
// statistics, no dropout).
func Evaluate(net *Net, ds *data.Dataset, batch int) (acc, loss float64, err error) {
	return evaluate(net, ds, batch, nil)
}

func evaluate(net *Net, ds *data.Dataset, batch int, report func(done, total int)) (acc, loss float64, err error) {
	if ds == nil || ds.Len() == 0 {
		return 0, 0, fmt.Errorf("cifar: evaluate on an empty dataset")
	}
	loader, err := data.NewLoader(ds, batch)
	if err != nil {
		return 0, 0, fmt.Errorf("cifar: %w", err)
	}
	tape := graph.NewEvalTape()
	dev := graph.DeviceOf(net.Params())
	var pred, labels []int
	for b, err := range loader.Batches(0) {
		if err != nil {
			return 0, 0, err
		}
		y := b.Tensor("label") // read on the host
		if b, err = train.MoveBatch(tape, dev, b); err != nil {
			return 0, 0, err
		}
		yd := b.Tensor("label")
		logits := net.Forward(tape.Const(b.Tensor("image")))
		l, err := graph.SoftmaxCrossEntropy(logits, yd).Item()
		if err != nil {
			return 0, 0, err
		}
		lt, err := logits.Host()
		if err != nil {
			return 0, 0, err
		}
		p, err := metrics.Argmax(lt.Float32s(), lt.Dim(1))
		if err != nil {
			return 0, 0, err
		}
		tape.Release()
		pred = append(pred, p...)
		for _, v := range y.Int64s() {
			labels = append(labels, int(v))
		}
		loss += l * float64(b.Len())
		if report != nil {
			report(len(pred), ds.Len())
		}
	}
	acc, err = metrics.Accuracy(pred, labels)
	return acc, loss / float64(len(pred)), err
}
