// Package mnist reads MNIST and Fashion-MNIST: the IDX format of LeCun's
// distribution (ReadIDX, ReadIDXMax) and the four files of a set,
// train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte
// and t10k-labels-idx1-ubyte, each raw or gzip (Load from a folder, LoadFS
// from any fs.FS). A split becomes a data.Dataset with "image", float32
// [N, 1, H, W] in [0, 1], and "label", int64 [N].
//
// The reader trusts no declared size: a header that claims more data than
// arrives, or a gzip stream that expands far past real files, is an error,
// not an allocation. The digits themselves, embedded in the binary, are in
// the separate package data/mnist/embedded.
package mnist
