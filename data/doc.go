// Package data holds datasets and batches them: what the trainer reads.
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
// Vocab maps tokens to ids (top-N or minimum count, special tokens, save
// and load as text). It lives here, beside the datasets it encodes into,
// because every text corpus and several models build one. Dir and EnvDir
// find the local data folder ($PLUMB_DATA).
//
// The readers of the book's corpora live in their own packages, one a
// corpus, each turning its files into Datasets: data/mnist (IDX),
// data/cifar10, data/imagefolder (JPEG and PNG folders), data/imdb,
// data/ptb, data/movielens, data/conll05 and data/parallel (parallel
// text). Each follows the Paddle book's python reader for its set, reads
// raw or gzip files and tar, tar.gz or zip archives where the set is
// distributed that way, validates everything it reads, and returns errors
// that name the file and what was expected, never panics, on malformed or
// truncated input. Every reader, and LoadVocab, reads through one bounded
// layer (data/internal/fileio over internal/readlimit) whose budgets are
// Limits: a gzip stream or zip member may expand at most 100 times (after
// its first MiB), a file or member hold 1 GiB and one call 4 GiB, a line
// 1 MiB, a call read about 16.8 million records (lines, tokens, records,
// members), an image 4096×4096 pixels. Each is checked before the memory
// it guards is allocated (archive members and images from their headers),
// so a small hostile file ends in an error wrapping readlimit's ErrTooBig
// or ErrBomb, not in an out-of-memory crash. Named pipes and devices are
// refused before they are opened, binary bytes (NUL) in a text line are
// an error, and archive members named "../x" or "/x" are refused. Each
// reader states its limits and has a ...Limits variant taking raised ones
// (zero fields keep the defaults, DefaultLimits).
package data
