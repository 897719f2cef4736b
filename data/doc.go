// Package data holds datasets and the readers of the real formats the
// book models train on.
//
// A Dataset is an in-memory table of named fields, each dense (a tensor
// whose axis 0 is the example axis) or ragged (variable-length sequences,
// tensor.Ragged). A Loader batches it: seeded shuffling (a given seed and
// epoch always give the same batches), drop-last, and length bucketing
// (BucketBy) so that batches of sequences waste little padding; a Batch
// gives its fields by name, ragged ones ready for graph's Tape.ConstSeq or
// padded with a mask (Batch.Padded). Split holds out a validation set. A
// Stream batches examples read lazily (LineSource reads a text file line
// by line) through a shuffle buffer, for data that does not fit in memory.
// Loader and Stream both have Len() int and
// Batches(epoch int) iter.Seq2[*Batch, error], the trainer's source.
//
// Readers, one file per format: IDX (MNIST, LoadMNIST), CIFAR-10 binary
// batches (ReadCIFAR10, LoadCIFAR10), labelled image folders of JPEG or PNG
// files (LoadImageFolder), IMDB aclImdb (LoadIMDB), Mikolov's PTB
// (ReadPTB, LoadPTB), MovieLens 100K and 1M (LoadMovieLens100K,
// LoadMovieLens1M), CoNLL-05 SRL (ReadCoNLL05, LoadCoNLL05, LoadSRLDicts)
// and parallel text (ReadParallel, LoadParallel). Each follows the
// semantics of the Paddle book's python reader for that set (cited in its
// doc comment) and turns the records into a Dataset (IMDBDataset,
// NGramDataset, SRLDataset, MovieLens.Dataset, ParallelDataset, ...).
// Text tools: Tokenize (the book's IMDB preprocessing), Vocab (top-N or
// minimum count, special tokens, save and load as text) and NGrams.
//
// Readers accept raw or gzip files and tar, tar.gz or zip archives where
// the set is distributed that way. They validate everything they read and
// return errors that name the file and what was expected, never panic, on
// malformed or truncated input; decompression is capped (1 GiB a file,
// 4 GiB an archive) and image headers are checked before decoding, so no
// reader allocates more than its input justifies. The MNIST digits live in
// the separate package data/mnist/embedded, so that a program which only
// reads files does not carry 11 MB of embedded data.
package data
