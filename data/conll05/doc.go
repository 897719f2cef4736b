// Package conll05 reads the CoNLL-2005 semantic role labelling data of
// the book's label_semantic_roles chapter: a words file (one token per
// line) and its props file (the predicate lemma, then one bracketed
// argument column per predicate), raw or gzip, sentences separated by
// empty lines. Read and Load turn each predicate into an Example with IOB
// tags, LoadDicts and LabelVocab read Paddle's dictionaries, and Dataset
// encodes the examples into a data.Dataset of ragged fields.
package conll05
