// Package ptb reads Mikolov's Penn Treebank text (the "imikolov" set of the
// book's word2vec chapter): ptb.train.txt, ptb.valid.txt and ptb.test.txt,
// raw or gzip, one sentence per line with rare words already <unk>. Read
// and Load give the sentences as words, Vocab builds the dictionary, and
// NGramDataset and LMDataset encode sentences framed as <s> words <e>,
// as N-gram windows (NGrams) or as next-word pairs, into a data.Dataset.
package ptb
