// Package plumb is an embeddable deep-learning library for Go whose ops are
// checked against TensorFlow.
//
// The library is a set of small packages, used together:
//
//   - tensor: dense float32/float64/int32/int64 tensors, seeded
//     initialisers, and ragged batches of variable-length sequences (values
//     plus offsets); tensor/dense shares them zero-copy with
//     gorgonia.org/tensor.
//   - ops: every operation, with its shape rules, forward and backward passes
//     and CPU reference kernels; each is in a registry that the gradient
//     checks and the parity harness read.
//   - graph: define-by-run reverse-mode autodiff. A Tape records ops as they
//     run, so shapes may change from batch to batch; errors are values that
//     flow through later ops and come out of Backward.
//   - layers: Linear, Conv2D, pooling, BatchNorm, LayerNorm, Dropout,
//     Flatten, Sequential, with named parameters.
//   - optim: SGD, Momentum, Adam, AdamW, RMSProp and Adagrad with
//     TensorFlow's update formulas, schedules and clipping.
//   - checkpoint: parameters and optimizer state as safetensors, written
//     atomically.
//   - data: dataset readers (MNIST IDX) and seeded batching; the MNIST
//     digits themselves live in data/mnist/embedded.
//   - models: the PaddlePaddle book's models, and cmd/plumb to train them.
//
// A training step reads like the math: build a tape, run the model, take
// the loss, call Backward, step the optimizer. See the example.
package plumb
