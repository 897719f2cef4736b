// Package parallel reads parallel text for the book's machine translation
// chapter: two aligned files, raw or gzip, one sentence per line, line i
// of one translating line i of the other (Multi30k's train.en and
// train.de, WMT's .en and .fr). Read and Load give the sentence pairs,
// Vocab builds a dictionary of one side laid out as Paddle's WMT14 ones
// (<s>, <e>, <unk> first), and Dataset encodes pairs into a data.Dataset
// with "src", "trg" and "trg_next", ragged int64 ids.
package parallel
