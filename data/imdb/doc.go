// Package imdb reads the IMDB movie reviews of aclImdb (Maas et al. 2011)
// for the book's sentiment chapter: the files
// {train,test}/{pos,neg}/<id>_<rating>.txt, from the aclImdb_v1.tar.gz
// archive or an extracted folder. Load gives the reviews tokenized as
// Paddle's imdb reader does (Tokenize), Vocab builds Paddle's word_dict
// and Dataset encodes reviews into a data.Dataset with "words", ragged
// int64 ids, and "label", int64 [N] (Positive or Negative).
package imdb
