// Package cifar10 reads CIFAR-10's binary distribution
// (cifar-10-binary.tar.gz, extracted): records of one label byte and
// 3×32×32 pixel bytes, channels first, in data_batch_1.bin to
// data_batch_5.bin and test_batch.bin, each raw or gzip. Read decodes one
// batch file, Load a folder's training and test batches, into a
// data.Dataset with "image", float32 [N, 3, 32, 32] in [0, 1], and
// "label", int64 [N]; Classes names the ten labels.
package cifar10
