// Package gpu trains and evaluates the book's MNIST CNN (models/mnist's
// NewCNN) on an NVIDIA GPU with ops/cuda: the same architecture,
// initialisation, loss and Adam recipe as models/mnist.Train, with every
// step's forward pass, backward pass and update on the device. The
// weights start as a models/mnist CNN's and are copied back into it (with
// the optimizer's state) for checkpoints, so `plumb eval mnist --load`
// evaluates a GPU-trained model on the CPU.
//
// Everything here needs the build tag `cuda` (see ops/cuda: the driver
// binding exits a process that has no GPU); without it the package is
// empty.
package gpu
