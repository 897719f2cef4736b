// Package movielens reads the MovieLens ratings (GroupLens) of the book's
// recommender chapter: 100K's u.data, u.user, u.item, u.genre and
// u.occupation (Load100K) and 1M's ratings.dat, users.dat and movies.dat
// (Load1M), from a folder or a tar.gz or zip archive, Latin-1 titles
// included. A Set holds the ratings and the user and movie features;
// Set.Dataset lays them out as a data.Dataset, with movie titles encoded
// by a dictionary of their words (TitleVocab).
package movielens
